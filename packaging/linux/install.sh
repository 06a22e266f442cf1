#!/usr/bin/env bash
# Install the bm25desk bundle for the current user (no root needed):
#
#   bash packaging/linux/install.sh [BUNDLE_DIR]      # default BUNDLE_DIR: dist/bm25desk
#
# Puts the bundle in ~/.local/opt/bm25desk, a `bm25desk` link in ~/.local/bin, the menu entry in
# ~/.local/share/applications/bm25desk.desktop and the icon in ~/.local/share/icons/hicolor/<size>/apps
# ($XDG_DATA_HOME replaces ~/.local/share when set). Every file, link and folder it creates is
# listed in ~/.local/opt/bm25desk/.install-manifest, which uninstall.sh removes exactly. Installing
# again replaces the previous installation. Your indexes and settings (~/.local/share/bm25desk)
# are never touched.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bundle=$(cd "${1:-$root/dist/bm25desk}" 2>/dev/null && pwd) || {
    echo "install: no bundle at ${1:-$root/dist/bm25desk}; build it first: bash packaging/build.sh" >&2
    exit 1
}
[ -x "$bundle/bm25desk" ] || { echo "install: $bundle/bm25desk is not an executable bundle" >&2; exit 1; }

data_home=${XDG_DATA_HOME:-$HOME/.local/share}
opt=$HOME/.local/opt/bm25desk
bin=$HOME/.local/bin
apps=$data_home/applications
icons=$data_home/icons/hicolor
desktop_src=$here/bm25desk.desktop
icon_src=$root/resources/icons/hicolor

case "$opt" in
    *[\"\`\$\\]*) echo "install: cannot write a menu entry for a path containing \" \` \$ or \\: $opt" >&2; exit 1 ;;
esac

if [ -f "$opt/.install-manifest" ]; then
    echo "== replacing the installed bm25desk"
    bash "$here/uninstall.sh" --quiet
fi

manifest=$(mktemp)
trap 'rm -f "$manifest"' EXIT

# Create a folder (and its missing parents), recording the ones this install made.
make_dir() {
    local dir=$1 missing=()
    while [ ! -d "$dir" ]; do missing=("$dir" "${missing[@]}"); dir=$(dirname "$dir"); done
    for dir in "${missing[@]}"; do mkdir "$dir" && echo "d $dir" >>"$manifest"; done
}

echo "== bundle -> $opt"
make_dir "$(dirname "$opt")"
rm -rf "$opt.new"
cp -a "$bundle" "$opt.new"
mv "$opt.new" "$opt"
echo "d $opt" >>"$manifest"

echo "== command -> $bin/bm25desk"
make_dir "$bin"
if [ -e "$bin/bm25desk" ] || [ -L "$bin/bm25desk" ]; then
    echo "   $bin/bm25desk already exists and is not ours: left as it is (run $opt/bm25desk)" >&2
else
    ln -s "$opt/bm25desk" "$bin/bm25desk"
    echo "l $bin/bm25desk" >>"$manifest"
fi

echo "== icons -> $icons/<size>/apps/bm25desk.{png,svg}"
for src in "$icon_src"/*/apps/bm25desk.png "$icon_src"/scalable/apps/bm25desk.svg; do
    size=$(basename "$(dirname "$(dirname "$src")")")
    make_dir "$icons/$size/apps"
    dest=$icons/$size/apps/$(basename "$src")
    cp "$src" "$dest"
    chmod 644 "$dest"
    echo "f $dest" >>"$manifest"
done

echo "== menu entry -> $apps/bm25desk.desktop"
make_dir "$apps"
exec_path=$opt/bm25desk
case "$exec_path" in *" "*) exec_value="\"$exec_path\"" ;; *) exec_value=$exec_path ;; esac
while IFS= read -r line; do
    case "$line" in
        Exec=*) printf 'Exec=%s\n' "$exec_value" ;;
        TryExec=*) printf 'TryExec=%s\n' "$exec_path" ;;
        *) printf '%s\n' "$line" ;;
    esac
done <"$desktop_src" >"$apps/bm25desk.desktop"
chmod 644 "$apps/bm25desk.desktop"
echo "f $apps/bm25desk.desktop" >>"$manifest"
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$apps/bm25desk.desktop"
fi

# Refresh the desktop's caches only where they already exist: creating them would add files
# that other applications share and that uninstall.sh could not fairly remove.
if [ -f "$icons/icon-theme.cache" ] && command -v gtk-update-icon-cache >/dev/null; then
    gtk-update-icon-cache -f -t -q "$icons" || true
fi
if [ -f "$apps/mimeinfo.cache" ] && command -v update-desktop-database >/dev/null; then
    update-desktop-database -q "$apps" || true
fi

cp "$manifest" "$opt/.install-manifest"
echo "== installed: bm25desk is in the applications menu; from a terminal: $bin/bm25desk"
case ":$PATH:" in *":$bin:"*) ;; *) echo "   ($bin is not on your PATH)" ;; esac
echo "   remove it with: bash $here/uninstall.sh"
