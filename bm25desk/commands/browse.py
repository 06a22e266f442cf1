"""``bm25desk terms``, ``postings`` and ``doc-terms``: look inside an index from a terminal.

Thin over :mod:`bm25desk.engine.scoring.browse` (which the app's term browser uses too); each
prints a table for people, ``--json`` or ``--csv``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from bm25desk import console
from bm25desk.commands.common import (
    EXIT_EMPTY,
    EXIT_OK,
    BadInput,
    emit,
    variant_from,
    wants_csv,
    write_csv,
)

__all__ = [
    "DOC_TERM_HEADER",
    "POSTING_HEADER",
    "TERM_HEADER",
    "add_browse_commands",
    "cmd_doc_terms",
    "cmd_postings",
    "cmd_terms",
    "doc_term_cells",
    "doc_terms_data",
    "posting_cells",
    "postings_data",
    "term_cells",
    "terms_data",
]

TERM_HEADER = ("term", "df", "cf")
POSTING_HEADER = ("docno", "docid", "tf", "length", "contribution")
DOC_TERM_HEADER = ("term", "tf", "df", "idf", "weight")


def terms_data(page: Any) -> dict[str, Any]:
    """Return the ``terms --json`` shape of a :class:`~bm25desk.engine.scoring.browse.TermPage`."""
    return {"total": page.total, "terms": [asdict(r) for r in page.rows]}


def term_cells(r: Any) -> tuple[Any, ...]:
    """Return the ``terms --csv`` cells of a term row."""
    return (r.term, r.df, r.cf)


def _over(fields: tuple[str, ...]) -> str:
    """Return " over text + title" when df and cf count more than the text (bm25f)."""
    return f" over {' + '.join(fields)}" if fields != ("text",) else ""


def postings_data(page: Any, rows: Any = None) -> dict[str, Any]:
    """Return the ``postings --json`` shape of a page (``rows``: its rows, or others instead)."""
    return {
        "term": page.term,
        "df": page.df,
        "cf": page.cf,
        "fields": list(page.fields),
        "idf": page.idf,
        "idf_formula": page.idf_text,
        "variant": page.variant,
        "sort": page.sort,
        "ascending": page.ascending,
        "total": page.total,
        "offset": page.offset,
        "postings": [asdict(r) for r in (page.rows if rows is None else rows)],
    }


def posting_cells(r: Any) -> tuple[Any, ...]:
    """Return the ``postings --csv`` cells of a posting row."""
    return (r.docno, r.docid, r.tf, r.length, r.contribution)


def doc_terms_data(doc: Any, rows: Any = None) -> dict[str, Any]:
    """Return the ``doc-terms --json`` shape of a document's terms (``rows``: a subset)."""
    return {
        "docid": doc.docid,
        "docno": doc.docno,
        "title": doc.title,
        "length": doc.length,
        "variant": doc.variant,
        "exact": doc.exact,
        "distinct_terms": len(doc.rows),
        "terms": [asdict(r) for r in (doc.rows if rows is None else rows)],
    }


def doc_term_cells(r: Any) -> tuple[Any, ...]:
    """Return the ``doc-terms --csv`` cells of a document's term row."""
    return (r.term, r.tf, r.df, r.idf, r.weight)


def add_browse_commands(
    sub: Any, common: argparse.ArgumentParser, ranking: argparse.ArgumentParser
) -> None:
    """Register ``terms``, ``postings`` and ``doc-terms`` (``ranking``: the variant options)."""
    from bm25desk.engine.scoring.browse import POSTING_SORTS, TERM_SORTS

    p = sub.add_parser("terms", parents=[common], help="list an index's terms with df and cf")
    p.add_argument("name")
    p.add_argument("--top", type=int, default=100, metavar="N", help="how many (default 100)")
    p.add_argument("--all", action="store_true", help="every term (ignores --top)")
    p.add_argument("--sort", choices=TERM_SORTS, default="cf", help="default: cf, largest first")
    p.add_argument("--prefix", default="", help="only terms starting with this")
    _csv_option(p)
    p.set_defaults(handler=cmd_terms)

    p = sub.add_parser(
        "postings",
        parents=[common, ranking],
        help="a term's documents with tf, length and score contribution",
    )
    p.add_argument("name")
    p.add_argument("term")
    p.add_argument("--sort", choices=POSTING_SORTS, default="contribution")
    p.add_argument(
        "--ascending", action="store_true", help="smallest first (docno: always ascending)"
    )
    p.add_argument("--limit", type=int, default=20, metavar="N", help="how many (default 20)")
    p.add_argument("--offset", type=int, default=0, metavar="N", help="skip the first N")
    p.add_argument("--all", action="store_true", help="every posting (streams; ignores --limit)")
    _csv_option(p)
    p.set_defaults(handler=cmd_postings)

    p = sub.add_parser(
        "doc-terms", parents=[common, ranking], help="a document's terms with tf and weight"
    )
    p.add_argument("name")
    p.add_argument("docid")
    p.add_argument("--limit", type=int, metavar="N", help="only the N heaviest terms")
    _csv_option(p)
    p.set_defaults(handler=cmd_doc_terms)


def _csv_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--csv", action="store_true", help="CSV with a header row")


def _open(name: str) -> Any:
    from bm25desk.engine.index.store import IndexStore
    from bm25desk.engine.scoring.search import Searcher

    return Searcher(IndexStore().open(name))


def cmd_terms(args: argparse.Namespace, _open_searcher: Any = None) -> int:
    """List terms with df and cf."""
    from bm25desk.engine.scoring.browse import list_terms

    if not args.all and args.top < 1:
        raise BadInput("--top must be at least 1")
    csv = wants_csv(args)
    searcher = _open(args.name)
    page = list_terms(
        searcher.index, sort=args.sort, prefix=args.prefix, limit=None if args.all else args.top
    )
    if csv:
        write_csv(TERM_HEADER, (term_cells(r) for r in page.rows))
    else:
        data = terms_data(page)
        lines = [f"{len(page.rows):,} of {page.total:,} terms, by {args.sort}"]
        lines += [f"{r.term:<30} {r.df:>10,} {r.cf:>12,}" for r in page.rows]
        if page.rows:
            lines.insert(1, f"{'term':<30} {'df':>10} {'cf':>12}")
        emit(args, data, "\n".join(lines))
    return EXIT_OK if page.rows else EXIT_EMPTY


def cmd_postings(args: argparse.Namespace, _open_searcher: Any = None) -> int:
    """Show a term's postings."""
    from bm25desk.engine.scoring.browse import BrowseError, iter_postings, term_postings

    csv = wants_csv(args)
    searcher = _open(args.name)
    variant = variant_from(args)
    ascending = True if args.ascending else None
    try:
        if csv and args.all:  # the one case that may be millions of rows: streamed
            rows = iter_postings(searcher, args.term, variant, sort=args.sort, ascending=ascending)
            write_csv(POSTING_HEADER, (posting_cells(r) for r in rows))
            return EXIT_OK
        page = term_postings(
            searcher,
            args.term,
            variant,
            sort=args.sort,
            ascending=ascending,
            offset=args.offset,
            limit=None if args.all else args.limit,
        )
    except KeyError as exc:
        print(console.visible(f"bm25desk: {exc.args[0]}"), file=sys.stderr)
        return EXIT_EMPTY
    except BrowseError as exc:
        raise BadInput(str(exc)) from None
    if csv:
        write_csv(POSTING_HEADER, (posting_cells(r) for r in page.rows))
        return EXIT_OK if page.rows else EXIT_EMPTY
    data = postings_data(page)
    lines = [
        f"{page.term}: df {page.df:,}, cf {page.cf:,}{_over(page.fields)}, idf {page.idf:.4f} "
        f"under {page.variant}",
        f"postings {page.offset + 1:,}–{page.offset + len(page.rows):,} of {page.total:,} "
        f"by {page.sort}{' (ascending)' if page.ascending else ''}",
        f"{'docno':>9} {'docid':<24} {'tf':>6} {'length':>8} {'contribution':>13}",
        *(
            f"{r.docno:>9} {r.docid[:24]:<24} {r.tf:>6} {r.length:>8} {r.contribution:>13.4f}"
            for r in page.rows
        ),
    ]
    emit(args, data, "\n".join(lines))
    return EXIT_OK if page.rows else EXIT_EMPTY


def cmd_doc_terms(args: argparse.Namespace, _open_searcher: Any = None) -> int:
    """Show a document's terms with tf and weight."""
    from bm25desk.engine.scoring.browse import document_terms

    if args.limit is not None and args.limit < 1:
        raise BadInput("--limit must be at least 1")
    csv = wants_csv(args)
    searcher = _open(args.name)
    try:
        doc = document_terms(searcher, args.docid, variant_from(args))
    except KeyError as exc:
        raise BadInput(str(exc.args[0])) from None
    rows = doc.rows[: args.limit] if args.limit else doc.rows
    if csv:
        write_csv(DOC_TERM_HEADER, (doc_term_cells(r) for r in rows))
        return EXIT_OK
    data = doc_terms_data(doc, rows)
    lines = [
        f"{doc.docid} ({doc.title or 'no title'}): {doc.length:,} tokens, "
        f"{len(doc.rows):,} distinct terms, weights under {doc.variant}",
        *(
            []
            if doc.exact
            else ["note: the analyser no longer reproduces this document's stored length"]
        ),
        f"{'term':<30} {'tf':>6} {'df':>8} {'idf':>8} {'weight':>9}",
        *(f"{r.term:<30} {r.tf:>6} {r.df:>8,} {r.idf:>8.4f} {r.weight:>9.4f}" for r in rows),
    ]
    emit(args, data, "\n".join(lines))
    return EXIT_OK
