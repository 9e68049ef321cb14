#!/usr/bin/env bash
# Sets up, builds imgpolicy, and runs it on the bundled examples: the decision for one item on
# cellular (the card's command), then the list on each kind of network, as JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "[example] building imgpolicy (swift build)"
swift build --product imgpolicy 2>&1 | tail -n 1
bin="$(swift build --show-bin-path)/imgpolicy"

run() { echo; echo "\$ imgpolicy $*"; "$bin" "$@"; }
# A private settings folder, so the example neither reads nor changes your settings.
export XDG_CONFIG_HOME="$(mktemp -d)"
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT

run --network cellular --item examples/item.json
run --network cellular --item examples/items.json --set alwaysDownloadOriginalImage=true
run --network wifi --item examples/items.json --json
run --network offline --cached thumbnail --item examples/items.json
run --network cellular --expensive --item examples/items.json --policy low-data --explain
run network
