"""Progress reporting and cooperative cancellation for long engine work.

Engine loops take a ``progress(done, total)`` callable and a :class:`CancelToken`. They call
``cancel.check()`` often and report progress through :class:`Throttle`, which forwards at most
every ~50 ms so that neither a terminal nor a Qt signal queue is flooded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

ProgressFn = Callable[[int, int], None]
"""``progress(done, total)``; ``total`` is 0 when unknown. Units are the caller's (bytes, docs)."""


class Cancelled(Exception):
    """Raised inside engine work when its :class:`CancelToken` was set."""


class CancelToken:
    """A thread-safe flag that engine loops poll with :meth:`check`."""

    __slots__ = ("_event",)

    def __init__(self, event: Any = None) -> None:
        # Any object with set()/is_set() works: a multiprocessing Event reaches worker processes.
        self._event = event if event is not None else threading.Event()

    def set(self) -> None:
        """Ask the work to stop at its next check."""
        self._event.set()

    def is_set(self) -> bool:
        """Return whether cancellation was requested."""
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if cancellation was requested."""
        if self._event.is_set():
            raise Cancelled


def no_progress(done: int, total: int) -> None:
    """Ignore progress (the default)."""


class Throttle:
    """Forward ``(done, total)`` to a progress function at most every ``interval`` seconds.

    The final call (``done == total``) is always forwarded, so a bar can reach 100 %.
    """

    __slots__ = ("_fn", "_interval", "_last")

    def __init__(self, fn: ProgressFn | None, interval: float = 0.05) -> None:
        self._fn = fn or no_progress
        self._interval = interval
        self._last = 0.0

    def __call__(self, done: int, total: int) -> None:
        """Report progress if enough time has passed (or the work is complete)."""
        now = time.monotonic()
        if now - self._last >= self._interval or (total and done >= total):
            self._last = now
            self._fn(done, total)
