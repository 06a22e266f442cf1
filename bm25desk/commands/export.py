"""CSV shapes of ``search --csv`` (one row a hit) and ``explain --csv`` (one row a ledger line).

Both take the dicts the ``--json`` output is made of, so the two exports cannot disagree; both
write to stdout unless given ``out`` (the app's File → Export writes files through them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from bm25desk.commands.common import write_csv

__all__ = ["LEDGER_COLUMNS", "write_hits_csv", "write_ledger_csv"]

_HIT_COLUMNS = ("rank", "docid", "score", "length", "title", "location")
LEDGER_COLUMNS = (
    "term",
    "surface",
    "status",
    "qtf",
    "tf",
    "df",
    "cf",
    "idf",
    "tf_part",
    "weight",
    "share",
)


def write_hits_csv(
    hits: Sequence[dict[str, Any]], terms: Sequence[str], out: TextIO | None = None
) -> None:
    """Write one row per hit: its fields, then ``tf:TERM`` and ``weight:TERM`` per query term."""
    terms = list(dict.fromkeys(terms))
    header = [*_HIT_COLUMNS, *(f"{kind}:{t}" for t in terms for kind in ("tf", "weight"))]

    def rows() -> Iterator[list[Any]]:
        for hit in hits:
            by_term = {c["term"]: c for c in hit["contributions"]}
            cells: list[Any] = [hit[c] for c in _HIT_COLUMNS]
            for t in terms:
                c = by_term.get(t)
                cells += [c["tf"], c["weight"]] if c else [0, 0.0]
            yield cells

    write_csv(header, rows(), out)


def write_ledger_csv(explanations: Sequence[dict[str, Any]], out: TextIO | None = None) -> None:
    """Write every ledger line of every explained document, prefixed by the document's fields."""
    header = ("docid", "rank", "score", "length", *LEDGER_COLUMNS)
    write_csv(
        header,
        (
            [e["docid"], e["rank"], e["score"], e["length"], *(row[c] for c in LEDGER_COLUMNS)]
            for e in explanations
            for row in e["contributions"]
        ),
        out,
    )
