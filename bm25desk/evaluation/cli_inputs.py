"""What the ``eval`` and ``sweep`` commands make of their arguments."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from bm25desk.engine.index.store import StoreError
from bm25desk.engine.scoring.variants import Variant, all_variants, get_variant, variant_from_name
from bm25desk.evaluation.data import EvalInputError, Qrels, Queries
from bm25desk.evaluation.interfaces import SearcherLike
from bm25desk.evaluation.metrics import EvalOptions
from bm25desk.evaluation.qrels import read_qrels
from bm25desk.evaluation.queries import read_queries

__all__ = [
    "BadInput",
    "OpenSearcher",
    "choose_variants",
    "eval_options",
    "find_baseline",
    "open_index",
    "parse_range",
    "read_inputs",
]

OpenSearcher = Callable[[str], SearcherLike]


class BadInput(Exception):
    """A user error: reported on one line, exit status 2."""


def parse_range(text: str, name: str = "value") -> list[float]:
    """Parse ``A:B:STEP`` (inclusive), ``A:B`` (step 0.1), ``x,y,z`` or ``x`` into values.

    Values of a range are rounded to 10 decimals, so ``0.1:0.3:0.1`` gives 0.1, 0.2, 0.3 exactly.

    Raises
    ------
    EvalInputError
        Unreadable numbers, a step that is not positive, an end before the start, or more than
        1000 values.
    """
    text = text.strip()
    try:
        if ":" in text:
            parts = [float(p) for p in text.split(":")]
            if len(parts) == 2:
                parts.append(0.1)
            if len(parts) != 3:
                raise ValueError
            lo, hi, step = parts
            if not all(math.isfinite(x) for x in parts):
                raise ValueError
            if step <= 0:
                raise EvalInputError(f"--{name} {text}: the step must be positive")
            if hi < lo:
                raise EvalInputError(f"--{name} {text}: the end is before the start")
            count = math.floor((hi - lo) / step + 1e-9) + 1
            if count > 1000:
                raise EvalInputError(f"--{name} {text}: {count} values is too many (max 1000)")
            return [round(lo + i * step, 10) for i in range(count)]
        values = [float(p) for p in text.split(",") if p.strip()]
        if not values or not all(math.isfinite(v) for v in values):
            raise ValueError
        return values
    except ValueError as exc:
        if isinstance(exc, EvalInputError):
            raise
        raise EvalInputError(
            f"--{name} {text!r}: expected A:B:STEP (e.g. 0.5:1.5:0.1), values x,y,z, or one value"
        ) from None


def eval_options(args: argparse.Namespace) -> EvalOptions:
    """Return the conventions chosen by ``--average``, ``--ties`` and ``--drop-self-hits``."""
    return EvalOptions(
        average=args.average, ties=args.ties, drop_self_hits=bool(args.drop_self_hits)
    )


def choose_variants(spec: str, global_params: dict[str, float]) -> list[Variant]:
    """Build the variants named by ``--variants`` with the global and inline parameters.

    ``spec`` is ``all`` or comma-separated keys, each optionally with its own parameters
    (``okapi,lucene:k1=0.9,b=0.4``); a global parameter (``--b 0.5``) applies to every chosen
    variant that has it, and an inline one wins over it.

    Raises
    ------
    BadInput
        An empty list, or a global parameter none of the chosen variants has.
    VariantError
        Unknown key or parameter, a value out of range, an unreadable ``name=value``.
    """
    items: list[str] = []
    for part in (s.strip() for s in spec.split(",")):
        if not part:
            continue
        if "=" in part and ":" not in part and items:
            items[-1] += "," + part  # a parameter of the previous variant: lucene:k1=0.9,b=0.4
        else:
            items.append(part)
    if not items:
        raise BadInput("--variants is empty")
    chosen: list[tuple[str, str]] = []
    for item in items:
        if item == "all":
            chosen.extend((v.key, "") for v in all_variants())
        else:
            key, _, inline = item.partition(":")
            chosen.append((key.strip(), inline.replace(";", ",")))
    used: set[str] = set()
    out: list[Variant] = []
    for key, inline in chosen:
        have = set(get_variant(key).values())  # raises for an unknown key, listing the known ones
        shared = {n: v for n, v in global_params.items() if n in have}
        used.update(shared)
        # Inline parameters come last, so they win over the global ones.
        params = ",".join([*(f"{n}={v!r}" for n, v in shared.items()), inline])
        variant = variant_from_name(f"{key}:{params}")
        if variant not in out:
            out.append(variant)
    unused = sorted(set(global_params) - used)
    if unused:
        flags = ", ".join(f"--{n}" for n in unused)
        raise BadInput(f"{flags}: none of the chosen variants has this parameter")
    return out


def find_baseline(configs: Sequence[Variant], which: str) -> Variant:
    """Return the variant ``--baseline`` names (by full name or by key)."""
    by_name = [v for v in configs if repr(v) == which]
    by_key = [v for v in configs if v.key == which]
    found = by_name or by_key
    if len(found) == 1:
        return found[0]
    listed = ", ".join(repr(v) for v in configs)
    if not found:
        raise BadInput(f"--baseline {which}: not among the evaluated variants ({listed})")
    raise BadInput(f"--baseline {which}: several variants match; give the full name")


def read_inputs(args: argparse.Namespace) -> tuple[Queries, Qrels]:
    """Read ``--queries`` and ``--qrels`` in the formats chosen (or detected).

    Raises
    ------
    BadInput
        A file does not exist.
    EvalInputError, OSError
        A file cannot be read or makes no sense in its format.
    """
    for label, path in (("--queries", args.queries), ("--qrels", args.qrels)):
        if not Path(path).is_file():
            raise BadInput(f"{label} {path}: no such file")
    queries = read_queries(
        args.queries,
        format=args.queries_format,
        smart_ids=args.smart_ids,
        field=args.topic_field,
    )
    return queries, read_qrels(args.qrels, format=args.qrels_format)


def open_index(open_searcher: OpenSearcher, name: str) -> SearcherLike:
    """Open index ``name`` (a damaged index is not caught here: it has its own exit status)."""
    try:
        return open_searcher(name)
    except (OSError, LookupError, StoreError) as exc:
        raise BadInput(f"cannot open index {name!r}: {exc}") from exc
