#!/usr/bin/env bash
# The CDN benchmark of issue 18: `imgpolicy simulate --photos` (release build) scrolls 1,000 rows
# 400 px wide, 8 on screen, 20 rows/s on average, against its own loopback server serving every
# width of seven real photographs (scripts/cdn-photos.sh makes them once: 12 MP originals and
# 15 widths at JPEG quality 80; latency 20–80 ms per URL), with the fit-display policy: first on
# Wi-Fi, then on cellular. Each run's report ends with the goals: every row shown at least 400 px
# wide, for at most 1.2 × the ideal bytes (each shown row's narrowest covering rung, once), and
# gives the bytes against the original-only scheme (measured by the naive pass) and against
# today's 160-px thumbnails. Extra arguments are passed on to both runs and win (e.g. --seed 2).
# PHOTOS=DIR uses another photo folder (default .build/cdn-photos).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
photos=${PHOTOS:-.build/cdn-photos}
./scripts/cdn-photos.sh "$photos"
echo "[bench] building in release mode"
swift build -c release --product imgpolicy 2>&1 | tail -n 3
imgpolicy="$(swift build -c release --show-bin-path)/imgpolicy"
echo "[bench] load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
trap 'echo "[bench] load average after: $(cut -d" " -f1-3 /proc/loadavg)"' EXIT
status=0
for network in wifi cellular; do
    echo "[bench] imgpolicy simulate --items 1000 --visible 8 --latency 20-80 --policy fit-display --photos $photos --display-width 400 --network-script $network@0s $*"
    "$imgpolicy" simulate --items 1000 --visible 8 --latency 20-80 --policy fit-display --photos "$photos" \
        --display-width 400 --network-script "$network@0s" "$@" || status=$?
done
exit $status
