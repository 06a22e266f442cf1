"""A one-line label that shows plain text cut with "…" to its width, the whole text as tooltip.

Document titles and paths come from the documents: they are set as plain text, never as rich text
(a title ``<img src=…>`` shows as those characters).
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from bm25desk.ui.common.plain_text import plain_tooltip


class ElidedLabel(QLabel):
    """Plain text on one line, elided at the right; the full text is the tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._full = ""
        self.set_full_text(text)

    def set_full_text(self, text: str, tooltip: str | None = None) -> None:
        """Show ``text`` (elided to fit); the tooltip is ``tooltip`` or the whole text."""
        self._full = text
        self.setToolTip(plain_tooltip(text if tooltip is None else tooltip) or "")
        self._elide()

    def full_text(self) -> str:
        """Return the whole text."""
        return self._full

    def minimumSizeHint(self) -> QSize:
        """Return room for "…" only: the label may shrink (QLabel.minimumSizeHint)."""
        return QSize(
            self.fontMetrics().horizontalAdvance("…") * 3, super().minimumSizeHint().height()
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Elide again for the new width (QWidget.resizeEvent)."""
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = max(0, self.contentsRect().width())
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width)
        if shown != self.text():
            self.setText(shown)
