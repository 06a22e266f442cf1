"""Which format a query or judgement file is in, told from its content (the name only breaks ties).

A file name says little: MED's ``MED.REL`` holds TREC qrels although CISI's ``CISI.REL`` does not,
and CACM's ``qrels.text`` holds CISI's layout. So the lines decide; the name is consulted only when
the content fits two formats equally well (a one-line file) or fits none (an empty one). Whatever is
detected, the readers check that the result makes sense (see :mod:`bm25desk.evaluation.qrels`).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bm25desk.evaluation.data import EvalInputError
from bm25desk.evaluation.textio import first_content_line, lines, nonblank

__all__ = [
    "QRELS_FORMATS",
    "QRELS_FORMAT_LABELS",
    "QRELS_LAYOUTS",
    "QUERY_FORMATS",
    "QUERY_FORMAT_LABELS",
    "detect_qrels_format",
    "detect_queries_format",
]

QUERY_FORMATS: tuple[str, ...] = ("trec", "beir", "tsv", "smart", "npl", "lisa", "time")
QRELS_FORMATS: tuple[str, ...] = ("trec", "beir", "smart", "cranfield", "npl", "lisa", "time")

QUERY_FORMAT_LABELS: dict[str, str] = {
    "trec": "TREC topics",
    "beir": "BEIR queries.jsonl",
    "tsv": "TSV (id, text)",
    "smart": "SMART .I/.W (CISI, CACM, Cranfield, MED, ADI)",
    "npl": "NPL query-text (ends with /)",
    "lisa": "LISA.QUE (ends with #)",
    "time": "TIME.QUE (*FIND)",
}
"""A short label per query format, for menus."""

QRELS_FORMAT_LABELS: dict[str, str] = {
    "trec": "TREC qrels (MED.REL)",
    "beir": "BEIR qrels TSV",
    "smart": "SMART qid docid 0 0 (CISI, CACM, ADI)",
    "cranfield": "Cranfield cranqrel",
    "npl": "NPL rlv-ass",
    "lisa": "LISA LISARJ.NUM",
    "time": "TIME.REL",
}
"""A short label per judgement format, for menus."""

QRELS_LAYOUTS: dict[str, str] = {
    "trec": "'qid iteration docid relevance'",
    "beir": "'query-id corpus-id score'",
    "smart": "'qid docid 0 0'",
    "cranfield": "'qid docid grade'",
    "npl": "'qid' then document ids then '/'",
    "lisa": "'qid count docid...'",
    "time": "'qid docid docid...' a line",
}
"""The columns each judgement format reads, as messages quote them."""

_SAMPLE_LINES = 200
_INT = re.compile(r"-?\d+")
_DECIMAL = re.compile(r"\d+\.\d+")


# --------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------


def detect_queries_format(text: str, name: str = "") -> str:
    """Guess a query file's format from its first lines.

    ``<top>``/``<topic>`` → ``trec``; a JSON object → ``beir``; ``.I`` → ``smart``; ``*FIND`` →
    ``time``; a tab → ``tsv``; a number alone on the first line → ``npl`` when a record ends with a
    ``/`` line, ``lisa`` when it ends with ``#``. Only when the content fits none of these does the
    name decide (``.qry`` → smart, ``.jsonl`` → beir, ``.tsv`` → tsv).

    Parameters
    ----------
    text
        The file's content (only its beginning is examined).
    name
        The file name, if any.

    Returns
    -------
    str
        One of :data:`QUERY_FORMATS`.

    Raises
    ------
    EvalInputError
        When neither the content nor the name gives it away.
    """
    first = first_content_line(text)
    if first.startswith(("<top", "<topic", "<?xml")):
        return "trec"
    if first.startswith("<") and re.search(r"<top>|<topic\b", text[:10_000]):
        return "trec"
    if first.startswith("{"):
        return "beir"
    if re.match(r"^\.I(\s|$)", first):
        return "smart"
    if re.match(r"^\*FIND\b", first):
        return "time"
    if "\t" in first:
        return "tsv"
    if first.isascii() and first.isdigit():
        head = [line.strip() for _, line in zip(range(_SAMPLE_LINES), nonblank(text), strict=False)]
        if "/" in head:
            return "npl"
        if any(line.endswith("#") for line in head):
            return "lisa"
    base = name.lower().removesuffix(".gz")
    for suffix, fmt in ((".qry", "smart"), (".jsonl", "beir"), (".tsv", "tsv")):
        if base.endswith(suffix):
            return fmt
    shown = first[:60] or "(empty)"
    raise EvalInputError(
        f"{name or 'queries'}: cannot tell the query format from its first line {shown!r}; "
        f"choose one of {', '.join(QUERY_FORMATS)}"
    )


# --------------------------------------------------------------------------------------------
# Judgements
# --------------------------------------------------------------------------------------------


def detect_qrels_format(text: str, name: str = "") -> str:
    """Guess a judgement file's format from its lines.

    - a ``query-id corpus-id`` header → ``beir``;
    - a query id alone on the first line and ``/`` record ends → ``npl`` (``rlv-ass``);
    - numbers only, a blank line after every line → ``time`` (``TIME.REL``: ``qid docid...``);
    - numbers only, read as ``qid count docid...`` records that each start a line → ``lisa``;
    - numbers only, lines of many lengths → ``time`` again;
    - four columns: ``qid docid 0 0`` (CISI, CACM, ADI: the 3rd column is always ``0`` while the
      2nd varies, or the 4th is a decimal like ``0.000000``) → ``smart``; otherwise
      (``qid iteration docid relevance``: the 2nd column is constant, the 3rd varies; MED.REL)
      → ``trec``;
    - three columns: ``cranfield`` when a grade is −1 (or the name is ``cranqrel`` and the grades
      fit), else ``beir`` without a header.

    The most common column count decides, so one malformed line does not defeat detection (the
    reader then reports it with its line number). A ``.rel`` name breaks the tie only for a file
    that fits ``smart`` and ``trec`` equally (one judgement).

    Raises
    ------
    EvalInputError
        When the lines fit none of these.
    """
    base = Path(name.lower().removesuffix(".gz")).name
    sample = [line.split() for _, line in zip(range(_SAMPLE_LINES), nonblank(text), strict=False)]
    if not sample:
        raise EvalInputError(f"{name or 'qrels'}: empty judgement file")
    if [s.lower() for s in sample[0][:2]] == ["query-id", "corpus-id"]:
        return "beir"
    if sample[0][:1] == ["Query"] and "Relevant Refs" in text[:2000]:
        raise EvalInputError(
            f"{name or 'qrels'}: this is LISA.REL, the old LISA judgements; read LISARJ.NUM, "
            "the current ones (format lisa)"
        )
    numeric = all(_INT.fullmatch(t) for s in sample for t in s if t != "/")
    if numeric and len(sample[0]) == 1 and any("/" in s for s in sample):
        return "npl"
    if numeric and _double_spaced(text):
        return "time"  # TIME.REL, like TIME.ALL and TIME.QUE, has a blank line after every line
    if numeric and _is_lisa(text):
        return "lisa"
    width, n_typical = Counter(len(s) for s in sample).most_common(1)[0]
    typical = [s for s in sample if len(s) == width]
    if numeric and (width > 4 or n_typical < 0.6 * len(sample)):
        return "time"  # one query a line with all its documents: lines of many lengths
    if width == 4:
        return _smart_or_trec(typical, base)
    if width == 3:
        if any(s[2] == "-1" for s in typical):
            return "cranfield"
        if base.startswith("cranqrel") and all(_fits_cranfield(s) for s in typical):
            return "cranfield"
        return "beir"
    if numeric and width == 2 and len(sample) > 1:
        return "time"
    raise EvalInputError(
        f"{name or 'qrels'}: cannot tell the judgement format (lines have {width} columns); "
        f"choose one of {', '.join(QRELS_FORMATS)}"
    )


def _smart_or_trec(rows: Sequence[list[str]], base: str) -> str:
    """Tell ``qid docid 0 0`` (SMART) from ``qid iteration docid relevance`` (TREC)."""
    smart_fit = all(
        r[2] == "0" and (r[3] == "0" or _DECIMAL.fullmatch(r[3])) and r[0].isdigit() for r in rows
    )
    trec_fit = all(_INT.fullmatch(r[3]) for r in rows)
    if smart_fit and not trec_fit:
        return "smart"  # CISI: 0.000000 is no TREC relevance
    if not smart_fit:
        return "trec"
    # Both fit (CACM: "01 1410 0 0"): in a TREC file the 2nd column is the constant iteration
    # and the 3rd the varying docid; in a SMART file it is the other way round.
    if len({r[1] for r in rows}) > 1:
        return "smart"
    return "smart" if base.endswith(".rel") else "trec"


def _double_spaced(text: str) -> bool:
    """Whether the first lines alternate text and blank (at least two non-blank ones)."""
    filled = [bool(line.strip()) for _, line in itertools.islice(lines(text), 2 * _SAMPLE_LINES)]
    while filled and not filled[-1]:
        filled.pop()
    return sum(filled) >= 2 and not any(a and b for a, b in itertools.pairwise(filled))


def _fits_cranfield(row: Sequence[str]) -> bool:
    return row[0].isdigit() and row[1].isdigit() and row[2] in {"1", "2", "3", "4", "5", "-1"}


def _is_lisa(text: str) -> bool:
    """Whether ``text`` reads as LISARJ.NUM: ``qid count docid...`` records, each opening a line.

    TIME.REL (``qid docid docid ...``) and pairs files are numbers only too, but read this way a
    record soon starts in the middle of a line, or the counts do not add up.
    """
    starts: list[bool] = []
    tokens: list[str] = []
    for line in nonblank(text):
        parts = line.split()
        starts.extend([True] + [False] * (len(parts) - 1))
        tokens.extend(parts)
    i, last_qid = 0, -1
    while i < len(tokens):
        if not starts[i] or i + 1 >= len(tokens) or not tokens[i + 1].isdigit():
            return False
        qid, count = int(tokens[i]), int(tokens[i + 1])
        if count < 1 or qid <= last_qid:  # LISA numbers its queries 1, 2, 3...
            return False
        last_qid = qid
        i += 2 + count
    return i == len(tokens) and len(tokens) > 2
