"""TREC SGML corpora: ``<DOC><DOCNO>id</DOCNO> ... </DOC>``, records found in a byte stream.

Records are found by their tags, not by lines (TREC files put several on a line, or none), in
chunks of the decompressed stream; a record is never held in memory beyond
:data:`~bm25desk.engine.readers.source.MAX_LINE_BYTES`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from bm25desk.engine.extract.common import collapse, join_title, tidy_lines
from bm25desk.engine.readers import source
from bm25desk.engine.readers.document import Document
from bm25desk.engine.readers.records import Admission
from bm25desk.engine.readers.source import CHECK_EVERY, Source

__all__ = ["read_trec"]

_TREC_OPEN = re.compile(rb"<DOC(?:\s[^>]*)?>", re.I)
_TREC_CLOSE = re.compile(rb"</DOC\s*>", re.I)
_TREC_DOCNO = re.compile(r"<DOCNO(?:\s[^>]*)?>(.*?)</DOCNO\s*>", re.I | re.S)
_TREC_DROP = re.compile(r"<(DOCHDR|script|style)(?:\s[^>]*)?>.*?</\1\s*>|<!--.*?-->", re.I | re.S)
_TREC_TITLE = re.compile(r"<(HEADLINE|HL|HEAD|TITLE)(?:\s[^>]*)?>(.*?)</\1\s*>", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")
_SGML_ENTITIES = {"&hyph;": "-", "&blank;": " ", "&space;": " ", "&bullet;": "•"}
_SGML_ENTITY = re.compile("|".join(map(re.escape, _SGML_ENTITIES)))


def _sgml_text(s: str) -> str:
    """Text of SGML: tags become line breaks; lines are trimmed and blank ones dropped."""
    s = _TAG.sub("\n", s)
    if "&" in s:
        s = html.unescape(_SGML_ENTITY.sub(lambda m: _SGML_ENTITIES[m.group()], s))
    return tidy_lines(s)


def _trec_record(raw: bytes) -> tuple[str | None, str, str]:
    """(docid or None, title, text) of the content between ``<DOC>`` and ``</DOC>``."""
    s = raw.decode("utf-8", "replace")
    m = _TREC_DOCNO.search(s)
    if m is None:
        return None, "", ""
    docid = collapse(_TAG.sub(" ", m.group(1)))
    s = s[: m.start()] + "\n" + s[m.end() :]
    s = _TREC_DROP.sub("\n", s)
    title = ""
    t = _TREC_TITLE.search(s)
    if t is not None:
        title = collapse(_sgml_text(t.group(2)))
        s = s[: t.start()] + "\n" + s[t.end() :]
    return docid, title, join_title(title, _sgml_text(s))


class _Buffer:
    """The part of the stream being searched, and the line numbers of positions in it."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.chunks = src.chunks()
        self.buf = b""
        self.pos = 0  # where the next search starts in buf
        self.counted = 0  # newlines in buf[:counted] are already counted in ``line``
        self.line = 1
        self.eof = False
        self.in_junk = False  # a run of text outside <DOC> was reported and has not ended yet

    def line_at(self, i: int) -> int:
        """Return the line number of position ``i`` (positions are asked for in order)."""
        self.line += self.buf.count(b"\n", self.counted, i)
        self.counted = i
        return self.line

    def junk(self, start: int, end: int) -> None:
        """Report text outside records in ``buf[start:end]`` (once per run of such text)."""
        stripped = self.buf[start:end].lstrip()
        if stripped and not self.in_junk:
            self.in_junk = True
            where = f"{self.src.name}:{self.line_at(end - len(stripped))}"
            self.src.report.skip(where, "text outside <DOC> … </DOC>")

    def refill(self, keep: int) -> None:
        """Drop ``buf[:keep]`` and append the next chunk (or note the end of the stream)."""
        self.line_at(keep)
        self.buf, self.pos, self.counted = self.buf[keep:], 0, 0
        chunk = next(self.chunks, None)
        if chunk is None:
            self.eof = True
        else:
            self.buf += chunk


def _records(b: _Buffer) -> Iterator[tuple[int, bytes]]:
    """Yield (start line, content between <DOC> and </DOC>); report what is not a record."""
    while True:
        m = _TREC_OPEN.search(b.buf, b.pos)
        if m is None:
            if b.eof:
                b.junk(b.pos, len(b.buf))
                return
            keep = max(b.pos, len(b.buf) - 16)  # the tail may hold the start of a split "<DOC"
            b.junk(b.pos, keep)
            b.refill(keep)
            continue
        c = _TREC_CLOSE.search(b.buf, m.end())
        nxt = _TREC_OPEN.search(b.buf, m.end(), c.start() if c else len(b.buf))
        if c is None and nxt is None and not b.eof:
            b.junk(b.pos, m.start())
            if len(b.buf) - m.start() > source.MAX_LINE_BYTES:
                b.src.report.skip(
                    f"{b.src.name}:{b.line_at(m.start())}",
                    f"record longer than {source.MAX_LINE_BYTES // 2**20} MB (not read)",
                )
                b.in_junk = True  # the rest of the record is not reported as stray text
                b.pos = m.end()
                continue
            b.refill(m.start())
            continue
        b.junk(b.pos, m.start())
        b.in_junk = False
        start_line = b.line_at(m.start())
        if c is None or nxt is not None:
            after = (
                "end of file" if nxt is None else f"the next <DOC> at line {b.line_at(nxt.start())}"
            )
            b.src.report.skip(
                f"{b.src.name}:{start_line}", f"unterminated <DOC>: no </DOC> before {after}"
            )
            b.pos = nxt.start() if nxt is not None else len(b.buf)
            continue
        b.pos = c.end()
        yield start_line, b.buf[m.end() : c.start()]


def read_trec(src: Source) -> Iterator[Document]:
    """Yield the documents of a TREC SGML file."""
    report, name = src.report, src.name
    admit = Admission(report)
    for records, (start_line, raw) in enumerate(_records(_Buffer(src)), 1):
        if not records & (CHECK_EVERY - 1):
            src.tick()
        where = f"{name}:{start_line}"
        docid, title, text = _trec_record(raw)
        if docid is None:
            report.skip(where, "missing <DOCNO>")
        elif not docid:
            report.skip(where, "empty <DOCNO>")
        elif (doc := admit(where, start_line, Document(docid, text, title))) is not None:
            yield doc
