"""Background work for the UI: engine calls on pool threads, results delivered by signal.

A :class:`Job` wraps ``fn(progress, cancel)`` and runs it on a :class:`QThreadPool` thread. It never
touches a widget or a model: the result (an immutable engine object) travels through
``JobSignals.succeeded``, which is delivered on the GUI thread because the signals object was
created there. :class:`JobRunner` owns every running job until it finishes, serialises index
writes on a one-thread pool, and can cancel everything and wait (the window's ``closeEvent``).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from bm25desk.engine.progress import Cancelled, CancelToken, ProgressFn

log = logging.getLogger(__name__)


class JobSignals(QObject):
    """The signals of one :class:`Job`.

    Signals
    -------
    progressed(int, int)
        ``(done, total)`` as reported by the engine (total 0 when unknown).
    succeeded(object)
        The function's return value.
    failed(object)
        The exception it raised (never :class:`Cancelled`).
    cancelled()
        The work stopped because its token was set.
    finished()
        Always emitted last, whatever happened.
    """

    progressed = Signal(int, int)
    succeeded = Signal(object)
    failed = Signal(object)
    cancelled = Signal()
    finished = Signal()


class Job(QRunnable):
    """Runs ``fn(progress, cancel)`` on a pool thread. Never touches widgets.

    Parameters
    ----------
    fn
        The work. It receives a progress function and a :class:`CancelToken`.
    name
        A short label for logs and the status bar.
    """

    def __init__(self, fn: Callable[[ProgressFn, CancelToken], object], name: str = "") -> None:
        super().__init__()
        self.setAutoDelete(False)  # JobRunner owns the lifetime (git-cola's note)
        self.signals = JobSignals()  # created on the GUI thread -> slots run there
        self.cancel = CancelToken()
        self.name = name
        self._fn = fn

    def run(self) -> None:
        """Run the function and report the outcome (QRunnable.run)."""
        try:
            result = self._fn(self.signals.progressed.emit, self.cancel)
        except Cancelled:
            self.signals.cancelled.emit()
        except Exception as exc:  # report, do not crash the pool thread
            log.debug("job %r failed:\n%s", self.name, traceback.format_exc())
            exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
            self.signals.failed.emit(exc)
        else:
            self.signals.succeeded.emit(result)
        finally:
            self.signals.finished.emit()


class CurrentJobOutcome(QObject):
    """Forwards how a job ended, but only for the job a subclass still calls current.

    Signals
    -------
    succeeded(object)
        The current job's result.
    failed(object)
        The current job's exception.
    """

    succeeded = Signal(object)
    failed = Signal(object)

    def _current(self) -> bool:
        """Return whether the job whose signal is being handled is the current one."""
        raise NotImplementedError

    @Slot(object)
    def _on_job_succeeded(self, result: object) -> None:
        if self._current():
            self.succeeded.emit(result)

    @Slot(object)
    def _on_job_failed(self, exc: object) -> None:
        if self._current():
            self.failed.emit(exc)


class JobRunner(QObject):
    """Starts jobs and keeps them alive until they finish.

    Index builds, updates and deletes go to a one-thread pool (``write=True``) so that two writes
    never race; searches and other reads use the global pool.

    Signals
    -------
    busy_changed(bool)
        Emitted when the first job starts or the last one finishes.
    """

    busy_changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.write_pool = QThreadPool(self)
        self.write_pool.setMaxThreadCount(1)
        self.read_pool = QThreadPool.globalInstance()
        self._jobs: set[Job] = set()

    @property
    def jobs(self) -> frozenset[Job]:
        """Return the jobs started and not yet finished."""
        return frozenset(self._jobs)

    def start(self, job: Job, *, write: bool = False) -> Job:
        """Start ``job`` (on the write pool when it modifies an index) and return it."""
        was_idle = not self._jobs
        self._jobs.add(job)
        job.signals.finished.connect(self._on_job_finished)
        (self.write_pool if write else self.read_pool).start(job)
        if was_idle:
            self.busy_changed.emit(True)
        return job

    def run(
        self,
        fn: Callable[[ProgressFn, CancelToken], object],
        *,
        name: str = "",
        write: bool = False,
        on_success: Callable[[object], None] | None = None,
        on_failure: Callable[[object], None] | None = None,
    ) -> Job:
        """Create a job for ``fn``, connect the callbacks and start it."""
        job = Job(fn, name)
        if on_success is not None:
            job.signals.succeeded.connect(on_success)
        if on_failure is not None:
            job.signals.failed.connect(on_failure)
        return self.start(job, write=write)

    @Slot()
    def _on_job_finished(self) -> None:
        signals = self.sender()
        if not self._jobs:
            return
        self._jobs = {j for j in self._jobs if j.signals is not signals}
        if not self._jobs:
            self.busy_changed.emit(False)

    @Slot()
    def cancel_all(self) -> None:
        """Ask every running job to stop."""
        for job in list(self._jobs):
            job.cancel.set()

    def wait(self, msecs: int = -1) -> bool:
        """Wait for both pools to finish (``-1``: forever); return whether they did.

        Finished-signals queued for the GUI thread are delivered by the caller's event loop; the
        job set is emptied here too, so that a closing window does not wait on them.
        """
        ok = self.write_pool.waitForDone(msecs)
        ok = self.read_pool.waitForDone(msecs) and ok
        if ok and self._jobs:
            self._jobs.clear()
            self.busy_changed.emit(False)
        return ok
