#!/usr/bin/env bash
# Sets up, builds everything, checks the bundled policies with the CLI, and runs the whole test
# suite (Swift Testing). Exits non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "[test] building the package and its tests (swift build --build-tests)"
swift build --build-tests
bin="$(swift build --show-bin-path)/imgpolicy"

echo "[test] checking the bundled policies (imgpolicy policy check)"
"$bin" policy check policies/*.json

echo "[test] running the test suite (swift test)"
swift test --skip-build
