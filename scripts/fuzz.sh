#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each for SECONDS (default 30).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 60 json cache-entry
#
# The package's modules are built once by SwiftPM with coverage and AddressSanitizer
# (--sanitize=fuzzer --sanitize=address, -enable-testing for the internal entry points) into
# .build-fuzz/; each target (Fuzz/<name>/*.swift, with Fuzz/Shared/*.swift) is then linked against the objects of the
# modules it needs. Targets run FUZZ_JOBS at a time (default: the number of cores), each with
# its seed corpus (Fuzz/<name>/corpus, read only) and a working corpus in .build-fuzz/corpus/.
#
# Prints one line per target: passed or CRASHED, and how many inputs it ran. A crashing input is
# saved under .build-fuzz/crashers/<name>/ (ignored by git); reproduce it with
# `.build-fuzz/fuzz/<name> FILE`. Exits 1 when any target crashed, timed out or ran out of memory.
set -euo pipefail

seconds=${1:-30}
shift || true
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -d /opt/swift/usr/bin ] && export PATH=/opt/swift/usr/bin:$PATH

# A target is a folder Fuzz/<name>/ with its Swift files, a seed corpus (corpus/) and a file
# `modules` naming the package's modules it links, in dependency order ("Locking Policy").
all_targets=()
for folder in Fuzz/*/; do
    [ -f "$folder/modules" ] && all_targets+=("$(basename "$folder")")
done
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}

modules_of() {
    if [ ! -f "$root/Fuzz/$1/modules" ]; then
        echo "scripts/fuzz.sh: unknown target $1 (known: ${all_targets[*]})" >&2
        return 1
    fi
    cat "$root/Fuzz/$1/modules"
}

build_flags=(--build-path "$root/.build-fuzz" --sanitize=fuzzer --sanitize=address -Xswiftc -enable-testing)
mkdir -p "$root/.build-fuzz"
# Building the last module a target names builds the ones it depends on.
tops=()
for name in "${targets[@]}"; do
    top=$(modules_of "$name" | awk '{ print $NF }')
    [[ " ${tops[*]} " == *" $top "* ]] || tops+=("$top")
done
echo "building ${tops[*]} with -sanitize=fuzzer,address ..."
for top in "${tops[@]}"; do
    if ! swift build "${build_flags[@]}" --target "$top" >"$root/.build-fuzz/build.log" 2>&1; then
        cat "$root/.build-fuzz/build.log" >&2
        echo "scripts/fuzz.sh: building $top failed" >&2
        exit 1
    fi
done

bin=$(swift build "${build_flags[@]}" --show-bin-path)
mkdir -p "$root/.build-fuzz/fuzz"

# The object files of a module: for Swift modules the ones SwiftPM's output file map names (so
# that objects of deleted or renamed sources are never linked), for C modules every object.
objects_of() {
    local map="$bin/$1.build/output-file-map.json"
    if [ -f "$map" ]; then
        grep -o '"object"[[:space:]]*:[[:space:]]*"[^"]*"' "$map" | sed 's/.*"\([^"]*\)"$/\1/'
    else
        ls "$bin/$1.build/"*.o
    fi
}

build_target() {
    local name=$1 objects=() extra=()
    for module in $(modules_of "$name"); do
        while IFS= read -r object; do objects+=("$object"); done < <(objects_of "$module")
        case "$module" in
            CCurl) extra+=(-Xcc "-fmodule-map-file=$bin/CCurl.build/module.modulemap" -I "$root/Sources/CCurl/include" -lcurl) ;;
            # LinuxNetwork's C glue (Fetch's ImageSystem follows the network with it); libsystemd is dlopen'd.
            CNetlink|CSystemBus) extra+=(-Xcc "-fmodule-map-file=$bin/$module.build/module.modulemap" -I "$root/Sources/$module/include") ;;
            # CImageCodecs ships its own module map (include/module.modulemap); SwiftPM generates none for it.
            CImageCodecs) extra+=(-Xcc "-fmodule-map-file=$root/Sources/CImageCodecs/include/module.modulemap" -I "$root/Sources/CImageCodecs/include"
                                  -lturbojpeg -lpng16 -lwebp -lgif) ;;
        esac
    done
    swiftc -sanitize=fuzzer,address -parse-as-library -swift-version 6 -g -use-ld=lld -I "$bin/Modules" -package-name "$(basename "$root" | tr "[:upper:]" "[:lower:]")" \
        "${extra[@]}" "$root/Fuzz/$name/"*.swift "$root/Fuzz/Shared/"*.swift "${objects[@]}" -o "$root/.build-fuzz/fuzz/$name"
}

for name in "${targets[@]}"; do
    echo "linking $name ..."
    build_target "$name"
done

run_target() {
    local name=$1 log="$root/.build-fuzz/fuzz/$name.log"
    mkdir -p "$root/.build-fuzz/corpus/$name" "$root/.build-fuzz/crashers/$name"
    # -timeout: an input that takes 10 s counts as a hang; -rss_limit_mb: as a memory blow-up.
    # The Swift runtime's backtracer fights AddressSanitizer; libFuzzer prints the stack instead.
    SWIFT_BACKTRACE=enable=no "$root/.build-fuzz/fuzz/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$root/.build-fuzz/crashers/$name/" \
        "$root/.build-fuzz/corpus/$name" "$root/Fuzz/$name/corpus" >"$log" 2>&1
}

echo "fuzzing ${targets[*]} for $seconds s each, $jobs at a time ..."
pids=()
for name in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    run_target "$name" &
    pids+=("$!")
done
statuses=()
for pid in "${pids[@]}"; do
    if wait "$pid"; then statuses+=(0); else statuses+=($?); fi
done

failed=0
crashed=0
for i in "${!targets[@]}"; do
    name=${targets[$i]}
    log="$root/.build-fuzz/fuzz/$name.log"
    runs=$(grep -o 'stat::number_of_executed_units:[[:space:]]*[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
    if [ "${statuses[$i]}" -eq 0 ]; then
        printf '%-12s passed   %10s executions in %s s\n' "$name" "${runs:-?}" "$seconds"
    else
        failed=1
        crashed=$((crashed + 1))
        artifact=$(grep -o 'Test unit written to .*' "$log" | tail -1 | sed 's/Test unit written to //' || true)
        printf '%-12s CRASHED  %10s executions; input: %s\n' "$name" "${runs:-?}" "${artifact:-see $log}"
        { grep -a -i -m 3 -E 'fatal error|precondition failed|assertion failed|ERROR: |runtime failure' "$log"
          grep -a -m 1 "$root/Sources/" "$log"; } | sed 's/^ */             /' || true
    fi
done
echo "fuzz: $(( ${#targets[@]} - crashed )) passed, $crashed failed"
exit "$failed"
