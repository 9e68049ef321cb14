#!/usr/bin/env bash
# Draws the module graph of docs/architecture.md from Package.swift: every target under Sources/
# (test targets, test support and examples left out) and the targets it depends on, as a Mermaid
# flowchart between the two marker lines of that page.
#
#   ./scripts/architecture.sh          # rewrites the graph in docs/architecture.md
#   ./scripts/architecture.sh --check  # exits 1, naming the page, when the graph is not Package.swift's
#
# CI runs the check (.ci/run): a dependency added to Package.swift without the picture fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
page=docs/architecture.md
mode=write
case "$#:${1:-}" in
    0:) ;;
    1:--check) mode=check ;;
    *) echo "usage: scripts/architecture.sh [--check]" >&2; exit 64 ;;
esac

manifest="$(mktemp)"
trap 'rm -f "$manifest"' EXIT
swift package dump-package > "$manifest"

python3 - "$manifest" "$page" "$mode" <<'EOF'
import json, sys

manifest, page, mode = sys.argv[1], sys.argv[2], sys.argv[3]
package = json.load(open(manifest))
begin, end = "<!-- module graph: begin (scripts/architecture.sh) -->", "<!-- module graph: end -->"

targets = {}
for target in package["targets"]:
    path = target.get("path") or ""
    if target["type"] not in ("regular", "executable") or (path and not path.startswith("Sources")):
        continue
    names = []
    for dependency in target["dependencies"]:
        # {"byName": [name, condition]} or {"target": [name, condition]}; products are external.
        for kind in ("byName", "target"):
            if kind in dependency:
                names.append(dependency[kind][0])
    targets[target["name"]] = (target["type"], names)

lines = ["```mermaid", "flowchart BT"]
for name in sorted(targets):
    kind, _ = targets[name]
    shape = f'{name}(["{name} (command)"])' if kind == "executable" else (
        f"{name}[/{name}/]" if name.startswith("C") and name[1:2].isupper() else f"{name}[{name}]")
    lines.append(f"    {shape}")
for name in sorted(targets):
    for dependency in sorted(set(targets[name][1])):
        if dependency in targets:
            lines.append(f"    {name} --> {dependency}")
lines.append("```")
graph = "\n".join(lines)

text = open(page).read()
if begin not in text or end not in text:
    sys.exit(f"{page}: the marker lines of the module graph are missing")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
updated = f"{head}{begin}\n{graph}\n{end}{tail}"
if mode == "check":
    if updated != text:
        sys.exit(f"{page}: the module graph is not Package.swift's: run ./scripts/architecture.sh")
    print(f"[architecture] {page}: the module graph is Package.swift's")
else:
    open(page, "w").write(updated)
    print(f"[architecture] {page}: module graph written ({len(targets)} modules)")
EOF
