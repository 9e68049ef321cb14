#!/usr/bin/env bash
# Makes the photo ladders that the CDN benchmarks serve (issue 18, docs/ladders.md): seven sample
# photographs that scikit-image ships (Debian's python3-skimage package, downloaded as a .deb and
# unpacked here, never installed), each turned into a 12-megapixel original (4000x3000: cropped to
# 4:3 at the centre, then enlarged with Lanczos; the samples are 451 to 1,411 px wide, so the
# original holds no more detail than they do, but it has a phone photo's pixel count and, as a
# JPEG, about a phone photo's size) and a ladder of widths encoded as a CDN would serve them (JPEG
# quality 80, 4:2:0, optimised Huffman tables, each width resized from the original with Lanczos).
# Writes DIR (default .build/cdn-photos): NAME/WIDTH.jpg and manifest.json (names, widths, bytes).
# Needs the network once (apt), for python3-pil when missing and the .deb; a DIR already made is
# kept. Nothing here runs at test or benchmark time.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build/cdn-photos}
if [ -f "$out/manifest.json" ]; then
    echo "[cdn-photos] $out is already made (remove it to make it again)"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
if ! python3 -c 'import PIL' 2>/dev/null; then
    echo "[cdn-photos] installing python3-pil"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-pil >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "[cdn-photos] fetching the sample photos (python3-skimage's .deb, unpacked, not installed)"
if ! (cd "$work" && apt-get download python3-skimage >/dev/null 2>&1); then
    $sudo apt-get update -qq
    (cd "$work" && apt-get download python3-skimage >/dev/null)
fi
dpkg-deb -x "$work"/python3-skimage_*.deb "$work/deb"
data=$(find "$work/deb" -type d -path '*skimage/data' | head -n 1)
mkdir -p "$out.tmp"
python3 scripts/cdn/make-ladders.py "$data" "$out.tmp"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "[cdn-photos] wrote $out"
