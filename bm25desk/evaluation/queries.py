"""Query readers: TREC, BEIR, TSV, SMART, and the Glasgow NPL, LISA and TIME files.

Formats (``format=``; ``"auto"`` detects them by content, see :mod:`bm25desk.evaluation.detect`):

``trec``
    TREC topics, ``<top> <num> Number: 401 <title> ... </top>``; the ``title`` field by default
    (``field="desc"`` or ``"narr"`` for the others). The XML style of later tracks,
    ``<topic number="201"> <query> ... </query>``, is read too (``title`` means ``<query>``).
``beir``
    BEIR ``queries.jsonl``: one ``{"_id": ..., "text": ...}`` object a line.
``tsv``
    ``qid<TAB>text`` (MS MARCO ``queries.*.tsv``).
``smart``
    SMART query files (CISI ``CISI.QRY``, Cranfield ``cran.qry``, CACM ``query.text``, MED
    ``MED.QRY``, ADI ``ADI.QRY``): records start with ``.I <n>``; the query text is the ``.W``
    field, its lines stripped and joined by one space. Numeric ids lose leading zeros (``.I 001``
    is query ``1``). ``smart_ids="ordinal"`` numbers the records 1, 2, 3... instead of using their
    ``.I`` numbers: Cranfield's ``cran.qry`` needs it (its ``.I`` numbers skip values; its qrels use
    the position in the file), and ``"auto"`` picks it for files named ``cran.qry``.
``npl``, ``lisa``, ``time``
    The Glasgow collections' own layouts (NPL/Vaswani ``query-text``, ``LISA.QUE``, ``TIME.QUE``):
    see :mod:`bm25desk.evaluation.glasgow`.

Every reader returns :class:`~bm25desk.evaluation.data.Queries`, with malformed or duplicate
records in ``skipped`` and informational messages in ``notes``. Files may be gzip-compressed;
text is UTF-8, or Latin-1 with a note.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from bm25desk.engine.readers.corpus import Skip
from bm25desk.evaluation import glasgow
from bm25desk.evaluation.data import EvalInputError, Queries, Query
from bm25desk.evaluation.detect import QUERY_FORMATS, detect_queries_format
from bm25desk.evaluation.glasgow import QueryRecord
from bm25desk.evaluation.textio import base_name, lines, norm_numeric_id, read_text

__all__ = ["QueryFormat", "SmartIds", "TopicField", "parse_queries", "read_queries"]

QueryFormat = Literal["trec", "beir", "tsv", "smart", "npl", "lisa", "time"]
SmartIds = Literal["auto", "ordinal", "declared"]
TopicField = Literal["title", "desc", "narr"]


def read_queries(
    path: str | Path,
    *,
    format: str = "auto",
    smart_ids: SmartIds = "auto",
    field: TopicField = "title",
) -> Queries:
    """Read a query file.

    Parameters
    ----------
    path
        The file (``.gz`` accepted).
    format
        ``"auto"`` (detect) or one of :data:`QUERY_FORMATS`.
    smart_ids
        For SMART files: ``"declared"`` uses the ``.I`` numbers, ``"ordinal"`` numbers the
        records 1, 2, 3... in file order; ``"auto"`` is ordinal for a file named ``cran.qry``
        (Cranfield, whose judgements use the position), declared otherwise.
    field
        For TREC topics: which field is the query.

    Returns
    -------
    Queries

    Raises
    ------
    OSError
        The file cannot be read.
    EvalInputError
        Unknown format, or no query could be read.
    """
    text, notes = read_text(path)
    return parse_queries(
        text,
        format=format,
        smart_ids=smart_ids,
        field=field,
        source=str(path),
        name=str(path),
        notes=notes,
    )


def parse_queries(
    text: str,
    *,
    format: str = "auto",
    smart_ids: SmartIds = "declared",
    field: TopicField = "title",
    source: str = "<string>",
    name: str = "",
    notes: Iterable[str] = (),
) -> Queries:
    """Parse queries from a string; see :func:`read_queries` (``name`` helps detection)."""
    fmt = detect_queries_format(text, name or source) if format == "auto" else format
    if fmt not in QUERY_FORMATS:
        raise EvalInputError(f"unknown query format {fmt!r}; choose one of {QUERY_FORMATS}")
    if field not in ("title", "desc", "narr"):
        raise EvalInputError(f"unknown topic field {field!r}; choose title, desc or narr")
    if smart_ids == "auto":
        smart_ids = "ordinal" if base_name(name or source) == "cran.qry" else "declared"
    skipped: list[Skip] = []
    all_notes = list(notes)
    if fmt == "trec":
        raw = _parse_trec_topics(text, field, source, skipped)
    elif fmt == "smart":
        raw = _parse_smart_queries(text, smart_ids, source, skipped)
        if smart_ids == "ordinal":
            all_notes.append(
                "query ids are positions in the file (1, 2, 3...), not the .I numbers "
                "(Cranfield convention)"
            )
    else:
        raw = _PARSERS[fmt](text, source, skipped)
    items: list[Query] = []
    seen: set[str] = set()
    for line, qid, qtext in raw:
        if qid in seen:
            skipped.append(Skip(f"{source}:{line}", f"duplicate query id {qid!r} (first kept)"))
            continue
        seen.add(qid)
        items.append(Query(qid, qtext))
    if not items:
        detail = f" ({skipped[0].where}: {skipped[0].reason})" if skipped else ""
        raise EvalInputError(f"{source}: no queries found in {fmt} format{detail}")
    return Queries(tuple(items), fmt, source, tuple(skipped), tuple(all_notes))


def _parse_tsv_queries(text: str, source: str, skipped: list[Skip]) -> list[QueryRecord]:
    out: list[QueryRecord] = []
    for n, line in lines(text):
        if not line.strip():
            continue
        qid, tab, qtext = line.partition("\t")
        qid, qtext = qid.strip(), qtext.strip()
        if not tab:
            skipped.append(Skip(f"{source}:{n}", "expected 'qid<TAB>text', found no tab"))
        elif not qid:
            skipped.append(Skip(f"{source}:{n}", "empty query id"))
        elif not qtext:
            skipped.append(Skip(f"{source}:{n}", f"query {qid!r} has no text"))
        else:
            out.append((n, qid, qtext))
    return out


def _parse_beir_queries(text: str, source: str, skipped: list[Skip]) -> list[QueryRecord]:
    out: list[QueryRecord] = []
    for n, line in lines(text):
        if not line.strip():
            continue
        where = f"{source}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            skipped.append(Skip(where, f"invalid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(obj, dict):
            skipped.append(Skip(where, "expected a JSON object"))
            continue
        qid, qtext = obj.get("_id"), obj.get("text")
        if not isinstance(qid, str | int) or isinstance(qid, bool) or str(qid) == "":
            skipped.append(Skip(where, "missing or invalid '_id'"))
        elif not isinstance(qtext, str) or not qtext.strip():
            skipped.append(Skip(where, f"query {qid!r} has no 'text'"))
        else:
            out.append((n, str(qid), qtext.strip()))
    return out


_SMART_FIELD = re.compile(r"^\.([A-Z])(?:\s+(.*))?$")


def _parse_smart_queries(
    text: str, smart_ids: str, source: str, skipped: list[Skip]
) -> list[QueryRecord]:
    out: list[QueryRecord] = []
    # Current record: start line, declared id, fields seen, current field, .W lines.
    start = 0
    declared: str | None = None
    w_lines: list[str] | None = None
    current: str | None = None
    ordinal = 0

    def finish() -> None:
        nonlocal ordinal
        if declared is None:
            return
        ordinal += 1
        qid = str(ordinal) if smart_ids == "ordinal" else declared
        qtext = " ".join(w_lines).strip() if w_lines is not None else ""
        if w_lines is None:
            skipped.append(Skip(f"{source}:{start}", f"query .I {declared} has no .W field"))
        elif not qtext:
            skipped.append(Skip(f"{source}:{start}", f"query .I {declared} has an empty .W field"))
        else:
            out.append((start, qid, qtext))

    for n, line in lines(text):
        m = _SMART_FIELD.match(line.rstrip())
        if m:
            tag, rest = m.group(1), (m.group(2) or "").strip()
            if tag == "I":
                finish()
                start, w_lines, current = n, None, None
                ident = rest.split()[0] if rest else ""
                if not ident:
                    skipped.append(Skip(f"{source}:{n}", ".I without a query number"))
                    declared = None
                    continue
                declared = norm_numeric_id(ident)
                continue
            if declared is None:
                if tag and start == 0:
                    skipped.append(Skip(f"{source}:{n}", f".{tag} before the first .I record"))
                continue
            current = tag
            if tag == "W":
                w_lines = [] if w_lines is None else w_lines
                if rest:
                    w_lines.append(rest)
            continue
        if declared is None:
            if line.strip() and start == 0:
                skipped.append(Skip(f"{source}:{n}", "text before the first .I record"))
            continue
        if current == "W" and w_lines is not None:
            w_lines.append(line.strip())
    finish()
    return out


_TREC_TAG = re.compile(
    r"<\s*(/?)\s*(top|num|title|desc|narr|topic|query|description|narrative)\b"
    r"([^>]*)>",
    re.IGNORECASE,
)
_TREC_LABEL = re.compile(r"^\s*(Number|Topic|Description|Narrative)\s*:\s*", re.IGNORECASE)


def _parse_trec_topics(
    text: str, field: str, source: str, skipped: list[Skip]
) -> list[QueryRecord]:
    """Parse classic SGML-ish TREC topics and the XML ``<topic number=..>`` style."""
    out: list[QueryRecord] = []
    xml_field = {"title": "query", "desc": "description", "narr": "narrative"}[field]
    # Line number of each character offset, for reporting.
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset)

    blocks = list(re.finditer(r"<top>(.*?)(?:</top>|(?=<top>)|\Z)", text, re.S | re.I))
    if blocks:
        for b in blocks:
            body, at = b.group(1), line_of(b.start())
            fields = _split_trec_fields(body)
            num = _TREC_LABEL.sub("", fields.get("num", "")).strip()
            qtext = " ".join(_TREC_LABEL.sub("", fields.get(field, "")).split())
            if not num:
                skipped.append(Skip(f"{source}:{at}", "topic without a <num>"))
            elif not qtext:
                skipped.append(Skip(f"{source}:{at}", f"topic {num} has no <{field}> text"))
            else:
                out.append((at, num.split()[0], qtext))
        return out
    for b in re.finditer(r"<topic\b([^>]*)>(.*?)(?:</topic>|\Z)", text, re.S | re.I):
        at = line_of(b.start())
        num_m = re.search(r"number\s*=\s*[\"']?([^\"'\s>]+)", b.group(1))
        body_m = re.search(rf"<{xml_field}>(.*?)</{xml_field}>", b.group(2), re.S | re.I)
        qtext = " ".join(body_m.group(1).split()) if body_m else ""
        if not num_m:
            skipped.append(Skip(f"{source}:{at}", "<topic> without a number attribute"))
        elif not qtext:
            skipped.append(
                Skip(f"{source}:{at}", f"topic {num_m.group(1)} has no <{xml_field}> text")
            )
        else:
            out.append((at, num_m.group(1), qtext))
    return out


def _split_trec_fields(body: str) -> dict[str, str]:
    """Split a ``<top>`` body into its fields; a field runs until the next tag."""
    fields: dict[str, str] = {}
    tags = list(_TREC_TAG.finditer(body))
    for i, m in enumerate(tags):
        if m.group(1):  # a closing tag ends nothing we need: fields run to the next tag
            continue
        name = m.group(2).lower()
        end = tags[i + 1].start() if i + 1 < len(tags) else len(body)
        fields.setdefault(name, body[m.end() : end])
    return fields


_PARSERS = {
    "beir": _parse_beir_queries,
    "tsv": _parse_tsv_queries,
    "npl": glasgow.parse_npl_queries,
    "lisa": glasgow.parse_lisa_queries,
    "time": glasgow.parse_time_queries,
}
