"""Spark (local[2]) builds: the same segments, scores and skip reports as ``bm25desk index``.

One Spark session serves the module (``local[2,4]``: two cores, a failed task retried up to
three times). pyspark comes with the test extra and Java 17 with the CI image: if either is
missing these tests fail, they are not skipped.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from dist_helpers import (
    analyzer,
    assert_same_index,
    assert_table_files_build_as_reference,
    clean_corpus,
    interrupted_cli_build,
    leftovers,
    messy_corpus,
    messy_lines,
    numbered_skips,
    one_process,
    progress_then_cancel,
    records,
    segment_files,
    skips,
)

from bm25desk import spark as bspark
from bm25desk.cli import main
from bm25desk.engine import IndexStore
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.parts import AnalyzerMismatchError

pytestmark = pytest.mark.slow


@pytest.fixture
def store(tmp_path: Path) -> IndexStore:
    return IndexStore(tmp_path / "indexes")


def test_a_corpus_file_builds_as_bm25desk_index_builds_it(spark, tmp_path, store) -> None:
    clean = clean_corpus(tmp_path / "clean.jsonl")
    one_process(clean, store)
    bspark.build_index(
        str(clean), "spark", analyzer=analyzer(), partitions=3, spark=spark, store=store
    )
    assert segment_files(store.root / "spark") == segment_files(store.root / "reference")
    assert store.open("spark").manifest["build"]["parts"] == 3

    messy = messy_corpus(tmp_path / "messy.jsonl")
    reference = one_process(messy, store)
    got = bspark.build_index(
        messy, "spark", analyzer=analyzer(), partitions=3, spark=spark, store=store, replace=True
    )
    assert skips(got) == skips(reference)
    assert (got.read, got.indexed) == (reference.read, reference.indexed)
    assert_same_index(store, "spark")
    assert leftovers(store.root) == []


def test_a_dataframe_builds_the_same_index(spark, tmp_path, store) -> None:
    clean = clean_corpus(tmp_path / "clean.jsonl")
    one_process(clean, store)
    frame = spark.createDataFrame(records(600))
    got = bspark.build_index(
        frame,
        "frame",
        id_col="_id",
        title_col="title",
        analyzer=analyzer(),
        partitions=3,
        spark=spark,
        store=store,
    )
    assert got.indexed == 600
    assert segment_files(store.root / "frame") == segment_files(store.root / "reference")

    table = tmp_path / "table.jsonl"  # one row a line: row numbers are line numbers
    table.write_text("\n".join(messy_lines()) + "\n", encoding="utf-8")
    reference = one_process(table, store)
    got = bspark.build_index(
        str(table),
        "table",
        fmt="json",
        id_col="_id",
        title_col="title",
        analyzer=analyzer(),
        partitions=2,
        spark=spark,
        store=store,
    )
    assert numbered_skips(got) == numbered_skips(reference)
    assert got.skipped[0].where == f"{table} row 41"
    assert_same_index(store, "table")
    assert store.open("table").source["kind"] == "external"


def test_parquet_and_tsv_paths_build_the_same_index(spark, tmp_path, store) -> None:
    """Spark's own readers, its own partitions (a re-cut is the DataFrame test's)."""

    def build(path: str, name: str, **kw):
        return bspark.build_index(path, name, spark=spark, **kw)

    assert_table_files_build_as_reference(build, tmp_path, store)


def test_a_task_killed_while_writing_its_part_is_retried(spark, tmp_path, store) -> None:
    from pyspark.sql import functions

    clean = clean_corpus(tmp_path / "clean.jsonl")
    one_process(clean, store)
    marker = tmp_path / "killed-once"

    def kill_once(docid: str, text: str) -> str:
        if docid == "doc450" and not marker.exists():  # 150 rows into the second part
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return text

    crash = functions.udf(kill_once, "string", useArrow=False)
    rows = spark.sparkContext.parallelize([tuple(r.values()) for r in records(600)], 2)
    frame = rows.toDF(["_id", "title", "text"]).withColumn(
        "text", crash(functions.col("_id"), functions.col("text"))
    )
    got = bspark.build_index(
        frame,
        "retried",
        id_col="_id",
        title_col="title",
        analyzer=analyzer(),
        spark=spark,
        store=store,
    )
    assert marker.exists()  # the task was killed once ...
    assert got.indexed == 600  # ... and its retry changed nothing
    assert segment_files(store.root / "retried") == segment_files(store.root / "reference")
    assert leftovers(store.root) == []


def test_an_executor_that_analyses_differently_fails_the_build(
    spark, tmp_path, store, monkeypatch
) -> None:
    clean = clean_corpus(tmp_path / "clean.jsonl")
    bspark.build_index(str(clean), "kept", analyzer=analyzer(), spark=spark, store=store)
    before = (store.root / "kept" / "manifest.json").read_bytes()
    real = Analyzer.spec
    monkeypatch.setattr(Analyzer, "spec", lambda self: {**real(self), "whoosh": "0.0.1"})
    with pytest.raises(AnalyzerMismatchError, match=r"whoosh '2\.7\.4' here, '0\.0\.1' asked"):
        bspark.build_index(str(clean), "kept", analyzer=analyzer(), spark=spark, store=store)
    assert (store.root / "kept" / "manifest.json").read_bytes() == before
    assert leftovers(store.root) == []


def test_a_cancelled_spark_build_keeps_the_old_index(spark, tmp_path, store) -> None:
    clean = clean_corpus(tmp_path / "clean.jsonl", n=3000)

    def build(**kw):
        return bspark.build_index(
            str(clean), "kept", analyzer=analyzer(), partitions=3, spark=spark, store=store, **kw
        )

    progress_then_cancel(build, store)
    assert spark.sparkContext.statusTracker().getActiveJobsIds() == []


def test_the_cli_builds_with_spark_and_info_says_so(spark, tmp_path, capsys) -> None:
    clean = clean_corpus(tmp_path / "clean.jsonl")
    data = str(tmp_path / "data")
    args = ["--data-dir", data, "index", str(clean), "--engine", "spark", "--master", "local[2]"]
    assert main([*args, "--partitions", "2", "--name", "cli", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] == 600
    assert main(["--data-dir", data, "info", "cli", "--json"]) == 0
    build = json.loads(capsys.readouterr().out)["build"]
    assert (build["engine"], build["parts"], build["spark"]) == ("spark", 2, spark.version)
    assert main(["--data-dir", data, "info", "cli"]) == 0
    assert f"built:    spark {spark.version} (local[2" in capsys.readouterr().out
    assert main([*args, "--scheduler", "tcp://x:1"]) == 2
    assert "--scheduler does not go with --engine spark" in capsys.readouterr().err


def test_ctrl_c_cancels_the_spark_job_and_keeps_the_old_index(tmp_path) -> None:
    interrupted_cli_build(tmp_path, ["--engine", "spark", "--master", "local[2]"], 200_000)
