"""Query and judgement files of the classic Glasgow collections that are not SMART: NPL, LISA, TIME.

The University of Glasgow distributes the classic test collections
(ir.dcs.gla.ac.uk/resources/test_collections). CACM, CISI, Cranfield, MED and ADI use SMART's
``.I``/``.W`` records (:mod:`bm25desk.evaluation.queries`) and one judgement per line
(:mod:`bm25desk.evaluation.qrels`); three collections have layouts of their own:

``npl`` — NPL, also called Vaswani (``query-text``, ``rlv-ass``)
    A record is the query number alone on a line, then the query's lines (or, in ``rlv-ass``, the
    relevant document numbers, several a line), then a line holding ``/``::

        1
        MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE USE OF MICROWAVE TECHNIQUES
        /

``lisa`` — LISA (``LISA.QUE``, ``LISARJ.NUM``)
    ``LISA.QUE``: the query number alone on a line, then the query's lines; the last ends with
    ``#``. ``LISARJ.NUM``: numbers only, ``qid count docid docid ...``, a record starting on a new
    line and continuing on the next ones when it is long.
``time`` — TIME Magazine (``TIME.QUE``, ``TIME.REL``)
    ``TIME.QUE``: ``*FIND <n>`` opens a query, its lines follow, ``*STOP`` ends the file.
    ``TIME.REL``: one query a line, ``qid docid docid ...``. Its document numbers are positions in
    ``TIME.ALL`` (1 for the first ``*TEXT`` record...), not the ``*TEXT`` numbers.

Every listed document is relevant (relevance 1). Numeric ids lose leading zeros, as in SMART files.
Malformed records are reported as :class:`~bm25desk.engine.readers.corpus.Skip` with their line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from bm25desk.engine.readers.corpus import Skip
from bm25desk.evaluation.textio import lines, norm_numeric_id

__all__ = [
    "Judgement",
    "QueryRecord",
    "parse_lisa_qrels",
    "parse_lisa_queries",
    "parse_npl_qrels",
    "parse_npl_queries",
    "parse_time_qrels",
    "parse_time_queries",
]

QueryRecord = tuple[int, str, str]
"""``(line, qid, text)``: one query as a reader found it."""

Judgement = tuple[int, str, str, int]
"""``(line, qid, docid, relevance)``: one judgement as a reader found it."""

_FIND = re.compile(r"^\*FIND\b\s*(\S*)")
_STOP = re.compile(r"^\*STOP\b")


def _is_number(token: str) -> bool:
    return token.isascii() and token.isdigit()


def _records(text: str, ends: Callable[[str], bool]) -> Iterator[tuple[int, list[str], bool]]:
    """Split ``text`` into records of non-blank lines, each closed by a line where ``ends`` holds.

    Yields ``(first_line, lines, closed)``; the closing line is the record's last line. A record
    the file ends in without closing it is yielded with ``closed=False``.
    """
    start = 0
    body: list[str] = []
    for n, line in lines(text):
        if not body and not line.strip():
            continue
        if not body:
            start = n
        body.append(line)
        if ends(line):
            yield start, body, True
            start, body = 0, []
    if body:
        yield start, body, False


def _numbered_query(
    start: int, body: list[str], source: str, skipped: list[Skip]
) -> QueryRecord | None:
    """``(start, qid, text)`` of a record whose first line is its number, or None (reported)."""
    head = body[0].strip()
    if not _is_number(head):
        shown = head[:40]
        skipped.append(Skip(f"{source}:{start}", f"expected a query number alone, found {shown!r}"))
        return None
    text = " ".join(" ".join(line.split()) for line in body[1:] if line.strip())
    qid = norm_numeric_id(head)
    if not text:
        skipped.append(Skip(f"{source}:{start}", f"query {qid} has no text"))
        return None
    return start, qid, text


# --------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------


def parse_npl_queries(text: str, source: str, skipped: list[Skip]) -> list[QueryRecord]:
    """Read NPL's ``query-text``: number, text lines, ``/``."""
    out: list[QueryRecord] = []
    for start, body, closed in _records(text, lambda line: line.strip() == "/"):
        record = _numbered_query(start, body[:-1] if closed else body, source, skipped)
        if record is not None:
            out.append(record)
    return out


def parse_lisa_queries(text: str, source: str, skipped: list[Skip]) -> list[QueryRecord]:
    """Read ``LISA.QUE``: number, text lines, the last ending with ``#``."""
    out: list[QueryRecord] = []
    for start, body, closed in _records(text, lambda line: line.rstrip().endswith("#")):
        if closed:
            body = [*body[:-1], body[-1].rstrip().removesuffix("#")]
        record = _numbered_query(start, body, source, skipped)
        if record is not None:
            out.append(record)
    return out


def parse_time_queries(text: str, source: str, skipped: list[Skip]) -> list[QueryRecord]:
    """Read ``TIME.QUE``: ``*FIND <n>``, text lines, up to the next ``*FIND`` or ``*STOP``."""
    out: list[QueryRecord] = []
    start, qid = 0, ""
    body: list[str] = []

    def finish() -> None:
        if not start:
            return
        qtext = " ".join(" ".join(body).split())
        if not qid:
            skipped.append(Skip(f"{source}:{start}", "*FIND without a query number"))
        elif not qtext:
            skipped.append(Skip(f"{source}:{start}", f"query {qid} has no text"))
        else:
            out.append((start, qid, qtext))

    junk = False
    for n, line in lines(text):
        find = _FIND.match(line)
        if find or _STOP.match(line):
            finish()
            start, qid, body = 0, "", []
            if find:
                start, qid = n, norm_numeric_id(find.group(1))
        elif start:
            body.append(line)
        elif line.strip() and not junk:
            junk = True
            skipped.append(Skip(f"{source}:{n}", "text outside a *FIND record"))
    finish()
    return out


# --------------------------------------------------------------------------------------------
# Judgements
# --------------------------------------------------------------------------------------------


def parse_npl_qrels(text: str, source: str, skipped: list[Skip]) -> list[Judgement]:
    """Read NPL's ``rlv-ass``: the query number alone, its relevant documents, ``/``."""
    out: list[Judgement] = []
    qid = ""
    for n, line in lines(text):
        for token in line.split():
            if token == "/":
                qid = ""
            elif not _is_number(token):
                skipped.append(Skip(f"{source}:{n}", f"{token!r} is not a document number"))
            elif not qid:
                qid = norm_numeric_id(token)
            else:
                out.append((n, qid, norm_numeric_id(token), 1))
    return out


def parse_lisa_qrels(text: str, source: str, skipped: list[Skip]) -> list[Judgement]:
    """Read ``LISARJ.NUM``: ``qid count docid...`` records, each opening a line."""
    out: list[Judgement] = []
    qid, count, left, at = "", 0, 0, 0

    def short() -> None:
        if qid and left > 0:
            read = count - left
            skipped.append(
                Skip(f"{source}:{at}", f"query {qid} announces {count} documents, {read} follow")
            )

    for n, line in lines(text):
        tokens = line.split()
        bad = [t for t in tokens if not _is_number(t)]
        if bad:
            skipped.append(Skip(f"{source}:{n}", f"{bad[0]!r} is not a number"))
            continue
        if tokens and left == 0:
            # A new record: its query id and its count open the line.
            if len(tokens) < 2:
                skipped.append(Skip(f"{source}:{n}", "expected 'qid count docid...'"))
                continue
            qid, count, at = norm_numeric_id(tokens[0]), int(tokens[1]), n
            left, tokens = count, tokens[2:]
        for token in tokens[:left]:
            out.append((n, qid, norm_numeric_id(token), 1))
        if len(tokens) > left:
            extra = len(tokens) - left
            skipped.append(
                Skip(f"{source}:{n}", f"{extra} numbers beyond the count of query {qid}")
            )
        left = max(0, left - len(tokens))
    short()
    return out


def parse_time_qrels(text: str, source: str, skipped: list[Skip]) -> list[Judgement]:
    """Read ``TIME.REL``: ``qid docid docid ...`` one query a line."""
    out: list[Judgement] = []
    for n, line in lines(text):
        tokens = line.split()
        if not tokens:
            continue
        bad = [t for t in tokens if not _is_number(t)]
        if bad:
            skipped.append(Skip(f"{source}:{n}", f"{bad[0]!r} is not a number"))
        elif len(tokens) < 2:
            skipped.append(Skip(f"{source}:{n}", f"query {tokens[0]} lists no document"))
        else:
            qid = norm_numeric_id(tokens[0])
            out.extend((n, qid, norm_numeric_id(d), 1) for d in tokens[1:])
    return out
