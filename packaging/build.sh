#!/usr/bin/env bash
# Build the one-folder desktop bundle: dist/bm25desk/ (run from anywhere).
#
#   bash packaging/build.sh            # build, then print the bundle's size
#   bash packaging/build.sh --check    # ... and run `dist/bm25desk/bm25desk --self-test` offscreen
#
# Uses the project's venv (.venv, created and filled with `pip install -e .` if missing) and
# installs PyInstaller into it if it is not there. The bundle runs on a Linux machine with no
# Python; it needs the system libraries Qt needs (libgl1 libegl1 libfontconfig1 libxkbcommon0 ...).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
PYINSTALLER_VERSION=6.22.3

if [ ! -x "$PY" ]; then
    echo "== creating .venv"
    python3 -m venv .venv
    PY=$ROOT/.venv/bin/python
    "$PY" -m pip install -q -e .
fi
if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
    echo "== installing PyInstaller $PYINSTALLER_VERSION into the venv"
    "$PY" -m pip install -q "pyinstaller==$PYINSTALLER_VERSION"
fi

echo "== building dist/bm25desk (PyInstaller $("$PY" -m PyInstaller --version))"
started=$(date +%s)
# The icons and the sample are package data: render_icons.py and the UI's sample copy made them.
QT_QPA_PLATFORM=offscreen "$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" packaging/bm25desk.spec
echo "== built in $(( $(date +%s) - started )) s"

size=$(du -sh dist/bm25desk | cut -f1)
files=$(find dist/bm25desk -type f | wc -l)
echo "== bundle: dist/bm25desk  $size in $files files  (run: dist/bm25desk/bm25desk)"

if [ "${1:-}" = "--check" ]; then
    echo "== self-test of the bundle"
    QT_QPA_PLATFORM=offscreen dist/bm25desk/bm25desk --self-test
fi
