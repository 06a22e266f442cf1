"""One long background task at a time: start, progress, cancel, and the results of a dropped run.

Builds, evaluations, sweeps, file reads and exports share one lifecycle: the user starts the work,
a bar shows its progress, Cancel stops it, and when the window moves on (another index was opened)
the running work is dropped: its late results must not land on the new state. A
:class:`JobController` owns that lifecycle for one kind of work, so each panel only says what
the work is and what to do with its result.

(:class:`~bm25desk.ui.common.latest_only.LatestOnly` is the other lifecycle: a stream of short
requests where only the latest matters, e.g. searching as the user types.)
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QProgressBar

from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.ui.common.jobs import CurrentJobOutcome, Job, JobRunner

Work = Callable[[ProgressFn, CancelToken], object]


class JobController(CurrentJobOutcome):
    """Runs one job at a time and forwards only the signals of the job it still owns.

    Parameters
    ----------
    runner
        Runs the jobs.
    name
        A label for logs.
    write
        Run on the runner's one-thread write pool (index builds, updates and deletes).

    Signals
    -------
    started(object)
        A :class:`Job` was started.
    progressed(int, int)
        ``(done, total)`` of the current job.
    succeeded(object), failed(object), cancelled()
        How the current job ended (never for a dropped one); :meth:`busy` is already False.
    cancel_requested()
        :meth:`cancel` asked the current job to stop.
    finished()
        The current job ended (right after the signal saying how) or was dropped.
    """

    started = Signal(object)
    progressed = Signal(int, int)
    cancelled = Signal()
    cancel_requested = Signal()
    finished = Signal()

    def __init__(
        self, runner: JobRunner, name: str, *, write: bool = False, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.name = name
        self.write = write
        self._job: Job | None = None

    @property
    def job(self) -> Job | None:
        """Return the running job (None when idle)."""
        return self._job

    def busy(self) -> bool:
        """Return whether a job runs."""
        return self._job is not None

    def start(self, work: Work, *, replace: bool = False) -> Job | None:
        """Run ``work(progress, cancel)``; return its job, or None if one runs (unless ``replace``).

        With ``replace``, a running job is dropped first (see :meth:`drop`).
        """
        if self._job is not None:
            if not replace:
                return None
            self.drop()
        job = Job(work, self.name)
        signals = job.signals
        signals.progressed.connect(self._on_job_progressed)
        signals.succeeded.connect(self._on_own_job_succeeded)
        signals.failed.connect(self._on_own_job_failed)
        signals.cancelled.connect(self._on_own_job_cancelled)
        self._job = job
        self.started.emit(job)
        self.runner.start(job, write=self.write)
        return job

    @Slot()
    def cancel(self) -> None:
        """Ask the running job to stop (it reports ``cancelled``, then ``finished``)."""
        if self._job is not None and not self._job.cancel.is_set():
            self._job.cancel.set()
            self.cancel_requested.emit()

    def drop(self) -> None:
        """Cancel the running job and forget it: nothing more is heard from it."""
        job, self._job = self._job, None
        if job is not None:
            job.cancel.set()
            self.finished.emit()

    def attach_progress(self, bar: QProgressBar, unit: str) -> None:
        """Show the jobs' progress on ``bar`` as ``done / total unit`` (hidden when idle)."""

        def started(_job: object) -> None:
            bar.setRange(0, 0)
            bar.setFormat("Starting…")
            bar.show()

        def progressed(done: int, total: int) -> None:
            bar.setRange(0, max(total, 1))
            bar.setValue(done)
            bar.setFormat(f"%v / %m {unit}")

        self.started.connect(started)
        self.progressed.connect(progressed)
        self.cancel_requested.connect(lambda: bar.setFormat("Cancelling…"))
        self.finished.connect(bar.hide)
        bar.setTextVisible(True)
        bar.hide()

    # -- the current job's signals ---------------------------------------------------------------

    def _current(self) -> bool:
        return self._job is not None and self.sender() is self._job.signals

    # (Not overrides of CurrentJobOutcome's slots: PySide gives an overriding slot no sender.)

    def _end(self) -> bool:
        """Forget the current job if it sent the signal being handled; return whether it did.

        The controller is idle (``busy()`` False, a new job can start) before any of the
        finishing signals is emitted, so their slots see the state that follows the job.
        """
        if not self._current():
            return False
        self._job = None
        return True

    @Slot(int, int)
    def _on_job_progressed(self, done: int, total: int) -> None:
        if self._current():
            self.progressed.emit(done, total)

    @Slot(object)
    def _on_own_job_succeeded(self, result: object) -> None:
        if self._end():
            self.succeeded.emit(result)
            self.finished.emit()

    @Slot(object)
    def _on_own_job_failed(self, exc: object) -> None:
        if self._end():
            self.failed.emit(exc)
            self.finished.emit()

    @Slot()
    def _on_own_job_cancelled(self) -> None:
        if self._end():
            self.cancelled.emit()
            self.finished.emit()
