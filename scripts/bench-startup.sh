#!/usr/bin/env bash
# Start-up time of a plain decision against a hello-world Swift program built the same way
# (release, same toolchain, same flags as scripts/install.sh), measured by hyperfine in one run;
# prints both medians and the ratio (the goal: at most 2 ×). Installs hyperfine (Debian) when it
# is missing.
#
# Usage: scripts/bench-startup.sh [--variants] [RUNS]   (default 200 runs of each, after 10 warm-up runs)
#   --variants  also times, in the same hyperfine run, hello-world variants that show what costs
#               what: importing Foundation, importing FoundationEssentials, linked with libcurl,
#               each also built with the Swift runtime linked dynamically and statically, and
#               imgpolicy built the other way too; prints a table of medians, and each binary's
#               size and number of shared libraries loaded.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
variants=0
if [ "${1:-}" = --variants ]; then variants=1; shift; fi
runs="${1:-200}"
case "$runs" in
    '' | *[!0-9]*) echo "bench-startup.sh: RUNS must be a whole number, not '$runs' (usage: scripts/bench-startup.sh [--variants] [RUNS])" >&2; exit 64 ;;
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

# build LABEL SCRATCH PACKAGE FLAGS... : a release build; sets $bin_path.
build() {
    local label="$1" scratch_path="$2" package="$3"
    shift 3
    echo "[bench-startup] building $label (swift build -c release $* in $scratch_path)" >&2
    swift build -c release --package-path "$package" --scratch-path "$scratch_path" "$@" >&2
    bin_path="$(swift build -c release --package-path "$package" --scratch-path "$scratch_path" "$@" --show-bin-path)"
}

build "imgpolicy" "$root/.build" "$root" --product imgpolicy "${release_flags[@]}"
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
    .executableTarget(name: "hello-curl", linkerSettings: [.linkedLibrary("curl")]),
])
EOF
write_main() { mkdir -p "$hello_package/Sources/$1"; printf '%s\n' "${@:2}" >"$hello_package/Sources/$1/main.swift"; }
write_main hello 'print("hello, world")'
# Each variant uses what it imports, so that the import cannot be dropped.
write_main hello-foundation 'import Foundation' 'if ProcessInfo.processInfo.processIdentifier > 0 { print("hello, world") }'
write_main hello-essentials 'import FoundationEssentials' 'if ProcessInfo.processInfo.processIdentifier > 0 { print("hello, world") }'
write_main hello-curl 'print("hello, world")'

build "hello world" "$scratch/hello-build" "$hello_package" "${release_flags[@]}"
hello="$bin_path/hello"

cache="$(mktemp -d "${TMPDIR:-/tmp}/imgpolicy-startup-cache.XXXXXX")"
results="$(mktemp "${TMPDIR:-/tmp}/imgpolicy-startup.XXXXXX.json")"
trap 'rm -rf "$cache" "$results"' EXIT
decision=(--network wifi --item "$root/examples/item.json" --cache-dir "$cache")
"$imgpolicy" "${decision[@]}" >/dev/null || { echo "bench-startup.sh: the decision failed: $imgpolicy ${decision[*]}" >&2; exit 1; }

commands=(--command-name decision "$(printf '%q ' "$imgpolicy" "${decision[@]}")"
          --command-name hello-world "$(printf '%q' "$hello")")
if [ "$variants" = 1 ]; then
    # The other way of linking the Swift runtime than release_flags.
    if [ "${#release_flags[@]}" -eq 0 ]; then other=(--static-swift-stdlib); this=dynamic; that=static
    else other=(); this=static; that=dynamic; fi
    hello_bin="$bin_path"
    build "hello world, $that Swift runtime" "$scratch/hello-build-$that" "$hello_package" "${other[@]}"
    other_hello_bin="$bin_path"
    build "imgpolicy, $that Swift runtime" "$scratch/imgpolicy-$that" "$root" --product imgpolicy "${other[@]}"
    other_imgpolicy="$bin_path/imgpolicy"
    commands+=(--command-name "decision ($that runtime)" "$(printf '%q ' "$other_imgpolicy" "${decision[@]}")")
    for name in hello-foundation hello-essentials hello-curl; do
        commands+=(--command-name "$name" "$(printf '%q' "$hello_bin/$name")")
    done
    for name in hello hello-foundation hello-essentials hello-curl; do
        commands+=(--command-name "$name ($that runtime)" "$(printf '%q' "$other_hello_bin/$name")")
    done
fi

# Every run starts with an empty cache folder (a decision opens the cache, which writes its marker).
hyperfine --shell=none --warmup 10 --runs "$runs" --style basic --export-json "$results" \
    --prepare "find $(printf '%q' "$cache") -mindepth 1 -delete" "${commands[@]}"

if [ "$variants" = 1 ]; then
    echo
    echo "| binary ($this Swift runtime unless said) | median ms | × hello world | size MB | shared libraries loaded |"
    echo "|---|---:|---:|---:|---:|"
    jq -r '.results[] | "\(.command)\t\(.median)"' "$results" | while IFS=$'\t' read -r name median; do
        case "$name" in
            decision) file="$imgpolicy" ;;
            "decision ($that runtime)") file="$other_imgpolicy" ;;
            hello-world) file="$hello" ;;
            *"($that runtime)") file="$other_hello_bin/${name%% *}" ;;
            *) file="$hello_bin/$name" ;;
        esac
        hello_median="$(jq -r '.results[] | select(.command == "hello-world") | .median' "$results")"
        size="$(stat -c %s "$file")"
        libraries="$(ldd "$file" | grep -c '=>' || true)"
        awk -v n="$name" -v m="$median" -v h="$hello_median" -v s="$size" -v l="$libraries" \
            'BEGIN { printf "| %s | %.2f | %.2f | %.1f | %d |\n", n, m * 1000, m / h, s / 1048576, l }'
    done
    echo
fi

jq -r '
  (.results | map({(.command): .median}) | add) as $m
  | "[bench-startup] median start-up: decision \($m.decision * 1000 * 100 | round / 100) ms, hello world \($m["hello-world"] * 1000 * 100 | round / 100) ms; ratio \($m.decision / $m["hello-world"] * 100 | round / 100) × (goal: at most 2 ×)"
' "$results"
