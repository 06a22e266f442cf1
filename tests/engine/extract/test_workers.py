"""Tests for the limits of one extraction (size, unpacked size, time, memory) and its workers.

Extraction bodies run in worker processes, which receive them by name: the bodies these tests use
are module-level functions of this module (a worker imports it by name to run them).
"""

from __future__ import annotations

import io
import os
import shutil
import time
from pathlib import Path

import pytest
from extract_helpers import MIXED, extract

from bm25desk.engine.extract import limits
from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.limits import Body, Deadline
from bm25desk.engine.extract.pool import WorkerPool, run_limited
from bm25desk.engine.extract.registry import EXTRACTORS, IsolatedExtractor
from bm25desk.engine.readers.document import ReadReport
from bm25desk.engine.readers.folder import read_folder

# -- bodies run in worker processes ----------------------------------------------------------------


def slow(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
    """Cooperative: checks the deadline between units of work; says when it stopped."""
    try:
        while True:
            time.sleep(0.01)
            deadline.check()
    finally:
        Path(str(stream.name) + ".stopped").write_text("stopped")  # type: ignore[attr-defined]


def stuck(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
    """Never checks the deadline: only the caller's kill can end it."""
    time.sleep(60)
    return "", ""


def broken(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
    raise ValueError("boom")


def greedy(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
    """Asks for a gigabyte, in pieces, as a parser of a hostile file would."""
    hoard = [bytearray(64 * 2**20) for _ in range(16)]
    return "", str(len(hoard))


def dies(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
    os._exit(7)


def echo(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
    return f"pid {os.getpid()}", stream.read().decode()


def rendezvous(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
    """Wait (up to 20 s) until two processes have taken files: proof that two work at once."""
    here = Path(str(stream.name)).parent  # type: ignore[attr-defined]
    (here / f"{os.getpid()}.pid").touch()
    end = time.monotonic() + 20
    while len(list(here.glob("*.pid"))) < 2 and time.monotonic() < end:
        time.sleep(0.01)
    return f"pid {os.getpid()}", stream.read().decode()


def _file(tmp_path: Path, name: str, text: str = "x") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def warm() -> None:
    """Start the shared worker before a test times anything (starting Python is not extracting)."""
    run_limited(echo, Path(__file__))


# -- limits ----------------------------------------------------------------------------------------


def test_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "SIZE_LIMIT", 1000)
    with pytest.raises(ExtractError, match=r"^too large \(0.0 MB; the limit is"):
        extract("papers/report.pdf")


def test_unpacked_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "UNPACKED_LIMIT", 1000)
    with pytest.raises(ExtractError, match=r"^too large when unpacked"):
        extract("papers/survey.docx")


@pytest.mark.parametrize(
    ("body", "limit"),
    [(slow, 0.2), (stuck, 0.1)],
    ids=["checks the deadline", "never checks it: killed"],
)
def test_the_time_limit_stops_an_extractor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: None, body: Body, limit: float
) -> None:
    monkeypatch.setattr(limits, "TIME_LIMIT", limit)
    path = _file(tmp_path, "slow.txt")
    started = time.monotonic()
    with pytest.raises(ExtractError, match=rf"^timed out after {limit} s$"):
        run_limited(body, path)
    assert time.monotonic() - started < 2
    if body is slow:  # it stopped on its own check (the stuck one was killed: see below)
        assert (tmp_path / "slow.txt.stopped").read_text() == "stopped"


def test_a_stuck_extractor_is_killed_and_replaced(tmp_path: Path) -> None:
    """Nothing outlives its time limit: the worker is killed, the next file gets a new one."""
    path = _file(tmp_path, "a.txt", "hello")
    with WorkerPool(1) as pool:
        first = pool.run(echo, path)[0]
        (pid,) = pool.pids
        ticket = pool.submit(stuck, path, limits.Limits(1000, 1000, 100, 0.1, 2**30))
        with pytest.raises(ExtractError, match=r"^timed out after 0.1 s$"):
            pool.result(ticket)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # killed and reaped: no such process any more
        second = pool.run(echo, path)
    assert second == (second[0], "hello")
    assert second[0] != first


def test_timeout_is_a_skip_reason_in_a_folder_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "TIME_LIMIT", 0.1)
    monkeypatch.setitem(EXTRACTORS, ".slow", IsolatedExtractor(slow))
    (tmp_path / "a.slow").write_text("x")
    shutil.copy(MIXED / "notes.txt", tmp_path / "b.txt")
    report = ReadReport()
    docs = list(read_folder(tmp_path, report=report))
    assert [d.docid for d in docs] == ["b.txt"]
    assert [(Path(s.where).name, s.reason) for s in report.skipped] == [
        ("a.slow", "timed out after 0.1 s")
    ]


def test_errors_of_the_extractor_reach_the_caller(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="boom"):
        run_limited(broken, _file(tmp_path, "x.bin"))


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="the memory limit needs Linux")
def test_memory_limit_is_a_skip_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MEMORY_LIMIT", 128 * 2**20)
    with pytest.raises(ExtractError, match=r"^needs more than 128 MB to extract$"):
        run_limited(greedy, _file(tmp_path, "big.txt"))
    assert run_limited(echo, _file(tmp_path, "small.txt", "fine"))[1] == "fine"


def test_a_worker_that_dies_costs_one_file(tmp_path: Path) -> None:
    path = _file(tmp_path, "a.txt", "hello")
    with WorkerPool(1) as pool:
        with pytest.raises(ExtractError, match=r"^the extractor crashed \(exit code 7\)$"):
            pool.run(dies, path)
        assert pool.run(echo, path)[1] == "hello"


def test_a_folder_read_extracts_in_several_workers_and_keeps_the_order(tmp_path: Path) -> None:
    for i in range(6):
        _file(tmp_path, f"{i}.echo", f"text {i}")
    EXTRACTORS[".echo"] = IsolatedExtractor(rendezvous)
    try:
        docs = list(read_folder(tmp_path, workers=2))
    finally:
        del EXTRACTORS[".echo"]
    assert [(d.docid, d.text) for d in docs] == [(f"{i}.echo", f"text {i}") for i in range(6)]
    assert len({d.title for d in docs}) == 2  # two worker processes shared the files


def test_closing_a_folder_read_stops_its_workers(tmp_path: Path) -> None:
    for i in range(3):
        _file(tmp_path, f"{i}.stuck")
    EXTRACTORS[".stuck"] = IsolatedExtractor(stuck)
    try:
        reader = read_folder(tmp_path, workers=2)
        started = time.monotonic()
        reader.close()  # before the first document: nothing was started
        assert time.monotonic() - started < 1
    finally:
        del EXTRACTORS[".stuck"]


def test_idle_workers_exit_and_are_replaced(tmp_path: Path) -> None:
    path = _file(tmp_path, "a.txt", "hello")
    with WorkerPool(1, idle_exit=0.2) as pool:
        assert pool.run(echo, path)[1] == "hello"
        (worker,) = pool._workers
        worker.proc.join(10)  # it exits on its own once idle for 0.2 s
        assert worker.proc.exitcode == 0
        assert pool.run(echo, path)[1] == "hello"  # a new worker takes over
        assert pool.pids != [worker.proc.pid]


def test_no_interpreter_to_start_is_a_skip_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.executable", str(tmp_path / "no-python-here"))
    with (
        WorkerPool(1) as pool,
        pytest.raises(ExtractError, match=r"^could not start an extraction process \("),
    ):
        pool.run(echo, _file(tmp_path, "a.txt"))
