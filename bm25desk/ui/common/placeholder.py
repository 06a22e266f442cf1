"""An empty state: a sentence saying what will appear, in place of content not there yet."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget


class PlaceholderStack(QStackedWidget):
    """A placeholder sentence (page 0) in front of some content (page 1).

    Parameters
    ----------
    content
        The content; None to add it later with :meth:`set_content`.
    """

    def __init__(self, content: QWidget | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.placeholder = QLabel()
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setMargin(40)
        self.placeholder.setEnabled(False)  # drawn in the muted text colour
        self.addWidget(self.placeholder)
        if content is not None:
            self.set_content(content)

    def set_content(self, content: QWidget) -> None:
        """Use ``content`` as the page behind the placeholder."""
        while (old := self.widget(1)) is not None:
            self.removeWidget(old)
        self.addWidget(content)

    def show_placeholder(self, text: str | None = None) -> None:
        """Show the placeholder (with ``text``, if given)."""
        if text is not None:
            self.placeholder.setText(text)
        self.setCurrentIndex(0)

    def show_content(self) -> None:
        """Show the content."""
        self.setCurrentIndex(1)
