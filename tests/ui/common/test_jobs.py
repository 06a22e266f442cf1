"""JobRunner, Job and LatestOnly: results by signal, errors reported, stale results dropped."""

from __future__ import annotations

import threading
import time

import pytest

from bm25desk.ui.common.jobs import Job
from bm25desk.ui.common.latest_only import LatestOnly


def test_job_reports_progress_then_success_then_finished(qtbot, runner) -> None:
    def work(progress, cancel):
        progress(2, 2)
        return threading.current_thread() is threading.main_thread()

    job = Job(work, "test")
    results: list[object] = []
    job.signals.succeeded.connect(results.append)
    with qtbot.waitSignals(
        [job.signals.progressed, job.signals.succeeded, job.signals.finished], order="strict"
    ):
        runner.start(job)
    assert results == [False]  # the work ran on a pool thread


def test_job_failure_is_reported_not_raised(qtbot, runner) -> None:
    def work(progress, cancel):
        raise ValueError("bad input")

    job = Job(work)
    with qtbot.waitSignal(job.signals.failed) as blocker:
        runner.start(job)
    assert isinstance(blocker.args[0], ValueError)


def test_cancel_all_stops_a_cooperative_job(qtbot, runner) -> None:
    started = threading.Event()

    def work(progress, cancel):
        started.set()
        for _ in range(500):
            cancel.check()
            time.sleep(0.01)
        return "finished"

    job = Job(work)
    with qtbot.waitSignal(job.signals.cancelled, timeout=5000):
        runner.start(job)
        assert started.wait(5)
        runner.cancel_all()
    with qtbot.assertNotEmitted(job.signals.succeeded):
        qtbot.waitUntil(lambda: not runner.jobs)


def test_busy_changed_brackets_the_jobs(qtbot, runner) -> None:
    states: list[bool] = []
    runner.busy_changed.connect(states.append)
    runner.run(lambda p, c: None)
    qtbot.waitUntil(lambda: states == [True, False])


def test_latest_only_drops_stale_results(qtbot, runner) -> None:
    latest = LatestOnly(runner, "test")
    gate = threading.Event()
    results: list[object] = []
    latest.succeeded.connect(results.append)

    def slow():
        gate.wait(5)
        return "old"

    latest.request(slow)
    latest.request(lambda: "middle")  # replaced before it ever starts
    latest.request(lambda: "new")
    with qtbot.waitSignal(latest.dropped):
        gate.set()
    qtbot.waitUntil(lambda: results == ["new"])
    assert not latest.busy()


def test_latest_only_reports_only_the_latest_failure(qtbot, runner) -> None:
    latest = LatestOnly(runner, "test")
    errors: list[object] = []
    latest.failed.connect(errors.append)

    gate = threading.Event()

    def fail_later():
        gate.wait(5)
        raise RuntimeError("stale")

    def fail():
        raise RuntimeError("fresh")

    latest.request(fail_later)
    latest.request(fail)
    with qtbot.waitSignal(latest.failed):
        gate.set()
    assert [str(e) for e in errors] == ["fresh"]


@pytest.mark.parametrize("n", [1, 5])
def test_wait_empties_the_runner(qtbot, runner, n) -> None:
    for _ in range(n):
        runner.run(lambda p, c: time.sleep(0.01))
    assert runner.wait(5000)
    assert not runner.jobs


@pytest.mark.parametrize("outcome", ["succeeded", "failed", "cancelled"])
def test_job_controller_is_idle_before_it_says_how_the_job_ended(qtbot, runner, outcome) -> None:
    from bm25desk.engine.progress import Cancelled
    from bm25desk.ui.common.job_controller import JobController

    def work(progress, cancel):
        if outcome == "failed":
            raise OSError("disk full")
        if outcome == "cancelled":
            raise Cancelled()
        return 7

    jobs = JobController(runner, "test")
    seen: list[tuple[str, bool]] = []
    for name in ("succeeded", "failed", "cancelled", "finished"):
        getattr(jobs, name).connect(lambda *_a, name=name: seen.append((name, jobs.busy())))
    with qtbot.waitSignal(jobs.finished, timeout=5000):
        jobs.start(work)
    assert seen == [(outcome, False), ("finished", False)]
    qtbot.wait(50)  # the job's own finished signal arrives later: nothing more is emitted
    assert len(seen) == 2
