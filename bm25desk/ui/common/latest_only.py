"""Run the latest of a stream of requests in the background, dropping stale results.

Typing and slider drags produce requests faster than some searches finish. :class:`LatestOnly`
keeps at most one job in flight: a request made meanwhile replaces any pending one and starts when
the running job finishes; a result is delivered only if no newer request was made since (a
generation counter), so a stale ranking never overwrites a fresh one.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot

from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.ui.common.jobs import CurrentJobOutcome, Job, JobRunner

Work = Callable[[], object]


class LatestOnly(CurrentJobOutcome):
    """One-in-flight, latest-wins background execution.

    Signals
    -------
    succeeded(object)
        The result of the latest request.
    failed(object)
        The exception of the latest request.
    dropped(int)
        A result of an older generation was discarded (for tests and diagnostics).
    """

    dropped = Signal(int)

    def __init__(self, runner: JobRunner, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.name = name
        self.generation = 0
        self._running: Job | None = None
        self._running_generation = 0
        self._pending: Work | None = None

    def request(self, work: Work) -> int:
        """Ask for ``work()`` to run; return its generation."""
        self.generation += 1
        if self._running is None:
            self._start(work)
        else:
            self._pending = work
        return self.generation

    def invalidate(self) -> None:
        """Make any running or pending work stale (e.g. the index was closed)."""
        self.generation += 1
        self._pending = None

    def busy(self) -> bool:
        """Return whether work is running."""
        return self._running is not None

    def _start(self, work: Work) -> None:
        def fn(_progress: ProgressFn, _cancel: CancelToken) -> object:
            return work()

        job = Job(fn, self.name)
        self._running = job
        self._running_generation = self.generation
        job.signals.succeeded.connect(self._on_job_succeeded)
        job.signals.failed.connect(self._on_job_failed)
        job.signals.finished.connect(self._on_job_finished)
        self.runner.start(job)

    def _current(self) -> bool:
        fresh = self._running_generation == self.generation
        if not fresh:
            self.dropped.emit(self._running_generation)
        return fresh

    @Slot()
    def _on_job_finished(self) -> None:
        self._running = None
        work, self._pending = self._pending, None
        if work is not None:
            self._running_generation = self.generation
            self._start(work)
