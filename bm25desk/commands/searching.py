"""The commands that rank and explain: ``search``, ``explain`` and ``variants``."""

from __future__ import annotations

import argparse
from typing import Any

from bm25desk.commands.common import (
    EXIT_EMPTY,
    EXIT_OK,
    BadInput,
    emit,
    store,
    variant_from,
    wants_csv,
)


def cmd_variants(args: argparse.Namespace) -> int:
    """List the variants and their parameters."""
    from bm25desk.engine.scoring.variants import variant_classes

    data = []
    lines = []
    for cls in variant_classes():
        params = cls.params()
        data.append(
            {
                "key": cls.key,
                "label": cls.label,
                "name": cls.display_name(),
                "idf": cls.idf_formula,
                "tf": cls.tf_formula,
                "citation": cls.citation,
                "parameters": [
                    {
                        "name": p.name,
                        "symbol": p.symbol,
                        "default": p.default,
                        "min": p.lo,
                        "max": p.hi,
                        "step": p.step,
                        "help": p.help,
                    }
                    for p in params
                ],
            }
        )
        ptext = ", ".join(f"{p.name}={p.default:g} [{p.lo:g}–{p.hi:g}]" for p in params) or "—"
        lines.append(
            f"{cls.display_name()}\n            idf = {cls.idf_formula}\n"
            f"            tf part = {cls.tf_formula}\n            parameters: {ptext}"
        )
    emit(args, data, "\n".join(lines))
    return EXIT_OK


def hit_dict(hit: Any) -> dict[str, Any]:
    """Return the JSON shape of a hit."""
    return {
        "rank": hit.rank,
        "docid": hit.docid,
        "score": hit.score,
        "title": hit.title,
        "location": hit.location,
        "length": hit.length,
        "contributions": [
            {
                "term": c.term,
                "qtf": c.qtf,
                "tf": c.tf,
                "df": c.df,
                "idf": c.idf,
                "tf_part": c.tf_part,
                "weight": c.weight,
            }
            for c in hit.contributions
        ],
    }


def clip(text: str, width: int) -> str:
    """Return ``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def filter_options(p: argparse.ArgumentParser) -> None:
    """Add the filter options and ``--facets`` to a search command."""
    g = p.add_argument_group(
        "filters (which documents may be returned; N, df and Lavg stay the whole collection's)"
    )
    g.add_argument(
        "--type", action="append", dest="types", metavar="EXT", help="file type, e.g. pdf"
    )
    g.add_argument(
        "--folder",
        action="append",
        dest="folders",
        metavar="DIR",
        help="folder relative to the indexed one, with its subfolders",
    )
    g.add_argument("--modified-since", metavar="YYYY-MM-DD", help="modified on or after the day")
    g.add_argument("--modified-until", metavar="YYYY-MM-DD", help="modified on or before the day")
    g.add_argument(
        "--where",
        action="append",
        metavar="KEY=VALUE",
        help="metadata KEY has VALUE (every option repeats: values of one key are "
        "alternatives, different keys must all hold)",
    )
    g.add_argument(
        "--facets",
        action="store_true",
        help="count the matching documents per type, folder, year and metadata value",
    )


def filters_from(args: argparse.Namespace) -> Any:
    """Return the :class:`~bm25desk.engine.scoring.filters.Filters` the options ask for."""
    from bm25desk.engine.scoring.filters import FilterError, Filters

    pairs = []
    for item in args.where or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise BadInput(f"--where {item!r}: expected KEY=VALUE, e.g. --where lang=en")
        pairs.append((key.strip(), value))
    try:
        return Filters.of(
            types=args.types or (),
            folders=args.folders or (),
            modified_from=args.modified_since,
            modified_to=args.modified_until,
            where=pairs,
        )
    except FilterError as exc:
        raise BadInput(str(exc)) from None


def facet_lines(facets: Any, shown: int = 8) -> list[str]:
    """Return the text lines of the facet counts (the first ``shown`` values of each key)."""
    lines = ["facets:"] if len(facets) else ["facets: this index has no metadata"]
    for key in facets:
        pairs = facets[key]
        text = ", ".join(f"{v} {c:,}" for v, c in pairs[:shown]) or "—"
        more = f", … {len(pairs) - shown:,} more" if len(pairs) > shown else ""
        lines.append(f"  {key}: {text}{more}")
    return lines


FACET_VALUES = 50
"""The most values per key that ``search --facets --json`` lists (the most frequent first)."""


def cmd_search(args: argparse.Namespace) -> int:
    """Search an index."""
    from bm25desk.engine.scoring.facets import facets
    from bm25desk.engine.scoring.filters import FilterError, filter_mask
    from bm25desk.engine.scoring.search import Searcher, variant_dict

    if args.k < 1:
        raise BadInput("-k must be at least 1")
    csv = wants_csv(args)
    filters = filters_from(args)
    index = store().open(args.name)
    variant = variant_from(args, index)
    try:
        if filters:
            filter_mask(index, filters)  # an unknown key is a bad input, said before searching
    except FilterError as exc:
        raise BadInput(str(exc)) from None
    searcher = Searcher(index).filtered(filters)
    result = searcher.search(args.query, variant, args.k, syntax=not args.no_syntax)
    a = result.analysis
    data: dict[str, Any] = {
        "query": result.query,
        "terms": list(a.terms),
        "unknown": list(a.unknown),
        "stopwords": list(a.stopped),
        "variant": variant_dict(variant),
        "matches": result.n_matches,
        "seconds": round(result.seconds, 6),
        "filters": filters.as_dict(),
        "hits": [hit_dict(h) for h in result.hits],
    }
    counts = facets(index, a.parsed, filters) if args.facets else None
    if counts is not None:
        data["facets"] = counts.as_dict(FACET_VALUES)
    if csv:
        search_csv(args, searcher, result, data)
        return EXIT_OK if result.hits else EXIT_EMPTY
    if args.explain and args.json:
        for h, d in zip(result.hits, data["hits"], strict=True):
            d["explanation"] = searcher.explain_docno(a.parsed, h.docno, variant).as_dict()
    lines = [
        f"{result.n_matches:,} matching documents for {', '.join(a.terms)} under "
        f"{variant.display_with_params()} ({result.seconds * 1000:.1f} ms)"
    ]
    lines.extend(f"note: {w}" for w in a.parsed.warnings)
    if filters:
        lines.append(f"filtered ({filter_text(filters)}): N, df and Lavg are the collection's")
    if a.unknown:
        lines.append(f"not in any document: {', '.join(a.unknown)}")
    if a.stopped:
        lines.append(f"stop words ignored: {', '.join(a.stopped)}")
    for h in result.hits:
        parts = "  ".join(f"{c.term} {c.weight:.3f}" for c in h.contributions)
        lines.append(f"{h.rank:>3}. {h.score:9.4f}  {clip(h.docid, 24):<24} {clip(h.title, 50)}")
        lines.append(f"      {parts}")
        if args.explain:
            expl = searcher.explain_docno(a.parsed, h.docno, variant)
            lines.extend("      " + line for line in expl.as_text().splitlines())
    if counts is not None:
        lines.extend(facet_lines(counts))
    emit(args, data, "\n".join(lines))
    return EXIT_OK if result.hits else EXIT_EMPTY


def filter_text(filters: Any) -> str:
    """Return the filters in a few words: ``type pdf|md; folder notes; modified 2024-01-01 …``."""
    parts = []
    if filters.types:
        parts.append("type " + "|".join(filters.types))
    if filters.folders:
        parts.append("folder " + "|".join(filters.folders))
    if filters.modified_from or filters.modified_to:
        lo, hi = filters.modified_from, filters.modified_to
        parts.append(f"modified {lo or '…'} to {hi or '…'}")
    parts.extend(f"{k} {'|'.join(v)}" for k, v in filters.where)
    return "; ".join(parts)


def search_csv(args: argparse.Namespace, searcher: Any, result: Any, data: Any) -> None:
    """Write the hits (or, with ``--explain``, their ledgers) as CSV."""
    from bm25desk.commands.export import write_hits_csv, write_ledger_csv

    if args.explain:
        parsed, variant = result.analysis.parsed, result.variant
        ledgers = []
        for h in result.hits:
            ledgers.append({**searcher.explain_docno(parsed, h.docno, variant).as_dict()})
            ledgers[-1]["rank"] = h.rank
        write_ledger_csv(ledgers)
    else:
        write_hits_csv(data["hits"], data["terms"])


def cmd_explain(args: argparse.Namespace) -> int:
    """Explain documents' scores."""
    from bm25desk.engine.scoring.search import Searcher

    csv = wants_csv(args)
    searcher = Searcher(store().open(args.name))
    variant = variant_from(args, searcher.index)
    parsed = searcher.parse(args.query, syntax=not args.no_syntax)
    if not parsed.scored:
        from bm25desk.engine.scoring.search import QueryError, _empty_reason

        raise QueryError(_empty_reason(parsed))
    explanations = []
    for docid in args.docids:
        try:
            explanations.append(searcher.explain(parsed, docid, variant, with_rank=True))
        except KeyError as exc:
            raise BadInput(str(exc.args[0])) from None
    data: Any = [e.as_dict() for e in explanations]
    if csv:
        from bm25desk.commands.export import write_ledger_csv

        write_ledger_csv(data)
        return EXIT_OK
    if len(data) == 1:
        data = data[0]
    text = "\n\n".join(e.as_markdown() if args.markdown else e.as_text() for e in explanations)
    emit(args, data, text)
    return EXIT_OK
