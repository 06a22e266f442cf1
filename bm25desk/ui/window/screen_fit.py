"""Open the main window at a good size that fits the screen, its frame included."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSize, QTimer
from PySide6.QtWidgets import QWidget

FRAME_CHECKS_MS = (0, 250, 1000)
"""When to check, after the first show, that the framed window fits the screen."""


class ScreenFit(QObject):
    """Sizes a top-level window to fit the screen's free area, title bar and borders included.

    The frame is known only once the window is shown (the window manager adds it a moment
    later): :meth:`shown` then shrinks the window if its frame overflows, unless the size was
    changed since (a saved layout, a test) or the window is maximised.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self._first_size: QSize | None = None

    def fit(self, width: int, height: int) -> None:
        """Resize to ``width`` × ``height``, or the screen's free area when that is smaller."""
        screen = self.window.screen()
        if screen is not None:
            free = screen.availableGeometry()
            width, height = min(width, free.width()), min(height, free.height())
        self.window.resize(width, height)
        self._first_size = self.window.size()

    def shown(self) -> None:
        """Check the frame a few times after the first show (call from ``showEvent``)."""
        if self._first_size is not None:
            for ms in FRAME_CHECKS_MS:
                QTimer.singleShot(ms, self._fit_frame)

    def _fit_frame(self) -> None:
        w, first, screen = self.window, self._first_size, self.window.screen()
        if first is None or screen is None or w.size() != first or w.isMaximized():
            self._first_size = None
            return
        free, frame = screen.availableGeometry(), w.frameGeometry()
        if free.contains(frame):
            return
        self._first_size = None
        extra_w, extra_h = frame.width() - w.width(), frame.height() - w.height()
        w.resize(min(w.width(), free.width() - extra_w), min(w.height(), free.height() - extra_h))
        w.move(free.topLeft())
