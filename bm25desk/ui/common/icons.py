"""Icons shipped inside the package (``bm25desk/data/icons``), loaded with importlib.resources.

The PNG renderings are preferred (no SVG image plugin needed, e.g. in a trimmed bundle); the SVG
is the fallback.
"""

from __future__ import annotations

from importlib import resources

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QIcon, QPixmap

SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


def _data(name: str) -> bytes | None:
    try:
        return resources.files("bm25desk").joinpath(f"data/icons/{name}").read_bytes()
    except OSError:
        return None


def app_icon() -> QIcon:
    """Return the application icon (an empty icon if the files are missing)."""
    icon = QIcon()
    for size in SIZES:
        data = _data(f"bm25desk-{size}.png")
        pixmap = QPixmap()
        if data is not None and pixmap.loadFromData(QByteArray(data), "PNG"):
            icon.addPixmap(pixmap)
    if icon.isNull():
        data = _data("bm25desk.svg")
        pixmap = QPixmap()
        if data is not None and pixmap.loadFromData(QByteArray(data), "SVG"):
            icon.addPixmap(pixmap)
    return icon
