"""The commands about the indexes themselves: ``list``, ``info``, ``delete`` and ``check``."""

from __future__ import annotations

import argparse
from typing import Any

from bm25desk.commands.common import EXIT_DAMAGED, EXIT_OK, emit, human, store
from bm25desk.commands.edit import describe_edits


def cmd_list(args: argparse.Namespace) -> int:
    """List indexes."""
    indexes = store()
    indexes.check_root()
    infos = [indexes.info(n) for n in indexes.names()]
    data = [
        {
            "name": i.name,
            "documents": i.n_docs,
            "terms": i.n_terms,
            "source": i.source.get("path", ""),
            "format": i.source.get("format", ""),
            "size_bytes": i.size_bytes,
            "updated": i.updated,
            "error": i.error,
        }
        for i in infos
    ]
    if not infos:
        text = f"No indexes yet in {indexes.root}. Create one with: bm25desk index SOURCE"
    else:
        rows = [f"{'name':<20} {'documents':>10} {'size':>10}  source"]
        for i in infos:
            size = human(i.size_bytes, "B")
            note = f"  [damaged: {i.error}]" if i.error else ""
            rows.append(
                f"{i.name:<20} {i.n_docs:>10,} {size:>10}  {i.source.get('path', '')}{note}"
            )
        text = "\n".join(rows)
    emit(args, data, text)
    return EXIT_OK


def cmd_info(args: argparse.Namespace) -> int:
    """Describe an index."""
    from bm25desk.engine.index.parts import describe_build
    from bm25desk.engine.scoring.bm25f import describe_fields

    indexes = store()
    index = indexes.open(args.name)
    info = indexes.info(args.name)
    top = index.top_terms(args.top_terms)
    built = describe_build(index.manifest.get("build") or {})
    meta = metadata_counts(index)
    meta_text = ", ".join(f"{k} ({n:,} values)" for k, n in meta.items())
    fields = describe_fields(index)
    data = {
        "name": index.name,
        "documents": index.n_docs,
        "avgdl": index.avgdl,
        "terms": index.n_terms,
        "tokens": index.total_len,
        "analyzer": index.manifest["analyzer"],
        "source": index.source,
        "path": str(index.path),
        "size_bytes": info.size_bytes,
        "segments": len(index.segments),
        "created": index.manifest.get("created"),
        "updated": index.manifest.get("updated"),
        "fingerprint": index.fingerprint,
        "build": index.manifest.get("build", {}),
        "top_terms": [{"term": t, "df": df, "cf": cf} for t, df, cf in top],
        "metadata": meta,
        "fields": fields,
        "warnings": index.warnings,
    }
    text = "\n".join(
        [
            f"{index.name}: {index.n_docs:,} documents, {index.n_terms:,} terms, "
            f"{index.total_len:,} tokens, average length {index.avgdl:.2f}",
            f"source:   {index.source.get('path', '')} ({index.source.get('format', '')})",
            f"analyzer: {index.analyzer.describe()}",
            "fields:   "
            + ", ".join(
                f"{f['field']} (average length {f['avg_length']:.2f}, {f['documents']:,} docs)"
                for f in fields
            ),
            f"stored:   {index.path} ({human(info.size_bytes, 'B')}, "
            f"{len(index.segments)} segment(s))",
            f"updated:  {index.manifest.get('updated', '')}",
            *filter(None, [describe_edits(index.source)]),
            *([f"built:    {built}"] if built else []),
            *([f"metadata: {meta_text}"] if meta else []),
            "top terms: " + ", ".join(f"{t} ({cf:,})" for t, _, cf in top),
            *(f"warning: {w}" for w in index.warnings),
        ]
    )
    emit(args, data, text)
    return EXIT_OK


def metadata_counts(index: Any) -> dict[str, int]:
    """Return each metadata key of ``index`` (filters, facets) with its number of values."""
    from bm25desk.engine.scoring.filters import meta_keys, values_of

    return {key: len(values_of(index, key)) for key in meta_keys(index)}


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete an index."""
    store().delete(args.name)
    emit(args, {"deleted": args.name}, f"Deleted index {args.name!r}.")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Verify an index completely (and repair it when asked)."""
    from bm25desk.engine.index.check import check_index

    report = check_index(args.name, store=store(), repair=args.repair)
    data = {
        "name": report.name,
        "generation": report.generation,
        "ok": report.ok,
        "checksums": report.checksums,
        "segments": [
            {"name": s.name, "documents": s.n_docs, "error": s.error} for s in report.segments
        ],
        "problems": report.problems,
        "repaired": report.repaired,
    }
    emit(args, data, report.as_text())
    return EXIT_OK if report.ok else EXIT_DAMAGED
