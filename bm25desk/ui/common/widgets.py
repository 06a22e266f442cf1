"""Small widgets made one way everywhere: wrapped labels, (text, key) combos, columns, splitters."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLayout, QSplitter, QVBoxLayout, QWidget


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


def column(*items: QWidget | QLayout, stretch: int = -1, margins: int = 0) -> QWidget:
    """Return a widget stacking ``items`` top to bottom; item ``stretch`` takes the spare height."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(margins, margins, margins, margins)
    grows = stretch % len(items) if items else 0
    for i, item in enumerate(items):
        stretch_of = 1 if i == grows else 0
        if isinstance(item, QLayout):
            layout.addLayout(item, stretch_of)
        else:
            layout.addWidget(item, stretch_of)
    return box


def splitter(
    orientation: Qt.Orientation,
    *widgets: QWidget,
    stretch: Iterable[int] = (),
    sizes: Iterable[int] = (),
    collapsible: bool = True,
) -> QSplitter:
    """Return a splitter of ``widgets``, each growing by its ``stretch`` and starting at ``sizes``.

    ``sizes`` are proportions of the first real size; empty: Qt's split by size hints.
    """
    split = QSplitter(orientation)
    for widget in widgets:
        split.addWidget(widget)
    for i, factor in enumerate(stretch):
        split.setStretchFactor(i, factor)
    if sizes := list(sizes):
        split.setSizes(sizes)
    split.setChildrenCollapsible(collapsible)
    return split
