"""The strip shown while an index builds: progress bar, documents/s, ETA and Cancel.

The engine reports progress in bytes of source read. Documents per second are estimated from the
source's density (documents per byte), measured on the head of a corpus file or taken from the
previous build of the same index; the label says "≈" because it is an estimate until the end.
"""

from __future__ import annotations

import gzip
import re
import time
from pathlib import Path

from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

_HEAD = 256 * 1024


def estimate_docs_per_byte(path: Path, fmt: str, previous: tuple[int, int] | None = None) -> float:
    """Return an estimate of documents per source byte (0 when unknown).

    Parameters
    ----------
    path
        The source.
    fmt
        Its format key.
    previous
        ``(documents, source bytes)`` of an earlier build of the same source, if any.
    """
    if previous and previous[0] > 0 and previous[1] > 0:
        return previous[0] / previous[1]
    if fmt == "folder" or not path.is_file():
        return 0.0
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD)
        if head[:2] == b"\x1f\x8b":
            return 0.0  # progress counts compressed bytes: no cheap estimate
        if not head:
            return 0.0
        if fmt == "smart":
            count = len(re.findall(rb"(?m)^\.I\s", head))
        elif fmt == "trec":
            count = len(re.findall(rb"(?i)<DOC>", head))
        else:
            count = head.count(b"\n") - (1 if fmt == "tsv-header" else 0)
        if count <= 0:
            return 0.0
        return count / len(head)
    except (OSError, gzip.BadGzipFile):
        return 0.0


def format_eta(seconds: float) -> str:
    """Return ``1 min 05 s`` / ``12 s`` for a duration."""
    seconds = max(0, round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


class BuildProgress(QWidget):
    """Progress of one running build.

    Signals
    -------
    cancel_requested()
        The user clicked Cancel.
    """

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        self.title = QLabel()
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.bar.setMinimumWidth(200)
        self.rate = QLabel()
        self.eta = QLabel()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the build; the previous index stays as it was")
        self.cancel_button.clicked.connect(self._on_cancel_button_clicked)
        layout.addWidget(self.title)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.rate)
        layout.addWidget(self.eta)
        layout.addWidget(self.cancel_button)
        self._started = 0.0
        self._docs_per_byte = 0.0
        self._samples: list[tuple[float, int]] = []
        self.hide()

    def start(self, title: str, docs_per_byte: float = 0.0) -> None:
        """Show the strip for a new build."""
        self.title.setText(title)
        self.bar.setValue(0)
        self.bar.setFormat("starting…")
        self.rate.setText("")
        self.eta.setText("")
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel")
        self._docs_per_byte = docs_per_byte
        self._started = time.monotonic()
        self._samples = [(self._started, 0)]
        self.show()

    @Slot(int, int)
    def update_progress(self, done: int, total: int) -> None:
        """Show ``done`` of ``total`` bytes, the rate and the time left."""
        now = time.monotonic()
        if total <= 0:
            self.bar.setRange(0, 0)  # busy indicator
            return
        self.bar.setRange(0, 1000)
        self.bar.setValue(int(1000 * min(done, total) / total))
        self.bar.setFormat(f"{100 * done / total:.0f} %")
        self._samples.append((now, done))
        # Rate over the last ~3 s, so that it follows changes without jumping around.
        while len(self._samples) > 2 and now - self._samples[0][0] > 3.0:
            self._samples.pop(0)
        t0, d0 = self._samples[0]
        if now - t0 < 0.05 or done <= d0:
            return
        bps = (done - d0) / (now - t0)
        docs = bps * self._docs_per_byte
        if docs >= 1:
            self.rate.setText(f"≈ {docs:,.0f} docs/s")
        elif self._docs_per_byte > 0:
            self.rate.setText("")  # an update with little to do: no rate worth showing
        else:
            self.rate.setText(f"{bps / 1e6:,.1f} MB/s")
        self.rate.setToolTip(f"{bps / 1e6:,.2f} MB of source per second")
        self.eta.setText(f"ETA {format_eta((total - done) / bps)}")

    def cancelling(self) -> None:
        """Show that cancellation was requested."""
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancelling…")
        self.bar.setFormat("cancelling…")

    def elapsed(self) -> float:
        """Return the seconds since :meth:`start`."""
        return time.monotonic() - self._started

    @Slot()
    def _on_cancel_button_clicked(self) -> None:
        self.cancelling()
        self.cancel_requested.emit()
