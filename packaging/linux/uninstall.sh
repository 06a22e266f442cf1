#!/usr/bin/env bash
# Remove what packaging/linux/install.sh installed for the current user, and nothing else:
#
#   bash packaging/linux/uninstall.sh
#
# Reads ~/.local/opt/bm25desk/.install-manifest: removes the files and the link listed there, the
# bundle, then the folders the install created if they are empty now. Your indexes and settings
# (~/.local/share/bm25desk) are kept; the last line says how to delete them too.
set -euo pipefail

quiet=false
[ "${1:-}" = "--quiet" ] && quiet=true
say() { $quiet || echo "$@"; }

data_home=${XDG_DATA_HOME:-$HOME/.local/share}
opt=$HOME/.local/opt/bm25desk
manifest=$opt/.install-manifest
if [ ! -f "$manifest" ]; then
    echo "uninstall: bm25desk is not installed for this user (no $manifest)" >&2
    exit 1
fi

dirs=()
while read -r kind path; do
    case "$kind" in
        f) [ -f "$path" ] && rm -f "$path" && say "removed $path" ;;
        l)
            # Only our link: a `bm25desk` put there since by something else stays.
            if [ -L "$path" ] && [ "$(readlink "$path")" = "$opt/bm25desk" ]; then
                rm -f "$path" && say "removed $path"
            fi
            ;;
        d) dirs=("$path" "${dirs[@]}") ;;
    esac
done <"$manifest"

rm -rf "$opt"
say "removed $opt"
for dir in "${dirs[@]}"; do  # deepest first; folders that hold other things stay
    [ "$dir" = "$opt" ] && continue
    if [ -d "$dir" ] && rmdir "$dir" 2>/dev/null; then say "removed $dir/"; fi
done

icons=$data_home/icons/hicolor
apps=$data_home/applications
if [ -f "$icons/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null; then
    gtk-update-icon-cache -f -t -q "$icons" || true
fi
if [ -f "$apps/mimeinfo.cache" ] && command -v update-desktop-database >/dev/null; then
    update-desktop-database -q "$apps" || true
fi
say "bm25desk is uninstalled. Your indexes and settings are kept in $data_home/bm25desk"
say "(delete them with: rm -rf \"$data_home/bm25desk\")"
