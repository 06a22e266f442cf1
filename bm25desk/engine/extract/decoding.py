"""Turning a text file's bytes into text: byte-order marks, UTF-8, cp1252, latin-1, HTML charset."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from bm25desk.engine.extract import limits
from bm25desk.engine.extract.common import ExtractError

__all__ = [
    "BINARY_SNIFF",
    "decode_html",
    "decode_text",
    "has_unicode_bom",
    "read_file_bytes",
    "read_text",
]

BINARY_SNIFF = 8192
"""Bytes of a folder file inspected for a NUL to call it binary."""

_HTML_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)


def decode_text(data: bytes) -> str:
    """Decode a text file's bytes: BOM if any, else UTF-8, else cp1252, else latin-1.

    Line endings are normalised to a line feed.

    Parameters
    ----------
    data
        The file's bytes.

    Returns
    -------
    str
        The text; never raises for any byte sequence.
    """
    text: str | None = None
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            text = data.decode(codec, "replace")
            break
    if text is None:
        for codec in ("utf-8", "cp1252"):
            try:
                text = data.decode(codec)
                break
            except UnicodeDecodeError:
                continue
        else:
            text = data.decode("latin-1")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def decode_html(data: bytes) -> str:
    """Decode an HTML page: a BOM, else UTF-8 if valid, else its ``<meta charset>``, else as text.

    Parameters
    ----------
    data
        The page's bytes.

    Returns
    -------
    str
        The markup; never raises for any byte sequence.
    """
    if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return decode_text(data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    m = _HTML_META_CHARSET.search(data[:4096])
    if m:
        try:
            codec = codecs.lookup(m.group(1).decode("ascii")).name
        except LookupError:
            pass
        else:
            return data.decode(codec, "replace")
    return decode_text(data)


def has_unicode_bom(data: bytes) -> bool:
    """Return whether ``data`` starts with a UTF-16 or UTF-32 byte-order mark.

    UTF-16/32 text is full of NULs; its BOM is what tells it apart from a binary file.
    """
    return data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE))


def read_file_bytes(path: Path) -> bytes:
    """Read a text file's bytes, at most :data:`~bm25desk.engine.extract.limits.SIZE_LIMIT`.

    The limit is applied to what is read, not to what ``stat`` said before: a file that grows
    after it was listed still cannot make the reader hold more than the limit.

    Raises
    ------
    ExtractError
        If the file is larger than the limit, or looks binary (a NUL byte in its first 8 KB and no
        UTF-16/32 byte-order mark).
    OSError
        If it cannot be read.
    """
    limit = limits.SIZE_LIMIT
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ExtractError(limits.too_large(len(data), limit))
    if b"\x00" in data[:BINARY_SNIFF] and not has_unicode_bom(data):
        raise ExtractError("binary file")
    return data


def read_text(path: Path) -> str:
    """Read a plain-text file for an extractor.

    Parameters
    ----------
    path
        The file.

    Returns
    -------
    str
        Its text, decoded by :func:`decode_text`.

    Raises
    ------
    ExtractError
        If the file looks binary (a NUL byte in its first 8 KB, and no UTF-16/32 byte-order mark),
        or is larger than the size limit.
    OSError
        If it cannot be read.
    """
    return decode_text(read_file_bytes(path))
