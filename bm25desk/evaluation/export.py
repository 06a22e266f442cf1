"""Exports of an experiment: run files, run cards, a per-query CSV, the result as JSON."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import ir_measures

import bm25desk
from bm25desk.evaluation.configs import variant_params
from bm25desk.evaluation.jsonsafe import json_float
from bm25desk.evaluation.results import ConfigResult, ExperimentResult
from bm25desk.evaluation.runs import run_tag, write_run

__all__ = ["export_experiment", "run_card", "run_file_stem", "write_per_query_csv"]


def run_file_stem(config: ConfigResult) -> str:
    """Return a file-name stem for a configuration (``Lucene_k1=0.9_b=0.4``)."""
    stem = re.sub(r"[^A-Za-z0-9.=+-]+", "_", config.name).strip("_")
    return stem or "run"


def run_card(
    result: ExperimentResult, config: ConfigResult, *, run_file: str = ""
) -> dict[str, Any]:
    """Describe how a run was made: index, analyser, variant, conventions, versions, date.

    Returns
    -------
    dict
        JSON-ready data (written as ``<run>.card.json`` by :func:`export_experiment`).
    """
    return {
        "run_file": run_file,
        "tag": run_tag(config.name),
        "bm25desk": bm25desk.__version__,
        "ir_measures": ir_measures.__version__,
        "created": result.created,
        "index": {
            "fingerprint": result.index.fingerprint,
            "n_docs": result.index.n_docs,
            "analyzer": dict(result.index.analyzer),
        },
        "variant": {
            "key": config.key,
            "name": config.name,
            "params": variant_params(config.variant),
        },
        "k": result.k,
        "queries": {
            "source": result.queries_source,
            "searched": len(result.searched),
            "evaluated": len(result.qids),
        },
        "qrels": {
            "source": result.qrels_source,
            "missing_from_index": result.missing_judged_count,
            "missing_relevant": result.missing_relevant,
        },
        "conventions": result.options.as_dict(),
        "scores_in_file": "raw engine scores (rank order = engine order)",
        "metrics": {m: json_float(v) for m, v in config.aggregate.items()},
    }


def write_per_query_csv(result: ExperimentResult, path: str | Path) -> Path:
    """Write one row per (configuration, query): ``config, key, qid, judged, missing, metrics...``.

    ``judged`` is 0 for queries counted 0 under ``average="all"``; ``missing_judged`` counts the
    query's judged documents absent from the index.
    """
    p = Path(path)
    unjudged = set(result.unjudged)
    with p.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["config", "key", "qid", "judged", "missing_judged", *result.metrics])
        for c in result.configs:
            for i, qid in enumerate(result.qids):
                row: list[object] = [
                    c.name,
                    c.key,
                    qid,
                    int(qid not in unjudged),
                    len(result.missing_judged.get(qid, ())),
                ]
                row.extend(repr(float(c.evaluation.per_query[m][i])) for m in result.metrics)
                writer.writerow(row)
    return p


def export_experiment(
    result: ExperimentResult, directory: str | Path, *, gzip_runs: bool = False
) -> list[Path]:
    """Write every run, its run card and a per-query CSV into ``directory`` (created if needed).

    For each configuration: ``<stem>.run`` (or ``.run.gz``) and ``<stem>.card.json`` next to it;
    then ``per_query.csv`` and ``experiment.json`` (the whole result without runs).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    ValueError
        The result kept no runs, or an id cannot be written in a run file.
    OSError
        The directory or a file cannot be written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for c in result.configs:
        if c.run is None:
            raise ValueError(f"{c.name}: the experiment did not keep its run")
        stem = run_file_stem(c)
        run_path = out / (stem + (".run.gz" if gzip_runs else ".run"))
        written.append(write_run(c.run, run_path, tag=run_tag(c.name)))
        card_path = out / f"{stem}.card.json"
        card = run_card(result, c, run_file=run_path.name)
        card_path.write_text(
            json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        written.append(card_path)
    written.append(write_per_query_csv(result, out / "per_query.csv"))
    summary = out / "experiment.json"
    summary.write_text(
        json.dumps(result.as_dict(per_query=False), indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    written.append(summary)
    return written
