"""TREC run files (``qid Q0 docid rank score tag``): read, rendered and written atomically."""

from __future__ import annotations

import gzip
import io
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from bm25desk.engine.readers.corpus import Skip
from bm25desk.evaluation.data import EvalInputError, Ranking, Run
from bm25desk.evaluation.textio import lines, read_text

__all__ = ["format_run", "parse_run", "read_run", "run_tag", "write_run"]


def read_run(path: str | Path) -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``; ``.gz`` accepted).

    Each query's hits are ordered by the file's rank column (file order breaks equal ranks) and
    renumbered 1, 2, 3...; the scores are kept as written. The tag is the first line's tag.

    Raises
    ------
    OSError
        The file cannot be read.
    """
    text, notes = read_text(path)
    return parse_run(text, source=str(path), notes=notes)


def parse_run(text: str, *, source: str = "<string>", notes: Iterable[str] = ()) -> Run:
    """Parse a TREC run from a string; see :func:`read_run`. An empty run is valid."""
    skipped: list[Skip] = []
    rows: dict[str, list[tuple[int, int, str, float]]] = {}
    seen: dict[str, set[str]] = {}
    tags: dict[str, None] = {}
    for n, line in lines(text):
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


def run_tag(tag: str) -> str:
    """Make ``tag`` a single whitespace-free token (TREC run files are space separated)."""
    token = re.sub(r"\s+", "", tag)
    return token or "run"


def format_run(run: Run, tag: str | None = None) -> str:
    """Render ``run`` as TREC run text (``qid Q0 docid rank score tag``, one hit a line).

    Scores are written with ``repr`` (shortest round-trip form), so reading the file back gives
    the same floats. Whitespace is removed from the tag.

    Raises
    ------
    EvalInputError
        A query or document id contains whitespace, which the format cannot represent (a
        ``ValueError``, like every :class:`EvalInputError`).
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
    token = run_tag(tag if tag is not None else run.tag)
    ws = re.compile(r"\s")
    for qid, ranking in run.rankings.items():
        if ws.search(qid) or not qid:
            raise EvalInputError(f"query id {qid!r} is empty or contains whitespace")
        for i, (docid, score) in enumerate(zip(ranking.docids, ranking.scores, strict=True)):
            if ws.search(docid) or not docid:
                raise EvalInputError(
                    f"document id {docid!r} is empty or contains whitespace; "
                    "a TREC run file cannot represent it"
                )
            out.write(f"{qid} Q0 {docid} {i + 1} {float(score)!r} {token}\n")
