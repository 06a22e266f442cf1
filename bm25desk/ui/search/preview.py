"""The document preview: its text with the query terms highlighted, match navigation, Open."""

from __future__ import annotations

import os

from PySide6.QtCore import QUrl, Slot
from PySide6.QtGui import QDesktopServices, QKeySequence, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.ui.common.colors import TermColors, highlight_background
from bm25desk.ui.common.elided_label import ElidedLabel
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.search.work import PREVIEW_CHARS, DocumentView


def openable(location: str) -> str:
    """Return what Open would open: an existing local file, an http(s) URL, or ""."""
    if location.startswith(("http://", "https://")):
        return location
    if location and os.path.isfile(location):
        return location
    return ""


class PreviewPanel(QWidget):
    """Shows a :class:`DocumentView` with its term spans in their colours."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = ElidedLabel()
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.location = ElidedLabel()
        self.location.setEnabled(False)  # drawn in the muted text colour
        self.prev_button = QToolButton()
        self.prev_button.setText("◀")
        self.prev_button.setToolTip("Previous match (Shift+F3)")
        self.prev_button.setShortcut(QKeySequence("Shift+F3"))
        self.next_button = QToolButton()
        self.next_button.setText("▶")
        self.next_button.setToolTip("Next match (F3)")
        self.next_button.setShortcut(QKeySequence("F3"))
        self.match_label = QLabel()
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Open the file in its default application (Ctrl+O)")
        self.open_button.setShortcut(QKeySequence("Ctrl+O"))
        self.prev_button.clicked.connect(self.previous_match)
        self.next_button.clicked.connect(self.next_match)
        self.open_button.clicked.connect(self.open_document)
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)
        self.text.setPlaceholderText(
            "The selected document appears here, its query terms highlighted."
        )

        head = QVBoxLayout()
        head.setSpacing(0)
        head.addWidget(self.title)
        head.addWidget(self.location)
        bar = QHBoxLayout()
        bar.addLayout(head, 1)
        bar.addWidget(self.prev_button)
        bar.addWidget(self.match_label)
        bar.addWidget(self.next_button)
        bar.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.text, 1)
        self._doc: DocumentView | None = None
        self._spans: tuple[tuple[int, int, str], ...] = ()
        self._match = -1
        self.clear()

    def clear(self) -> None:
        """Show nothing."""
        self._doc = None
        self._spans = ()
        self._match = -1
        self.title.set_full_text("")
        self.location.set_full_text("")
        self.text.clear()
        self._update_controls()

    def document(self) -> DocumentView | None:
        """Return the document shown."""
        return self._doc

    def set_document(self, doc: DocumentView, colors: TermColors) -> None:
        """Show ``doc`` with its spans highlighted in ``colors``."""
        keep_scroll = self._doc is not None and self._doc.docno == doc.docno
        scroll = self.text.verticalScrollBar().value()
        self._doc = doc
        self._spans = doc.spans
        self.title.set_full_text(doc.title or doc.docid)
        self.location.set_full_text(doc.location or f"id {doc.docid}")
        # Reset the cursor's format first: after "next match" it holds a highlight colour that
        # setPlainText would otherwise apply to the whole new document.
        self.text.setCurrentCharFormat(QTextCharFormat())
        self.text.setPlainText(
            doc.text
            + (
                f"\n\n[… the preview stops after {PREVIEW_CHARS:,} characters]"
                if doc.truncated
                else ""
            )
        )
        cursor = QTextCursor(self.text.document())
        cursor.beginEditBlock()
        formats: dict[str, QTextCharFormat] = {}
        for start, end, term in doc.spans:
            fmt = formats.get(term)
            if fmt is None:
                fmt = QTextCharFormat()
                fmt.setBackground(highlight_background(colors.color(term), self.palette(), 0.5))
                formats[term] = fmt
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(fmt)
        cursor.endEditBlock()
        self._match = -1
        if keep_scroll:
            self.text.verticalScrollBar().setValue(scroll)
        else:
            self.text.moveCursor(QTextCursor.MoveOperation.Start)
        self._update_controls()

    def match_count(self) -> int:
        """Return the number of highlighted occurrences."""
        return len(self._spans)

    def current_match(self) -> int:
        """Return the index of the selected match (-1 before the first move)."""
        return self._match

    @Slot()
    def next_match(self) -> None:
        """Select the next occurrence of a query term (wrapping around)."""
        self._go(1)

    @Slot()
    def previous_match(self) -> None:
        """Select the previous occurrence (wrapping around)."""
        self._go(-1)

    def _go(self, step: int) -> None:
        if not self._spans:
            return
        n = len(self._spans)
        self._match = (self._match + step) % n if self._match >= 0 else (0 if step > 0 else n - 1)
        start, end, _ = self._spans[self._match]
        cursor = self.text.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        self.text.setTextCursor(cursor)
        self.text.ensureCursorVisible()
        self._update_controls()

    @Slot()
    def open_document(self) -> None:
        """Open the document's file (or URL) with the system's default application."""
        target = openable(self._doc.location) if self._doc else ""
        if not target:
            return
        url = QUrl(target) if "://" in target else QUrl.fromLocalFile(target)
        QDesktopServices.openUrl(url)

    def _update_controls(self) -> None:
        n = len(self._spans)
        self.prev_button.setEnabled(n > 0)
        self.next_button.setEnabled(n > 0)
        if self._doc is None:
            self.match_label.setText("")
        elif n == 0:
            self.match_label.setText("no matches")
        elif self._match < 0:
            self.match_label.setText(plural(n, "match", "matches"))
        else:
            self.match_label.setText(f"{self._match + 1} / {n}")
        target = openable(self._doc.location) if self._doc else ""
        self.open_button.setEnabled(bool(target))
        self.open_button.setVisible(self._doc is None or bool(self._doc.location))
