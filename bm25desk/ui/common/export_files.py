"""Saving a view to a CSV or JSON file: ask where, write in the background, say how it went.

The file is written beside its destination under a temporary name and moved into place only
when complete, so a failed or cancelled export (a read-only folder, a full disk) never leaves a
half-written file nor damages an existing one; the view keeps what it showed, to save elsewhere.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QFileDialog, QWidget

from bm25desk.engine.progress import CancelToken, ProgressFn
from bm25desk.ui.common.export_writers import Writer
from bm25desk.ui.common.job_controller import JobController
from bm25desk.ui.common.jobs import JobRunner
from bm25desk.ui.common.messages import readable

FILTERS = "CSV (*.csv);;JSON (*.json)"


def safe_file_name(name: str) -> str:
    """Return ``name`` fit for a file name, its extension kept.

    Letters, digits, ``-`` and ``_`` stay (at most 60); anything else becomes one ``-``: a
    document id may be a path, a query may hold quotes or slashes.
    """
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    kept = "".join(c if c.isalnum() or c in "-_" else "-" for c in stem.strip())
    kept = "-".join(part for part in kept.split("-") if part)[:60] or "export"
    return f"{kept}.{ext}" if ext else kept


def format_of(path: Path) -> str:
    """Return ``json`` for a ``.json`` file, else ``csv``."""
    return "json" if path.suffix.lower() == ".json" else "csv"


def write_file(path: Path, writer: Writer, cancel: CancelToken) -> int:
    """Write ``path`` with ``writer`` atomically (a temporary file, then a rename); return rows."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            rows = writer(out, format_of(path), cancel)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return rows


def ask_path(parent: QWidget | None, title: str, suggested: str) -> Path | None:
    """Ask where to save (a file dialog); None when the user cancels."""
    start = str(Path.home() / suggested)
    path, chosen = QFileDialog.getSaveFileName(parent, title, start, FILTERS)
    if not path:
        return None
    p = Path(path)
    if not p.suffix:
        p = p.with_suffix(".json" if chosen.startswith("JSON") else ".csv")
    return p


class Exporter(QObject):
    """Saves exports one at a time in the background.

    Parameters
    ----------
    runner
        Runs the writes.
    parent
        The widget the file dialog belongs to.

    Signals
    -------
    saved(str)
        A sentence saying what was saved where.
    failed(str)
        A sentence saying what could not be saved and why (nothing was changed).
    """

    saved = Signal(str)
    failed = Signal(str)

    def __init__(self, runner: JobRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.widget = parent
        self.ask = ask_path  # replaced in tests: no modal dialogs there
        self.jobs = JobController(runner, "export", parent=self)
        self.jobs.succeeded.connect(self._on_jobs_succeeded)
        self.jobs.failed.connect(self._on_jobs_failed)
        self.jobs.cancelled.connect(
            lambda: self.failed.emit("Export cancelled: nothing was saved.")
        )
        self._path: Path | None = None
        self._what = ""

    def busy(self) -> bool:
        """Return whether an export is being written."""
        return self.jobs.busy()

    def export(self, what: str, suggested: str, writer: Writer) -> bool:
        """Ask for a file, then write ``what`` (e.g. "the term list") with ``writer``.

        Returns whether a write started (False: the user cancelled, or one is running).
        """
        if self.jobs.busy():
            self.failed.emit("An export is already being written: wait for it to finish.")
            return False
        path = self.ask(self.widget, f"Export {what}", safe_file_name(suggested))
        if path is None:
            return False
        self._path, self._what = path, what

        def work(_progress: ProgressFn, cancel: CancelToken) -> int:
            return write_file(path, writer, cancel)

        return self.jobs.start(work) is not None

    @Slot()
    def cancel(self) -> None:
        """Stop the running export (nothing is saved)."""
        self.jobs.cancel()

    @Slot(object)
    def _on_jobs_succeeded(self, rows: int) -> None:
        self.saved.emit(f"Saved {self._what} ({rows:,} rows) to {self._path}.")

    @Slot(object)
    def _on_jobs_failed(self, exc: BaseException) -> None:
        name = self._path.name if self._path else "the file"
        self.failed.emit(
            f"Could not save {self._what} to {name}: {readable(exc)}. Nothing was written; "
            "the view still shows it, so you can save it elsewhere."
        )
