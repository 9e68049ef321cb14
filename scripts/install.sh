#!/usr/bin/env bash
# Installs imgpolicy under PREFIX (default /usr/local): builds the release binary, then installs
#   PREFIX/bin/imgpolicy
#   PREFIX/share/imgpolicy/policies/*.json           (found by name: --policy low-data)
#   PREFIX/share/man/man1/imgpolicy.1                (swift-argument-parser's generate-manual plugin)
#   PREFIX/share/bash-completion/completions/imgpolicy
#   PREFIX/share/zsh/site-functions/_imgpolicy
#   PREFIX/share/fish/vendor_completions.d/imgpolicy.fish
# and writes PREFIX/share/imgpolicy/install-manifest, the list scripts/uninstall.sh removes (the
# files above, and the folders this script created). Safe to run again: files are replaced
# atomically, folders it created stay recorded, and files a previous install listed that this one
# no longer installs (a policy that was dropped) are removed.
#
# Usage: scripts/install.sh [PREFIX]
# Environment: IMGPOLICY_SKIP_SETUP=1 skips scripts/setup.sh (prerequisites already there);
# IMGPOLICY_SCRATCH_PATH=DIR builds in DIR instead of .build (the install test uses
# .build-install, as `swift test` holds .build's lock while the tests run).
set -euo pipefail

fail() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }
report() { printf "[install] %s\n" "$*"; }

[ $# -le 1 ] || fail "too many arguments: usage: scripts/install.sh [PREFIX] (default /usr/local)"
prefix="${1:-/usr/local}"
[ -n "$prefix" ] || fail "PREFIX is empty: give a folder, e.g. scripts/install.sh ~/.local"
case "$prefix" in
    /*) ;;
    *) prefix="$PWD/$prefix" ;;
esac
prefix="${prefix%/}"
[ -n "$prefix" ] || fail "refusing to install into / : give a folder such as /usr/local"
if [ -e "$prefix" ] && [ ! -d "$prefix" ]; then fail "$prefix exists and is not a folder"; fi

cd "$(dirname "$0")/.."
root="$PWD"

# Check that PREFIX can be written before the (long) build, by its deepest existing folder.
existing="$prefix"
while [ ! -d "$existing" ]; do existing="$(dirname "$existing")"; done
[ -w "$existing" ] || fail "cannot write to $existing (permission denied): run as root, or give a PREFIX you own, e.g. scripts/install.sh ~/.local"

if [ "${IMGPOLICY_SKIP_SETUP:-0}" != 1 ]; then
    # shellcheck source=setup.sh
    source scripts/setup.sh
elif ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
command -v swift >/dev/null 2>&1 || fail "no Swift toolchain on PATH (run scripts/setup.sh)"

scratch="${IMGPOLICY_SCRATCH_PATH:-.build}"
case "$scratch" in
    /*) ;;
    *) scratch="$root/$scratch" ;;
esac
# The release flags (scripts/release-flags.sh), shared with scripts/bench-startup.sh.
# shellcheck source=release-flags.sh
source scripts/release-flags.sh
report "building the release binary (swift build -c release ${release_flags[*]} --scratch-path $scratch)"
swift build -c release "${release_flags[@]}" --scratch-path "$scratch" || fail "the release build failed (see above); nothing was installed"
bin="$(swift build -c release "${release_flags[@]}" --scratch-path "$scratch" --show-bin-path)/imgpolicy"
[ -x "$bin" ] || fail "the release build left no executable at $bin; nothing was installed"

# Everything is made in a staging folder first, so that a failure installs nothing.
staging="$(mktemp -d "${TMPDIR:-/tmp}/imgpolicy-install.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
# The binary is copied out before the man page is made: the manual plugin builds the package's
# products again in release without the flags above, into the same folder, which replaced the
# static binary with a dynamically linked one that needs the toolchain's libraries.
cp "$bin" "$staging/imgpolicy" || fail "cannot copy $bin to $staging; nothing was installed"
bin="$staging/imgpolicy"

report "generating the man page (swift package plugin generate-manual)"
manual_date="$(git -C "$root" log -1 --format=%cs 2>/dev/null || true)"
[ -n "$manual_date" ] || manual_date="$(date -u +%Y-%m-%d)"
swift package --scratch-path "$scratch" plugin generate-manual --date "$manual_date" >"$staging/generate-manual.log" 2>&1 \
    || { cat "$staging/generate-manual.log" >&2; fail "generating the man page failed (see above); nothing was installed"; }
manual="$scratch/plugins/GenerateManual/outputs/cli/imgpolicy.1"
[ -s "$manual" ] || fail "the manual plugin wrote no $manual; nothing was installed"

# relative path in PREFIX <TAB> mode <TAB> source
plan="$staging/plan"
: >"$plan"
add() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$plan"; }
add bin/imgpolicy 755 "$bin"
shopt -s nullglob
policies=(policies/*.json)
[ ${#policies[@]} -gt 0 ] || fail "no policies/*.json in $root; nothing was installed"
for policy in "${policies[@]}"; do
    add "share/imgpolicy/policies/$(basename "$policy")" 644 "$root/$policy"
done
add share/man/man1/imgpolicy.1 644 "$manual"
for shell in bash zsh fish; do
    "$bin" --generate-completion-script "$shell" >"$staging/completion.$shell" \
        || fail "imgpolicy --generate-completion-script $shell failed; nothing was installed"
done
add share/bash-completion/completions/imgpolicy 644 "$staging/completion.bash"
add share/zsh/site-functions/_imgpolicy 644 "$staging/completion.zsh"
add share/fish/vendor_completions.d/imgpolicy.fish 644 "$staging/completion.fish"

manifest_name=share/imgpolicy/install-manifest
manifest="$prefix/$manifest_name"

# Folders: those this install creates, and those an earlier install created (still ours).
declare -A created=()
if [ -f "$manifest" ]; then
    while IFS=' ' read -r kind path; do
        if [ "$kind" = dir ] && [ -d "$prefix/$path" ]; then created["$path"]=1; fi
    done <"$manifest"
fi
[ -d "$prefix" ] || created["."]=1
while IFS=$'\t' read -r path _ _; do
    folder="$(dirname "$path")"
    while [ "$folder" != . ]; do
        [ -d "$prefix/$folder" ] || created["$folder"]=1
        folder="$(dirname "$folder")"
    done
done <<<"$(cut -f1 "$plan"; echo "$manifest_name")"

# Files an earlier install listed that this one does not install any more.
stale=()
if [ -f "$manifest" ]; then
    while IFS=' ' read -r kind path; do
        [ "$kind" = file ] || continue
        cut -f1 "$plan" | grep -qxF -- "$path" || stale+=("$path")
    done <"$manifest"
fi

# The manifest is written before any file is copied, so that whatever an interrupted install
# left behind is listed (uninstall.sh skips listed files that are missing).
{
    echo "# imgpolicy $("$bin" --version) installed by scripts/install.sh; removed by scripts/uninstall.sh."
    echo "# Paths are relative to the prefix. 'file': installed; 'dir': a folder the install created."
    cut -f1 "$plan" | sed 's/^/file /'
    for folder in "${!created[@]}"; do echo "dir $folder"; done | sort
} >"$staging/install-manifest"

mkdir -p "$prefix/share/imgpolicy" || fail "cannot create $prefix/share/imgpolicy"
cp "$staging/install-manifest" "$manifest.tmp.$$" && mv -f "$manifest.tmp.$$" "$manifest" \
    || fail "cannot write $manifest"

while IFS=$'\t' read -r path mode source; do
    target="$prefix/$path"
    mkdir -p "$(dirname "$target")" || fail "cannot create $(dirname "$target")"
    install -m "$mode" "$source" "$target.tmp.$$" && mv -f "$target.tmp.$$" "$target" \
        || fail "cannot install $target"
done <"$plan"

for path in ${stale[@]+"${stale[@]}"}; do
    case "$path" in /* | ../* | */../* | */.. | ..) continue ;; esac
    if [ -f "$prefix/$path" ] || [ -L "$prefix/$path" ]; then
        rm -f "$prefix/$path" && report "removed $prefix/$path (installed before, not any more)"
    fi
done

report "installed imgpolicy $("$prefix/bin/imgpolicy" --version) in $prefix ($(grep -c '^file ' "$manifest") files; list: $manifest)"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) report "note: $prefix/bin is not on PATH" ;;
esac
