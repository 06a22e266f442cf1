"""Dask builds (a local cluster of two worker processes) equal ``bm25desk index`` builds."""

from __future__ import annotations

import json
import os
import signal
import time
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

from bm25desk import dask as bdask
from bm25desk.cli import main
from bm25desk.engine import IndexStore

pytestmark = pytest.mark.slow


@pytest.fixture
def store(tmp_path: Path) -> IndexStore:
    return IndexStore(tmp_path / "indexes")


def test_a_corpus_file_builds_as_bm25desk_index_builds_it(dask_client, tmp_path, store) -> None:
    clean = clean_corpus(tmp_path / "clean.jsonl")
    one_process(clean, store)
    bdask.build_index(
        clean, "dask", analyzer=analyzer(), partitions=3, client=dask_client, store=store
    )
    assert segment_files(store.root / "dask") == segment_files(store.root / "reference")

    messy = messy_corpus(tmp_path / "messy.jsonl")
    reference = one_process(messy, store)
    got = bdask.build_index(
        messy,
        "dask",
        analyzer=analyzer(),
        partitions=4,
        client=dask_client,
        store=store,
        replace=True,
    )
    assert skips(got) == skips(reference)
    assert_same_index(store, "dask")
    assert leftovers(store.root) == []


def test_dataframes_bags_and_tables_build_the_same_index(dask_client, tmp_path, store) -> None:
    import dask.bag as db
    import dask.dataframe as dd
    import pandas as pd

    one_process(clean_corpus(tmp_path / "clean.jsonl"), store)
    frame = dd.from_pandas(pd.DataFrame(records(600)), npartitions=3)
    bdask.build_index(
        frame,
        "frame",
        id_col="_id",
        title_col="title",
        analyzer=analyzer(),
        client=dask_client,
        store=store,
    )
    assert segment_files(store.root / "frame") == segment_files(store.root / "reference")
    bag = db.from_sequence(records(600), npartitions=4)
    got = bdask.build_index(
        bag,
        "bag",
        id_col="_id",
        title_col="title",
        analyzer=analyzer(),
        partitions=2,
        client=dask_client,
        store=store,
    )
    assert got.indexed == 600
    assert segment_files(store.root / "bag") == segment_files(store.root / "reference")

    table = tmp_path / "table.jsonl"  # one row a line: row numbers are line numbers
    table.write_text("\n".join(messy_lines()) + "\n", encoding="utf-8")
    reference = one_process(table, store)
    got = bdask.build_index(
        str(table),
        "table",
        fmt="json",
        id_col="_id",
        title_col="title",
        analyzer=analyzer(),
        client=dask_client,
        store=store,
    )
    assert numbered_skips(got) == numbered_skips(reference)
    assert_same_index(store, "table")


def test_parquet_and_tsv_paths_build_the_same_index(dask_client, tmp_path, store) -> None:

    def build(path: str, name: str, **kw):
        return bdask.build_index(path, name, partitions=2, client=dask_client, **kw)

    assert_table_files_build_as_reference(build, tmp_path, store)


class Trap(str):
    """A title that kills (or fails) the task splitting it, the first time, mid-part."""

    __slots__ = ()
    marker = ""
    how = "kill"

    def split(self, *args, **kwargs):
        marker = Path(self.marker)
        if not marker.exists():
            marker.touch()
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)  # the worker process dies
            raise RuntimeError("a flaky task")
        return str(self).split(*args, **kwargs)


@pytest.mark.parametrize("how", ["kill", "raise"])
def test_a_task_killed_or_failing_mid_part_is_run_again(dask_client, tmp_path, store, how) -> None:
    import dask.bag as db

    one_process(clean_corpus(tmp_path / "clean.jsonl"), store)
    rows = records(600)
    trap = type("T", (Trap,), {"marker": str(tmp_path / "sprung"), "how": how})
    rows[450] = {**rows[450], "title": trap(rows[450]["title"])}  # 150 rows into part 1
    bag = db.from_sequence(rows, npartitions=2)
    got = bdask.build_index(
        bag,
        "retried",
        id_col="_id",
        title_col="title",
        analyzer=analyzer(),
        client=dask_client,
        store=store,
    )
    assert (tmp_path / "sprung").exists()
    assert got.indexed == 600
    assert segment_files(store.root / "retried") == segment_files(store.root / "reference")
    assert leftovers(store.root) == []


def test_progress_counts_parts_and_a_cancelled_build_keeps_the_old_index(
    dask_client, tmp_path, store
) -> None:
    clean = clean_corpus(tmp_path / "clean.jsonl", n=3000)

    def build(**kw):
        return bdask.build_index(
            clean, "kept", analyzer=analyzer(), partitions=3, client=dask_client, store=store, **kw
        )

    [(_, total)] = progress_then_cancel(build, store)  # cancelled at its first report
    assert total == 3
    # The cancelled tasks end (a running one finds its folder gone); they leave nothing behind.
    deadline = time.monotonic() + 60
    while any(dask_client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(dask_client.processing().values())
    assert leftovers(store.root) == []


def test_ctrl_c_cancels_the_dask_job_and_keeps_the_old_index(tmp_path) -> None:
    interrupted_cli_build(tmp_path, ["--engine", "dask", "--partitions", "2"], 100_000)


def test_the_cli_builds_with_dask_and_info_says_so(tmp_path, capsys) -> None:
    clean = clean_corpus(tmp_path / "clean.jsonl")
    data = str(tmp_path / "data")
    args = ["--data-dir", data, "index", str(clean), "--engine", "dask", "--partitions", "2"]
    assert main([*args, "--name", "cli", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["indexed"] == 600
    assert main(["--data-dir", data, "info", "cli", "--json"]) == 0
    build = json.loads(capsys.readouterr().out)["build"]
    assert (build["engine"], build["parts"], build["workers"]) == ("dask", 2, 2)
    assert main([*args, "--master", "local[2]"]) == 2
    assert "--master does not go with --engine dask" in capsys.readouterr().err
