"""The ``eval`` and ``sweep`` commands of the command line (registered by ``bm25desk.cli``).

``bm25desk.cli`` calls :func:`add_eval_commands` with its subparsers and a parent parser holding
the common options; each registered parser sets ``args.handler`` to :func:`cmd_eval` or
:func:`cmd_sweep`, which the CLI calls as ``args.handler(args, open_searcher)`` with a function
that opens an index by name. Tables go to stdout (JSON with ``--json``), progress, notes and hints
to stderr; bad input (unreadable or misread files, unknown variants or metrics, numbers that cannot
be right) gives a one-line error and exit status 2. A damaged index is not caught here: it reaches
``bm25desk.cli``, which exits with its own status.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bm25desk.engine.progress import Cancelled
from bm25desk.engine.scoring import bm25f
from bm25desk.engine.scoring.variants import VariantError, get_variant
from bm25desk.evaluation.cli_inputs import (
    BadInput,
    OpenSearcher,
    choose_variants,
    eval_options,
    find_baseline,
    open_index,
    parse_range,
    read_inputs,
)
from bm25desk.evaluation.cli_output import (
    Progress,
    aggregate_table,
    err,
    eval_header,
    fail,
    out,
    report_inputs,
    report_notes,
    sweep_tables,
    table,
    tests_table,
)
from bm25desk.evaluation.data import EvalInputError
from bm25desk.evaluation.detect import QRELS_FORMATS, QUERY_FORMATS
from bm25desk.evaluation.experiments import run_experiment
from bm25desk.evaluation.export import export_experiment
from bm25desk.evaluation.jsonsafe import json_safe
from bm25desk.evaluation.metrics import DEFAULT_METRICS, parse_metrics
from bm25desk.evaluation.significance import PairedTest, compare_to_baseline
from bm25desk.evaluation.sweeps import sweep

__all__ = ["add_eval_commands", "cmd_eval", "cmd_sweep", "parse_range"]

PARAM_FLAGS = ("k1", "b", "delta", "epsilon")
EXIT_CANCELLED = 130

# The errors a command reports as bad input (exit 2). Not ValueError in general: a bug must not
# pass for a user's mistake.
_INPUT_ERRORS = (BadInput, EvalInputError, VariantError, OSError)


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
    _add_eval_parser(subparsers, common_parent)
    _add_sweep_parser(subparsers, common_parent)


def _add_eval_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    common_parent: argparse.ArgumentParser,
) -> None:
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
    for flag, what in (("--field-weight", "weight"), ("--field-b", "b")):
        ev.add_argument(
            flag,
            action="append",
            default=[],
            metavar=f"FIELD={what.upper()[0]}",
            help=f"bm25f: a field's {what}, e.g. title=2.5 (repeatable)",
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


def _add_sweep_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    common_parent: argparse.ArgumentParser,
) -> None:
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
        help="queries: TREC topics, BEIR queries.jsonl, qid<TAB>text TSV, SMART (CISI, CACM, "
        "Cranfield, MED, ADI), NPL query-text, LISA.QUE or TIME.QUE (.gz ok)",
    )
    p.add_argument(
        "--qrels",
        type=Path,
        required=True,
        metavar="F",
        help="judgements: TREC qrels (MED.REL), BEIR TSV, SMART qid docid 0 0 (CISI, CACM, ADI), "
        "Cranfield cranqrel, NPL rlv-ass, LISARJ.NUM or TIME.REL (.gz ok)",
    )
    p.add_argument(
        "--queries-format",
        choices=("auto", *QUERY_FORMATS),
        default="auto",
        help="default: detected from the content",
    )
    p.add_argument(
        "--qrels-format",
        choices=("auto", *QRELS_FORMATS),
        default="auto",
        help="default: detected from the content",
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
        options = eval_options(args)
        if args.k < 1:
            raise BadInput(f"--k must be at least 1, not {args.k}")
        if args.permutations < 1:
            raise BadInput("--permutations must be at least 1")
        globals_ = {n: getattr(args, n) for n in PARAM_FLAGS if getattr(args, n) is not None}
        fields = bm25f.field_params(args.field_weight, args.field_b)
        configs = bm25f.with_fields(choose_variants(args.variants, globals_), fields)
        base = find_baseline(configs, args.baseline) if args.baseline is not None else None
        queries, qrels = read_inputs(args)
        report_inputs(queries, qrels)
        searcher = open_index(open_searcher, args.index)
        bm25f.check_named_fields(searcher.index, fields)
        started = time.perf_counter()
        with Progress("eval") as progress:
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
        if base is not None and len(result.configs) > 1:
            tests = compare_to_baseline(
                result, configs.index(base), permutations=args.permutations, seed=args.seed
            )
        written = export_experiment(result, args.run_dir) if args.run_dir is not None else []
    except _INPUT_ERRORS as exc:
        return fail(exc)
    except (Cancelled, KeyboardInterrupt):
        err("bm25desk: interrupted")
        return EXIT_CANCELLED
    report_notes(result)
    if args.json:
        data = result.as_dict(per_query=args.per_query)
        data["paired_tests"] = [t.as_dict() for t in tests]
        data["files"] = [str(p) for p in written]
        data["seconds"] = round(elapsed, 3)
        out(json.dumps(json_safe(data), indent=2, ensure_ascii=False))
        return 0
    out(eval_header(args.index, queries, qrels, result))
    out("")
    out(aggregate_table(result))
    if tests:
        out("")
        out(tests_table(tests, args.permutations, args.seed))
    if args.per_query:
        for c in result.configs:
            out("")
            out(f"per query: {c.name}")
            rows = [
                [q, *(c.evaluation.per_query[m][i] for m in result.metrics)]
                for i, q in enumerate(result.qids)
            ]
            out(table(["qid", *result.metrics], rows))
    if written:
        out("")
        out(f"wrote {len(written)} files to {args.run_dir}")
    err(f"done in {elapsed:.1f} s")
    return 0


def cmd_sweep(args: argparse.Namespace, open_searcher: OpenSearcher) -> int:
    """Run ``bm25desk sweep``; return the exit status."""
    try:
        metrics = parse_metrics(args.metric)
        options = eval_options(args)
        if args.k is not None and args.k < 1:
            raise BadInput(f"--k must be at least 1, not {args.k}")
        base = choose_variants(args.variant, {})
        if len(base) != 1:
            raise BadInput("--variant takes one variant")
        grid = {n: parse_range(getattr(args, n), n) for n in PARAM_FLAGS if getattr(args, n)}
        if not grid:
            raise BadInput("give at least one parameter range, e.g. --k1 0.6:1.6:0.2 --b 0.2:1:0.1")
        queries, qrels = read_inputs(args)
        report_inputs(queries, qrels)
        # Check names and ranges before the index is opened (sweep checks them again).
        variant = base[0]
        for name, values in grid.items():
            for v in values:
                get_variant(variant.key, **{name: v})
        searcher = open_index(open_searcher, args.index)
        started = time.perf_counter()
        with Progress("sweep") as progress:
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
    except _INPUT_ERRORS as exc:
        return fail(exc)
    except (Cancelled, KeyboardInterrupt):
        err("bm25desk: interrupted")
        return EXIT_CANCELLED
    report_notes(result.experiment)
    if args.json:
        data = result.as_dict()
        data["seconds"] = round(elapsed, 3)
        out(json.dumps(json_safe(data), indent=2, ensure_ascii=False))
        return 0
    out(eval_header(args.index, queries, qrels, result.experiment))
    for metric in result.metrics:
        out("")
        out(sweep_tables(result, metric))
        best = result.best[metric]
        cell = ", ".join(f"{k}={v:g}" for k, v in best.params.items())
        out(f"best {metric}: {best.value:.4f} at {cell}  ->  {best.variant!r}")
        edge = result.on_edge(metric)
        if edge:
            out(f"  (on the edge of the grid for {', '.join(edge)}: a wider range may do better)")
    err(f"{len(result.experiment.configs)} cells in {elapsed:.1f} s")
    return 0
