#!/usr/bin/env bash
# Start-up time of a plain decision against a hello-world Swift program built the same way
# (release, same toolchain), measured by hyperfine in one run; prints both medians and the ratio
# (the goal: at most 2 ×). Installs hyperfine (Debian) when it is missing.
#
# Usage: scripts/bench-startup.sh [RUNS]   (default 200 runs of each, after 10 warm-up runs)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
runs="${1:-200}"
case "$runs" in
    '' | *[!0-9]*) echo "bench-startup.sh: RUNS must be a whole number, not '$runs'" >&2; exit 64 ;;
esac
source scripts/setup.sh

if ! command -v hyperfine >/dev/null 2>&1; then
    echo "[bench-startup] installing hyperfine"
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq hyperfine
fi

scratch="$root/.build-startup"
echo "[bench-startup] building imgpolicy (swift build -c release --product imgpolicy)"
swift build -c release --product imgpolicy
imgpolicy="$(swift build -c release --show-bin-path)/imgpolicy"

# The hello-world program: a package of its own, built with the same command and toolchain.
hello_package="$scratch/hello"
mkdir -p "$hello_package/Sources/hello"
cat >"$hello_package/Package.swift" <<'EOF'
// swift-tools-version:6.0
import PackageDescription

let package = Package(name: "hello", targets: [.executableTarget(name: "hello")])
EOF
echo 'print("hello, world")' >"$hello_package/Sources/hello/main.swift"
echo "[bench-startup] building hello world (swift build -c release, same toolchain)"
swift build -c release --package-path "$hello_package"
hello="$(swift build -c release --package-path "$hello_package" --show-bin-path)/hello"

cache="$(mktemp -d "${TMPDIR:-/tmp}/imgpolicy-startup-cache.XXXXXX")"
results="$(mktemp "${TMPDIR:-/tmp}/imgpolicy-startup.XXXXXX.json")"
trap 'rm -rf "$cache" "$results"' EXIT
decision=("$imgpolicy" --network wifi --item "$root/examples/item.json" --cache-dir "$cache")
"${decision[@]}" >/dev/null || { echo "bench-startup.sh: the decision failed: ${decision[*]}" >&2; exit 1; }

# Every run starts with an empty cache folder (a decision opens the cache, which writes its marker).
hyperfine --shell=none --warmup 10 --runs "$runs" --style basic --export-json "$results" \
    --prepare "find $(printf '%q' "$cache") -mindepth 1 -delete" \
    --command-name decision "$(printf '%q ' "${decision[@]}")" \
    --command-name hello-world "$(printf '%q' "$hello")"

jq -r '
  (.results | map({(.command): .median}) | add) as $m
  | "[bench-startup] median start-up: decision \($m.decision * 1000 * 100 | round / 100) ms, hello world \($m["hello-world"] * 1000 * 100 | round / 100) ms; ratio \($m.decision / $m["hello-world"] * 100 | round / 100) × (goal: at most 2 ×)"
' "$results"
