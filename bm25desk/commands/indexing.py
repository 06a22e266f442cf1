"""The commands that build and update indexes: ``index`` (itself, Spark or Dask) and ``update``."""

from __future__ import annotations

import argparse
from typing import Any

from bm25desk.commands.common import (
    EXIT_OK,
    BadInput,
    ProgressBar,
    column_map,
    emit,
    err,
    skip_fields,
    store,
)


def analyzer_from(args: argparse.Namespace) -> Any:
    """Return the analyser the analysis options describe."""
    from bm25desk.engine.analysis.analyzer import LANGUAGES, Analyzer

    lang = args.language
    if lang not in LANGUAGES:
        raise BadInput(f"unknown language {lang!r}: use one of {', '.join(LANGUAGES)}")
    stop = args.stopwords
    if stop == "auto":
        from whoosh.lang.stopwords import stoplists

        stop = lang if lang in stoplists else "none"
    stem = args.stemmer
    if stem == "auto":
        stem = "porter" if lang == "en" else "snowball"
    if args.min_length < 1:
        raise BadInput("--min-length must be at least 1")
    return Analyzer.create(
        tokenizer=args.tokenizer,
        lowercase=args.lowercase,
        stopwords=stop,
        stemmer=stem,
        language=lang,
        min_length=args.min_length,
    )


def report_dict(report: Any) -> dict[str, Any]:
    """Return the JSON shape of a build or update report."""
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


def print_skips(report: Any, limit: int = 10) -> None:
    """Print the first ``limit`` skipped files or records on stderr."""
    for s in report.skipped[:limit]:
        err(f"  skipped {s.where}: {s.reason}")
    if len(report.skipped) > limit:
        err(f"  … and {len(report.skipped) - limit:,} more")


def cmd_index(args: argparse.Namespace) -> int:
    """Build an index."""
    from bm25desk.engine.index.build import build_index

    if args.name is not None and not args.name.strip():
        raise BadInput("--name is empty: give the index a name, or leave --name out")
    analyzer = analyzer_from(args)
    extra = extra_columns(args)
    if args.engine != "bm25desk":
        if extra:
            raise BadInput(f"--meta-column/--field-column do not go with --engine {args.engine}")
        report = index_with_engine(args, analyzer)
        if not args.json:
            print_skips(report)
        emit(args, report_dict(report), report.summary())
        return EXIT_OK
    for option in ("master", "scheduler", "partitions", "staging"):
        if getattr(args, option) is not None:
            raise BadInput(f"--{option} needs --engine spark or --engine dask")
    bar = ProgressBar("indexing")
    try:
        report = build_index(
            args.source,
            name=args.name,
            fmt=args.fmt,
            analyzer=analyzer,
            columns=column_map(args.columns),
            extra=extra,
            include=args.include,
            exclude=args.exclude,
            store=store(),
            progress=bar,
            workers=None,  # every core for a large MS MARCO/BEIR file
            replace=args.replace,
            allow_empty=args.allow_empty,
        )
    finally:
        bar.close()
    if not args.json:
        print_skips(report)
    emit(args, report_dict(report), report.summary())
    return EXIT_OK


def extra_columns(args: argparse.Namespace) -> Any:
    """Return the ``--meta-column`` / ``--field-column`` choice (an ExtraColumns, maybe empty)."""
    from bm25desk.engine.readers.document import ExtraColumns

    names = [*(args.meta_column or ()), *(args.field_column or ())]
    for name in names:
        if not name.strip() or "\x1f" in name:
            raise BadInput(f"bad column name {name!r} for --meta-column/--field-column")
    return ExtraColumns(
        tuple(dict.fromkeys(c.strip() for c in args.meta_column or ())),
        tuple(dict.fromkeys(c.strip() for c in args.field_column or ())),
    )


def index_with_engine(args: argparse.Namespace, analyzer: Any) -> Any:
    """Build with Spark or Dask (``--engine``); progress counts finished tasks."""
    import importlib

    wrong = "scheduler" if args.engine == "spark" else "master"
    if getattr(args, wrong) is not None or args.include or args.exclude:
        bad = f"--{wrong}" if getattr(args, wrong) is not None else "--include/--exclude"
        raise BadInput(f"{bad} does not go with --engine {args.engine}")
    try:
        module = importlib.import_module(f"bm25desk.{args.engine}")
        importlib.import_module("pyspark" if args.engine == "spark" else "distributed")
    except ImportError:
        raise BadInput(
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
            raise BadInput(f"could not start Spark ({first}); is Java 17 installed?") from None
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
            store=store(),
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
            args.name, store=store(), progress=bar, discard_edits=args.discard_edits
        )
    finally:
        bar.close()
    if report.rebuilt or report.added or report.changed or report.removed:
        text = report.summary()
    else:
        text = f"{args.name!r} is up to date ({report.n_docs:,} documents). {report.note}".strip()
    if not args.json:
        print_skips(report)
    emit(args, report_dict(report), text)
    return EXIT_OK
