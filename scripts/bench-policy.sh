#!/usr/bin/env bash
# Nanoseconds per decision: the default policy compiled from policies/default.json against a
# hand-written if/else of the same tree, side by side in one run (release build).
# Built from the Benchmarks package (Benchmarks/Package.swift), which depends on this one by path.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "[bench] building in release mode"
swift build -c release --package-path Benchmarks --product policy-benchmark 2>&1 | tail -n 5
"$(swift build -c release --package-path Benchmarks --show-bin-path)/policy-benchmark" policies/default.json
