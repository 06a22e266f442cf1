"""Notice changes in the folder of an open folder index (issue 6, "Staying current").

A :class:`FolderWatcher` watches the folder and its sub-folders with a
:class:`QFileSystemWatcher`. Events are debounced (~1 s), then
:func:`~bm25desk.engine.index.changes.folder_changes` runs in the background, one scan at a
time (a :class:`~bm25desk.ui.common.job_controller.JobController`), never on the GUI thread; the
same job lists the sub-folders so that new ones get watched too. Where watching is not possible
(more than ``max_dirs`` folders, or the system refuses more watches) it falls back to rescanning
every ``rescan_ms`` (60 s). While watching, a slow backstop rescan (every ``backstop_ms``, 5 min)
also catches in-place edits, which Linux reports on the file and not on its folder.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot

from bm25desk.engine.index.changes import FolderChanges, folder_changes
from bm25desk.engine.index.store import IndexStore
from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.readers.corpus import JUNK_DIRS
from bm25desk.ui.common.job_controller import JobController
from bm25desk.ui.common.jobs import JobRunner

log = logging.getLogger(__name__)

MAX_DIRS = 2000
DEBOUNCE_MS = 1000
RESCAN_MS = 60_000
BACKSTOP_MS = 300_000


def list_dirs(root: Path, limit: int, cancel: CancelToken | None = None) -> list[str] | None:
    """Return ``root`` and the folders under it that a scan enters; None if more than ``limit``."""
    out: list[str] = []
    stack = [str(root)]
    while stack:
        if cancel is not None:
            cancel.check()
        directory = stack.pop()
        out.append(directory)
        if len(out) > limit:
            return None
        try:
            with os.scandir(directory) as it:
                for entry in it:
                    if (
                        entry.name.startswith(".")
                        or entry.name in JUNK_DIRS
                        or not entry.is_dir(follow_symlinks=False)
                    ):
                        continue
                    stack.append(entry.path)
        except OSError:
            continue
    return out


class FolderWatcher(QObject):
    """Watches the folder of index ``name`` and reports what an update would do.

    Signals
    -------
    changes_found(object)
        A :class:`FolderChanges`, whenever it differs from the last one reported (the first
        report is made only when something changed).
    """

    changes_found = Signal(object)

    def __init__(
        self,
        runner: JobRunner,
        store: IndexStore,
        name: str,
        folder: str | os.PathLike[str],
        parent: QObject | None = None,
        *,
        max_dirs: int = MAX_DIRS,
        debounce_ms: int = DEBOUNCE_MS,
        rescan_ms: int = RESCAN_MS,
        backstop_ms: int = BACKSTOP_MS,
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.store = store
        self.name = name
        self.folder = Path(folder)
        self.max_dirs = max_dirs
        self.rescan_ms = rescan_ms
        self.backstop_ms = backstop_ms
        self.last = FolderChanges()
        self.watching = True  # False once fallen back to periodic rescans
        self._active = False
        self.scans = JobController(runner, f"watch {name}", parent=self)
        self.scans.succeeded.connect(self._on_scanned)
        self.scans.failed.connect(self._on_scan_failed)
        self.scans.finished.connect(self._on_scan_finished)
        self._again = False
        self._report = False
        self._fs = QFileSystemWatcher(self)
        self._fs.directoryChanged.connect(self._on_fs_event)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(debounce_ms)
        self._debounce.timeout.connect(lambda: self.rescan())
        self._periodic = QTimer(self)
        self._periodic.timeout.connect(lambda: self.rescan())

    @property
    def active(self) -> bool:
        """Return whether the watcher runs (between :meth:`start` and :meth:`stop`)."""
        return self._active

    @property
    def watched_dirs(self) -> list[str]:
        """Return the folders watched (empty after the fallback)."""
        return self._fs.directories()

    def start(self) -> None:
        """Scan once now (which also sets up the watches), then keep watching."""
        self._active = True
        self._periodic.start(self.backstop_ms if self.watching else self.rescan_ms)
        self.rescan()

    def stop(self) -> None:
        """Stop watching; a scan still running is cancelled and its result ignored."""
        self._active = False
        self._debounce.stop()
        self._periodic.stop()
        dirs = self._fs.directories()
        if dirs:
            self._fs.removePaths(dirs)
        self._again = False
        self.scans.drop()

    def fall_back(self, why: str = "") -> None:
        """Stop using file-system watches: rescan every ``rescan_ms`` instead."""
        if self.watching:
            log.info(
                "watching %s: falling back to rescans every %d s (%s)",
                self.folder,
                self.rescan_ms // 1000,
                why,
            )
        self.watching = False
        dirs = self._fs.directories()
        if dirs:
            self._fs.removePaths(dirs)
        if self._active:
            self._periodic.start(self.rescan_ms)

    @Slot(str)
    def _on_fs_event(self, _path: str) -> None:
        if self._active:
            self._debounce.start()

    @Slot()
    def rescan(self, report: bool = False) -> None:
        """Compare the folder with the index in the background (one scan at a time).

        With ``report``, the result is emitted even if it equals the last one (after an update).
        """
        if not self._active:
            return
        self._report = self._report or report
        if self.scans.busy():
            self._again = True
            return
        store, name, folder = self.store, self.name, self.folder
        limit = self.max_dirs if self.watching else -1

        def work(_progress: ProgressFn, cancel: CancelToken) -> tuple[FolderChanges, object]:
            changes = folder_changes(store.open(name), cancel=cancel)
            dirs = list_dirs(folder, limit, cancel) if limit >= 0 else None
            return changes, dirs

        self.scans.start(work)

    @Slot(object)
    def _on_scanned(self, result: tuple[FolderChanges, list[str] | None]) -> None:
        if not self._active:
            return
        changes, dirs = result
        if self.watching:
            if dirs is None:
                self.fall_back(f"more than {self.max_dirs} folders")
            else:
                self._watch(dirs)
        report, self._report = self._report, False
        if report or changes != self.last:
            self.last = changes
            self.changes_found.emit(changes)

    def _watch(self, dirs: list[str]) -> None:
        current = set(self._fs.directories())
        wanted = set(dirs)
        gone = sorted(current - wanted)
        if gone:
            self._fs.removePaths(gone)
        new = sorted(wanted - current)
        if new and self._fs.addPaths(new):  # addPaths returns the paths it could not add
            self.fall_back("the system refused more watches")

    @Slot(object)
    def _on_scan_failed(self, exc: BaseException) -> None:
        log.info("watching %s: %s", self.name, exc)

    @Slot()
    def _on_scan_finished(self) -> None:
        if self._again and self._active:
            self._again = False
            self.rescan()
