"""What indexing a folder would read and skip, said before Build (as Recoll does).

"2,314 files: 1,980 txt, 210 pdf, 124 docx; 37 skipped" is worked out in the background by the
engine's :func:`~bm25desk.engine.readers.summary.folder_summary` (a scan of names and sizes, no file
opened); a folder with nothing to index is said so before anything is built.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QLabel, QWidget

from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.engine.readers.corpus import CorpusError
from bm25desk.engine.readers.summary import FolderSummary, folder_summary
from bm25desk.ui.common.colors import muted_text, status_colors
from bm25desk.ui.common.job_controller import JobController
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.messages import readable


class FolderPreview(QLabel):
    """One line saying what a folder's build would read, or that it would find nothing."""

    def __init__(self, runner: JobRunner | None, parent: QWidget | None = None) -> None:
        """Summarise with ``runner`` in the background (None: at once, on this thread)."""
        super().__init__(parent)
        self.setWordWrap(True)
        self.summary: FolderSummary | None = None
        self.scans: JobController | None = None
        if runner is not None:
            self.scans = JobController(runner, "folder summary", parent=self)
            self.scans.succeeded.connect(self._on_scans_succeeded)
            self.scans.failed.connect(self._on_scans_failed)
        self.hide()

    def stop(self) -> None:
        """Forget a summary still being worked out."""
        if self.scans is not None:
            self.scans.drop()

    def show_folder(self, folder: Path | None) -> None:
        """Summarise ``folder`` in the background (None: show nothing)."""
        self.summary = None
        self.stop()
        if folder is None or not folder.is_dir():
            self.hide()
            return
        if self.scans is None:
            try:
                self._on_scans_succeeded(folder_summary(folder))
            except CorpusError as exc:
                self._on_scans_failed(exc)
            return

        def work(progress: ProgressFn, cancel: CancelToken) -> FolderSummary:
            return folder_summary(folder, progress=progress, cancel=cancel)

        self._say("Looking at the folder…", muted=True)
        self.scans.start(work)

    @Slot(object)
    def _on_scans_succeeded(self, summary: FolderSummary) -> None:
        self.summary = summary
        text = summary.describe()
        if summary.n_files:
            self._say(f"To index: {text}.", muted=True)
        else:
            self._say(
                f"Nothing to index here: {text}. Building would make an empty index.", warn=True
            )

    @Slot(object)
    def _on_scans_failed(self, exc: BaseException) -> None:
        self._say(readable(exc), warn=True)

    def _say(self, text: str, *, muted: bool = False, warn: bool = False) -> None:
        palette = self.palette()
        color = status_colors(palette)["warn"] if warn else muted_text(palette)
        self.setStyleSheet(f"color: {color.name()}" if muted or warn else "")
        self.setText(text)
        self.show()
