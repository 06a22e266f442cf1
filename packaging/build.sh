#!/usr/bin/env bash
# Build the one-folder desktop bundle: dist/bm25desk/ (run from anywhere).
#
#   bash packaging/build.sh            # build, then print the bundle's size
#   bash packaging/build.sh --check    # ... and run `dist/bm25desk/bm25desk --self-test` offscreen
#
# Uses the project's venv (.venv, created if missing) and installs bm25desk and PyInstaller into
# it at the versions of constraints.txt. The bundle runs on a Linux machine with no
# Python; it needs the system libraries Qt needs (libgl1 libegl1 libfontconfig1 libxkbcommon0 ...).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}

if [ ! -x "$PY" ]; then
    echo "== creating .venv"
    python3 -m venv .venv
    PY=$ROOT/.venv/bin/python
fi
# The exact versions CI tested (constraints.txt): the bundle ships what was tested.
echo "== installing bm25desk and PyInstaller into the venv (pinned by constraints.txt)"
"$PY" -m pip install -q -c constraints.txt -e ".[bundle]"

echo "== building dist/bm25desk (PyInstaller $("$PY" -m PyInstaller --version))"
started=$(date +%s)
# The icons and the sample are package data (bm25desk/data); render_icons.py made the icons.
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
