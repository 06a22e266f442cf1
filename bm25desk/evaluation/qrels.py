"""Judgement readers (TREC, BEIR, SMART, Cranfield, NPL, LISA, TIME) and sanity checks.

Formats (``format=``; ``"auto"`` detects them by content, see :mod:`bm25desk.evaluation.detect`):

``trec``
    ``qid iteration docid relevance`` (whitespace separated; ``iteration`` is ignored). MED's
    ``MED.REL`` is in this format.
``beir``
    BEIR TSV ``query-id<TAB>corpus-id<TAB>score``, header line optional.
``smart``
    ``qid docid 0 0.000000`` (CISI ``CISI.REL``, ADI ``ADI.REL``) or ``qid docid 0 0`` (CACM
    ``qrels.text``). Every listed pair is relevant (relevance 1); the last two columns carry no
    information. Numeric ids lose leading zeros (CACM writes query 1 as ``01``).
``cranfield``
    Cranfield ``cranqrel``: ``qid docid grade``, grade 1 (complete answer) to 4 (minimum interest)
    relevant, −1 (and 5, used by some copies for "no interest") not relevant. Grades become
    relevance levels so that larger is better, as ir_measures and trec_eval expect:
    1 → 4, 2 → 3, 3 → 2, 4 → 1, −1 → 0, 5 → 0.
``npl``, ``lisa``, ``time``
    NPL's ``rlv-ass``, LISA's ``LISARJ.NUM``, ``TIME.REL``: see :mod:`bm25desk.evaluation.glasgow`.

A file read in the wrong format does not fail quietly: when half or more of its judgements repeat
an earlier (query, document) pair (a TREC file read as SMART takes the constant iteration column
for the document), or when no judgement is relevant, reading stops with an
:class:`~bm25desk.evaluation.data.EvalInputError` that names the format assumed and how to choose
another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from bm25desk.engine.readers.corpus import Skip
from bm25desk.evaluation import glasgow
from bm25desk.evaluation.data import EvalInputError, Qrels
from bm25desk.evaluation.detect import QRELS_FORMATS, QRELS_LAYOUTS, detect_qrels_format
from bm25desk.evaluation.glasgow import Judgement
from bm25desk.evaluation.textio import lines, norm_numeric_id, read_text

__all__ = ["parse_qrels", "read_qrels"]

_CRANFIELD_GRADES = {-1: 0, 1: 4, 2: 3, 3: 2, 4: 1, 5: 0}

_NOTES = {
    "cranfield": "Cranfield grades mapped to relevance (larger is better): "
    "1→4, 2→3, 3→2, 4→1, −1→0, 5→0",
    "smart": "SMART .REL: every listed pair is relevant (relevance 1)",
    "npl": "NPL rlv-ass: every listed document is relevant (relevance 1)",
    "lisa": "LISARJ.NUM: every listed document is relevant (relevance 1)",
    "time": "TIME.REL: every listed document is relevant (relevance 1); its document numbers are "
    "positions in TIME.ALL (1, 2, 3...), not the *TEXT numbers",
}


def read_qrels(path: str | Path, *, format: str = "auto") -> Qrels:
    """Read a judgement file.

    Parameters
    ----------
    path
        The file (gzip-compressed or not).
    format
        ``"auto"`` (detect from the content) or one of :data:`QRELS_FORMATS`.

    Returns
    -------
    Qrels

    Raises
    ------
    OSError
        The file cannot be read.
    EvalInputError
        Unknown format, no judgement could be read, or the reading makes no sense (see the
        module docstring).
    """
    text, notes = read_text(path)
    return parse_qrels(text, format=format, source=str(path), name=str(path), notes=notes)


def parse_qrels(
    text: str,
    *,
    format: str = "auto",
    source: str = "<string>",
    name: str = "",
    notes: Iterable[str] = (),
) -> Qrels:
    """Parse judgements from a string; see :func:`read_qrels` (``name`` breaks detection ties)."""
    detected = format == "auto"
    fmt = detect_qrels_format(text, name or source) if detected else format
    if fmt not in QRELS_FORMATS:
        raise EvalInputError(f"unknown judgement format {fmt!r}; choose one of {QRELS_FORMATS}")
    skipped: list[Skip] = []
    parse = _GLASGOW.get(fmt)
    rows = parse(text, source, skipped) if parse else _line_judgements(text, fmt, source, skipped)
    judgements: dict[str, dict[str, int]] = {}
    duplicates = 0
    for n, qid, docid, rel in rows:
        docs = judgements.setdefault(qid, {})
        if docid in docs:
            duplicates += 1
            same = "same" if docs[docid] == rel else f"first {docs[docid]}, now {rel}"
            skipped.append(
                Skip(f"{source}:{n}", f"duplicate judgement {qid} {docid} ({same}; first kept)")
            )
            continue
        docs[docid] = rel
    skipped.sort(key=_line_of)
    if not judgements:
        detail = f" ({skipped[0].where}: {skipped[0].reason})" if skipped else ""
        raise EvalInputError(f"{source}: no judgements found in {fmt} format{detail}")
    all_notes = [*notes, _NOTES[fmt]] if fmt in _NOTES else list(notes)
    qrels = Qrels(judgements, fmt, source, tuple(skipped), tuple(all_notes))
    _check_reading(qrels, duplicates, detected)
    return qrels


def _line_of(skip: Skip) -> int:
    tail = skip.where.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _check_reading(qrels: Qrels, duplicates: int, detected: bool) -> None:
    """Refuse a reading that collapsed or holds nothing relevant (a format misread)."""
    fmt, source = qrels.format, qrels.source
    how = "detected from its content" if detected else "as chosen"
    others = ", ".join(f for f in QRELS_FORMATS if f != fmt)
    choose = f"if that is not its format, choose one (--qrels-format {others})"
    read_as = f"read as {fmt} {QRELS_LAYOUTS[fmt]} ({how})"
    lines_read = qrels.n_judgements + duplicates
    if duplicates >= 2 and 2 * duplicates >= lines_read:
        raise EvalInputError(
            f"{source}: {duplicates} of {lines_read} judgements repeat an earlier (query, "
            f"document) pair when {read_as}; {choose}"
        )
    if qrels.n_relevant == 0:
        raise EvalInputError(
            f"{source}: none of the {qrels.n_judgements} judgements is relevant (every relevance "
            f"is 0 or less) when {read_as}; {choose}"
        )


def _line_judgements(text: str, fmt: str, source: str, skipped: list[Skip]) -> list[Judgement]:
    """Judgements of the one-judgement-a-line formats (trec, beir, smart, cranfield)."""
    out: list[Judgement] = []
    first = True
    for n, line in lines(text):
        if not line.strip():
            continue
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
            skipped.append(Skip(f"{source}:{n}", parsed))
        else:
            out.append((n, *parsed))
    return out


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
        return norm_numeric_id(parts[0]), norm_numeric_id(parts[1]), 1
    elif fmt == "beir":
        if len(parts) != 3:
            return f"expected 3 columns 'query-id corpus-id score', found {len(parts)}"
        qid, docid, raw = parts
    else:  # cranfield
        if len(parts) != 3:
            return f"expected 3 columns 'qid docid grade', found {len(parts)}"
        qid, docid, raw = norm_numeric_id(parts[0]), norm_numeric_id(parts[1]), parts[2]
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


_GLASGOW: dict[str, Callable[[str, str, list[Skip]], list[Judgement]]] = {
    "npl": glasgow.parse_npl_qrels,
    "lisa": glasgow.parse_lisa_qrels,
    "time": glasgow.parse_time_qrels,
}
