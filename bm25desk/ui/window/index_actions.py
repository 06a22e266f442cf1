"""What the user does to indexes (New, sample, Update, Rebuild, Delete, edits) and its outcome.

The window says how the work ended and opens what it built. The work itself runs in :class:`Builds`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QDialog

from bm25desk.engine import BuildReport
from bm25desk.engine.index.edit import EditReport
from bm25desk.engine.index.store import EmptyBuildError
from bm25desk.ui.common.jobs import Job
from bm25desk.ui.common.messages import readable
from bm25desk.ui.common.sample import SAMPLE_NAME, SAMPLE_QUERY
from bm25desk.ui.indexes.build_request import BuildRequest, rebuild_request, sample_request
from bm25desk.ui.indexes.build_summary import build_summary, edit_summary
from bm25desk.ui.indexes.edit_dialogs import ask_corpus_file, ask_ids
from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog
from bm25desk.ui.window.builds import VERBS, Builds

EDITS = {"add": "add documents to", "remove": "remove documents from"}
"""What an edit by id does, for messages (request kind → words)."""


class IndexActions(QObject):
    """Starts builds, updates and deletes for the main window ``w`` and reports how they end.

    Signals
    -------
    build_finished(object)
        A build or update ended: its :class:`BuildReport` (an :class:`EditReport` after adding or
        removing documents), or None when cancelled or failed.
    """

    build_finished = Signal(object)

    def __init__(self, w: Any, builds: Builds) -> None:
        super().__init__(w)
        self.w = w
        self.builds = builds
        self.last_report: BuildReport | None = None
        self._empty_request: BuildRequest | None = None
        self.ask_corpus_file = ask_corpus_file  # replaced in tests: no modal dialogs there
        self.ask_ids = ask_ids
        builds.succeeded.connect(self._on_builds_succeeded)
        builds.failed.connect(self._on_builds_failed)
        builds.cancelled.connect(self._on_builds_cancelled)
        builds.deleted.connect(self._on_builds_deleted)
        builds.delete_failed.connect(w.show_error)

    def _busy(self) -> bool:
        if self.builds.jobs.busy():
            self.w.message_bar.show_message("Wait for the running build to finish.", "info")
            return True
        return False

    def new(self, source: Path | None = None) -> None:
        """Ask for a source and options, then build."""
        if self._busy():
            return
        dialog = NewIndexDialog(self.w.store, self.w, self.w.runner)
        if isinstance(source, Path):
            dialog.set_source(source)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            self.start(dialog.request())

    def sample(self) -> None:
        """Build (or open) the bundled sample collection."""
        self.w.settings.sample_offered = True
        if self.w.store.exists(SAMPLE_NAME):
            query = self.w.search_panel.query() or SAMPLE_QUERY
            self.w.open_index(SAMPLE_NAME, query=query, force=True)
            return
        self.start(sample_request())

    def rebuild(self, name: str) -> None:
        """Build ``name`` again from its source with the same options."""
        info = self.w.store.info(name)
        if not info.source.get("path"):
            self.w.message_bar.show_message(
                f"The source of “{name}” is not recorded (its manifest is damaged): delete the "
                "index and build it again with New…",
                "error",
            )
            return
        self.start(rebuild_request(info))

    def delete(self, name: str) -> None:
        """Delete ``name`` after confirmation."""
        if self._busy():
            return
        text = (
            f"Delete the index “{name}”? The source files are not touched; you can build it again."
        )
        if not self.w.confirm("Delete index", text):
            return
        if self.w.switcher.current == name:
            self.w.close_index()
        self.builds.delete(name)

    def build_empty(self) -> Job | None:
        """Build the index that found no documents, empty (the user insisted)."""
        request, self._empty_request = self._empty_request, None
        return self.start(request) if request is not None else None

    def _editable(self, name: str) -> bool:
        """Return whether ``name`` can be edited by id (else say why: a folder index)."""
        if self._busy():
            return False
        try:
            source = self.w.store.info(name).source
        except (OSError, ValueError) as exc:
            self.w.show_error(exc)
            return False
        if source.get("kind") == "folder":
            self.w.message_bar.show_message(
                f"“{name}” follows the folder {source.get('path', '')}: add or delete files "
                "there and update it. Documents are added and removed by id only in indexes "
                "of a corpus file (TSV, JSONL…).",
                "info",
                owner=name,
            )
            return False
        return True

    def add_documents(self, name: str) -> Job | None:
        """Ask for a corpus file, then add its documents to ``name`` (same id: replaced)."""
        if not self._editable(name):
            return None
        path = self.ask_corpus_file(self.w, name)
        if path is None:
            return None
        return self.start(BuildRequest(path, name, kind="add"))

    def remove_documents(self, name: str) -> Job | None:
        """Ask for document ids, then remove those documents from ``name``."""
        if not self._editable(name):
            return None
        ids = self.ask_ids(self.w, name)
        if not ids:
            return None
        return self.start(BuildRequest(Path(), name, kind="remove", ids=tuple(ids)))

    def start(self, request: BuildRequest) -> Job | None:
        """Build, rebuild or update in the background, with progress and Cancel."""
        if self.builds.jobs.busy():
            self.w.message_bar.show_message("A build is already running.", "info")
            return None
        self.w.message_bar.hide()
        return self.builds.start(request)

    @Slot(object, object)
    def _on_builds_succeeded(self, report: BuildReport, request: BuildRequest) -> None:
        if isinstance(report, EditReport):
            self._on_edited(report)
            return
        self.last_report = report
        self.w.refresh_indexes()
        action = (
            ("skipped", f"Show the {len(report.skipped):,} skipped") if report.skipped else None
        )
        kind = ""
        if self.w.store.exists(report.name):
            kind = str(self.w.store.info(report.name).source.get("kind", ""))
        self.w.message_bar.show_message(
            build_summary(report, kind),
            "info",
            action=action,
            timeout_ms=0 if report.skipped else 12000,
            owner=report.name,
        )
        if request.kind == "build" or report.name == self.w.switcher.current:
            query = self.w.search_panel.query()
            if report.name == SAMPLE_NAME and not query:
                query = SAMPLE_QUERY
            self.w.open_index(report.name, query=query, force=True)
        self.build_finished.emit(report)

    def _on_edited(self, report: EditReport) -> None:
        """Say what changed and show the index's new version in every tab."""
        self.w.refresh_indexes()
        self.w.message_bar.show_message(
            edit_summary(report),
            "warning" if report.n_not_found or report.skipped else "info",
            timeout_ms=0 if report.n_not_found or report.skipped else 12000,
            owner=report.name,
        )
        if report.name == self.w.switcher.current:
            self.w.open_index(report.name, query=self.w.search_panel.query(), force=True)
        self.build_finished.emit(report)

    @Slot(object, object)
    def _on_builds_failed(self, exc: BaseException, request: BuildRequest) -> None:
        if request.kind in EDITS:
            self.w.message_bar.show_message(
                f"Could not {EDITS[request.kind]} “{request.name}”: {readable(exc)} "
                "The index is unchanged.",
                "error",
                owner=request.name,
            )
            self.build_finished.emit(None)
            return
        if isinstance(exc, EmptyBuildError) and request.kind != "update":
            # Nothing readable: say what was skipped; build the empty index only if asked.
            self._empty_request = dataclasses.replace(request, allow_empty=True)
            # The engine's message ends with the CLI's way to insist; here it is the link.
            reason = str(exc).split("; build an empty index anyway", 1)[0]
            self.w.message_bar.show_message(
                f"“{request.name}” was not built: {reason}. Any previous index of that "
                "name is unchanged.",
                "warning",
                action=("build-empty", "Build an empty index anyway"),
                owner=request.name,
            )
        else:
            self.w.message_bar.show_message(
                f"Could not build “{request.name}”: {readable(exc)} "
                "Any previous index of that name is unchanged.",
                "error",
                owner=request.name,
            )
        self.w.refresh_indexes()
        self.build_finished.emit(None)

    @Slot(object)
    def _on_builds_cancelled(self, request: BuildRequest) -> None:
        what = (
            f"{VERBS[request.kind]} “{request.name}” was cancelled: the index is unchanged."
            if request.kind in EDITS
            else f"Build of “{request.name}” cancelled. Any previous index of that name is "
            "unchanged."
        )
        self.w.message_bar.show_message(
            what,
            "info",
            timeout_ms=10000,
        )
        self.w.refresh_indexes()
        self.build_finished.emit(None)

    @Slot(str)
    def _on_builds_deleted(self, name: str) -> None:
        self.w.message_bar.show_message(f"Deleted the index “{name}”.", "info", timeout_ms=8000)
        self.w.refresh_indexes()
        if self.w.searcher is None:
            names = self.w.index_panel.names()
            if names:
                self.w.open_index(names[0])
            else:
                self.w.show_start_page()
