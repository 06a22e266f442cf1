"""Switching the open index, so that nothing of the previous index stays on screen.

An index opens in the background (the latest request wins), then is handed to every tab; closing
it empties every tab.

Opening reads the manifest and builds the analyser, whose stemmer import can take seconds the
first time: the window stays responsive meanwhile.

Another program (the CLI, a second window) may commit a new generation of the open index: the
index folder is watched (and checked every few seconds where watching is not possible), the
manifest's generation is compared in the background, and a newer one is opened in its place.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QLabel

from bm25desk.engine import IndexCorruptError, Searcher
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.messages import readable

CHECK_DEBOUNCE_MS = 500  # after the index folder changed (a commit writes several files)
CHECK_EVERY_MS = 5000  # and regularly, where the folder cannot be watched


class IndexSwitcher(QObject):
    """Opens and closes indexes for the main window ``w``.

    Signals
    -------
    opened(str)
        The named index is open in every tab.
    """

    opened = Signal(str)

    def __init__(self, w: Any) -> None:
        super().__init__(w)
        self.w = w
        self.opening = ""
        self.searcher: Searcher | None = None
        self.pending_query: str | None = None
        self.pending_tab: int | None = None
        self.label = QLabel()  # "name · N documents" in the status bar
        self.jobs = LatestOnly(w.runner, "open index", self)
        self.jobs.succeeded.connect(self._on_jobs_succeeded)
        self.jobs.failed.connect(self._on_jobs_failed)
        self.checks = LatestOnly(w.runner, "check generation", self)
        self.checks.succeeded.connect(self._on_checks_succeeded)
        self.check_timer = QTimer(self, singleShot=True, interval=CHECK_DEBOUNCE_MS)
        self.check_timer.timeout.connect(self.check_generation)
        self.folder_watch = QFileSystemWatcher(self)
        self.folder_watch.directoryChanged.connect(lambda _path: self.check_timer.start())
        self.poll_timer = QTimer(self, interval=CHECK_EVERY_MS)
        self.poll_timer.timeout.connect(self.check_generation)

    def check_generation(self) -> None:
        """Reopen the index if another program committed a newer generation (in the background)."""
        searcher = self.searcher
        if searcher is None or self.jobs.busy() or self.w.builds.jobs.busy():
            return
        index, store = searcher.index, self.w.store
        name, generation = index.name, index.generation
        self.checks.request(lambda: (name, generation, store.current_generation(name)))

    @Slot(object)
    def _on_checks_succeeded(self, found: tuple[str, int, int | None]) -> None:
        name, seen, current = found
        searcher = self.searcher
        if searcher is None or searcher.index.name != name or searcher.index.generation != seen:
            return  # switched or reopened meanwhile
        if current is not None and current != seen:
            self.w.message_bar.show_message(
                f"“{name}” was changed by another program: showing its new version.",
                "info",
                timeout_ms=8000,
                owner=name,
            )
            self.open(name, force=True)

    def _watch(self, name: str) -> None:
        """Watch the folder of index ``name`` for commits ("" : watch nothing)."""
        dirs = self.folder_watch.directories()
        if dirs:
            self.folder_watch.removePaths(dirs)
        if name:
            self.folder_watch.addPath(str(self.w.store.path(name)))
            self.poll_timer.start()
        else:
            self.poll_timer.stop()

    @property
    def current(self) -> str:
        """Return the name of the open index ("" when none)."""
        return self.searcher.index.name if self.searcher is not None else ""

    def open(self, name: str, *, query: str | None = None, force: bool = False) -> None:
        """Open index ``name`` in the background, then search it (for ``query``, if given).

        An index already open (or opening) is not opened again unless ``force`` (after a
        rebuild) or a query is given.
        """
        if not force and query is None:
            busy = self.jobs.busy()
            if (busy and self.opening == name) or (not busy and self.current == name):
                return
        self.opening = name
        self.pending_query = query
        self.label.setText(f"Opening {name}…")
        store = self.w.store
        self.jobs.request(lambda: Searcher(store.open(name)))

    def close(self) -> None:
        """Stop searching the open index: every tab shows no index."""
        self.searcher = None
        self.jobs.invalidate()
        self.checks.invalidate()
        self._watch("")
        w = self.w
        w.folder_notice.watch(None)
        for panel in (w.search_panel, w.compare_panel, w.stats_panel, w.terms_panel):
            panel.set_searcher(None)
        w.eval_panel.set_index(None, None)
        w.index_panel.set_open_index("")
        w.index_picker.set_open("")
        self.label.setText("")
        w.setWindowTitle("bm25desk")

    @Slot(object)
    def _on_jobs_succeeded(self, searcher: Searcher) -> None:
        w, index = self.w, searcher.index
        name = index.name
        self.searcher = searcher
        query, self.pending_query = self.pending_query, None
        if query is not None:
            w.search_panel.query_edit.setText(query)
        w.search_panel.set_searcher(searcher)
        w.compare_panel.set_searcher(searcher)
        w.stats_panel.set_searcher(searcher)
        w.terms_panel.set_searcher(searcher)
        w.eval_panel.set_index(index, searcher)
        w.index_panel.set_open_index(name)
        w.index_picker.set_open(name)
        w.stack.setCurrentWidget(w.tabs)
        w.settings.last_index = name
        w.setWindowTitle(f"{name} — bm25desk")
        if w.message_bar.owner not in ("", name):  # a message about the previous index
            w.message_bar.hide()
        self.label.setText(f"{name} · {index.n_docs:,} documents")
        for warning in index.warnings:
            w.message_bar.show_message(warning[:1].upper() + warning[1:], "warning", owner=name)
        w.folder_notice.watch(index)
        self._watch(name)
        tab, self.pending_tab = self.pending_tab, None
        if tab is not None:
            w.show_tab(tab)
        self.opened.emit(name)

    @Slot(object)
    def _on_jobs_failed(self, exc: BaseException) -> None:
        w, name, searcher = self.w, self.opening, self.searcher
        self.pending_query = None
        self.label.setText(
            f"{searcher.index.name} · {searcher.index.n_docs:,} documents" if searcher else ""
        )
        action = (f"rebuild:{name}", "Rebuild it") if isinstance(exc, IndexCorruptError) else None
        w.message_bar.show_message(readable(exc), "error", action=action, owner=self.current)
        w.refresh_indexes()
        if searcher is None and not w.index_panel.names():
            w.stack.setCurrentWidget(w.welcome)
