"""Evaluation files as text: gzip by its magic bytes, UTF-8 with a Latin-1 fallback, lines."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

from bm25desk.evaluation.data import EvalInputError

__all__ = ["base_name", "first_content_line", "lines", "nonblank", "norm_numeric_id", "read_text"]

_GZIP_MAGIC = b"\x1f\x8b"


def read_text(path: str | Path) -> tuple[str, tuple[str, ...]]:
    """Return the decoded text of ``path`` and notes about decoding.

    A gzip file is recognised by its first bytes, not by its name. Text is UTF-8 (a BOM is
    ignored); a file that is not valid UTF-8 is decoded as Latin-1 and a note says so.

    Raises
    ------
    EvalInputError
        ``path`` is a directory or a damaged gzip file.
    OSError
        The file cannot be read.
    """
    p = Path(path)
    if p.is_dir():
        raise EvalInputError(f"{p}: is a directory, expected a file")
    data = p.read_bytes()
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (gzip.BadGzipFile, EOFError, OSError) as exc:
            raise EvalInputError(f"{p}: not a readable gzip file ({exc})") from exc
    try:
        return data.decode("utf-8-sig"), ()
    except UnicodeDecodeError as exc:
        note = f"{p}: not valid UTF-8 (byte {exc.start}); decoded as Latin-1"
        return data.decode("latin-1"), (note,)


def base_name(path: str | Path) -> str:
    """Return the file name without a ``.gz`` suffix, in lower case."""
    name = Path(path).name.lower()
    return name.removesuffix(".gz")


def lines(text: str) -> Iterator[tuple[int, str]]:
    r"""Yield ``(line_number, line)`` with 1-based numbers and ``\n`` / ``\r\n`` removed.

    Only ``\n`` ends a line: ``str.splitlines`` would also split on form feeds, U+2028 and other
    characters that occur inside real query text and JSON strings, and shift the line numbers.
    """
    for n, line in enumerate(text.split("\n"), start=1):
        yield n, line.removesuffix("\r")


def nonblank(text: str) -> Iterator[str]:
    """Yield the lines of ``text`` that hold more than whitespace."""
    for _, line in lines(text):
        if line.strip():
            yield line


def first_content_line(text: str) -> str:
    """Return the first non-blank line of ``text``, stripped (``""`` when there is none)."""
    return next((line.strip() for line in nonblank(text)), "")


def norm_numeric_id(raw: str) -> str:
    """Drop leading zeros of a numeric id: ``001``, ``01`` and ``1`` name the same query.

    The classic collections write the same number in different widths (CACM's ``query.text``
    says ``.I 1``, its ``qrels.text`` says ``01``); ids that are not numbers are kept as they are.
    """
    return str(int(raw)) if raw.isascii() and raw.isdigit() else raw
