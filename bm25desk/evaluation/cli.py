"""The ``eval`` and ``sweep`` commands of the command line (registered by ``bm25desk.cli``).

``bm25desk.cli`` calls :func:`add_eval_commands` with its subparsers and a parent parser holding
the common options; each registered parser sets ``args.handler`` to :func:`cmd_eval` or
:func:`cmd_sweep`, which the CLI calls as ``args.handler(args, open_searcher)`` with a function
that opens an index by name. Tables go to stdout (JSON with ``--json``), progress and warnings to
stderr; bad input gives a one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bm25desk.engine.progress import Cancelled
from bm25desk.engine.scoring.variants import Variant, all_variants, get_variant
from bm25desk.evaluation.evaluate import (
    DEFAULT_METRICS,
    QRELS_FORMATS,
    QUERY_FORMATS,
    EvalInputError,
    EvalOptions,
    ExperimentResult,
    PairedTest,
    Qrels,
    Queries,
    SearcherLike,
    SweepResult,
    compare_to_baseline,
    export_experiment,
    parse_metrics,
    read_qrels,
    read_queries,
    run_experiment,
    sweep,
)

__all__ = ["add_eval_commands", "cmd_eval", "cmd_sweep", "parse_range"]

OpenSearcher = Callable[[str], SearcherLike]
PARAM_FLAGS = ("k1", "b", "delta", "epsilon")
EXIT_BAD_INPUT = 2
EXIT_CANCELLED = 130


class _BadInput(Exception):
    """A user error: reported on one line, exit status 2."""


# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------


def add_eval_commands(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    common_parent: argparse.ArgumentParser,
) -> None:
    """Register ``eval`` and ``sweep`` on ``subparsers``.

    Parameters
    ----------
    subparsers
        The CLI's ``add_subparsers()`` object.
    common_parent
        A parser (``add_help=False``) with the options every command shares (data dir...).

    Notes
    -----
    Each parser sets ``handler`` (``cmd_eval`` / ``cmd_sweep``); call
    ``args.handler(args, open_searcher)``.
    """
    ev = subparsers.add_parser(
        "eval",
        parents=[common_parent],
        help="evaluate variants on queries + relevance judgements",
        description=(
            "Search every query with each variant and score the rankings with ir_measures "
            "(trec_eval-exact). Queries are bags of words analysed like the index."
        ),
    )
    _add_inputs(ev)
    ev.add_argument(
        "--variants",
        default="all",
        help="'all' (default) or comma-separated keys, each optionally with its own "
        "parameters: okapi,lucene:k1=0.9,b=0.4",
    )
    for name in PARAM_FLAGS:
        ev.add_argument(
            f"--{name}",
            type=float,
            default=None,
            help=f"{name} for every chosen variant that has it (default: each variant's own)",
        )
    ev.add_argument(
        "--metrics",
        default=",".join(DEFAULT_METRICS),
        help="comma-separated ir_measures names; aliases and trec_eval names work (MRR@10, MAP, "
        f"P_10). Default: {','.join(DEFAULT_METRICS)}",
    )
    _add_conventions(ev)
    ev.add_argument("--k", type=int, default=1000, help="ranking depth per query (default 1000)")
    ev.add_argument("--per-query", action="store_true", help="also show per-query values")
    ev.add_argument(
        "--run-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="write TREC run files, run cards, per_query.csv and experiment.json here",
    )
    ev.add_argument(
        "--search-unjudged",
        action="store_true",
        help="also search queries without judgements (for complete run files)",
    )
    ev.add_argument(
        "--baseline",
        default=None,
        help="variant key or name to test every other variant against (paired randomization "
        "test and t-test, per-query wins/losses/ties)",
    )
    ev.add_argument(
        "--permutations",
        type=int,
        default=10_000,
        metavar="N",
        help="random sign flips for the randomization test (default 10000)",
    )
    ev.add_argument(
        "--seed", type=int, default=0, help="seed of the randomization test (default 0)"
    )
    _add_json(ev)
    ev.set_defaults(handler=cmd_eval)

    sw = subparsers.add_parser(
        "sweep",
        parents=[common_parent],
        help="grid-search a variant's parameters (k1 × b, and δ where it has one)",
        description=(
            "Evaluate one variant at every combination of parameter values. Ranges are "
            "A:B:STEP (inclusive), or comma-separated values, or one value."
        ),
    )
    _add_inputs(sw)
    sw.add_argument(
        "--variant",
        required=True,
        help="variant key, optionally with fixed parameters: bm25l:delta=0.3",
    )
    for name in PARAM_FLAGS:
        sw.add_argument(f"--{name}", default=None, metavar="A:B:STEP", help=f"values of {name}")
    sw.add_argument(
        "--metric",
        default="nDCG@10",
        help="metric(s) to grid, comma-separated (default nDCG@10); the best cell is reported "
        "for each",
    )
    _add_conventions(sw)
    sw.add_argument(
        "--k",
        type=int,
        default=None,
        help="ranking depth (default: the largest metric cutoff, else 1000)",
    )
    _add_json(sw)
    sw.set_defaults(handler=cmd_sweep)


def _add_json(p: argparse.ArgumentParser) -> None:
    """Add ``--json`` unless the common parent parser already provides it."""
    if "--json" not in p._option_string_actions:
        p.add_argument("--json", action="store_true", help="print JSON instead of tables")


def _add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("index", metavar="N", help="index name")
    p.add_argument(
        "--queries",
        type=Path,
        required=True,
        metavar="F",
        help="queries: TREC topics, BEIR queries.jsonl, qid<TAB>text TSV or SMART (.gz ok)",
    )
    p.add_argument(
        "--qrels",
        type=Path,
        required=True,
        metavar="F",
        help="judgements: TREC qrels, BEIR TSV, CISI .REL or Cranfield cranqrel (.gz ok)",
    )
    p.add_argument(
        "--queries-format",
        choices=("auto", *QUERY_FORMATS),
        default="auto",
        help="default: detected",
    )
    p.add_argument(
        "--qrels-format", choices=("auto", *QRELS_FORMATS), default="auto", help="default: detected"
    )
    p.add_argument(
        "--smart-ids",
        choices=("auto", "declared", "ordinal"),
        default="auto",
        help="SMART query ids: the .I numbers or positions 1, 2, 3... (default auto: positions "
        "for cran.qry)",
    )
    p.add_argument(
        "--topic-field",
        choices=("title", "desc", "narr"),
        default="title",
        help="TREC topic field used as the query (default title)",
    )


def _add_conventions(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--average",
        choices=("judged", "all"),
        default="judged",
        help="mean over judged queries (default; trec_eval -c), or over all queries with "
        "unjudged ones counted 0",
    )
    p.add_argument(
        "--ties",
        choices=("engine", "trec_eval"),
        default="engine",
        help="evaluate the engine's rank order (default), or raw scores with trec_eval's "
        "docid tie-break",
    )
    p.add_argument(
        "--drop-self-hits",
        action="store_true",
        help="remove hits whose docid equals the query id (BEIR rule, ArguAna/Quora)",
    )
    p.add_argument(
        "--query-syntax",
        action="store_true",
        help='interpret +word -word "phrases" title: in queries (off: bags of words)',
    )


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def cmd_eval(args: argparse.Namespace, open_searcher: OpenSearcher) -> int:
    """Run ``bm25desk eval``; return the exit status."""
    try:
        metrics = parse_metrics(args.metrics)
        options = _options(args)
        if args.k < 1:
            raise _BadInput(f"--k must be at least 1, not {args.k}")
        if args.permutations < 1:
            raise _BadInput("--permutations must be at least 1")
        globals_ = {n: getattr(args, n) for n in PARAM_FLAGS if getattr(args, n) is not None}
        configs = _choose_variants(args.variants, globals_)
        if args.baseline is not None:
            _find_baseline(configs, args.baseline)
        queries, qrels = _read_inputs(args)
        searcher = _open(open_searcher, args.index)
        started = time.perf_counter()
        with _Progress("eval") as progress:
            result = run_experiment(
                searcher,
                queries,
                qrels,
                configs,
                metrics,
                k=args.k,
                options=options,
                query_syntax=args.query_syntax,
                search_unjudged=args.search_unjudged,
                progress=progress,
            )
        elapsed = time.perf_counter() - started
        tests: tuple[PairedTest, ...] = ()
        if args.baseline is not None and len(result.configs) > 1:
            base = _find_baseline(configs, args.baseline)
            tests = compare_to_baseline(
                result, configs.index(base), permutations=args.permutations, seed=args.seed
            )
        written: list[Path] = []
        if args.run_dir is not None:
            written = export_experiment(result, args.run_dir)
    except (_BadInput, EvalInputError, ValueError, OSError) as exc:
        return _fail(exc)
    except (Cancelled, KeyboardInterrupt):
        _err("bm25desk: interrupted")
        return EXIT_CANCELLED
    for note in result.notes:
        _err(f"note: {note}")
    if args.json:
        data = result.as_dict(per_query=args.per_query)
        data["paired_tests"] = [t.as_dict() for t in tests]
        data["files"] = [str(p) for p in written]
        data["seconds"] = round(elapsed, 3)
        _out(json.dumps(_json_safe(data), indent=2, ensure_ascii=False))
        return 0
    _out(_eval_header(args.index, queries, qrels, result))
    _out("")
    _out(_aggregate_table(result))
    if tests:
        _out("")
        _out(_tests_table(tests, args.permutations, args.seed))
    if args.per_query:
        for c in result.configs:
            _out("")
            _out(f"per query: {c.name}")
            rows = [
                [q, *(c.evaluation.per_query[m][i] for m in result.metrics)]
                for i, q in enumerate(result.qids)
            ]
            _out(_table(["qid", *result.metrics], rows))
    if written:
        _out("")
        _out(f"wrote {len(written)} files to {args.run_dir}")
    _err(f"done in {elapsed:.1f} s")
    return 0


def cmd_sweep(args: argparse.Namespace, open_searcher: OpenSearcher) -> int:
    """Run ``bm25desk sweep``; return the exit status."""
    try:
        metrics = parse_metrics(args.metric)
        options = _options(args)
        if args.k is not None and args.k < 1:
            raise _BadInput(f"--k must be at least 1, not {args.k}")
        base = _choose_variants(args.variant, {})
        if len(base) != 1:
            raise _BadInput("--variant takes one variant")
        grid = {n: parse_range(getattr(args, n), n) for n in PARAM_FLAGS if getattr(args, n)}
        if not grid:
            raise _BadInput(
                "give at least one parameter range, e.g. --k1 0.6:1.6:0.2 --b 0.2:1:0.1"
            )
        queries, qrels = _read_inputs(args)
        # Check names and ranges before the index is opened (sweep checks them again).
        variant = base[0]
        for name, values in grid.items():
            for v in values:
                get_variant(variant.key, **{name: v})
        searcher = _open(open_searcher, args.index)
        started = time.perf_counter()
        with _Progress("sweep") as progress:
            result = sweep(
                searcher,
                queries,
                qrels,
                variant,
                grid,
                metrics,
                k=args.k,
                options=options,
                query_syntax=args.query_syntax,
                progress=progress,
            )
        elapsed = time.perf_counter() - started
    except (_BadInput, EvalInputError, ValueError, OSError) as exc:
        return _fail(exc)
    except (Cancelled, KeyboardInterrupt):
        _err("bm25desk: interrupted")
        return EXIT_CANCELLED
    for note in result.experiment.notes:
        _err(f"note: {note}")
    if args.json:
        data = result.as_dict()
        data["seconds"] = round(elapsed, 3)
        _out(json.dumps(_json_safe(data), indent=2, ensure_ascii=False))
        return 0
    _out(_eval_header(args.index, queries, qrels, result.experiment))
    for metric in result.metrics:
        _out("")
        _out(_sweep_tables(result, metric))
        best = result.best[metric]
        cell = ", ".join(f"{k}={v:g}" for k, v in best.params.items())
        _out(f"best {metric}: {best.value:.4f} at {cell}  ->  {best.variant!r}")
        edge = result.on_edge(metric)
        if edge:
            _out(f"  (on the edge of the grid for {', '.join(edge)}: a wider range may do better)")
    _err(f"{len(result.experiment.configs)} cells in {elapsed:.1f} s")
    return 0


# --------------------------------------------------------------------------------------------
# Input helpers
# --------------------------------------------------------------------------------------------


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


def _options(args: argparse.Namespace) -> EvalOptions:
    return EvalOptions(
        average=args.average, ties=args.ties, drop_self_hits=bool(args.drop_self_hits)
    )


def _parse_inline(spec: str) -> tuple[str, dict[str, float]]:
    """Split ``lucene:k1=0.9,b=0.4`` into the key and its parameters."""
    key, _, rest = spec.partition(":")
    params: dict[str, float] = {}
    for item in filter(None, (s.strip() for s in rest.replace(";", ",").split(","))):
        name, eq, value = item.partition("=")
        try:
            if not eq:
                raise ValueError
            params[name.strip()] = float(value)
        except ValueError:
            raise _BadInput(f"cannot read parameter {item!r} of {key}: write name=value") from None
    return key.strip(), params


def _choose_variants(spec: str, global_params: dict[str, float]) -> list[Variant]:
    """Build the variants named by ``--variants`` with the global and inline parameters.

    Raises
    ------
    _BadInput, ValueError
        Unknown key or parameter, a value out of range, a global parameter no variant has.
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
        raise _BadInput("--variants is empty")
    chosen: list[tuple[str, dict[str, float]]] = []
    for item in items:
        if item == "all":
            chosen.extend((v.key, {}) for v in all_variants())
        else:
            chosen.append(_parse_inline(item))
    used: set[str] = set()
    out: list[Variant] = []
    for key, inline in chosen:
        default = get_variant(key)  # raises for an unknown key, listing the known ones
        have = set(default.values())
        params = {n: v for n, v in global_params.items() if n in have}
        used.update(params)
        params.update(inline)
        variant = get_variant(key, **params)
        if variant not in out:
            out.append(variant)
    unused = sorted(set(global_params) - used)
    if unused:
        flags = ", ".join(f"--{n}" for n in unused)
        raise _BadInput(f"{flags}: none of the chosen variants has this parameter")
    return out


def _find_baseline(configs: Sequence[Variant], which: str) -> Variant:
    by_name = [v for v in configs if repr(v) == which]
    by_key = [v for v in configs if v.key == which]
    found = by_name or by_key
    if len(found) == 1:
        return found[0]
    listed = ", ".join(repr(v) for v in configs)
    if not found:
        raise _BadInput(f"--baseline {which}: not among the evaluated variants ({listed})")
    raise _BadInput(f"--baseline {which}: several variants match; give the full name")


def _read_inputs(args: argparse.Namespace) -> tuple[Queries, Qrels]:
    for label, path in (("--queries", args.queries), ("--qrels", args.qrels)):
        if not Path(path).is_file():
            raise _BadInput(f"{label} {path}: no such file")
    queries = read_queries(
        args.queries,
        format=args.queries_format,
        smart_ids=args.smart_ids,
        field=args.topic_field,
    )
    qrels = read_qrels(args.qrels, format=args.qrels_format)
    for what, obj in (("queries", queries), ("qrels", qrels)):
        for note in obj.notes:
            _err(f"note: {note}")
        if obj.skipped:
            _err(f"warning: {len(obj.skipped)} {what} lines skipped:")
            for skip in obj.skipped[:10]:
                _err(f"  {skip.where}: {skip.reason}")
            if len(obj.skipped) > 10:
                _err(f"  ... and {len(obj.skipped) - 10} more")
    return queries, qrels


def _open(open_searcher: OpenSearcher, name: str) -> SearcherLike:
    try:
        return open_searcher(name)
    except (OSError, LookupError, ValueError) as exc:
        raise _BadInput(f"cannot open index {name!r}: {exc}") from exc


# --------------------------------------------------------------------------------------------
# Output helpers
# --------------------------------------------------------------------------------------------


def _out(text: str) -> None:
    sys.stdout.write(text + "\n")


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _fail(exc: BaseException) -> int:
    message = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        message = f"{exc.filename}: {exc.strerror}"
    _err(f"bm25desk: error: {message.splitlines()[0]}")
    return EXIT_BAD_INPUT


class _Progress:
    """A one-line progress display on stderr when it is a terminal (silent otherwise)."""

    def __init__(self, label: str) -> None:
        self._label = label
        self._tty = sys.stderr.isatty()
        self._started = time.monotonic()
        self._shown = False

    def __enter__(self) -> Callable[[int, int], None]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    def __call__(self, done: int, total: int) -> None:
        if not self._tty or total <= 0:
            return
        elapsed = time.monotonic() - self._started
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else 0.0
        sys.stderr.write(
            f"\r{self._label}: {done}/{total} searches ({100 * done / total:.0f}%), "
            f"{rate:.0f}/s, ETA {eta:.0f} s\033[K"
        )
        sys.stderr.flush()
        self._shown = True


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.4f}"
    if hasattr(value, "dtype"):  # numpy scalar
        return _fmt(float(value))  # type: ignore[arg-type]
    return str(value)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]], left: int = 1) -> str:
    """Render an aligned text table: the first ``left`` columns left-aligned, the rest right."""
    cells = [[_fmt(v) for v in row] for row in rows]
    numeric = [i >= left for i in range(len(headers))]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(headers)), line(["-" * w for w in widths])]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def _eval_header(index: str, queries: Queries, qrels: Qrels, result: ExperimentResult) -> str:
    opts = result.options
    avg = (
        f"mean over {len(result.qids)} judged queries (trec_eval -c)"
        if opts.average == "judged"
        else f"mean over all {len(result.qids)} queries, {len(result.unjudged)} unjudged = 0"
    )
    ties = "engine order" if opts.ties == "engine" else "trec_eval (score, then docid)"
    parts = [
        f"index {index} ({result.index.n_docs} docs)",
        f"{len(queries)} queries ({queries.format}), "
        f"{qrels.n_judgements} judgements for {qrels.n_queries} queries ({qrels.format})",
        f"{avg}; ties: {ties}; k={result.k}"
        + ("; self hits dropped" if opts.drop_self_hits else ""),
    ]
    if result.missing_judged:
        parts.append(
            f"{result.missing_judged_count} judged documents ({result.missing_relevant} relevant) "
            "are not in the index"
        )
    return "\n".join(parts)


def _aggregate_table(result: ExperimentResult) -> str:
    """One row per configuration; the best value of each metric is starred."""
    best = {
        m: max((c.aggregate[m] for c in result.configs), key=lambda v: -math.inf if v != v else v)
        for m in result.metrics
    }
    rows: list[list[object]] = []
    for c in result.configs:
        row: list[object] = [c.name]
        for m in result.metrics:
            v = c.aggregate[m]
            star = "*" if len(result.configs) > 1 and v == best[m] else " "
            row.append(f"{_fmt(v)}{star}")
        rows.append(row)
    return _table(["variant", *result.metrics], rows)


def _tests_table(tests: Sequence[PairedTest], permutations: int, seed: int) -> str:
    head = (
        f"paired tests against {tests[0].baseline}: two-sided randomization "
        f"({permutations} sign flips, seed {seed}; exact when 2^n is smaller) and paired t-test"
    )
    rows: list[list[object]] = []
    for t in tests:
        rows.append(
            [
                t.metric,
                t.candidate,
                f"{t.delta:+.4f}",
                f"{t.wins}/{t.losses}/{t.ties}",
                _p(t.p_value),
                _p(t.p_t),
            ]
        )
    return (
        head
        + "\n"
        + _table(["metric", "variant", "delta", "win/loss/tie", "p", "p(t)"], rows, left=2)
    )


def _p(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _sweep_tables(result: SweepResult, metric: str) -> str:
    grid = result.grids[metric]
    axes, values = result.axes, result.values
    title = f"{metric} for {result.base.key} ({', '.join(axes)})"
    if len(axes) == 1:
        rows = [[f"{axes[0]}={v:g}", float(grid[i])] for i, v in enumerate(values[0])]
        return title + "\n" + _table([axes[0], metric], rows)
    blocks = [title]
    outer = list(range(len(values[2]))) if len(axes) == 3 else [None]
    for o in outer:
        if o is not None:
            if o > 0:
                blocks.append("")
            blocks.append(f"{axes[2]} = {values[2][o]:g}")
        rows = []
        for i, v in enumerate(values[0]):
            row: list[object] = [f"{v:g}"]
            for j in range(len(values[1])):
                cell = grid[i, j] if o is None else grid[i, j, o]
                row.append(float(cell))
            rows.append(row)
        headers = [f"{axes[0]} \\ {axes[1]}", *(f"{v:g}" for v in values[1])]
        blocks.append(_table(headers, rows))
    if len(axes) > 3:
        blocks.append("(more than 3 parameters: see --json for the full grid)")
    return "\n".join(blocks)


def _json_safe(value: Any) -> Any:
    """Replace NaN/inf floats by None, recursively (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value
