"""The parts API: parts written anywhere, assembled in order, equal a one-process build."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
from dist_helpers import (
    analyzer,
    assert_same_index,
    clean_corpus,
    leftovers,
    messy_corpus,
    numbered_skips,
    one_process,
    segment_files,
    skips,
)

from bm25desk.cli import main
from bm25desk.engine import IndexStore, StoreError, build_index, update_index
from bm25desk.engine.index.assemble import assemble_index
from bm25desk.engine.index.parts import (
    PART_FILE,
    AnalyzerMismatchError,
    PartError,
    PartInfo,
    RowDocuments,
    read_part,
    write_file_part,
    write_part,
)
from bm25desk.engine.index.source import source_info
from bm25desk.engine.index.store import IndexLockedError
from bm25desk.engine.progress import Cancelled
from bm25desk.engine.readers.corpus import Document, split_ranges


def file_parts(path: Path, staging: Path, n: int) -> list[PartInfo]:
    """Write one part per byte range, as executors would (attempt ids like Spark's)."""
    spec = analyzer().spec()
    staging.mkdir(exist_ok=True)
    return [
        write_file_part(path, "beir", spec, staging, part=i, byte_range=r, attempt=f"0.0-{i}")
        for i, r in enumerate(split_ranges(path, n))
    ]


def assemble(path: Path, parts: list[PartInfo], store: IndexStore, name: str = "parts"):
    """Assemble ``parts`` of corpus file ``path`` as index ``name``."""
    source = source_info(path, "beir", None, None, None)
    return assemble_index(name, parts, analyzer(), source, store, build={"engine": "test"})


@pytest.fixture
def store(tmp_path: Path) -> IndexStore:
    return IndexStore(tmp_path / "indexes")


def test_assembled_parts_are_byte_identical_to_a_one_process_build(tmp_path, store) -> None:
    path = clean_corpus(tmp_path / "corpus.jsonl")
    one_process(path, store)
    parts = file_parts(path, tmp_path / "staging", 3)
    assert len(parts) == 3
    report = assemble(path, parts, store)
    assert report.indexed == 600
    assert segment_files(store.root / "parts") == segment_files(store.root / "reference")
    assert_same_index(store, "parts")
    assert not any((tmp_path / "staging").iterdir())  # every attempt removed


@pytest.mark.parametrize("n", [2, 5])
def test_skips_and_repeats_are_reported_as_a_one_process_build_does(tmp_path, store, n) -> None:
    path = messy_corpus(tmp_path / "corpus.jsonl")
    reference = one_process(path, store)
    report = assemble(path, file_parts(path, tmp_path / "staging", n), store)
    assert skips(report) == skips(reference)
    assert (report.read, report.indexed) == (reference.read, reference.indexed)
    reasons = [r for _, r in skips(report)]
    assert sum(r.startswith("duplicate id") for r in reasons) == 3
    assert_same_index(store, "parts")


def test_retried_and_speculative_attempts_change_nothing(tmp_path, store) -> None:
    path = clean_corpus(tmp_path / "corpus.jsonl")
    one_process(path, store)
    staging = tmp_path / "staging"
    parts = file_parts(path, staging, 3)
    spec = analyzer().spec()
    ranges = split_ranges(path, 3)
    # A killed attempt of part 1 (no part.json) and a speculative copy that also finished.
    killed = write_file_part(path, "beir", spec, staging, part=1, byte_range=ranges[1], attempt=1)
    (killed.path / PART_FILE).unlink()
    speculative = write_file_part(path, "beir", spec, staging, part=1, byte_range=ranges[1])
    assert len(list((staging / "part-00001").iterdir())) == 3
    with pytest.raises(PartError, match="not a finished part"):
        read_part(killed.path)
    report = assemble(path, [parts[0], speculative, parts[2]], store)
    assert report.indexed == 600
    assert segment_files(store.root / "parts") == segment_files(store.root / "reference")
    assert not any(staging.iterdir())  # the accepted, killed and losing attempts are all gone


def test_an_attempt_that_is_not_the_accepted_one_is_refused(tmp_path, store) -> None:
    path = clean_corpus(tmp_path / "corpus.jsonl")
    parts = file_parts(path, tmp_path / "staging", 2)
    impostor = PartInfo(**{**parts[1].__dict__, "attempt": "9.9-99"})
    with pytest.raises(PartError, match="another attempt"):
        assemble(path, [parts[0], impostor], store)
    with pytest.raises(PartError, match="numbered 0, 1, 2"):
        assemble(path, [parts[1], parts[0]], store)
    unfinished = file_parts(path, tmp_path / "staging2", 2)
    shutil.rmtree(unfinished[1].path)
    with pytest.raises(PartError, match="not a finished part"):
        assemble(path, unfinished, store)
    assert store.names() == []
    assert leftovers(store.root) == []


def test_a_failed_assembly_leaves_the_old_index_as_it_was(tmp_path, store) -> None:
    path = clean_corpus(tmp_path / "corpus.jsonl")
    assemble(path, file_parts(path, tmp_path / "staging", 2), store)
    before = (store.root / "parts" / "manifest.json").read_text("utf-8")
    parts = file_parts(path, tmp_path / "staging", 2)
    shutil.rmtree(parts[0].path / parts[0].segments[0])
    with pytest.raises(PartError, match="missing"):
        assemble(path, parts, store)
    assert (store.root / "parts" / "manifest.json").read_text("utf-8") == before
    assert store.open("parts").n_docs == 600


def test_parts_refused_by_a_busy_index_can_be_assembled_again(tmp_path, store) -> None:
    path = clean_corpus(tmp_path / "corpus.jsonl")
    parts = file_parts(path, tmp_path / "staging", 2)
    with store.writing("parts"), pytest.raises(IndexLockedError):
        assemble(path, parts, store)
    assert all(read_part(p.path) == p for p in parts)  # still whole
    assert assemble(path, parts, store).indexed == 600
    assert not any((tmp_path / "staging").iterdir())


def test_an_executor_with_another_nltk_is_refused(tmp_path) -> None:
    spec = {**analyzer().spec(), "nltk": "0.0.1"}
    with pytest.raises(AnalyzerMismatchError, match=r"nltk '[\d.]+' here, '0.0.1' asked"):
        write_part([], spec, tmp_path, part=0)
    assert list(tmp_path.iterdir()) == []


# max_postings 3: a titled document's title postings count at once, so every document
# starts a new segment, and one starts right after the removal.
@pytest.mark.parametrize("max_postings", [None, 3])
def test_an_attempt_stops_when_the_driver_removes_the_staging_folder(
    tmp_path, max_postings
) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    spec = analyzer().spec()

    n, removed_at = (5000, 1000) if max_postings is None else (300, 20)

    def documents():
        for i in range(n):
            if i == removed_at:
                shutil.rmtree(staging)  # the build ended while this attempt was writing
            yield Document(f"d{i}", "river bank water", title="river bank")

    with pytest.raises(Cancelled):
        write_part(documents(), spec, staging, part=0, max_postings=max_postings)
    assert not staging.exists()  # a segment started after the removal does not bring it back
    with pytest.raises(PartError, match="does not exist"):
        write_part([], spec, staging, part=1)


def test_parts_analysed_differently_are_not_assembled(tmp_path, store) -> None:
    path = clean_corpus(tmp_path / "corpus.jsonl")
    parts = file_parts(path, tmp_path / "staging", 2)
    source = source_info(path, "beir", None, None, None)
    other = type(analyzer()).create(stopwords="none", stemmer="none")
    with pytest.raises(PartError, match="analysed differently"):
        assemble_index("x", parts, other, source, store)


def test_rows_are_checked_like_records(tmp_path) -> None:
    rows = [
        {"id": "a", "text": "first river", "title": "Bank  of\nthe river"},
        {"id": 7, "text": 3.5},
        {"id": None, "text": "no id"},
        {"id": "b", "text": "  "},
        {"id": "a", "text": "again"},
        {"id": "c", "text": ["not", "text"]},
        {"id": "d", "text": math.nan, "title": "only a title"},
        {"text": "missing id"},
    ]
    docs = RowDocuments(rows, title_col="title", origin="t")
    got = [(d.docid, d.title, d.text) for d in docs]
    assert got == [
        ("a", "Bank of the river", "Bank of the river\nfirst river"),
        ("7", "", "3.5"),
        ("d", "only a title", "only a title"),
    ]
    assert skips(docs.report) == [
        ("t row 3", "empty id"),
        ("t row 4", "empty document"),
        ("t row 5", "duplicate id 'a' (first seen at row 1)"),
        ("t row 6", "text is not a string"),
        ("t row 8", "empty id"),
    ]
    assert (docs.rows, docs.report.read) == (8, 3)
    several = RowDocuments([("x", "one", " ", "two")], id_col=0, text_col=(1, 2, 3))
    assert [d.text for d in several] == ["one\ntwo"]


def test_row_parts_are_numbered_from_the_first_row(tmp_path, store) -> None:
    table = [{"id": f"r{i % 250}", "text": f"water {i}"} for i in range(300)]
    spec = analyzer().spec()
    parts = [
        write_part(RowDocuments(table[a : a + 100], origin="table"), spec, tmp_path, part=i)
        for i, a in enumerate(range(0, 300, 100))
    ]
    assert [p.records for p in parts] == [100, 100, 100]
    source = {"path": "", "format": "table", "kind": "external"}
    report = assemble_index("rows", parts, analyzer(), source, store)
    assert report.indexed == 250
    assert skips(report)[0] == ("table row 251", "duplicate id 'r0' (first seen at row 1)")
    assert numbered_skips(report)[-1] == (300, "duplicate id 'r49' (first seen at line 50)")
    with pytest.raises(StoreError, match="cannot read by itself: rebuild it the same way"):
        update_index("rows", store=store)


def test_info_says_how_an_index_was_built(tmp_path, store, capsys) -> None:
    path = clean_corpus(tmp_path / "corpus.jsonl")
    assemble(path, file_parts(path, tmp_path / "staging", 2), store)
    one_process(path, store)
    for name, engine, line in (
        ("parts", "test", "test (2 parts on 1 host)"),
        ("reference", "bm25desk", "(one process)"),
    ):
        assert main(["--data-dir", str(store.root.parent), "info", name, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["build"]["engine"] == engine
        assert data["build"]["versions"]["nltk"] == analyzer().spec()["nltk"]
        assert main(["--data-dir", str(store.root.parent), "info", name]) == 0
        assert line in capsys.readouterr().out


def _spawned_workers() -> list[int]:
    """Return the pids of this process's multiprocessing "spawn" children."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"spawn_main" in cmd:
            out.append(int(entry))
    return out


@pytest.mark.slow
def test_a_killed_worker_of_the_built_in_build_is_retried(tmp_path, store) -> None:
    path = messy_corpus(tmp_path / "corpus.jsonl", n=30_000)
    reference = one_process(path, store)
    outcome: dict[str, object] = {}

    def build() -> None:
        outcome["report"] = build_index(
            path, name="parallel", analyzer=analyzer(), store=store, workers=2
        )

    thread = threading.Thread(target=build)
    thread.start()
    killed: list[int] = []
    deadline = time.monotonic() + 60
    while not killed and time.monotonic() < deadline and thread.is_alive():
        # Kill the workers once a part is being written (a segment folder, no part.json yet).
        attempts = list(store.root.glob(".tmp-parallel-*/part-*/attempt-*"))
        if any(any(p.glob("seg-*")) and not (p / PART_FILE).exists() for p in attempts):
            for pid in _spawned_workers():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        time.sleep(0.02)
    thread.join(120)
    assert killed, "the workers finished before they could be killed"
    report = outcome["report"]
    assert skips(report) == skips(reference)
    assert_same_index(store, "parallel")
    assert leftovers(store.root) == []
