#!/usr/bin/env bash
# Nanoseconds per decision: the default policy compiled from policies/default.json against a
# hand-written if/else of the same tree, side by side in one run (release build).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "[bench] building in release mode"
swift build -c release --product policy-benchmark 2>&1 | tail -n 5
"$(swift build -c release --show-bin-path)/policy-benchmark" policies/default.json
