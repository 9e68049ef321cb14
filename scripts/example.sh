#!/usr/bin/env bash
# Sets up, builds imgpolicy, and runs it on the bundled examples: the decision for one item on
# cellular (the card's command), the list on each kind of network, then --fetch against nginx on
# 127.0.0.1 serving examples/images (installed when missing): from the network, then from disk,
# then offline.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "[example] building imgpolicy (swift build)"
swift build --product imgpolicy 2>&1 | tail -n 1
bin="$(swift build --show-bin-path)/imgpolicy"

run() { echo; echo "\$ imgpolicy $*"; "$bin" "$@"; }
# Private settings and cache folders, so the example neither reads nor changes yours.
work="$(mktemp -d /tmp/imgpolicy-example-XXXXXX)"
chmod 755 "$work"
export XDG_CONFIG_HOME="$work/config" XDG_CACHE_HOME="$work/cache"
source scripts/nginx.sh
trap 'stop_nginx "$work"; rm -rf "$work"' EXIT

run --network cellular --item examples/item.json
run --network cellular --item examples/items.json --set alwaysDownloadOriginalImage=true
run --network wifi --item examples/items.json --json
run --network offline --cached thumbnail --item examples/items.json
run --network cellular --expensive --item examples/items.json --policy low-data --explain
run network

echo
echo "[example] serving examples/images on 127.0.0.1:18090 with nginx"
mkdir -p "$work/www" && cp examples/images/*.png "$work/www/" && chmod -R a+rX "$work/www"
start_nginx "$work/www" 18090 "$work"
run --network cellular --item examples/local-items.json --fetch
run --network cellular --item examples/local-items.json --fetch
run --network wifi --item examples/local-items.json --fetch --json
run --network offline --item examples/local-items.json --fetch
run cache list
