"""Plain-text, Markdown and reStructuredText files: the text as written, a title from its markup."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path

from bm25desk.engine.extract.decoding import read_text

__all__ = ["extract_markdown", "extract_rst", "extract_txt"]

_LONGEST_TITLE = 120  # characters; a longer first line is a paragraph, not a title


def _lines(text: str) -> Iterator[str]:
    """Yield the lines of ``text`` one at a time: a title search must not split 50 MB first."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def _first_line_title(text: str) -> str:
    for line in _lines(text):
        if line.strip():
            line = line.strip()
            return line if len(line) <= _LONGEST_TITLE else ""
    return ""


def extract_txt(path: Path) -> tuple[str, str]:
    """Plain text: the title is the first non-empty line if it is at most 120 characters long."""
    text = read_text(path)
    return _first_line_title(text), text


_MD_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_MD_ATX_H1 = re.compile(r"^ {0,3}#[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_MD_SETEXT_H1 = re.compile(r"^ {0,3}=+[ \t]*$")
_FRONT_MATTER_TITLE = re.compile(r"""^title:\s*(["']?)(.*?)\1\s*$""", re.M)


def _front_matter(text: str) -> tuple[str, int]:
    """(its ``title:``, the first line after it) of YAML front matter; ("", 0) when there is none.

    Jekyll, Hugo and Obsidian put the author's chosen title there.
    """
    if not text.startswith("---"):
        return "", 0
    lines = _lines(text)
    if next(lines).strip() != "---":
        return "", 0
    matter: list[str] = []
    for i, line in enumerate(lines, 1):
        if line.strip() in ("---", "..."):
            m = _FRONT_MATTER_TITLE.search("\n".join(matter))
            return (m.group(2).strip() if m else ""), i + 1
        matter.append(line)
    return "", 0


def _markdown_title(text: str) -> str:
    title, start = _front_matter(text)
    if title:
        return title
    in_fence = False
    prev = ""
    for line in itertools.islice(_lines(text), start, None):
        if _MD_FENCE.match(line):
            in_fence = not in_fence
            prev = ""
            continue
        if in_fence:
            continue
        m = _MD_ATX_H1.match(line)
        if m and m.group(1).strip():
            return m.group(1).strip()
        if prev.strip() and _MD_SETEXT_H1.match(line):
            return prev.strip()
        prev = line
    return ""


_MD_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_MD_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")


def markdown_headings(text: str) -> list[str]:
    """Return the text of every heading of a Markdown source (ATX ``#``…``######`` and setext).

    Headings inside fenced code blocks are not headings; front matter is skipped. The folder
    reader indexes them as the ``heading`` field (BM25F can weigh them).
    """
    _, start = _front_matter(text)
    out: list[str] = []
    in_fence = False
    prev = ""
    for line in itertools.islice(_lines(text), start, None):
        if _MD_FENCE.match(line):
            in_fence, prev = not in_fence, ""
            continue
        if in_fence:
            continue
        m = _MD_ATX.match(line)
        if m:
            if (m.group(1) or "").strip():
                out.append(m.group(1).strip())
            prev = ""
            continue
        if prev.strip() and _MD_SETEXT.match(line):
            out.append(prev.strip())
            prev = ""
            continue
        prev = line
    return out


def extract_markdown(path: Path) -> tuple[str, str]:
    """Markdown: the title is the first level-1 heading (``# Title`` or ``Title`` over ``===``).

    A ``title:`` in YAML front matter wins. The text is the source as written.
    """
    text = read_text(path)
    return _markdown_title(text), text


_RST_ADORNMENT = re.compile(r"""^([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])\1*\s*$""")


def _rst_title(text: str) -> str:
    for line, next_line in itertools.pairwise(_lines(text)):
        title = line.strip()
        under = next_line.rstrip()
        if (
            title
            and not _RST_ADORNMENT.match(line)
            and not title.startswith("..")
            and _RST_ADORNMENT.match(under)
            and len(under) >= len(title)
        ):
            return title
    return ""


def extract_rst(path: Path) -> tuple[str, str]:
    """reStructuredText: the title is the first underlined (optionally overlined) section title."""
    text = read_text(path)
    return _rst_title(text), text
