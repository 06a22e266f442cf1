"""Icons shipped inside the package (``bm25desk/data/icons``), loaded with importlib.resources."""

from __future__ import annotations

from importlib import resources

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QIcon, QPixmap


def _data(name: str) -> bytes:
    return resources.files("bm25desk").joinpath(f"data/icons/{name}").read_bytes()


def app_icon() -> QIcon:
    """Return the application icon (an empty icon if the file is missing)."""
    try:
        data = _data("bm25desk.svg")
    except OSError:
        return QIcon()
    pixmap = QPixmap()
    icon = QIcon()
    if pixmap.loadFromData(QByteArray(data), "SVG"):
        for size in (16, 32, 48, 64, 128, 256):
            icon.addPixmap(pixmap.scaled(size, size))
    return icon
