"""The bm25desk command line: index, search and explain from a terminal or a script (no Qt).

Exit codes: 0 success; 1 a search found nothing; 2 bad input (missing path, unknown index or
variant, parameter out of range, empty query, a data directory that is not a folder, a file that
cannot be read...); 3 a damaged index; 4 the index could not be written (disk full, file-size limit,
or another process is writing it); 5 an internal error (a bug: the traceback is in the log file the
message names); 130 interrupted; 141 the output was closed early (``| head``).
Every subcommand takes ``--json``; progress goes to stderr (when it is a terminal). Everything
printed for people has its control characters escaped (:mod:`bm25desk.console`), so a document's
title or path can never steer the terminal; ``--json`` output stays exact.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bm25desk import __version__, console, logfile, paths
from bm25desk.commands import add_commands
from bm25desk.commands.common import BadInput, err, ranking_options, store
from bm25desk.commands.indexing import cmd_index, cmd_update
from bm25desk.commands.searching import cmd_explain, cmd_search, cmd_variants, filter_options
from bm25desk.commands.stores import cmd_check, cmd_delete, cmd_info, cmd_list

EXIT_OK, EXIT_EMPTY, EXIT_INPUT, EXIT_DAMAGED, EXIT_WRITE, EXIT_INTERNAL = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED, EXIT_PIPE = 130, 141  # 128 + SIGINT, 128 + SIGPIPE: as if killed by the signal


class CliError(Exception):
    """A user-facing error: printed as one line, exit code 2 (or the given one)."""

    def __init__(self, message: str, code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.code = code


# -- argument parsing -----------------------------------------------------------------------------


def _variant_options(p: argparse.ArgumentParser) -> None:
    ranking_options(p)
    p.add_argument(
        "--no-syntax",
        action="store_true",
        help="treat the query as plain words (no +, -, quotes or title:)",
    )


def _analysis_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("analysis (stored in the index and reused for every query)")
    g.add_argument("--tokenizer", choices=["word", "whitespace", "treebank", "cjk"], default="word")
    g.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=True)
    g.add_argument(
        "--stopwords",
        default="auto",
        metavar="LANG|none|FILE",
        help="stop list: a language code, none, or a file with one word per line "
        "(default: the --language list)",
    )
    g.add_argument(
        "--stemmer",
        choices=["auto", "none", "porter", "snowball", "lancaster"],
        default="auto",
        help="default: porter for English, snowball for other languages",
    )
    g.add_argument("--language", default="en", metavar="LANG", help="language code (default en)")
    g.add_argument("--min-length", type=int, default=1, metavar="N", help="drop shorter tokens")


def _engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("beyond one machine (bm25desk[spark], bm25desk[dask]; docs/scale.md)")
    g.add_argument(
        "--engine",
        choices=["bm25desk", "spark", "dask"],
        default="bm25desk",
        help="who runs the build (default: bm25desk itself, every core for a large file)",
    )
    g.add_argument("--master", metavar="URL", help="spark: local[2], spark://host:7077, yarn …")
    g.add_argument("--scheduler", metavar="ADDRESS", help="dask: tcp://host:8786 (default: local)")
    g.add_argument("--partitions", type=int, metavar="N", help="spark/dask: how many parts")
    g.add_argument(
        "--staging",
        metavar="DIR",
        help="spark/dask on a cluster: a folder every executor and this machine can read",
    )


def _index_command(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``index``: what to read, how to name it, who builds it, how to analyse it."""
    p = sub.add_parser("index", parents=[common], help="index a folder or corpus file")
    p.add_argument(
        "source",
        help="folder, TSV, BEIR corpus.jsonl(.gz), SMART, TREC, NPL doc-text, TIME.ALL file, "
        "or a folder of LISA files",
    )
    p.add_argument("--name", help="index name (default: from the source's name)")
    p.add_argument(
        "--format",
        dest="fmt",
        metavar="FORMAT",
        help="override detection: folder, msmarco-docs, msmarco-passages, tsv-header, beir, "
        "smart, trec, npl, lisa, time",
    )
    p.add_argument(
        "--columns",
        metavar="docid=COL,text=COL[+COL],title=COL",
        help="column mapping for a TSV with a header row",
    )
    p.add_argument(
        "--meta-column",
        action="append",
        metavar="COL",
        help="TSV/JSONL: a column of keywords to filter and facet by (repeatable)",
    )
    p.add_argument(
        "--field-column",
        action="append",
        metavar="COL",
        help="TSV/JSONL: a column indexed as its own field (repeatable)",
    )
    p.add_argument("--include", action="append", metavar="GLOB", help="folder: only these files")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="folder: skip these files")
    p.add_argument(
        "--replace",
        action="store_true",
        help="replace an existing index of that name built from another source",
    )
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="build even when no document is found (an empty index)",
    )
    _engine_options(p)
    _analysis_options(p)


def _store_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``update``, ``list``, ``info``, ``delete``, ``variants`` and ``check``."""
    p = sub.add_parser("update", parents=[common], help="bring an index up to date with its source")
    p.add_argument("name")
    p.add_argument(
        "--discard-edits",
        action="store_true",
        help="rebuild even when that loses documents added or removed by id (add/remove)",
    )
    sub.add_parser("list", parents=[common], help="list indexes")
    p = sub.add_parser("info", parents=[common], help="describe an index")
    p.add_argument("name")
    p.add_argument("--top-terms", type=int, default=10, metavar="N")
    p = sub.add_parser("delete", parents=[common], help="delete an index")
    p.add_argument("name")
    sub.add_parser("variants", parents=[common], help="list the ranking functions")
    p = sub.add_parser(
        "check", parents=[common], help="verify every checksum and invariant of an index"
    )
    p.add_argument("name")
    p.add_argument(
        "--repair",
        action="store_true",
        help="restore a lost manifest from its copy, drop damaged segments (says what is lost)",
    )


def _search_commands(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``search`` and ``explain``."""
    p = sub.add_parser("search", parents=[common], help="search an index")
    p.add_argument("name")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help="number of hits (default 10)")
    p.add_argument("--explain", action="store_true", help="print each hit's score ledger")
    p.add_argument("--csv", action="store_true", help="CSV: one row a hit, tf and weight a term")
    filter_options(p)
    _variant_options(p)

    p = sub.add_parser("explain", parents=[common], help="explain documents' scores for a query")
    p.add_argument("name")
    p.add_argument("query")
    p.add_argument("docids", nargs="+", metavar="DOCID")
    p.add_argument("--markdown", action="store_true", help="Markdown table instead of a tree")
    p.add_argument("--csv", action="store_true", help="CSV: one row a ledger line")
    _variant_options(p)


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser (exposed for tests and documentation)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    common.add_argument(
        "--data-dir", metavar="DIR", default=argparse.SUPPRESS, help="where indexes live"
    )
    parser = argparse.ArgumentParser(
        prog="bm25desk",
        description="Explore document collections with the BM25 family and see why each "
        "document ranked where it did. Without arguments, opens the desktop app.",
        epilog="Exit codes: 0 ok, 1 no results, 2 bad input, 3 damaged index, 4 could not write "
        "the index, 5 internal error, 130 interrupted, 141 output closed early.",
    )
    parser.add_argument("--version", action="version", version=f"bm25desk {__version__}")
    parser.add_argument("--data-dir", metavar="DIR", help="where indexes live")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    _index_command(sub, common)
    _store_commands(sub, common)
    _search_commands(sub, common)
    ranking = argparse.ArgumentParser(add_help=False)
    ranking_options(ranking)
    add_commands(sub, common, ranking)

    try:
        from bm25desk.evaluation import cli as cli_eval
    except ImportError:  # evaluation commands are optional until their module exists
        cli_eval = None  # type: ignore[assignment]
    if cli_eval is not None and hasattr(cli_eval, "add_eval_commands"):
        cli_eval.add_eval_commands(sub, common)
    return parser


# -- commands -------------------------------------------------------------------------------------


def _err(text: str) -> None:
    """Print a line for people on stderr (control characters escaped)."""
    err(text)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "index": cmd_index,
    "update": cmd_update,
    "list": cmd_list,
    "info": cmd_info,
    "delete": cmd_delete,
    "check": cmd_check,
    "variants": cmd_variants,
    "search": cmd_search,
    "explain": cmd_explain,
}


def open_searcher(name: str) -> Any:
    """Open a searcher on index ``name`` (passed to the evaluation commands)."""
    from bm25desk.engine.scoring.search import Searcher

    return Searcher(store().open(name))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not args.command:
        parser.print_help()
        return EXIT_INPUT
    stdout = sys.stdout
    sys.stdout = console.SafeStream(stdout, json=bool(getattr(args, "json", False)))
    try:
        return _run(args)
    finally:
        sys.stdout = stdout


def _run(args: argparse.Namespace) -> int:
    """Run the chosen command; map every failure to one line and its exit code."""
    try:
        _check_data_dir(getattr(args, "data_dir", None))
        handler = COMMANDS.get(args.command)
        code = int(args.handler(args, open_searcher)) if handler is None else handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:  # | head: the reader has all it wanted
        _silence_stdout()
        return EXIT_PIPE
    except KeyboardInterrupt:
        _err("bm25desk: interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        if _cancelled(exc):
            _err("bm25desk: interrupted")
            return EXIT_INTERRUPTED
        code, message = exit_code(exc)
        _err(f"bm25desk: error: {message}")
        return code


def _check_data_dir(option: str | None) -> None:
    """Apply ``--data-dir`` and refuse a data directory that is not a folder."""
    if option:
        paths.set_data_dir(Path(option))
    root = paths.data_dir()
    if root.exists() and not root.is_dir():
        raise CliError(
            f"the data directory {root} is a file, not a folder: choose another with "
            "--data-dir DIR or BM25DESK_DATA_DIR"
        )


def _cancelled(exc: BaseException) -> bool:
    from bm25desk.engine.progress import Cancelled

    return isinstance(exc, Cancelled)


def _user_errors() -> tuple[tuple[tuple[type[BaseException], ...], int], ...]:
    """Return (exception types, exit code) pairs: the errors whose message is written for users.

    The one place errors become exit codes: an engine error that users should see as one line
    gets its entry here (an index or corpus error raised anywhere flows through this table).
    """
    from bm25desk.engine.analysis.analyzer import AnalysisError
    from bm25desk.engine.index.segment import IndexCorruptError
    from bm25desk.engine.index.store import IndexLockedError, IndexWriteError, StoreError
    from bm25desk.engine.readers.corpus import CorpusError
    from bm25desk.engine.scoring.search import QueryError
    from bm25desk.engine.scoring.variants import VariantError

    return (
        ((IndexCorruptError,), EXIT_DAMAGED),
        ((IndexWriteError, IndexLockedError), EXIT_WRITE),
        (
            (StoreError, CorpusError, AnalysisError, VariantError, QueryError, BadInput),
            EXIT_INPUT,
        ),
    )


def exit_code(exc: BaseException) -> tuple[int, str]:
    """Return the exit code and the one-line message for an exception that ended a command.

    Errors written for users keep their message; a file-system error (missing file, permission,
    a full disk...) names the file and the reason; anything else is a bug: its traceback goes to
    the log file, and the message says where.
    """
    if isinstance(exc, CliError):
        return exc.code, str(exc)
    for types, code in _user_errors():
        if isinstance(exc, types):
            return code, str(exc)
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return EXIT_INPUT, f"{exc.strerror or exc}{where}"
    import traceback

    path = logfile.record("".join(traceback.format_exception(exc)), source="bm25desk.cli")
    text = str(exc) or type(exc).__name__
    return EXIT_INTERNAL, f"internal error ({type(exc).__name__}: {text}); details are in {path}"


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test's capture): nothing is flushed at exit


if __name__ == "__main__":
    raise SystemExit(main())
