"""The one HTML-to-text parser, used alike for .html files, EPUB chapters and HTML mail.

Visible text only: script, style, noscript, template, SVG and MathML content is dropped, entities
are decoded, block elements become line breaks, white space is collapsed except inside ``<pre>``,
and lines are trimmed with blank ones dropped. The ``<title>`` is kept apart from the body; the
first ``<h1>`` is remembered as a fallback title.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from bm25desk.engine.extract import limits
from bm25desk.engine.extract.common import collapse, join_title, tidy_lines
from bm25desk.engine.extract.decoding import decode_html, read_file_bytes
from bm25desk.engine.extract.limits import Deadline

__all__ = ["HtmlText", "extract_html", "parse_html"]

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "math"})
_BLOCK = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "dd",
        "details",
        "dialog",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "option",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    ]
)
_SPACE = re.compile(r"\s+")
_PIECE = 1 << 18  # characters fed to the parser at a time, between deadline checks


@dataclass(frozen=True, slots=True)
class HtmlText:
    """What :func:`parse_html` finds in a page."""

    title: str
    """The ``<title>``, white space collapsed ("" when there is none)."""
    h1: str
    """The first ``<h1>``'s text, white space collapsed ("" when there is none)."""
    body: str
    """The visible text, one block a line (the title is not part of it; the h1 is)."""


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self.h1_parts: list[str] = []
        self.skip_depth = 0
        self.in_title = False
        self.in_h1 = False
        self.h1_done = False
        self.pre_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip_depth += 1
        elif tag == "title":
            self.in_title = True
        elif tag == "h1" and not self.h1_done:
            self.in_h1 = True
        if tag == "pre":
            self.pre_depth += 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # ``<br/>`` and friends: a void element never opens a skipped region.
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
        elif tag == "title":
            self.in_title = False
        elif tag == "h1" and self.in_h1:
            self.in_h1 = False
            self.h1_done = True
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skip_depth:
            return
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.in_h1:
            self.h1_parts.append(data)
        self.parts.append(data if self.pre_depth else _SPACE.sub(" ", data))


def parse_html(markup: str, deadline: Deadline | None = None) -> HtmlText:
    """Return the title, first h1 and visible text of an HTML or XHTML page.

    Parameters
    ----------
    markup
        The page's source.
    deadline
        Checked between pieces of the page (Python's parser reads a few MB a second, so a page of
        tens of megabytes takes tens of seconds); None: no time limit.

    Returns
    -------
    HtmlText
        Title, first heading and body text.

    Raises
    ------
    ExtractError
        When ``deadline`` passes.
    """
    parser = _Parser()
    for start in range(0, len(markup), _PIECE):
        if deadline is not None:
            deadline.check()
        parser.feed(markup[start : start + _PIECE])
    parser.close()
    return HtmlText(
        title=collapse("".join(parser.title_parts)),
        h1=collapse("".join(parser.h1_parts)),
        body=tidy_lines("".join(parser.parts)),
    )


def extract_html(path: Path) -> tuple[str, str]:
    """HTML: visible text, block elements as line breaks; title from ``<title>``, else the first h1.

    Script, style, noscript and template content is dropped; entities are decoded. The encoding is
    UTF-8 if the bytes are valid UTF-8, else the ``<meta charset>``, else cp1252/latin-1. A
    ``<title>`` is not part of the page body, so it is put first in the text (as for other sources
    with a separate title); a title taken from the first h1 is already there. Parsing stops with
    "timed out" after :data:`~bm25desk.engine.extract.limits.TIME_LIMIT` seconds.
    """
    page = parse_html(decode_html(read_file_bytes(path)), Deadline(limits.TIME_LIMIT))
    if page.title:
        return page.title, join_title(page.title, page.body)
    return page.h1, page.body
