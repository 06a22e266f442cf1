"""What ``eval`` and ``sweep`` print: tables on stdout, notes and progress on stderr."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence

from bm25desk.evaluation.data import Qrels, Queries
from bm25desk.evaluation.results import ExperimentResult
from bm25desk.evaluation.significance import PairedTest
from bm25desk.evaluation.sweeps import SweepResult

__all__ = [
    "EXIT_BAD_INPUT",
    "Progress",
    "aggregate_table",
    "err",
    "eval_header",
    "fail",
    "out",
    "report_inputs",
    "report_notes",
    "sweep_tables",
    "table",
    "tests_table",
]

EXIT_BAD_INPUT = 2


def out(text: str) -> None:
    """Print ``text`` on stdout."""
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    """Print ``text`` on stderr, at once."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def fail(exc: BaseException) -> int:
    """Report ``exc`` on one line and return the bad-input exit status."""
    message = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        message = f"{exc.filename}: {exc.strerror}"
    err(f"bm25desk: error: {message.splitlines()[0]}")
    return EXIT_BAD_INPUT


class Progress:
    """A one-line progress display on stderr when it is a terminal (silent otherwise)."""

    def __init__(self, label: str) -> None:
        self._label = label
        self._tty = sys.stderr.isatty()
        self._started = time.monotonic()
        self._shown = False

    def __enter__(self) -> Callable[[int, int], None]:
        """Return the progress function."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Clear the progress line."""
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    def __call__(self, done: int, total: int) -> None:
        """Show ``done`` of ``total`` searches, their rate and the time left."""
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


def fmt(value: object) -> str:
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.4f}"
    if hasattr(value, "dtype"):  # numpy scalar
        return fmt(float(value))  # type: ignore[arg-type]
    return str(value)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], left: int = 1) -> str:
    """Render an aligned text table: the first ``left`` columns left-aligned, the rest right."""
    cells = [[fmt(v) for v in row] for row in rows]
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


def eval_header(index: str, queries: Queries, qrels: Qrels, result: ExperimentResult) -> str:
    """Describe the index, the inputs and the conventions above the results."""
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


def aggregate_table(result: ExperimentResult) -> str:
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
            row.append(f"{fmt(v)}{star}")
        rows.append(row)
    return table(["variant", *result.metrics], rows)


def tests_table(tests: Sequence[PairedTest], permutations: int, seed: int) -> str:
    """Render paired tests against the baseline: delta, wins/losses/ties and both p-values."""
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
                p_text(t.p_value),
                p_text(t.p_t),
            ]
        )
    return (
        head
        + "\n"
        + table(["metric", "variant", "delta", "win/loss/tie", "p", "p(t)"], rows, left=2)
    )


def p_text(value: float | None) -> str:
    if value is None:
        return "n/a"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def sweep_tables(result: SweepResult, metric: str) -> str:
    """Render one metric's grid: one axis a column, two a table, a third one table a value."""
    grid = result.grids[metric]
    axes, values = result.axes, result.values
    title = f"{metric} for {result.base.key} ({', '.join(axes)})"
    if len(axes) == 1:
        rows = [[f"{axes[0]}={v:g}", float(grid[i])] for i, v in enumerate(values[0])]
        return title + "\n" + table([axes[0], metric], rows)
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
        blocks.append(table(headers, rows))
    if len(axes) > 3:
        blocks.append("(more than 3 parameters: see --json for the full grid)")
    return "\n".join(blocks)


def report_inputs(queries: Queries, qrels: Qrels) -> None:
    """Print the readers' notes and the lines they skipped (the first ten of each file)."""
    for what, obj in (("queries", queries), ("qrels", qrels)):
        for note in obj.notes:
            err(f"note: {note}")
        if obj.skipped:
            err(f"warning: {len(obj.skipped)} {what} lines skipped:")
            for skip in obj.skipped[:10]:
                err(f"  {skip.where}: {skip.reason}")
            if len(obj.skipped) > 10:
                err(f"  ... and {len(obj.skipped) - 10} more")


def report_notes(result: ExperimentResult) -> None:
    """Print an experiment's notes, its hints marked as such."""
    hints = set(result.hints)
    for note in result.notes:
        err(f"{'hint' if note in hints else 'note'}: {note}")
