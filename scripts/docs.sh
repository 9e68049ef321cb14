#!/usr/bin/env bash
# Builds the DocC documentation of every library module (swift-docc-plugin) into .build/docs/, one
# archive per module, and fails on any DocC warning (an unresolved ``Symbol`` or <doc:Article> link,
# an undocumented parameter, a Topics entry that names nothing) and on any public symbol without a
# doc comment of its own.
#
#   ./scripts/docs.sh                      # .build/docs/<Module>.doccarchive, for `docc preview` or Xcode
#   ./scripts/docs.sh --static-hosting     # the same, transformed for a static web server
#                                          # (serve .build/docs/<Module>.doccarchive/ at /)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh >/dev/null

modules=(Policy Fetch LinuxNetwork Decoding PolicyUserDefaults PolicyTesting FetchTesting)
output=.build/docs
hosting=()
case "${1:-}" in
    "") ;;
    --static-hosting) hosting=(--transform-for-static-hosting) ;;
    *) echo "usage: scripts/docs.sh [--static-hosting]" >&2; exit 64 ;;
esac

targets=()
for module in "${modules[@]}"; do targets+=(--target "$module"); done

echo "[docs] building the documentation of ${modules[*]} (swift package generate-documentation)"
# One invocation for every module: the symbol graphs come from one build. The plugin writes each
# archive to .build/plugins/Swift-DocC/outputs/; they are moved to $output below.
swift package --disable-sandbox generate-documentation "${targets[@]}" \
    --warnings-as-errors --experimental-skip-synthesized-symbols "${hosting[@]}"

# A public symbol with no doc comment of its own (none at all, or only the one inherited from a
# standard library protocol, "A textual representation of this instance.") fails the run. DocC
# itself does not warn about those, so the symbol graphs the plugin extracted are read here.
symbols=()
for module in "${modules[@]}"; do
    symbols+=($(find .build -path "*/extracted-symbols/docc/$module/*.symbols.json"))
done
python3 - "${modules[@]}" "${symbols[@]}" <<'EOF'
import json, sys
modules = {a for a in sys.argv[1:] if not a.endswith(".symbols.json")}
missing = []
for path in (a for a in sys.argv[1:] if a.endswith('.symbols.json')):
    for symbol in json.load(open(path))['symbols']:
        uri = symbol.get('location', {}).get('uri', '')
        if '/Sources/' not in uri or symbol.get('accessLevel') not in ('public', 'open'):
            continue
        comment = symbol.get('docComment')
        if comment and comment.get('module', '') in modules | {''}:
            continue
        where = uri.split('/Sources/', 1)[1]
        line = symbol['location']['position']['line'] + 1
        missing.append(f"Sources/{where}:{line}: {'.'.join(symbol['pathComponents'])} ({symbol['kind']['displayName']}) has no doc comment")
for entry in sorted(set(missing)):
    print(entry, file=sys.stderr)
if missing:
    sys.exit(f"[docs] {len(set(missing))} public symbol(s) without a doc comment")
EOF

rm -rf "$output" && mkdir -p "$output"
for module in "${modules[@]}"; do
    mv ".build/plugins/Swift-DocC/outputs/$module.doccarchive" "$output/"
done
echo "[docs] no warnings; archives in $output/:"
for module in "${modules[@]}"; do echo "  $output/$module.doccarchive"; done
echo "[docs] to browse one: swift package --disable-sandbox preview-documentation --target Policy"
