"""What the app's exports write: the CLI's own CSV and JSON shapes, to a file (Qt-free).

Every writer takes an open text stream and a format (``csv`` or ``json``) and goes through the
functions the CLI's ``--csv``/``--json`` use (:mod:`bm25desk.commands.browse`,
:mod:`bm25desk.commands.export`), so a file saved from the app and the output of ``bm25desk
terms``/``postings``/``doc-terms``/``search``/``explain`` have the same columns and keys.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from bm25desk.commands.browse import (
    DOC_TERM_HEADER,
    POSTING_HEADER,
    TERM_HEADER,
    doc_term_cells,
    doc_terms_data,
    posting_cells,
    postings_data,
    term_cells,
    terms_data,
)
from bm25desk.commands.common import write_csv
from bm25desk.commands.export import write_hits_csv, write_ledger_csv
from bm25desk.commands.searching import hit_dict
from bm25desk.engine.progress import CancelToken
from bm25desk.engine.scoring.browse import iter_postings, list_terms, term_postings
from bm25desk.engine.scoring.search import variant_dict

FORMATS = ("csv", "json")
Writer = Callable[[TextIO, str, CancelToken], int]
"""``writer(out, fmt, cancel)`` writes one export and returns how many rows it wrote."""


def _json(out: TextIO, data: Any) -> None:
    json.dump(data, out, indent=2, ensure_ascii=False)
    out.write("\n")


def _checked(rows: Any, cancel: CancelToken, count: list[int]) -> Iterator[Any]:
    """Yield ``rows``, counting them and stopping (Cancelled) when ``cancel`` is set."""
    for i, row in enumerate(rows):
        if i % 4096 == 0:
            cancel.check()
        count[0] += 1
        yield row


def terms_writer(index: Any, sort: str, prefix: str) -> Writer:
    """Return a writer of every term starting with ``prefix``, sorted (``terms --all``)."""

    def write(out: TextIO, fmt: str, cancel: CancelToken) -> int:
        page = list_terms(index, sort=sort, prefix=prefix, limit=None)
        cancel.check()
        if fmt == "csv":
            count = [0]
            write_csv(TERM_HEADER, (term_cells(r) for r in _checked(page.rows, cancel, count)), out)
            return count[0]
        _json(out, terms_data(page))
        return len(page.rows)

    return write


def postings_writer(
    searcher: Any, term: str, variant: Any, sort: str, ascending: bool | None
) -> Writer:
    """Return a writer of every posting of ``term`` in the chosen order (``postings --all``)."""

    def write(out: TextIO, fmt: str, cancel: CancelToken) -> int:
        rows = iter_postings(searcher, term, variant, sort=sort, ascending=ascending)
        count = [0]
        if fmt == "csv":
            write_csv(
                POSTING_HEADER, (posting_cells(r) for r in _checked(rows, cancel, count)), out
            )
            return count[0]
        # The JSON shape has the term's numbers at its top: they come with a one-row page.
        head = term_postings(searcher, term, variant, sort=sort, ascending=ascending, limit=1)
        _json(out, postings_data(head, list(_checked(rows, cancel, count))))
        return count[0]

    return write


def doc_terms_writer(doc: Any) -> Writer:
    """Return a writer of a document's terms (``doc-terms``)."""

    def write(out: TextIO, fmt: str, _cancel: CancelToken) -> int:
        if fmt == "csv":
            write_csv(DOC_TERM_HEADER, (doc_term_cells(r) for r in doc.rows), out)
        else:
            _json(out, doc_terms_data(doc))
        return len(doc.rows)

    return write


def results_writer(result: Any) -> Writer:
    """Return a writer of a :class:`~bm25desk.engine.SearchResult`'s hits (``search``)."""

    def write(out: TextIO, fmt: str, _cancel: CancelToken) -> int:
        a = result.analysis
        hits = [hit_dict(h) for h in result.hits]
        if fmt == "csv":
            write_hits_csv(hits, list(a.terms), out)
        else:
            _json(
                out,
                {
                    "query": result.query,
                    "terms": list(a.terms),
                    "unknown": list(a.unknown),
                    "stopwords": list(a.stopped),
                    "variant": variant_dict(result.variant),
                    "matches": result.n_matches,
                    "hits": hits,
                },
            )
        return len(hits)

    return write


def ledger_writer(explanation: Any) -> Writer:
    """Return a writer of one document's score ledger (``explain``)."""

    def write(out: TextIO, fmt: str, _cancel: CancelToken) -> int:
        data = explanation.as_dict()
        if fmt == "csv":
            write_ledger_csv([data], out)
        else:
            _json(out, data)
        return len(data["contributions"])

    return write
