#!/usr/bin/env bash
# Start-up time of a plain decision against a hello-world Swift program built the same way
# (release, same toolchain, same flags as scripts/install.sh), measured by hyperfine in one run;
# prints both medians and the ratio (the goal: at most 2 ×). Installs hyperfine (Debian) when it
# is missing.
#
# Usage: scripts/bench-startup.sh [--variants] [--baseline REV] [--instructions] [RUNS]
#   RUNS        runs of each command (default 200), after 10 warm-up runs
#   --variants  also times, in the same hyperfine run, hello-world variants that show what costs
#               what: importing Foundation, importing FoundationEssentials, linked with libcurl,
#               with libsystemd, with the image libraries, and the plain one and imgpolicy built
#               with the Swift runtime linked the other way (static/dynamic), one with an
#               asynchronous main (the concurrency runtime started); prints a table of
#               medians with each binary's size and number of shared libraries (ldd); and
#               `imgpolicy --version` (parsing the command line, no decision).
#   --baseline REV  also times the decision of imgpolicy as of git revision REV (e.g. a commit
#               before a start-up change), built the same way from `git archive REV`.
#   --instructions  also counts the instructions one decision and one hello world execute in user
#               space, loader included (valgrind's callgrind; installs valgrind when missing):
#               a figure the machine's load does not move. Each binary is copied with
#               `strip --strip-debug` first (valgrind cannot read this toolchain's DWARF); the
#               copy finds the policies through IMGPOLICY_POLICY_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
variants=0
instructions=0
baseline=
while [ $# -gt 0 ]; do
    case "$1" in
        --variants) variants=1; shift ;;
        --instructions) instructions=1; shift ;;
        --baseline)
            [ $# -ge 2 ] || { echo "bench-startup.sh: --baseline needs a git revision" >&2; exit 64; }
            git rev-parse --verify --quiet "$2^{commit}" >/dev/null || { echo "bench-startup.sh: --baseline $2: not a git revision" >&2; exit 64; }
            baseline="$2"; shift 2 ;;
        *) break ;;
    esac
done
runs="${1:-200}"
case "$runs" in
    '' | *[!0-9]*) echo "bench-startup.sh: RUNS must be a whole number, not '$runs' (usage: scripts/bench-startup.sh [--variants] [--baseline REV] [--instructions] [RUNS])" >&2; exit 64 ;;
esac
source scripts/setup.sh

if ! command -v hyperfine >/dev/null 2>&1; then
    echo "[bench-startup] installing hyperfine"
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq hyperfine
fi

# The flags scripts/install.sh builds the command with (its release build), shared by every
# binary timed here unless a variant says otherwise.
# shellcheck source=release-flags.sh
source scripts/release-flags.sh
scratch="$root/.build-startup"
# The other way of linking the Swift runtime than release_flags (for --variants).
if [[ " ${release_flags[*]} " == *" --static-swift-stdlib "* ]]; then other=(); this=static; that=dynamic
else other=(--static-swift-stdlib); this=dynamic; that=static; fi

# build LABEL SCRATCH PACKAGE FLAGS... : a release build; sets $bin_path.
build() {
    local label="$1" scratch_path="$2" package="$3"
    shift 3
    echo "[bench-startup] building $label (swift build -c release $* in $scratch_path)" >&2
    swift build -c release --package-path "$package" --scratch-path "$scratch_path" "$@" >&2
    bin_path="$(swift build -c release --package-path "$package" --scratch-path "$scratch_path" "$@" --show-bin-path)"
}

build "imgpolicy" "$scratch/imgpolicy-$this" "$root" --product imgpolicy "${release_flags[@]}"
imgpolicy="$bin_path/imgpolicy"

# The hello-world programs: a package of their own, built with the same command and toolchain.
hello_package="$scratch/hello"
mkdir -p "$hello_package"
cat >"$hello_package/Package.swift" <<'EOF'
// swift-tools-version:6.0
import PackageDescription

let package = Package(name: "hello", targets: [
    .executableTarget(name: "hello"),
    .executableTarget(name: "hello-foundation"),
    .executableTarget(name: "hello-essentials"),
    .executableTarget(name: "hello-async"),
    .executableTarget(name: "hello-curl", linkerSettings: [.linkedLibrary("curl")]),
    .executableTarget(name: "hello-systemd", linkerSettings: [.linkedLibrary("systemd")]),
    .executableTarget(name: "hello-images", linkerSettings: [
        .linkedLibrary("turbojpeg"), .linkedLibrary("png16"), .linkedLibrary("webp"), .linkedLibrary("gif"),
        .linkedLibrary("lcms2"),
    ]),
])
EOF
write_main() { mkdir -p "$hello_package/Sources/$1"; printf '%s\n' "${@:2}" >"$hello_package/Sources/$1/main.swift"; }
write_main hello 'print("hello, world")'
# Each variant uses what it imports, so that the import cannot be dropped.
write_main hello-foundation 'import Foundation' 'if ProcessInfo.processInfo.processIdentifier > 0 { print("hello, world") }'
write_main hello-essentials 'import FoundationEssentials' 'if ProcessInfo.processInfo.processIdentifier > 0 { print("hello, world") }'
write_main hello-curl 'print("hello, world")'
# An asynchronous main, as an AsyncParsableCommand has: the concurrency runtime's start alone.
write_main hello-async 'func greet() async { print("hello, world") }' 'await greet()'
write_main hello-systemd 'print("hello, world")'
write_main hello-images 'print("hello, world")'

build "hello world" "$scratch/hello-build" "$hello_package" "${release_flags[@]}"
hello="$bin_path/hello"
hello_bin="$bin_path"

cache="$(mktemp -d "${TMPDIR:-/tmp}/imgpolicy-startup-cache.XXXXXX")"
results="$(mktemp "${TMPDIR:-/tmp}/imgpolicy-startup.XXXXXX.json")"
trap 'rm -rf "$cache" "$results"' EXIT
decision=(--network wifi --item "$root/examples/item.json" --cache-dir "$cache")
"$imgpolicy" "${decision[@]}" >/dev/null || { echo "bench-startup.sh: the decision failed: $imgpolicy ${decision[*]}" >&2; exit 1; }

commands=(--command-name decision "$(printf '%q ' "$imgpolicy" "${decision[@]}")"
          --command-name hello-world "$(printf '%q' "$hello")")
if [ "$variants" = 1 ]; then
    build "hello world, $that Swift runtime" "$scratch/hello-build-$that" "$hello_package" "${other[@]}"
    other_hello_bin="$bin_path"
    build "imgpolicy, $that Swift runtime" "$scratch/imgpolicy-$that" "$root" --product imgpolicy "${other[@]}"
    other_imgpolicy="$bin_path/imgpolicy"
    commands+=(--command-name "decision ($that runtime)" "$(printf '%q ' "$other_imgpolicy" "${decision[@]}")")
    # Parsing the command line and printing, without a decision: ArgumentParser and the runtime.
    commands+=(--command-name "imgpolicy --version" "$(printf '%q ' "$imgpolicy" --version)")
    for name in hello-foundation hello-essentials hello-async hello-curl hello-systemd hello-images; do
        commands+=(--command-name "$name" "$(printf '%q' "$hello_bin/$name")")
    done
    commands+=(--command-name "hello ($that runtime)" "$(printf '%q' "$other_hello_bin/hello")")
fi
if [ -n "$baseline" ]; then
    # The decision as of REV: its sources from git, built the same way in a folder of their own.
    baseline_source="$scratch/baseline-source"
    rm -rf "$baseline_source"
    mkdir -p "$baseline_source"
    git archive "$baseline" | tar -x -C "$baseline_source"
    build "imgpolicy as of $baseline" "$scratch/baseline-build" "$baseline_source" --product imgpolicy "${release_flags[@]}"
    baseline_imgpolicy="$bin_path/imgpolicy"
    commands+=(--command-name "decision ($baseline)" "$(printf '%q ' "$baseline_imgpolicy" "${decision[@]}")")
fi

# Every run starts with an empty cache folder (a decision opens the cache, which writes its marker).
hyperfine --shell=none --warmup 10 --runs "$runs" --style basic --export-json "$results" \
    --prepare "find $(printf '%q' "$cache") -mindepth 1 -delete" "${commands[@]}"

if [ "$variants" = 1 ] || [ -n "$baseline" ]; then
    echo
    echo "| binary ($this Swift runtime unless said) | median ms | × hello world | CPU ms (user + system) | × hello world | size MB | shared libraries (ldd) |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    hello_cpu="$(jq -r '.results[] | select(.command == "hello-world") | .user + .system' "$results")"
    jq -r '.results[] | "\(.command)\t\(.median)\t\(.user + .system)"' "$results" | while IFS=$'\t' read -r name median cpu; do
        case "$name" in
            decision | "imgpolicy --version") file="$imgpolicy" ;;
            "decision ($that runtime)") file="$other_imgpolicy" ;;
            "decision ($baseline)") file="$baseline_imgpolicy" ;;
            hello-world) file="$hello" ;;
            *"($that runtime)") file="$other_hello_bin/${name%% *}" ;;
            *) file="$hello_bin/$name" ;;
        esac
        hello_median="$(jq -r '.results[] | select(.command == "hello-world") | .median' "$results")"
        size="$(stat -c %s "$file")"
        libraries="$(ldd "$file" | grep -c '=>' || true)"
        awk -v n="$name" -v m="$median" -v h="$hello_median" -v c="$cpu" -v hc="$hello_cpu" -v s="$size" -v l="$libraries" \
            'BEGIN { printf "| %s | %.2f | %.2f | %.2f | %.2f | %.1f | %d |\n", n, m * 1000, m / h, c * 1000, c / hc, s / 1048576, l }'
    done
    echo
fi

# The goal is on the wall-clock medians; the CPU time (user + system, mean) is printed too, as it
# moves less when other processes share the machine.
jq -r '
  (.results | map({(.command): .median}) | add) as $m
  | (.results | map({(.command): (.user + .system)}) | add) as $c
  | "[bench-startup] median start-up: decision \($m.decision * 1000 * 100 | round / 100) ms, hello world \($m["hello-world"] * 1000 * 100 | round / 100) ms; ratio \($m.decision / $m["hello-world"] * 100 | round / 100) × (goal: at most 2 ×)",
    "[bench-startup] CPU time (user + system): decision \($c.decision * 1000 * 100 | round / 100) ms, hello world \($c["hello-world"] * 1000 * 100 | round / 100) ms; ratio \($c.decision / $c["hello-world"] * 100 | round / 100) ×"
' "$results"

if [ "$instructions" = 1 ]; then
    if ! command -v valgrind >/dev/null 2>&1; then
        echo "[bench-startup] installing valgrind"
        if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq valgrind
    fi
    stripped="$(mktemp -d "${TMPDIR:-/tmp}/imgpolicy-startup-callgrind.XXXXXX")"
    trap 'rm -rf "$cache" "$results" "$stripped"' EXIT
    # count NAME BINARY ARGS...: prints the instructions one run of BINARY executes.
    count() {
        local name="$1" binary="$2"
        shift 2
        strip --strip-debug -o "$stripped/$name" "$binary"
        find "$cache" -mindepth 1 -delete
        IMGPOLICY_POLICY_DIR="$root/policies" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$stripped/$name" "$@" \
            2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    decision_count="$(count imgpolicy "$imgpolicy" "${decision[@]}")"
    hello_count="$(count hello "$hello")"
    [ -n "$decision_count" ] && [ -n "$hello_count" ] || { echo "bench-startup.sh: valgrind gave no instruction count" >&2; exit 1; }
    awk -v d="$decision_count" -v h="$hello_count" 'BEGIN {
        printf "[bench-startup] instructions (callgrind, user space, loader included): decision %.2f M, hello world %.2f M; ratio %.2f ×\n", d / 1e6, h / 1e6, d / h }'
fi
