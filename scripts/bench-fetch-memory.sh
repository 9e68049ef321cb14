#!/usr/bin/env bash
# Peak memory of `imgpolicy --fetch` against deciding alone, over one generated item file, in one
# run: both peaks (each process's own maximum resident set, `wait4`'s ru_maxrss), side by side,
# and their ratio (the goal of issue 16, item 9: --fetch at most 2 × deciding alone, at 100,000
# items). Offline, as the issue measured it: nothing touches the network, so no server is needed;
# every item is decided, carried out (the placeholder) and reported.
#
# Usage: scripts/bench-fetch-memory.sh [ITEMS] [RUNS]
#   ITEMS  items in the generated file (default 100000)
#   RUNS   runs of each command (default 3); each peak is printed, and the ratio of the medians
# The binary: the release build of scripts/install.sh's flags (built here, into .build-memory/),
# or IMGPOLICY=/path/to/imgpolicy to measure another build (a debug build, an older revision).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
items="${1:-100000}"
runs="${2:-3}"
for value in "$items" "$runs"; do
    case "$value" in
        '' | *[!0-9]* | 0) echo "bench-fetch-memory.sh: ITEMS and RUNS must be whole numbers above 0, not '$value' (usage: scripts/bench-fetch-memory.sh [ITEMS] [RUNS])" >&2; exit 64 ;;
    esac
done

if [ -z "${IMGPOLICY:-}" ]; then
    source scripts/setup.sh
    # shellcheck source=release-flags.sh
    source scripts/release-flags.sh
    echo "[bench-fetch-memory] building imgpolicy (swift build -c release ${release_flags[*]} --scratch-path .build-memory)" >&2
    swift build -c release --product imgpolicy "${release_flags[@]}" --scratch-path "$root/.build-memory" >&2
    IMGPOLICY="$(swift build -c release --product imgpolicy "${release_flags[@]}" --scratch-path "$root/.build-memory" --show-bin-path)/imgpolicy"
fi
[ -x "$IMGPOLICY" ] || { echo "bench-fetch-memory.sh: $IMGPOLICY is not an executable" >&2; exit 66; }

work="$(mktemp -d "${TMPDIR:-/tmp}/imgpolicy-bench-memory-XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The item file: ITEMS items, each with an original and a thumbnail on distinct URLs (port 9, the
# discard service: never asked, the runs are offline).
awk -v count="$items" 'BEGIN {
    printf "["
    for (i = 0; i < count; i++) {
        printf "%s{\"id\": \"%d\", \"original\": \"http://127.0.0.1:9/o/%d.jpg\", \"thumbnail\": \"http://127.0.0.1:9/t/%d.jpg\"}\n", (i ? "," : ""), i, i, i
    }
    print "]"
}' > "$work/items.json"
echo "[bench-fetch-memory] $IMGPOLICY, $items items ($(wc -c < "$work/items.json") bytes), $runs runs of each, load average $(cut -d' ' -f1 /proc/loadavg)" >&2

# Runs the command with standard output to /dev/null; prints "PEAK_KIB SECONDS STATUS".
measure() {
    python3 - "$@" <<'PYTHON'
import os, sys, time
start = time.monotonic()
pid = os.fork()
if pid == 0:
    null = os.open("/dev/null", os.O_WRONLY)
    os.dup2(null, 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, "%.2f" % (time.monotonic() - start), os.waitstatus_to_exitcode(status))
PYTHON
}

common=(--network offline --item "$work/items.json" --cache-dir "$work/cache")
decide=()
fetch=()
for run in $(seq 1 "$runs"); do
    read -r peak seconds status < <(measure "$IMGPOLICY" "${common[@]}")
    [ "$status" = 0 ] || { echo "bench-fetch-memory.sh: deciding exited $status" >&2; exit 1; }
    decide+=("$peak")
    echo "[bench-fetch-memory] run $run: decide alone $peak KiB in $seconds s" >&2
    read -r peak seconds status < <(measure "$IMGPOLICY" "${common[@]}" --fetch)
    [ "$status" = 0 ] || { echo "bench-fetch-memory.sh: --fetch exited $status" >&2; exit 1; }
    fetch+=("$peak")
    echo "[bench-fetch-memory] run $run: --fetch       $peak KiB in $seconds s" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
decided="$(median "${decide[@]}")"
fetched="$(median "${fetch[@]}")"
awk -v items="$items" -v d="$decided" -v f="$fetched" 'BEGIN {
    printf "%-28s %12s\n", "peak resident memory (median)", "MiB"
    printf "%-28s %12.1f\n", "decide alone", d / 1024
    printf "%-28s %12.1f\n", "--fetch (offline)", f / 1024
    printf "%-28s %12.2f   (goal <= 2, %d items)\n", "ratio --fetch / decide", f / d, items
}'
