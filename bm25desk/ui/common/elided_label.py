"""A one-line label that shows plain text cut with "…" to its width, the whole text as tooltip.

Document titles and paths come from the documents: they are set as plain text, never as rich text
(a title ``<img src=…>`` shows as those characters).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QResizeEvent, QShowEvent
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


class StatusBarLabel(ElidedLabel):
    """A status-bar label as wide as its text, but at most a share of its window's width.

    A permanent status-bar widget is laid out before the bar's message: a long label (a bm25f
    variant's parameters) would leave the message (a tip) cut at 1280 pixels. Capped, the label
    elides instead, the whole text in its tooltip.
    """

    def __init__(self, share: float, parent: QWidget | None = None) -> None:
        super().__init__("", parent)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self._share = share
        self._watched: QWidget | None = None

    def set_full_text(self, text: str, tooltip: str | None = None) -> None:
        """Show ``text`` (elided to fit); the label asks for its whole width again."""
        super().set_full_text(text, tooltip)
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        """Return the whole text's width, capped at the share of the window (QLabel.sizeHint)."""
        margins = self.contentsMargins()
        want = self.fontMetrics().horizontalAdvance(self.full_text()) + 2 + margins.left()
        cap = int(self.window().width() * self._share) if self.window() is not self else want
        return QSize(min(want + margins.right(), cap), super().sizeHint().height())

    def showEvent(self, event: QShowEvent) -> None:
        """Follow the window's width from now on (QWidget.showEvent)."""
        super().showEvent(event)
        window = self.window()
        if window is not self and window is not self._watched:
            window.installEventFilter(self)
            self._watched = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Ask for a new size when the window is resized (QObject.eventFilter)."""
        if watched is self._watched and event.type() == QEvent.Type.Resize:
            self.updateGeometry()
        return False
