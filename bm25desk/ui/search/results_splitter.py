"""The Search tab's results-over-explanation splitter, which gives each part the room it needs."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSplitter, QWidget

DETAIL_SHARE = 0.4
"""The explanation's share of the height, once it has its minimum."""
DETAIL_MIN = 270
"""Ledger rows of a four-term query, the formulas under them and a readable plot (pixels)."""


class ResultsSplitter(QSplitter):
    """Results above, the selected document's explanation below.

    A ratio alone does not suit every screen: 60/40 leaves the ledger of a four-term query a row
    short at 1280×720, 55/45 costs the results rows at 1920×1080. So on its first real size the
    explanation gets 40 % but at least :data:`DETAIL_MIN`, and the results the rest (12 rows at
    1280×720, 22 at 1920×1080; tests/ui/test_layout.py). Later resizes keep the proportion; a
    restored layout (:meth:`restoreState`) is kept as the user left it.
    """

    def __init__(self, results: QWidget, detail: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.addWidget(results)
        self.addWidget(detail)
        self.setStretchFactor(0, 3)
        self.setStretchFactor(1, 2)
        self.setChildrenCollapsible(False)
        self._placed = False

    def restoreState(self, state: QByteArray | bytes | bytearray | memoryview) -> bool:
        """Put back saved sizes, and keep them (QSplitter.restoreState)."""
        restored = super().restoreState(state)
        self._placed = self._placed or restored
        return restored

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Split the first real height by the rule above (QWidget.resizeEvent)."""
        super().resizeEvent(event)
        total = self.height() - self.handleWidth()
        if self._placed or total <= 0 or not self.isVisible():
            return
        self._placed = True
        detail = min(total // 2, max(DETAIL_MIN, round(total * DETAIL_SHARE)))
        self.setSizes([total - detail, detail])
