"""Small widgets made the same way everywhere: wrapped labels and combo boxes of (text, key)."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel


def text_label(text: str = "", *, rich: bool = False, selectable: bool = False) -> QLabel:
    """Return a word-wrapped label (rich text only when asked: it may show document content)."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def combo_box(items: Iterable[tuple[str, object]], tip: str = "") -> QComboBox:
    """Return a combo box of ``(text, key)`` items (the key is the item's data)."""
    combo = QComboBox()
    for text, key in items:
        combo.addItem(text, key)
    if tip:
        combo.setToolTip(tip)
    return combo
