#!/usr/bin/env bash
# Builds the DocC documentation of every library module (swift-docc-plugin) into one combined
# archive, .build/docs/imgpolicy.doccarchive, ready for a static web server, and fails on any DocC
# warning (an unresolved ``Symbol`` or <doc:Article> link, an undocumented parameter, a Topics entry
# that names nothing) and on any public symbol without a doc comment of its own.
#
#   ./scripts/docs.sh                          # serve .build/docs/imgpolicy.doccarchive/ at /
#   ./scripts/docs.sh --hosting-base-path BASE # ... at /BASE/ (a project site, say)
#
# Combined documentation (the plugin's --enable-experimental-combined-documentation) is what lets
# one module's pages link to another's: ``/Policy/ImagePolicy`` or <doc:/Policy/WritingAPolicy>
# from the Fetch catalog.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh >/dev/null
# Package.swift adds swift-docc-plugin only when this is set (apps depending on imgpolicy never fetch it).
export IMGPOLICY_DOCS=1

modules=(Support Policy HTTPSemantics Transport Caching Accounting Pipeline Lists Fetch LinuxNetwork Decoding PolicyUserDefaults PolicyTesting FetchTesting)
output=.build/docs
archive=$output/imgpolicy.doccarchive
usage() { echo "usage: scripts/docs.sh [--hosting-base-path BASE]" >&2; exit 64; }
hosting=()
case "$#:${1:-}" in
    0:) ;;
    2:--hosting-base-path) [ -n "$2" ] || usage; hosting=(--hosting-base-path "$2") ;;
    *) usage ;;
esac

targets=()
for module in "${modules[@]}"; do targets+=(--target "$module"); done

echo "[docs] building the documentation of ${modules[*]} (swift package generate-documentation)"
# One invocation for every module: the symbol graphs come from one build, each catalog is converted
# with its dependencies' archives at hand, and the archives are merged into one.
rm -rf "$output" && mkdir -p "$output"
touch "$output/.started"
swift package --disable-sandbox generate-documentation "${targets[@]}" \
    --enable-experimental-combined-documentation --output-path "$archive" \
    --warnings-as-errors --experimental-skip-synthesized-symbols "${hosting[@]}"

# A public symbol with no doc comment of its own (none at all, or only the one inherited from a
# standard library protocol, "A textual representation of this instance.") fails the run. DocC
# itself does not warn about those, so the symbol graphs the plugin extracted are read here.
# They are in .build/<triple>/extracted-symbols/<package identity>/<Module>/; only this run's count.
symbols=()
for module in "${modules[@]}"; do
    found=($(find .build -maxdepth 5 -path "*/extracted-symbols/*/$module/*.symbols.json" -newer "$output/.started"))
    [ ${#found[@]} -gt 0 ] || { echo "[docs] no symbol graph of $module under .build" >&2; exit 1; }
    symbols+=("${found[@]}")
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

rm -f "$output/.started"
echo "[docs] no warnings, every public symbol documented; the documentation is in $archive"
echo "[docs] to browse it: python3 -m http.server -d $archive 8000, then http://127.0.0.1:8000/documentation/policy"
