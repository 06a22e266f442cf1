"""The Search tab's results-over-explanation splitter, which gives each part the room it needs."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QDataStream, QIODevice, Qt
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
    1280×720, 22 at 1920×1080; tests/ui/test_layout.py). Later resizes keep the proportion. A
    restored layout (:meth:`restoreState`) comes back as the user left it in a window of the
    same height; in a window of another height it keeps its proportion, but the explanation takes
    no more than on a first start (a layout left at 1280×720 gave 19 rows at 1920×1080).
    """

    def __init__(self, results: QWidget, detail: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        self.addWidget(results)
        self.addWidget(detail)
        self.setStretchFactor(0, 3)
        self.setStretchFactor(1, 2)
        self.setChildrenCollapsible(False)
        self._placed = False
        self._saved: tuple[int, int] | None = None

    def restoreState(self, state: QByteArray | bytes | bytearray | memoryview) -> bool:
        """Put back saved sizes, placed on the first real height (QSplitter.restoreState)."""
        restored = super().restoreState(state)
        if restored:
            data = state if isinstance(state, QByteArray) else QByteArray(bytes(state))
            self._saved = saved_sizes(data)
            self._placed = self._placed or self._saved is None
        return restored

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Split the first real height by the rules above (QWidget.resizeEvent)."""
        super().resizeEvent(event)
        total = self.height() - self.handleWidth()
        if self._placed or total <= 0 or not self.isVisible():
            return
        self._placed = True
        first = min(total // 2, max(DETAIL_MIN, round(total * DETAIL_SHARE)))
        if self._saved is None:
            detail = first
        elif sum(self._saved) == total:
            detail = self._saved[1]
        else:
            detail = min(first, round(total * self._saved[1] / sum(self._saved)))
        self.setSizes([total - detail, detail])


def saved_sizes(state: QByteArray) -> tuple[int, int] | None:
    """Return the two sizes in a :meth:`QSplitter.saveState` (None when it holds no such pair).

    Qt writes a marker (0xff), a version, then the list of sizes (QSplitter::saveState); a
    state in another shape is left to Qt's own scaling.
    """
    stream = QDataStream(state, QIODevice.OpenModeFlag.ReadOnly)
    marker, _version, count = stream.readInt32(), stream.readInt32(), stream.readUInt32()
    if marker != 0xFF or count != 2:
        return None
    sizes = stream.readInt32(), stream.readInt32()
    ok = stream.status() == QDataStream.Status.Ok and min(sizes) > 0
    return sizes if ok else None
