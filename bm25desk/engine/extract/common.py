"""What every extractor and reader shares: the skip exception, the extractor type, text helpers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = [
    "MESSAGE_QUOTE_LIMIT",
    "ExtractError",
    "Extractor",
    "collapse",
    "is_blank",
    "join_title",
    "missing_library",
    "printable",
    "shorten",
    "tidy_lines",
]


class ExtractError(Exception):
    """An extractor's way of saying "skip this file"; the message becomes the skip reason."""


Extractor = Callable[[Path], tuple[str, str]]
"""``extract(path) -> (title, text)``. Raise :class:`ExtractError` to skip the file with a reason;
return an empty title to let the reader use the file name."""

MESSAGE_QUOTE_LIMIT = 80
"""Characters of document content (ids, column names, lines) quoted in one message at most."""


def missing_library(fmt: str, package: str) -> ExtractError:
    """Return the skip reason for a format whose library is not installed."""
    return ExtractError(f"{fmt} support is not installed (pip install {package})")


def collapse(s: str) -> str:
    """Return ``s`` with every run of white space made one space, and no space at either end."""
    return " ".join(s.split())


def join_title(title: str, body: str) -> str:
    """Return the indexed text of a document with a separate title: title, newline, body."""
    if title and body:
        return f"{title}\n{body}"
    return title or body


def is_blank(s: str) -> bool:
    """Return whether ``s`` is empty or white space only (without copying a long body)."""
    return not s or s.isspace()


def tidy_lines(text: str) -> str:
    """Trim every line and drop the blank ones.

    Trimming lines, not collapsing spaces inside them, keeps this cheap (per-word splitting was most
    of the TREC reader's time) and keeps preformatted text readable.
    """
    return "\n".join(filter(None, [line.strip() for line in text.split("\n")]))


def shorten(s: str, limit: int = MESSAGE_QUOTE_LIMIT) -> str:
    """Return ``s`` cut to ``limit`` characters (ending in "…"), for quoting content in messages.

    A one-line file of a megabyte must not become a megabyte of error message.
    """
    return s if len(s) <= limit else s[: limit - 1] + "…"


def printable(name: str) -> str:
    """Return a file name as text that can be shown and written anywhere.

    File names are carried as :func:`os.fsencode`-able strings: bytes that are not UTF-8 appear as
    lone surrogates (``surrogateescape``), which no UTF-8 writer accepts. Here each such byte
    becomes U+FFFD, for titles and messages; the name itself stays as it was for opening the file.
    """
    if name.isascii():
        return name
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
