#!/usr/bin/env bash
# The fetch benchmark: starts nginx-light (installed when missing) on a loopback port with the
# project's own config, serves 5,000 distinct 10 KiB images, and in one run fetches them with the
# library, with `curl --parallel --parallel-max 8`, with Foundation's URLSession and with
# AsyncHTTPClient (8 connections per host each); then a warm pass from the disk cache, memory-cache
# hits, and "is it cached?" on a 100,000-entry index.
#
#   ./scripts/bench-fetch.sh               the whole benchmark (`fetch-benchmark run`)
#   ./scripts/bench-fetch.sh compare [N]   the transport against AsyncHTTPClient alone, N interleaved
#                                          rounds (default 15) after a warm-up: medians, CPU times
#                                          (the client's, nginx's, other processes')
# The benchmark is in the Benchmarks package (Benchmarks/Package.swift), which depends on
# AsyncHTTPClient and so SwiftNIO: its first release build takes minutes; later runs reuse it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

source scripts/nginx.sh
if ! command -v curl >/dev/null 2>&1; then
    say "installing curl for the benchmark"
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq curl >/dev/null
fi

echo "[bench] building in release mode"
swift build -c release --package-path Benchmarks --product fetch-benchmark 2>&1 | tail -n 5
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/fetch-benchmark"

work=$(mktemp -d /tmp/imgpolicy-bench-XXXXXX)
chmod 755 "$work"
source scripts/free-port.sh
port=$(free_port)
cleanup() {
    stop_nginx "$work"
    rm -rf "$work"
}
trap cleanup EXIT

count=${IMGPOLICY_BENCH_COUNT:-5000}
echo "[bench] generating $count images of 10 KiB in $work/www"
"$bench" generate "$work/www" "$count"
echo "[bench] starting nginx on 127.0.0.1:$port"
start_nginx "$work/www" "$port" "$work"
for _ in $(seq 1 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/0.png" && break
    sleep 0.1
done
# nginx's CPU time per pass is read from /proc by the benchmark.
export IMGPOLICY_BENCH_NGINX_PID="$(cat "$work/nginx/nginx.pid")"
if [ "${1:-}" = compare ]; then
    "$bench" compare "http://127.0.0.1:$port" "$count" "${2:-15}"
else
    "$bench" run "http://127.0.0.1:$port" "$count" "$work"
fi
