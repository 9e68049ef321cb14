#!/usr/bin/env bash
# Builds the package and its tests with ThreadSanitizer (into .build-tsan) and runs the whole test
# suite under it. Fails if any test fails or if any process (the test runner, or an imgpolicy
# process a test started) reports a data race. Reports are kept in .build-tsan/reports/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

scratch=.build-tsan
reports="$PWD/$scratch/reports"
echo "[tsan] building with --sanitize=thread into $scratch"
swift build --build-tests --sanitize=thread --scratch-path "$scratch"

rm -rf "$reports" && mkdir -p "$reports"
# Every process writes its reports to a file of its own there (log_path appends .PID).
# Processes under TSan run several times slower: tests scale their hang deadlines by this.
export IMGPOLICY_TEST_SLOWDOWN=3
export TSAN_OPTIONS="log_path=$reports/report halt_on_error=0 second_deadlock_stack=1 history_size=4"
echo "[tsan] running the test suite under ThreadSanitizer"
status=0
swift test --skip-build --scratch-path "$scratch" || status=$?

found=$(find "$reports" -type f -name 'report*' | wc -l)
if [ "$found" -gt 0 ]; then
    echo "[tsan] ThreadSanitizer reported in $found process(es):" >&2
    for file in "$reports"/report*; do
        echo "---- $file" >&2
        grep -E "WARNING: ThreadSanitizer|^    #[0-4] " "$file" | head -40 >&2
    done
    exit 1
fi
if [ "$status" -ne 0 ]; then
    echo "[tsan] the test suite failed under ThreadSanitizer (exit $status)" >&2
    exit "$status"
fi
echo "[tsan] no data race reported"
