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
from bm25desk.commands.common import (
    BadInput,
    ProgressBar,
    column_map,
    emit,
    human,
    ranking_options,
    skip_fields,
    variant_from,
    wants_csv,
)
from bm25desk.commands.edit import describe_edits

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

    p = sub.add_parser("search", parents=[common], help="search an index")
    p.add_argument("name")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help="number of hits (default 10)")
    p.add_argument("--explain", action="store_true", help="print each hit's score ledger")
    p.add_argument("--csv", action="store_true", help="CSV: one row a hit, tf and weight a term")
    _variant_options(p)

    p = sub.add_parser("explain", parents=[common], help="explain documents' scores for a query")
    p.add_argument("name")
    p.add_argument("query")
    p.add_argument("docids", nargs="+", metavar="DOCID")
    p.add_argument("--markdown", action="store_true", help="Markdown table instead of a tree")
    p.add_argument("--csv", action="store_true", help="CSV: one row a ledger line")
    _variant_options(p)

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


def _store() -> Any:
    from bm25desk.engine.index.store import IndexStore

    return IndexStore()


def _analyzer(args: argparse.Namespace) -> Any:
    from bm25desk.engine.analysis.analyzer import LANGUAGES, Analyzer

    lang = args.language
    if lang not in LANGUAGES:
        raise CliError(f"unknown language {lang!r}: use one of {', '.join(LANGUAGES)}")
    stop = args.stopwords
    if stop == "auto":
        from whoosh.lang.stopwords import stoplists

        stop = lang if lang in stoplists else "none"
    stem = args.stemmer
    if stem == "auto":
        stem = "porter" if lang == "en" else "snowball"
    if args.min_length < 1:
        raise CliError("--min-length must be at least 1")
    return Analyzer.create(
        tokenizer=args.tokenizer,
        lowercase=args.lowercase,
        stopwords=stop,
        stemmer=stem,
        language=lang,
        min_length=args.min_length,
    )


def _report_dict(report: Any) -> dict[str, Any]:
    return {
        "name": report.name,
        "read": report.read,
        "indexed": report.indexed,
        **skip_fields(report),
        "added": report.added,
        "changed": report.changed,
        "removed": report.removed,
        "rebuilt": report.rebuilt,
        "note": report.note,
        "seconds": round(report.seconds, 3),
        "documents": report.n_docs,
        "terms": report.n_terms,
    }


def _err(text: str) -> None:
    """Print a line for people on stderr (control characters escaped: it may quote a document)."""
    print(console.visible(text), file=sys.stderr)


def _print_skips(report: Any, limit: int = 10) -> None:
    for s in report.skipped[:limit]:
        _err(f"  skipped {s.where}: {s.reason}")
    if len(report.skipped) > limit:
        _err(f"  … and {len(report.skipped) - limit:,} more")


def cmd_index(args: argparse.Namespace) -> int:
    """Build an index."""
    from bm25desk.engine.index.build import build_index

    if args.name is not None and not args.name.strip():
        raise CliError("--name is empty: give the index a name, or leave --name out")
    analyzer = _analyzer(args)
    if args.engine != "bm25desk":
        report = _index_with_engine(args, analyzer)
        if not args.json:
            _print_skips(report)
        emit(args, _report_dict(report), report.summary())
        return EXIT_OK
    for option in ("master", "scheduler", "partitions", "staging"):
        if getattr(args, option) is not None:
            raise CliError(f"--{option} needs --engine spark or --engine dask")
    bar = ProgressBar("indexing")
    try:
        report = build_index(
            args.source,
            name=args.name,
            fmt=args.fmt,
            analyzer=analyzer,
            columns=column_map(args.columns),
            include=args.include,
            exclude=args.exclude,
            store=_store(),
            progress=bar,
            workers=None,  # every core for a large MS MARCO/BEIR file
            replace=args.replace,
            allow_empty=args.allow_empty,
        )
    finally:
        bar.close()
    if not args.json:
        _print_skips(report)
    emit(args, _report_dict(report), report.summary())
    return EXIT_OK


def _index_with_engine(args: argparse.Namespace, analyzer: Any) -> Any:
    """Build with Spark or Dask (``--engine``); progress counts finished tasks."""
    import importlib

    wrong = "scheduler" if args.engine == "spark" else "master"
    if getattr(args, wrong) is not None or args.include or args.exclude:
        bad = f"--{wrong}" if getattr(args, wrong) is not None else "--include/--exclude"
        raise CliError(f"{bad} does not go with --engine {args.engine}")
    try:
        module = importlib.import_module(f"bm25desk.{args.engine}")
        importlib.import_module("pyspark" if args.engine == "spark" else "distributed")
    except ImportError:
        raise CliError(
            f"--engine {args.engine} needs its extra: pip install 'bm25desk[{args.engine}]'"
        ) from None
    columns = column_map(args.columns)
    options: dict[str, Any] = {}
    if columns is not None:
        options = {"id_col": columns.docid, "text_col": columns.text, "title_col": columns.title}
    if args.engine == "spark":
        try:
            options["spark"] = module.session(args.master)
        except Exception as exc:  # the JVM did not start: no Java, a bad master URL ...
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CliError(f"could not start Spark ({first}); is Java 17 installed?") from None
    else:
        options["scheduler"] = args.scheduler
    bar = ProgressBar(f"indexing ({args.engine} tasks)", unit="")
    try:
        return module.build_index(
            args.source,
            args.name,
            fmt=args.fmt,
            analyzer=analyzer,
            partitions=args.partitions,
            staging=args.staging,
            store=_store(),
            replace=args.replace,
            allow_empty=args.allow_empty,
            progress=bar,
            **options,
        )
    finally:
        bar.close()


def cmd_update(args: argparse.Namespace) -> int:
    """Update an index from its source."""
    from bm25desk.engine.index.build import update_index

    bar = ProgressBar("updating")
    try:
        report = update_index(
            args.name, store=_store(), progress=bar, discard_edits=args.discard_edits
        )
    finally:
        bar.close()
    if report.rebuilt or report.added or report.changed or report.removed:
        text = report.summary()
    else:
        text = f"{args.name!r} is up to date ({report.n_docs:,} documents). {report.note}".strip()
    if not args.json:
        _print_skips(report)
    emit(args, _report_dict(report), text)
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    """List indexes."""
    store = _store()
    store.check_root()
    infos = [store.info(n) for n in store.names()]
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
        text = f"No indexes yet in {store.root}. Create one with: bm25desk index SOURCE"
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

    store = _store()
    index = store.open(args.name)
    info = store.info(args.name)
    top = index.top_terms(args.top_terms)
    built = describe_build(index.manifest.get("build") or {})
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
        "warnings": index.warnings,
    }
    text = "\n".join(
        [
            f"{index.name}: {index.n_docs:,} documents, {index.n_terms:,} terms, "
            f"{index.total_len:,} tokens, average length {index.avgdl:.2f}",
            f"source:   {index.source.get('path', '')} ({index.source.get('format', '')})",
            f"analyzer: {index.analyzer.describe()}",
            f"stored:   {index.path} ({human(info.size_bytes, 'B')}, "
            f"{len(index.segments)} segment(s))",
            f"updated:  {index.manifest.get('updated', '')}",
            *filter(None, [describe_edits(index.source)]),
            *([f"built:    {built}"] if built else []),
            "top terms: " + ", ".join(f"{t} ({cf:,})" for t, _, cf in top),
            *(f"warning: {w}" for w in index.warnings),
        ]
    )
    emit(args, data, text)
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete an index."""
    _store().delete(args.name)
    emit(args, {"deleted": args.name}, f"Deleted index {args.name!r}.")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Verify an index completely (and repair it when asked)."""
    from bm25desk.engine.index.check import check_index

    report = check_index(args.name, store=_store(), repair=args.repair)
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
            f"{cls.key:<11} {cls.label}\n            idf = {cls.idf_formula}\n"
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


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def cmd_search(args: argparse.Namespace) -> int:
    """Search an index."""
    from bm25desk.engine.scoring.search import Searcher, variant_dict

    if args.k < 1:
        raise CliError("-k must be at least 1")
    csv = wants_csv(args)
    variant = variant_from(args)
    searcher = Searcher(_store().open(args.name))
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
        "hits": [hit_dict(h) for h in result.hits],
    }
    if csv:
        _search_csv(args, searcher, result, data)
        return EXIT_OK if result.hits else EXIT_EMPTY
    if args.explain and args.json:
        for h, d in zip(result.hits, data["hits"], strict=True):
            d["explanation"] = searcher.explain_docno(a.parsed, h.docno, variant).as_dict()
    lines = [
        f"{result.n_matches:,} matching documents for {', '.join(a.terms)} under "
        f"{variant.display_with_params()} ({result.seconds * 1000:.1f} ms)"
    ]
    lines.extend(f"note: {w}" for w in a.parsed.warnings)
    if a.unknown:
        lines.append(f"not in any document: {', '.join(a.unknown)}")
    if a.stopped:
        lines.append(f"stop words ignored: {', '.join(a.stopped)}")
    for h in result.hits:
        parts = "  ".join(f"{c.term} {c.weight:.3f}" for c in h.contributions)
        lines.append(f"{h.rank:>3}. {h.score:9.4f}  {_clip(h.docid, 24):<24} {_clip(h.title, 50)}")
        lines.append(f"      {parts}")
        if args.explain:
            expl = searcher.explain_docno(a.parsed, h.docno, variant)
            lines.extend("      " + line for line in expl.as_text().splitlines())
    emit(args, data, "\n".join(lines))
    return EXIT_OK if result.hits else EXIT_EMPTY


def _search_csv(args: argparse.Namespace, searcher: Any, result: Any, data: Any) -> None:
    """Write the hits (or, with ``--explain``, their ledgers) as CSV."""
    from bm25desk.commands.export import write_hits_csv, write_ledger_csv

    if args.explain:
        parsed, variant = result.analysis.parsed, variant_from(args)
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
    variant = variant_from(args)
    searcher = Searcher(_store().open(args.name))
    parsed = searcher.parse(args.query, syntax=not args.no_syntax)
    if not parsed.scored:
        from bm25desk.engine.scoring.search import QueryError, _empty_reason

        raise QueryError(_empty_reason(parsed))
    explanations = []
    for docid in args.docids:
        try:
            explanations.append(searcher.explain(parsed, docid, variant, with_rank=True))
        except KeyError as exc:
            raise CliError(str(exc.args[0])) from None
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

    return Searcher(_store().open(name))


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
