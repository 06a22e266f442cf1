"""What every command-line command shares: its errors, progress bar, options, and output.

Output is human text, ``--json`` (exact values) or ``--csv``: one header row, RFC 4180 quoting
(a field holding a comma, a quote or a line break is quoted, quotes doubled), UTF-8, and document
text with its control characters escaped as in human output (:func:`bm25desk.console.visible`),
so a spreadsheet or a terminal shows what the document holds without being steered by it.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

from bm25desk import console

__all__ = [
    "EXIT_DAMAGED",
    "EXIT_EMPTY",
    "EXIT_OK",
    "BadInput",
    "ProgressBar",
    "column_map",
    "emit",
    "err",
    "human",
    "ranking_options",
    "skip_fields",
    "store",
    "variant_from",
    "wants_csv",
    "write_csv",
]


EXIT_OK, EXIT_EMPTY, EXIT_DAMAGED = 0, 1, 3  # the rest: bm25desk.cli


class BadInput(ValueError):
    """A user's mistake on the command line: printed as one line, exit code 2."""


def human(n: float, unit: str) -> str:
    """Return ``n`` with a k/M/G/T prefix (``1.5 MB``)."""
    for prefix in ("", "k", "M", "G", "T"):
        if abs(n) < 1000:
            return f"{n:.0f} {prefix}{unit}" if prefix == "" else f"{n:.1f} {prefix}{unit}"
        n /= 1000
    return f"{n:.1f} P{unit}"


class ProgressBar:
    """A one-line progress bar on stderr (silent when stderr is not a terminal)."""

    def __init__(self, label: str, unit: str = "B") -> None:
        self.label = label
        self.unit = unit
        self.enabled = sys.stderr.isatty() and not os.environ.get("BM25DESK_NO_PROGRESS")
        self.started = time.monotonic()
        self._shown = False

    def __call__(self, done: int, total: int) -> None:
        """Redraw the bar."""
        if not self.enabled:
            return
        elapsed = max(time.monotonic() - self.started, 1e-6)
        if total > 0:
            frac = min(done / total, 1.0)
            bar = "#" * int(frac * 30)
            eta = elapsed * (1 - frac) / frac if frac > 0 else 0.0
            text = f"\r{self.label} [{bar:<30}] {frac:6.1%}  ETA {eta:5.0f} s"
        else:
            text = f"\r{self.label} {human(done, self.unit)}  {elapsed:5.0f} s"
        sys.stderr.write(text)
        sys.stderr.flush()
        self._shown = True

    def close(self) -> None:
        """Finish the line."""
        if self._shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def ranking_options(p: argparse.ArgumentParser) -> None:
    """Add the variant and its parameters (``--variant``, ``--k1`` ...) to ``p``."""
    g = p.add_argument_group("ranking")
    g.add_argument(
        "--variant", default="lucene", metavar="KEY", help="variant key (see 'variants')"
    )
    g.add_argument("--k1", type=float, help="k1 (term-frequency saturation)")
    g.add_argument("--b", type=float, help="b (length normalisation)")
    g.add_argument("--delta", type=float, help="δ (bm25l, bm25plus, tfldp)")
    g.add_argument("--epsilon", type=float, help="ε (okapi's negative-idf floor)")
    field_options(g)


def field_options(g: Any) -> None:
    """Add bm25f's repeatable ``--field-weight FIELD=W`` and ``--field-b FIELD=B`` to ``g``."""
    g.add_argument(
        "--field-weight",
        action="append",
        default=[],
        metavar="FIELD=W",
        help="bm25f: a field's weight, e.g. title=2.5 (repeatable; fields: see 'info')",
    )
    g.add_argument(
        "--field-b",
        action="append",
        default=[],
        metavar="FIELD=B",
        help="bm25f: a field's length normalisation b, e.g. title=0.3 (repeatable)",
    )


def variant_from(args: argparse.Namespace, index: Any = None) -> Any:
    """Return the variant chosen by :func:`ranking_options` (fields checked against ``index``)."""
    from bm25desk.engine.scoring.bm25f import check_named_fields, field_params
    from bm25desk.engine.scoring.variants import get_variant

    fields = field_params(args.field_weight, args.field_b)
    if fields and args.variant != "bm25f":
        raise BadInput("--field-weight and --field-b apply to --variant bm25f only")
    if fields and index is not None:
        check_named_fields(index, fields)
    return get_variant(
        args.variant, k1=args.k1, b=args.b, delta=args.delta, epsilon=args.epsilon, **fields
    )


def column_map(spec: str | None) -> Any:
    """Return the :class:`ColumnMap` of ``--columns docid=COL,text=COL[+COL],title=COL``."""
    if not spec:
        return None
    from bm25desk.engine.readers.corpus import ColumnMap

    parts: dict[str, str] = {}
    for item in spec.split(","):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in ("docid", "text", "title"):
            raise BadInput(f"cannot read column mapping {item!r}: use docid=COL,text=COL,title=COL")
        parts[key.strip()] = value.strip()
    if "docid" not in parts or "text" not in parts:
        raise BadInput("--columns needs at least docid=COL and text=COL")
    return ColumnMap(parts["docid"], tuple(parts["text"].split("+")), parts.get("title"))


def wants_csv(args: argparse.Namespace) -> bool:
    """Return whether ``--csv`` was asked for (refusing it together with ``--json``)."""
    if getattr(args, "csv", False):
        if getattr(args, "json", False):
            raise BadInput("choose --csv or --json, not both")
        return True
    return False


def write_csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Write ``header`` and ``rows`` to stdout as CSV (see the module docstring).

    Rows are written as they come, so a generator streams (a long postings list is never held).
    Floats keep every digit (``repr``), as ``--json`` does.
    """
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(v) for v in row])


def _cell(value: Any) -> Any:
    if isinstance(value, str):
        return console.visible(value)
    if isinstance(value, float):
        return repr(value)
    return "" if value is None else value


def skip_fields(report: Any) -> dict[str, Any]:
    """Return the ``--json`` fields about skipped records of a build, update or edit report."""
    return {
        "skipped": len(report.skipped),
        "skip_reasons": report.skip_reasons,
        "skipped_records": [{"where": s.where, "reason": s.reason} for s in report.skipped[:1000]],
    }


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print ``data`` as JSON with ``--json``, else ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(text)


def store() -> Any:
    """Return the index store of the data directory (``--data-dir`` applied by the CLI)."""
    from bm25desk.engine.index.store import IndexStore

    return IndexStore()


def err(text: str) -> None:
    """Print a line for people on stderr (control characters escaped: it may quote a document)."""
    print(console.visible(text), file=sys.stderr)
