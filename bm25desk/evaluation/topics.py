"""Readers and writers for evaluation inputs: queries (topics), judgements (qrels) and runs.

Every reader returns an immutable object that carries what it could not use: ``skipped`` lists
each malformed line as a :class:`~bm25desk.engine.readers.corpus.Skip` whose ``where`` is
``"<source>:<line>"`` (1-based), and ``notes`` holds informational messages (an encoding fallback,
the Cranfield grade mapping, ordinal query ids...). Nothing is dropped silently. Blank lines are
not records and are not reported.

Formats
-------
Queries (``format=``):

``trec``
    TREC topics, ``<top> <num> Number: 401 <title> ... </top>``; the ``title`` field by default
    (``field="desc"`` or ``"narr"`` for the others). The XML style of later tracks,
    ``<topic number="201"> <query> ... </query>``, is read too (``title`` means ``<query>``).
``beir``
    BEIR ``queries.jsonl``: one ``{"_id": ..., "text": ...}`` object a line.
``tsv``
    ``qid<TAB>text`` (MS MARCO ``queries.*.tsv``).
``smart``
    SMART query files (CISI ``CISI.QRY``, Cranfield ``cran.qry``): records start with ``.I <n>``;
    the query text is the ``.W`` field, its lines stripped and joined by one space. Numeric ids
    lose leading zeros (``.I 001`` is query ``1``). ``smart_ids="ordinal"`` numbers the records
    1, 2, 3... instead of using their ``.I`` numbers: Cranfield's ``cran.qry`` needs it (its
    ``.I`` numbers skip values; its qrels use the position in the file), and ``"auto"`` picks it
    for files named ``cran.qry``.

Judgements (``format=``):

``trec``
    ``qid iteration docid relevance`` (whitespace separated; ``iteration`` is ignored).
``beir``
    BEIR TSV ``query-id<TAB>corpus-id<TAB>score``, header line optional.
``smart``
    CISI ``CISI.REL``: ``qid docid 0 0.000000``. Every listed pair is relevant (relevance 1); the
    last two columns carry no information.
``cranfield``
    Cranfield ``cranqrel``: ``qid docid grade``, grade 1 (complete answer) to 4 (minimum interest)
    relevant, −1 (and 5, used by some copies for "no interest") not relevant. Grades become
    relevance levels so that larger is better, as ir_measures and trec_eval expect:
    1 → 4, 2 → 3, 3 → 2, 4 → 1, −1 → 0, 5 → 0.

Runs: TREC run files ``qid Q0 docid rank score tag``, read and written.

Files may be gzip-compressed (``.gz``). Text is decoded as UTF-8 (a BOM is ignored); a file that is
not valid UTF-8 is decoded as Latin-1 and a note says so.
"""

from __future__ import annotations

import bisect
import gzip
import io
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from bm25desk.engine.readers.corpus import Skip

__all__ = [
    "QRELS_FORMATS",
    "QUERY_FORMATS",
    "EvalInputError",
    "Qrels",
    "Queries",
    "Query",
    "Ranking",
    "Run",
    "detect_qrels_format",
    "detect_queries_format",
    "format_run",
    "parse_qrels",
    "parse_queries",
    "parse_run",
    "read_qrels",
    "read_queries",
    "read_run",
    "write_run",
]

FloatArray: TypeAlias = npt.NDArray[np.float64]
QueryFormat = Literal["trec", "beir", "tsv", "smart"]
QrelsFormat = Literal["trec", "beir", "smart", "cranfield"]
SmartIds = Literal["auto", "ordinal", "declared"]
TopicField = Literal["title", "desc", "narr"]

QUERY_FORMATS: tuple[str, ...] = ("trec", "beir", "tsv", "smart")
QRELS_FORMATS: tuple[str, ...] = ("trec", "beir", "smart", "cranfield")

_CRANFIELD_GRADES = {-1: 0, 1: 4, 2: 3, 3: 2, 4: 1, 5: 0}


class EvalInputError(ValueError):
    """An evaluation input (queries, judgements, run, metric, option) cannot be used.

    The message is one line meant for the user: it names the file and what is wrong.
    """


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query:
    """One query: its id (as the judgements spell it) and its text."""

    qid: str
    text: str


@dataclass(frozen=True, slots=True)
class Queries:
    """Queries in file order, with what the reader could not use.

    Attributes
    ----------
    items
        The queries, in the order of the file; ids are unique (later duplicates are skipped).
    format
        The format that was read (one of :data:`QUERY_FORMATS`).
    source
        File path, or ``"<string>"``.
    skipped
        Malformed or duplicate records, ``where`` = ``"source:line"``.
    notes
        Informational messages (ordinal ids used, encoding fallback...).
    """

    items: tuple[Query, ...]
    format: str
    source: str = "<string>"
    skipped: tuple[Skip, ...] = ()
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        """Return the number of queries."""
        return len(self.items)

    def __iter__(self) -> Iterator[Query]:
        """Iterate over the queries in file order."""
        return iter(self.items)

    def ids(self) -> tuple[str, ...]:
        """Return the query ids in file order."""
        return tuple(q.qid for q in self.items)

    def text(self, qid: str) -> str | None:
        """Return the text of query ``qid``, or None when there is no such query."""
        for q in self.items:
            if q.qid == qid:
                return q.text
        return None


@dataclass(frozen=True, slots=True)
class Qrels:
    """Relevance judgements: ``judgements[qid][docid] = relevance`` (an int; > 0 is relevant).

    Attributes
    ----------
    judgements
        Per query (in order of first appearance), the judged documents and their relevance.
    format, source, skipped, notes
        As for :class:`Queries`.
    """

    judgements: Mapping[str, Mapping[str, int]]
    format: str
    source: str = "<string>"
    skipped: tuple[Skip, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def n_queries(self) -> int:
        """Number of queries with at least one judgement."""
        return len(self.judgements)

    @property
    def n_judgements(self) -> int:
        """Number of (query, document) judgements."""
        return sum(len(d) for d in self.judgements.values())

    def qids(self) -> tuple[str, ...]:
        """Return the judged query ids, in order of first appearance."""
        return tuple(self.judgements)

    def relevant(self, qid: str, min_rel: int = 1) -> frozenset[str]:
        """Return the documents judged at least ``min_rel`` for ``qid`` (empty if unjudged)."""
        return frozenset(d for d, r in self.judgements.get(qid, {}).items() if r >= min_rel)

    @classmethod
    def from_mapping(
        cls, judgements: Mapping[str, Mapping[str, int]], *, source: str = "<mapping>"
    ) -> Qrels:
        """Wrap a plain ``{qid: {docid: relevance}}`` mapping (copied)."""
        return cls(
            {str(q): {str(d): int(r) for d, r in docs.items()} for q, docs in judgements.items()},
            format="mapping",
            source=source,
        )


@dataclass(frozen=True, slots=True)
class Ranking:
    """One query's ranked list: ``docids[i]`` is at rank ``i + 1`` with score ``scores[i]``.

    ``scores`` is a read-only float64 array (8 bytes a hit: an experiment over many variants
    keeps many runs in memory).
    """

    docids: tuple[str, ...]
    scores: FloatArray

    def __len__(self) -> int:
        """Return the number of hits."""
        return len(self.docids)

    @classmethod
    def of(cls, docids: Sequence[str], scores: Sequence[float] | FloatArray) -> Ranking:
        """Build a ranking from parallel sequences (scores are copied and frozen)."""
        arr = np.array(scores, dtype=np.float64)
        if arr.shape != (len(docids),):
            raise ValueError(f"{len(docids)} docids but {arr.size} scores")
        arr.flags.writeable = False
        return cls(tuple(docids), arr)


@dataclass(frozen=True, slots=True)
class Run:
    """Ranked lists per query, as in a TREC run file.

    Attributes
    ----------
    rankings
        Per query id (in run order), its :class:`Ranking`.
    tag
        The run tag (last column of a run file; no whitespace).
    source, skipped, notes
        As for :class:`Queries` (empty for runs produced in memory).
    """

    rankings: Mapping[str, Ranking]
    tag: str = "bm25desk"
    source: str = ""
    skipped: tuple[Skip, ...] = ()
    notes: tuple[str, ...] = ()

    def __len__(self) -> int:
        """Return the number of queries with a ranking."""
        return len(self.rankings)

    @property
    def n_hits(self) -> int:
        """Total number of (query, document) lines."""
        return sum(len(r) for r in self.rankings.values())


# --------------------------------------------------------------------------------------------
# Text input
# --------------------------------------------------------------------------------------------


def _read_text(path: str | Path) -> tuple[str, tuple[str, ...]]:
    """Return the decoded text of ``path`` (gzip-aware) and notes about decoding."""
    p = Path(path)
    if p.is_dir():
        raise EvalInputError(f"{p}: is a directory, expected a file")
    if p.suffix.lower() == ".gz":
        try:
            with gzip.open(p, "rb") as fh:
                data = fh.read()
        except (gzip.BadGzipFile, EOFError) as exc:
            raise EvalInputError(f"{p}: not a readable gzip file ({exc})") from exc
    else:
        data = p.read_bytes()
    try:
        return data.decode("utf-8-sig"), ()
    except UnicodeDecodeError as exc:
        note = f"{p}: not valid UTF-8 (byte {exc.start}); decoded as Latin-1"
        return data.decode("latin-1"), (note,)


def _base_name(path: str | Path) -> str:
    """File name without a ``.gz`` suffix, lower case (used for format detection)."""
    name = Path(path).name.lower()
    return name.removesuffix(".gz")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` with 1-based numbers and ``\n`` / ``\r\n`` removed.

    Only ``\n`` ends a line: ``str.splitlines`` would also split on form feeds, U+2028 and other
    characters that occur inside real query text and JSON strings, and shift the line numbers.
    """
    for n, line in enumerate(text.split("\n"), start=1):
        yield n, line.removesuffix("\r")


def _first_content_line(text: str) -> str:
    for _, line in _lines(text):
        if line.strip():
            return line.strip()
    return ""


def _norm_smart_id(raw: str) -> str:
    """SMART ids are numbers: ``001`` and ``1`` are the same query."""
    return str(int(raw)) if raw.isdigit() else raw


# --------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------


def detect_queries_format(text: str, name: str = "") -> str:
    """Guess a query file's format from its name and first non-blank line.

    Parameters
    ----------
    text
        The file's content (only its beginning is examined).
    name
        The file name, if any (``.qry`` suggests SMART, ``.jsonl`` BEIR, ``.tsv`` TSV).

    Returns
    -------
    str
        One of :data:`QUERY_FORMATS`.

    Raises
    ------
    EvalInputError
        When neither the content nor the name gives it away.
    """
    first = _first_content_line(text)
    if first.startswith("<top") or first.startswith("<topic") or first.startswith("<?xml"):
        return "trec"
    if first.startswith("<") and re.search(r"<top>|<topic\b", text[:10_000]):
        return "trec"
    if first.startswith("{"):
        return "beir"
    if re.match(r"^\.I(\s|$)", first):
        return "smart"
    if "\t" in first:
        return "tsv"
    base = name.lower().removesuffix(".gz")
    by_suffix = {".qry": "smart", ".jsonl": "beir", ".tsv": "tsv"}
    for suffix, fmt in by_suffix.items():
        if base.endswith(suffix):
            return fmt
    shown = first[:60] or "(empty)"
    raise EvalInputError(
        f"{name or 'queries'}: cannot tell the query format from its first line {shown!r}; "
        f"choose one of {', '.join(QUERY_FORMATS)}"
    )


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
    text, notes = _read_text(path)
    if smart_ids == "auto":
        smart_ids = "ordinal" if _base_name(path) == "cran.qry" else "declared"
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
        smart_ids = "ordinal" if _base_name(name or source) == "cran.qry" else "declared"
    skipped: list[Skip] = []
    all_notes = list(notes)
    if fmt == "trec":
        raw = _parse_trec_topics(text, field, source, skipped)
    elif fmt == "beir":
        raw = _parse_beir_queries(text, source, skipped)
    elif fmt == "tsv":
        raw = _parse_tsv_queries(text, source, skipped)
    else:
        raw = _parse_smart_queries(text, smart_ids, source, skipped)
        if smart_ids == "ordinal":
            all_notes.append(
                "query ids are positions in the file (1, 2, 3...), not the .I numbers "
                "(Cranfield convention)"
            )
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


_QueryRecord = tuple[int, str, str]  # (line, qid, text)


def _parse_tsv_queries(text: str, source: str, skipped: list[Skip]) -> list[_QueryRecord]:
    out: list[_QueryRecord] = []
    for n, line in _lines(text):
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


def _parse_beir_queries(text: str, source: str, skipped: list[Skip]) -> list[_QueryRecord]:
    out: list[_QueryRecord] = []
    for n, line in _lines(text):
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
) -> list[_QueryRecord]:
    out: list[_QueryRecord] = []
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

    for n, line in _lines(text):
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
                declared = _norm_smart_id(ident)
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
) -> list[_QueryRecord]:
    """Parse classic SGML-ish TREC topics and the XML ``<topic number=..>`` style."""
    out: list[_QueryRecord] = []
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


# --------------------------------------------------------------------------------------------
# Qrels
# --------------------------------------------------------------------------------------------


def detect_qrels_format(text: str, name: str = "") -> str:
    """Guess a judgement file's format from its name and first lines.

    ``cranqrel`` → ``cranfield``; a ``query-id`` header → ``beir``; a ``.rel`` suffix or lines
    like ``qid docid 0 0.000000`` → ``smart``; other four-column lines → ``trec``; three columns →
    ``cranfield`` when a grade is −1, else ``beir`` (headerless).

    Raises
    ------
    EvalInputError
        When the lines fit none of these.
    """
    base = name.lower().removesuffix(".gz")
    base = Path(base).name
    if base.startswith("cranqrel"):
        return "cranfield"
    sample = [line.split() for _, line in zip(range(200), _nonblank(text), strict=False)]
    if not sample:
        raise EvalInputError(f"{name or 'qrels'}: empty judgement file")
    if [s.lower() for s in sample[0][:2]] == ["query-id", "corpus-id"]:
        return "beir"
    if base.endswith(".rel"):
        return "smart"
    # The most common column count decides, so one malformed line does not defeat detection
    # (the reader then reports it with its line number).
    width = Counter(len(s) for s in sample).most_common(1)[0][0]
    typical = [s for s in sample if len(s) == width]
    if width == 4:
        smart_like = all(s[2] == "0" and re.fullmatch(r"\d+\.\d+", s[3]) for s in typical)
        return "smart" if smart_like else "trec"
    if width == 3:
        return "cranfield" if any(s[2] == "-1" for s in typical) else "beir"
    raise EvalInputError(
        f"{name or 'qrels'}: cannot tell the judgement format (lines have {width} columns); "
        f"choose one of {', '.join(QRELS_FORMATS)}"
    )


def _nonblank(text: str) -> Iterator[str]:
    for _, line in _lines(text):
        if line.strip():
            yield line


def read_qrels(path: str | Path, *, format: str = "auto") -> Qrels:
    """Read a judgement file.

    Parameters
    ----------
    path
        The file (``.gz`` accepted).
    format
        ``"auto"`` (detect) or one of :data:`QRELS_FORMATS`.

    Returns
    -------
    Qrels

    Raises
    ------
    OSError
        The file cannot be read.
    EvalInputError
        Unknown format, or no judgement could be read.
    """
    text, notes = _read_text(path)
    return parse_qrels(text, format=format, source=str(path), name=str(path), notes=notes)


def parse_qrels(
    text: str,
    *,
    format: str = "auto",
    source: str = "<string>",
    name: str = "",
    notes: Iterable[str] = (),
) -> Qrels:
    """Parse judgements from a string; see :func:`read_qrels` (``name`` helps detection)."""
    fmt = detect_qrels_format(text, name or source) if format == "auto" else format
    if fmt not in QRELS_FORMATS:
        raise EvalInputError(f"unknown judgement format {fmt!r}; choose one of {QRELS_FORMATS}")
    skipped: list[Skip] = []
    all_notes = list(notes)
    judgements: dict[str, dict[str, int]] = {}
    first = True
    for n, line in _lines(text):
        if not line.strip():
            continue
        where = f"{source}:{n}"
        if fmt == "beir":
            parts = line.split("\t") if "\t" in line else line.split()
            parts = [p.strip() for p in parts]
            if first and [p.lower() for p in parts[:2]] == ["query-id", "corpus-id"]:
                first = False
                continue
        else:
            parts = line.split()
        first = False
        parsed = _parse_qrel_fields(fmt, parts)
        if isinstance(parsed, str):
            skipped.append(Skip(where, parsed))
            continue
        qid, docid, rel = parsed
        docs = judgements.setdefault(qid, {})
        if docid in docs:
            same = "same" if docs[docid] == rel else f"first {docs[docid]}, now {rel}"
            skipped.append(Skip(where, f"duplicate judgement {qid} {docid} ({same}; first kept)"))
            continue
        docs[docid] = rel
    if fmt == "cranfield":
        all_notes.append(
            "Cranfield grades mapped to relevance (larger is better): 1→4, 2→3, 3→2, 4→1, −1→0, 5→0"
        )
    elif fmt == "smart":
        all_notes.append("SMART .REL: every listed pair is relevant (relevance 1)")
    if not judgements:
        detail = f" ({skipped[0].where}: {skipped[0].reason})" if skipped else ""
        raise EvalInputError(f"{source}: no judgements found in {fmt} format{detail}")
    return Qrels(judgements, fmt, source, tuple(skipped), tuple(all_notes))


def _parse_qrel_fields(fmt: str, parts: list[str]) -> tuple[str, str, int] | str:
    """Return ``(qid, docid, relevance)`` or a reason why the line is malformed."""
    if fmt == "trec":
        if len(parts) != 4:
            return f"expected 4 columns 'qid iteration docid relevance', found {len(parts)}"
        qid, _, docid, raw = parts
    elif fmt == "smart":
        if len(parts) not in (2, 4):
            return f"expected 'qid docid 0 0.000000', found {len(parts)} columns"
        if not (parts[0].isdigit() and parts[1].isdigit()):
            return f"SMART ids are numbers, found {parts[0]!r} {parts[1]!r}"
        return _norm_smart_id(parts[0]), _norm_smart_id(parts[1]), 1
    elif fmt == "beir":
        if len(parts) != 3:
            return f"expected 3 columns 'query-id corpus-id score', found {len(parts)}"
        qid, docid, raw = parts
    else:  # cranfield
        if len(parts) != 3:
            return f"expected 3 columns 'qid docid grade', found {len(parts)}"
        qid, docid, raw = _norm_smart_id(parts[0]), _norm_smart_id(parts[1]), parts[2]
    if not qid or not docid:
        return "empty query or document id"
    try:
        rel = int(raw)
    except ValueError:
        return f"relevance {raw!r} is not an integer"
    if fmt == "cranfield":
        if rel not in _CRANFIELD_GRADES:
            return f"Cranfield grade {rel} is not one of 1, 2, 3, 4, -1, 5"
        rel = _CRANFIELD_GRADES[rel]
    return qid, docid, rel


# --------------------------------------------------------------------------------------------
# Runs
# --------------------------------------------------------------------------------------------


def read_run(path: str | Path) -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``; ``.gz`` accepted).

    Each query's hits are ordered by the file's rank column (file order breaks equal ranks) and
    renumbered 1, 2, 3...; the scores are kept as written. The tag is the first line's tag.

    Raises
    ------
    OSError
        The file cannot be read.
    """
    text, notes = _read_text(path)
    return parse_run(text, source=str(path), notes=notes)


def parse_run(text: str, *, source: str = "<string>", notes: Iterable[str] = ()) -> Run:
    """Parse a TREC run from a string; see :func:`read_run`. An empty run is valid."""
    skipped: list[Skip] = []
    rows: dict[str, list[tuple[int, int, str, float]]] = {}
    seen: dict[str, set[str]] = {}
    tags: dict[str, None] = {}
    for n, line in _lines(text):
        if not line.strip():
            continue
        where = f"{source}:{n}"
        parts = line.split()
        if len(parts) != 6:
            skipped.append(
                Skip(where, f"expected 6 columns 'qid Q0 docid rank score tag', found {len(parts)}")
            )
            continue
        qid, _, docid, raw_rank, raw_score, tag = parts
        try:
            rank = int(raw_rank)
        except ValueError:
            skipped.append(Skip(where, f"rank {raw_rank!r} is not an integer"))
            continue
        try:
            score = float(raw_score)
        except ValueError:
            skipped.append(Skip(where, f"score {raw_score!r} is not a number"))
            continue
        if not math.isfinite(score):
            skipped.append(Skip(where, f"score {raw_score!r} is not finite"))
            continue
        docs = seen.setdefault(qid, set())
        if docid in docs:
            skipped.append(
                Skip(where, f"document {docid} listed twice for query {qid} (first kept)")
            )
            continue
        docs.add(docid)
        tags[tag] = None
        rows.setdefault(qid, []).append((rank, n, docid, score))
    rankings = {}
    for qid, hits in rows.items():
        hits.sort()
        rankings[qid] = Ranking.of([h[2] for h in hits], [h[3] for h in hits])
    all_notes = list(notes)
    if len(tags) > 1:
        all_notes.append(f"several run tags ({', '.join(list(tags)[:5])}); the first is kept")
    tag = next(iter(tags), "run")
    return Run(rankings, tag, source, tuple(skipped), tuple(all_notes))


def _tag_token(tag: str) -> str:
    """Make ``tag`` a single whitespace-free token (TREC run files are space separated)."""
    token = re.sub(r"\s+", "", tag)
    return token or "run"


def format_run(run: Run, tag: str | None = None) -> str:
    """Render ``run`` as TREC run text (``qid Q0 docid rank score tag``, one hit a line).

    Scores are written with ``repr`` (shortest round-trip form), so reading the file back gives
    the same floats. Whitespace is removed from the tag.

    Raises
    ------
    ValueError
        A query or document id contains whitespace, which the format cannot represent.
    """
    buf = io.StringIO()
    _write_run_lines(run, buf, tag)
    return buf.getvalue()


def write_run(run: Run, path: str | Path, tag: str | None = None) -> Path:
    """Write ``run`` as a TREC run file (gzip-compressed when ``path`` ends with ``.gz``).

    The file is written to a temporary name first and then renamed, so an interrupted export
    never leaves a truncated run behind. See :func:`format_run` for the layout.

    Returns
    -------
    Path
        The path written.
    """
    p = Path(path)
    text = format_run(run, tag)
    tmp = p.with_name(p.name + ".tmp")
    if p.suffix.lower() == ".gz":
        with gzip.open(tmp, "wt", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    else:
        tmp.write_text(text, encoding="utf-8", newline="\n")
    tmp.replace(p)
    return p


def _write_run_lines(run: Run, out: IO[str], tag: str | None) -> None:
    token = _tag_token(tag if tag is not None else run.tag)
    ws = re.compile(r"\s")
    for qid, ranking in run.rankings.items():
        if ws.search(qid) or not qid:
            raise ValueError(f"query id {qid!r} is empty or contains whitespace")
        for i, (docid, score) in enumerate(zip(ranking.docids, ranking.scores, strict=True)):
            if ws.search(docid) or not docid:
                raise ValueError(
                    f"document id {docid!r} is empty or contains whitespace; "
                    "a TREC run file cannot represent it"
                )
            out.write(f"{qid} Q0 {docid} {i + 1} {float(score)!r} {token}\n")
