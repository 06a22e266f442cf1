"""Render ``bm25desk.svg`` to the PNG sizes a desktop needs, with Qt's own SVG renderer.

Writes ``resources/icons/hicolor/<n>x<n>/apps/bm25desk.png`` (the freedesktop layout the Linux
installer copies from) and ``bm25desk/data/icons/bm25desk-<n>.png`` plus the SVG itself (package
data: the app sets its window icon from these)::

    QT_QPA_PLATFORM=offscreen .venv/bin/python resources/icons/render_icons.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SVG = HERE / "bm25desk.svg"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
PACKAGE_ICONS = ROOT / "bm25desk" / "data" / "icons"


def render(renderer: QSvgRenderer, size: int) -> QImage:
    """Return the icon drawn at ``size`` × ``size`` pixels."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    return image


def main() -> int:
    """Render every size and the package copy; return the exit status."""
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        sys.stderr.write(f"cannot read {SVG}\n")
        return 1
    PACKAGE_ICONS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SVG, PACKAGE_ICONS / "bm25desk.svg")
    scalable = HERE / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SVG, scalable / "bm25desk.svg")
    for size in SIZES:
        image = render(renderer, size)
        target = HERE / "hicolor" / f"{size}x{size}" / "apps" / "bm25desk.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target), "PNG"):
            sys.stderr.write(f"cannot write {target}\n")
            return 1
        if size <= 256:
            image.save(str(PACKAGE_ICONS / f"bm25desk-{size}.png"), "PNG")
        sys.stdout.write(f"{size:>4} px  {target.relative_to(ROOT)}\n")
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
