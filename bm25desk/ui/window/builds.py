"""Builds, rebuilds, updates, edits by id and deletes of indexes, one at a time, with Cancel.

They run on the write pool; the window decides what to say and what to open afterwards.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from bm25desk.engine import BuildReport, IndexStore, build_index, update_index
from bm25desk.engine.index.edit import EditReport, add_documents, remove_documents
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.ui.common.job_controller import JobController, Work
from bm25desk.ui.common.jobs import Job, JobRunner
from bm25desk.ui.indexes.build_progress import BuildProgress, estimate_docs_per_byte
from bm25desk.ui.indexes.build_request import BuildRequest

VERBS = {
    "update": "Updating",
    "rebuild": "Rebuilding",
    "build": "Building",
    "add": "Adding documents to",
    "remove": "Removing documents from",
}


def edit_work(request: BuildRequest, store: IndexStore) -> Work:
    """Return the work of an edit by id: add a corpus file's documents, or remove ids."""
    if request.kind == "add":

        def add(progress: ProgressFn, cancel: CancelToken) -> EditReport:
            return add_documents(
                request.name,
                request.source,
                fmt=request.fmt,
                columns=request.columns,
                store=store,
                progress=progress,
                cancel=cancel,
            )

        return add

    def remove(progress: ProgressFn, cancel: CancelToken) -> EditReport:
        return remove_documents(
            request.name, request.ids, store=store, progress=progress, cancel=cancel
        )

    return remove


class Builds(QObject):
    """Runs :class:`BuildRequest` s and deletes in the background, showing a :class:`BuildProgress`.

    Signals
    -------
    busy_changed(bool)
        A build started or ended (disable what would start another).
    succeeded(object, object)
        ``(BuildReport, BuildRequest)``; an :class:`EditReport` for kinds ``add`` and ``remove``.
    failed(object, object)
        ``(exception, BuildRequest)``.
    cancelled(object)
        The :class:`BuildRequest` whose build was cancelled.
    deleted(str)
        An index was deleted.
    delete_failed(object)
        A delete failed: the exception.
    """

    busy_changed = Signal(bool)
    succeeded = Signal(object, object)
    failed = Signal(object, object)
    cancelled = Signal(object)
    deleted = Signal(str)
    delete_failed = Signal(object)

    def __init__(
        self,
        runner: JobRunner,
        store: IndexStore,
        progress: BuildProgress,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.store = store
        self.progress = progress
        self.request: BuildRequest | None = None
        self.jobs = JobController(runner, "build", write=True, parent=self)
        self.jobs.progressed.connect(progress.update_progress)
        self.jobs.succeeded.connect(self._on_jobs_succeeded)
        self.jobs.failed.connect(self._on_jobs_failed)
        self.jobs.cancelled.connect(self._on_jobs_cancelled)
        self.jobs.finished.connect(self._on_jobs_finished)
        progress.cancel_requested.connect(self.cancel)

    @property
    def job(self) -> Job | None:
        """Return the running build (None when idle)."""
        return self.jobs.job

    def start(self, request: BuildRequest) -> Job | None:
        """Build, rebuild, update or edit in the background; None if a build already runs."""
        if self.jobs.busy():
            return None
        store = self.store
        previous = None
        if store.exists(request.name):
            info = store.info(request.name)
            previous = (info.n_docs, int(info.source.get("size", 0)))
        work: Work
        if request.kind == "update":
            info = store.info(request.name)
            source, fmt = Path(str(info.source.get("path", ""))), str(info.source.get("format"))

            def work(progress: ProgressFn, cancel: CancelToken) -> object:
                return update_index(request.name, store=store, progress=progress, cancel=cancel)

        elif request.kind in ("add", "remove"):
            source, fmt = request.source, request.fmt or ""
            work = edit_work(request, store)
        else:
            source, fmt = request.source, request.fmt or ""

            def work(progress: ProgressFn, cancel: CancelToken) -> object:
                return build_index(
                    request.source,
                    name=request.name,
                    fmt=request.fmt,
                    analyzer=request.make_analyzer(),
                    columns=request.columns,
                    store=store,
                    progress=progress,
                    cancel=cancel,
                    replace=True,  # the New… dialog warned that the name exists
                    allow_empty=request.allow_empty,
                )

        self.request = request
        verb = VERBS.get(request.kind, "Building")
        # A removal reports ids looked up, not bytes read: no rate in documents to estimate.
        rate = 0.0 if request.kind == "remove" else estimate_docs_per_byte(source, fmt, previous)
        self.progress.start(f"{verb} “{request.name}”…", rate)
        job = self.jobs.start(work)
        self.busy_changed.emit(True)
        return job

    @Slot()
    def cancel(self) -> None:
        """Ask the running build to stop (the previous index stays as it was)."""
        if self.jobs.busy():
            self.jobs.cancel()
            self.progress.cancelling()

    def delete(self, name: str) -> Job:
        """Delete index ``name`` in the background (after the running writes)."""
        store = self.store

        def work(_progress: ProgressFn, _cancel: CancelToken) -> str:
            store.delete(name)
            return name

        return self.runner.run(
            work,
            name=f"delete {name}",
            write=True,
            on_success=lambda n: self.deleted.emit(str(n)),
            on_failure=self.delete_failed.emit,
        )

    def _finish(self) -> BuildRequest | None:
        """Hide the progress and say the builds are idle, before anyone hears how it ended."""
        request, self.request = self.request, None
        if request is not None:
            self.progress.hide()
            self.busy_changed.emit(False)
        return request

    @Slot(object)
    def _on_jobs_succeeded(self, report: BuildReport) -> None:
        self.succeeded.emit(report, self._finish())

    @Slot(object)
    def _on_jobs_failed(self, exc: BaseException) -> None:
        self.failed.emit(exc, self._finish())

    @Slot()
    def _on_jobs_cancelled(self) -> None:
        self.cancelled.emit(self._finish())

    @Slot()
    def _on_jobs_finished(self) -> None:
        self._finish()  # a dropped build (the others were finished above)
