"""The limits one file's extraction works within: bytes read, bytes unpacked, seconds and memory.

The values are module attributes so that an application (or a test) can change them; they are read
when an extraction starts (:func:`current`), and travel with it to the worker process that runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from bm25desk.engine.extract.common import ExtractError

__all__ = [
    "CHECK_EVERY",
    "MAX_INFLATE_RATIO",
    "MEMORY_LIMIT",
    "SIZE_LIMIT",
    "TIME_LIMIT",
    "UNPACKED_LIMIT",
    "Body",
    "BytesSource",
    "Deadline",
    "Limits",
    "current",
    "needs_memory",
    "timed_out",
    "too_large",
]

SIZE_LIMIT = 50 * 1024 * 1024
"""Files larger than this many bytes are not opened (the folder reader applies the same limit)."""

TIME_LIMIT = 30.0
"""Seconds one file may take to extract before it is skipped as "timed out"."""

UNPACKED_LIMIT = 256 * 1024 * 1024
"""Bytes an archive (DOCX, ODT, EPUB) may unpack to: a guard against ZIP bombs."""

MAX_INFLATE_RATIO = 100
"""How many times its compressed size one archive member may unpack to (Apache POI's 1 %)."""

INFLATE_GRACE = 1024 * 1024
"""Unpacked bytes of a member below which its ratio is not checked (tiny parts compress well)."""

MEMORY_LIMIT = 512 * 1024 * 1024
"""Bytes of memory one rich-format extraction may take in its worker process, beyond what the
worker holds when it is idle (PDF, Office, EPUB and mail are parsed in worker processes)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """A snapshot of the limits, sent with every extraction to the process that runs it."""

    size: int
    unpacked: int
    ratio: float
    seconds: float
    memory: int


def current() -> Limits:
    """Return the limits as this module's attributes set them now."""
    return Limits(SIZE_LIMIT, UNPACKED_LIMIT, MAX_INFLATE_RATIO, TIME_LIMIT, MEMORY_LIMIT)


_MB = 2**20


def too_large(size: int, limit: int, what: str = "") -> str:
    """Return the skip reason for a file (or ``what``: " when unpacked") over a byte limit."""
    return f"too large{what} ({size / _MB:.1f} MB; the limit is {limit / _MB:g} MB)"


def timed_out(seconds: float) -> str:
    """Return the skip reason for an extraction that ran out of time."""
    return f"timed out after {seconds:g} s"


def needs_memory(limit: int) -> str:
    """Return the skip reason for an extraction that ran out of its memory budget."""
    return f"needs more than {limit / _MB:g} MB to extract"


class Deadline:
    """A time budget shared by one extraction, checked cooperatively between units of work.

    The worker process that runs an extraction is killed when its time is up; the extractors also
    check the deadline between pages, paragraphs, chapters and messages, so that the usual slow file
    ends with a clean skip reason instead of a kill.

    Parameters
    ----------
    seconds
        The budget.
    limits
        The other limits of the extraction (default: :func:`current`), for the extractors that
        unpack archives.
    """

    def __init__(self, seconds: float, limits: Limits | None = None) -> None:
        self.seconds = seconds
        self.limits = limits if limits is not None else current()
        self._end = time.monotonic() + seconds

    def check(self) -> None:
        """Raise :class:`ExtractError` when the budget is spent."""
        if time.monotonic() > self._end:
            raise ExtractError(timed_out(self.seconds))


BytesSource = IO[bytes]
Body = Callable[[BytesSource, Deadline], tuple[str, str]]
"""``body(stream, deadline) -> (title, text)``: an extractor's work on the opened file. It runs in a
worker process, so it must be a module-level function (it travels there by name)."""

CHECK_EVERY = 64
"""Paragraphs (or table cells, or XML elements / 64) between an extractor's deadline checks."""
