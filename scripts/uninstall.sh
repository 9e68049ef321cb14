#!/usr/bin/env bash
# Removes what scripts/install.sh installed under PREFIX (default /usr/local): exactly the files
# listed in PREFIX/share/imgpolicy/install-manifest, then the folders that list says the install
# created, when they are empty (a folder holding anything else stays), then the manifest itself.
# Nothing that is not listed is ever removed. Without a manifest it removes nothing and says so
# (exit 66). A manifest holding a line install.sh never writes (an absolute path, a '..', an
# unknown kind) is refused as a whole before anything is removed (exit 65).
#
# Usage: scripts/uninstall.sh [PREFIX]
set -euo pipefail

fail() { printf 'uninstall.sh: %s\n' "$2" >&2; exit "$1"; }
say() { printf '[uninstall] %s\n' "$*"; }

[ $# -le 1 ] || fail 64 "too many arguments: usage: scripts/uninstall.sh [PREFIX] (default /usr/local)"
prefix="${1:-/usr/local}"
[ -n "$prefix" ] || fail 64 "PREFIX is empty: give the folder imgpolicy was installed in"
case "$prefix" in
    /*) ;;
    *) prefix="$PWD/$prefix" ;;
esac
prefix="${prefix%/}"
[ -n "$prefix" ] || fail 64 "refusing to uninstall from / : give the PREFIX given to install.sh"
manifest="$prefix/share/imgpolicy/install-manifest"

[ -f "$manifest" ] || fail 66 "no install manifest at $manifest: nothing was installed there by scripts/install.sh (or it was uninstalled already); nothing removed"
[ -r "$manifest" ] || fail 66 "cannot read $manifest (permission denied): run as the user who installed; nothing removed"

# Check every line first: all or nothing.
files=()
folders=()
number=0
while IFS= read -r line || [ -n "$line" ]; do
    number=$((number + 1))
    case "$line" in '' | '#'*) continue ;; esac
    kind="${line%% *}"
    path="${line#* }"
    [ "$kind" != "$line" ] || fail 65 "$manifest line $number is not 'file PATH' or 'dir PATH'; nothing removed"
    case "/$path/" in
        */../* | */./* | *//*) [ "$kind/$path" = dir/. ] || fail 65 "$manifest line $number names '$path', outside the prefix or not a plain relative path; nothing removed" ;;
    esac
    case "$path" in *[[:cntrl:]]*) fail 65 "$manifest line $number holds a control character; nothing removed" ;; esac
    case "$kind" in
        file) files+=("$path") ;;
        dir) folders+=("$path") ;;
        *) fail 65 "$manifest line $number has the unknown kind '$kind' (only 'file' and 'dir'); nothing removed" ;;
    esac
done <"$manifest"

removed=0
for path in ${files[@]+"${files[@]}"}; do
    target="$prefix/$path"
    if [ -f "$target" ] || [ -L "$target" ]; then
        rm -f -- "$target" || fail 74 "cannot remove $target"
        removed=$((removed + 1))
    elif [ -e "$target" ]; then
        say "left $target: the manifest lists a file, but it is not one now"
    fi
done
rm -f -- "$manifest" || fail 74 "cannot remove $manifest"

# Folders deepest first, each only when empty.
kept=0
while IFS= read -r path; do
    [ -n "$path" ] || continue
    if [ "$path" = . ]; then target="$prefix"; else target="$prefix/$path"; fi
    [ -d "$target" ] && [ ! -L "$target" ] || continue
    rmdir -- "$target" 2>/dev/null || kept=$((kept + 1))
done < <(for path in ${folders[@]+"${folders[@]}"}; do
             depth="${path//[!\/]/}"
             if [ "$path" = . ]; then printf '%s\t%s\n' -1 "$path"; else printf '%s\t%s\n' "${#depth}" "$path"; fi
         done | sort -t$'\t' -k1,1nr | cut -f2)

say "removed $removed files of imgpolicy from $prefix$([ "$kept" -eq 0 ] || echo "; kept $kept folders it had created that now hold other files")"
