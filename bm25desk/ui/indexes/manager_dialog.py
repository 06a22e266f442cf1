"""The index manager: every index with its size, date and state, and what to do with it.

New, Open, Update, Rebuild, Delete and Show in folder, in a window of its own (Ctrl+I).
"""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from bm25desk.ui.indexes.panel import IndexPanel


class IndexManagerDialog(QDialog):
    """A non-modal window around an :class:`IndexPanel`."""

    def __init__(self, panel: IndexPanel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Indexes")
        self.panel = panel
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.hide)
        layout = QVBoxLayout(self)
        layout.addWidget(panel, 1)
        layout.addWidget(buttons)
        self.resize(820, 360)
