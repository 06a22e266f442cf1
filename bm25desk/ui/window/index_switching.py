"""Switching the open index, so that nothing of the previous index stays on screen.

An index opens in the background (the latest request wins), then is handed to every tab; closing
it empties every tab.

Opening reads the manifest and builds the analyser, whose stemmer import can take seconds the
first time: the window stays responsive meanwhile.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QLabel

from bm25desk.engine import IndexCorruptError, Searcher
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.common.messages import readable


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
        w = self.w
        w.folder_notice.watch(None)
        for panel in (w.search_panel, w.compare_panel, w.stats_panel):
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
