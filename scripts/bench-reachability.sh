#!/usr/bin/env bash
# What reading the network state costs (the event-driven LinuxReachability's stored value against
# a detection per read, as the polling provider did), and the event latency: from
# `ip link set … down` inside a network namespace to the consumer seeing offline, median and
# worst of 50 (release build; the latency part needs root for `ip netns`).
# Built from the Benchmarks package (Benchmarks/Package.swift), which depends on this one by path.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "[bench] building in release mode"
swift build -c release --package-path Benchmarks --product reachability-benchmark 2>&1 | tail -n 3
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/reachability-benchmark"
"$bench" reads
if [ "$(id -u)" -ne 0 ]; then
    echo "[bench] SKIPPED the event latency: ip netns needs root" >&2
    exit 0
fi
namespace="imgpolicy-bench-$$"
ip netns add "$namespace"
trap 'ip netns del "$namespace"' EXIT
ip -n "$namespace" link add rmnet0 type veth peer name peer0
ip -n "$namespace" addr add 10.200.0.1/24 dev rmnet0
ip -n "$namespace" link set peer0 up
ip -n "$namespace" link set rmnet0 up
ip -n "$namespace" route add default via 10.200.0.2 dev rmnet0
ip netns exec "$namespace" "$bench" latency rmnet0 10.200.0.2 50
