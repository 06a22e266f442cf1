"""``bm25desk add`` and ``bm25desk remove``: change a corpus-file index by document id, no rebuild.

Both call :mod:`bm25desk.engine.index.edit` (new segments and deletion masks, one atomic commit
under the writer lock); the statistics afterwards are those of a fresh build of the result.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bm25desk.commands.common import BadInput, ProgressBar, column_map, emit, skip_fields

__all__ = ["add_edit_commands", "cmd_add", "cmd_remove", "describe_edits", "read_ids"]


def add_edit_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register ``add`` and ``remove`` on the CLI's subparsers."""
    p = sub.add_parser(
        "add",
        parents=[common],
        help="add documents from a corpus file (same id: replaced), without a rebuild",
    )
    p.add_argument("name")
    p.add_argument("source", metavar="FILE", help="a corpus file in any supported format")
    p.add_argument("--format", dest="fmt", metavar="FORMAT", help="override detection")
    p.add_argument(
        "--columns",
        metavar="docid=COL,text=COL[+COL],title=COL",
        help="column mapping for a TSV with a header row",
    )
    p.set_defaults(handler=cmd_add)

    p = sub.add_parser("remove", parents=[common], help="remove documents by id, without a rebuild")
    p.add_argument("name")
    p.add_argument(
        "--ids",
        nargs="+",
        required=True,
        metavar="FILE|ID",
        help="document ids, or files listing one id a line ('-': standard input)",
    )
    p.set_defaults(handler=cmd_remove)


def read_ids(values: list[str]) -> list[str]:
    """Return the ids named by ``--ids``: each value is a file of ids (one a line), or an id.

    A value is read as a file when a file of that name exists (``-`` reads standard input);
    blank lines are ignored.
    """
    import sys

    ids: list[str] = []
    for value in values:
        if value == "-":
            ids.extend(line.strip() for line in sys.stdin)
        elif Path(value).is_file():
            with open(value, encoding="utf-8-sig") as fh:
                ids.extend(line.strip() for line in fh)
        else:
            ids.append(value)
    ids = [i for i in ids if i]
    if not ids:
        raise BadInput("--ids named no id: give ids, or a file with one id a line")
    return ids


def _report_dict(report: Any) -> dict[str, Any]:
    return {
        "name": report.name,
        "operation": report.operation,
        "read": report.read,
        "added": report.added,
        "replaced": report.replaced,
        "removed": report.removed,
        **skip_fields(report),
        "not_found": list(report.not_found),
        "n_not_found": report.n_not_found,
        "seconds": round(report.seconds, 3),
        "documents": report.n_docs,
        "terms": report.n_terms,
    }


def cmd_add(args: argparse.Namespace, _open_searcher: Any = None) -> int:
    """Add (or replace by id) the documents of a corpus file."""
    from bm25desk.engine.index.edit import add_documents
    from bm25desk.engine.index.store import IndexStore

    columns = column_map(args.columns)
    bar = ProgressBar("adding")
    try:
        report = add_documents(
            args.name, args.source, fmt=args.fmt, columns=columns, store=IndexStore(), progress=bar
        )
    finally:
        bar.close()
    emit(args, _report_dict(report), report.summary())
    return 0


def cmd_remove(args: argparse.Namespace, _open_searcher: Any = None) -> int:
    """Remove documents by id."""
    from bm25desk.engine.index.edit import remove_documents
    from bm25desk.engine.index.store import IndexStore

    ids = read_ids(args.ids)
    bar = ProgressBar("removing", unit=" ids")
    try:
        report = remove_documents(args.name, ids, store=IndexStore(), progress=bar)
    finally:
        bar.close()
    emit(args, _report_dict(report), report.summary())
    return 0


def describe_edits(source: dict[str, Any]) -> str:
    """Return the ``info`` line about edits by id since the build ("" when there were none)."""
    totals = source.get("edit_totals")
    if not isinstance(totals, dict) or not totals.get("operations"):
        return ""
    last = (source.get("edits") or [{}])[-1]
    when = f", last {last.get('at')}" if isinstance(last, dict) and last.get("at") else ""
    return (
        f"edited:   {totals['operations']:,} time(s) by id since the build "
        f"({totals.get('added', 0):,} added, {totals.get('replaced', 0):,} replaced, "
        f"{totals.get('removed', 0):,} removed{when})"
    )
