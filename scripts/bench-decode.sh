#!/usr/bin/env bash
# Decoding and downsampling, side by side in one run with vipsthumbnail (libvips) and ImageMagick's
# `convert -thumbnail`: a 4000x3000 JPEG to fit 400x300, a 2000x2000 PNG and a lossy WebP to fit
# 200x200. For each tool and image: the wall time of one process (median of RUNS, default 5) and
# its peak memory (maximum resident set size, GNU time), plus, for the library, the time of a
# decode inside a running process (median of 10). Then the decoded cache's hit time.
# Installs libvips-tools, imagemagick and time (Debian) for this benchmark only.
# Built from the Benchmarks package (Benchmarks/Package.swift), which depends on this one by path.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
runs=${RUNS:-5}
missing=()
for package in libvips-tools imagemagick time; do dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package"); done
if [ ${#missing[@]} -gt 0 ]; then
    echo "[bench] installing ${missing[*]} (for this benchmark only)"
    if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "[bench] building in release mode"
swift build -c release --package-path Benchmarks --product decode-benchmark 2>&1 | tail -n 1
bench="$(swift build -c release --package-path Benchmarks --show-bin-path)/decode-benchmark"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bench" make "$work"

# median wall ms and median peak KiB of `runs` runs of a command
measure() {
    local times=() memories=()
    for _ in $(seq "$runs"); do
        /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>&1
        read -r seconds kib < "$work/time"
        times+=("$(awk -v s="$seconds" 'BEGIN { printf "%.0f", s * 1000 }')")
        memories+=("$kib")
    done
    local t m
    t=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
    m=$(printf '%s\n' "${memories[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
    printf '%6s ms %8.1f MB' "$t" "$(awk -v k="$m" 'BEGIN { print k / 1024 }')"
}

printf '%-28s %-30s %-30s %-30s %s\n' "image (to fit)" "imgpolicy Decoding (process)" "vipsthumbnail" "convert -thumbnail" "Decoding in-process median/best"
for spec in "photo.jpg 400x300" "square.png 200x200" "square.webp 200x200"; do
    read -r file size <<<"$spec"
    input="$work/$file"
    ours=$(measure "$bench" once "$input" "$size" "$work/ours.png")
    vips=$(measure vipsthumbnail "$input" --size "$size" -o "$work/vips.png")
    magick=$(measure convert "$input" -thumbnail "$size" "$work/magick.png")
    inproc=$("$bench" repeat "$input" "$size" 10)
    printf '%-28s %-30s %-30s %-30s %s\n' "$file $(identify -format '%wx%h' "$input") ($size)" "$ours" "$vips" "$magick" "$inproc ms"
done
echo "decoded cache hit: $("$bench" cache-hit)"
echo "versions: $(vipsthumbnail --vips-version 2>/dev/null | head -n 1); $(convert -version | head -n 1)"
