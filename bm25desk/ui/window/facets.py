"""The facet panel beside the Search tab: counts for the current query, a tick filters the results.

The panel is a dock shown for indexes with metadata (folders: type, folder, year; corpus files:
the columns declared at build); View → Facets (Ctrl+Shift+F) hides or shows it. The tabs need
~1,200 pixels, so on a narrower window (a 1280×720 laptop) the panel is not opened by itself (the
status bar says it is there) and floats in the window's bottom-right corner when opened.
Its counts are computed in the background after each ranking;
ticking a value makes the Search tab rank with a filtered searcher (same N, df and Lavg).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QDockWidget

from bm25desk.engine.scoring.facets import search_facets
from bm25desk.engine.scoring.filters import Filters, meta_keys
from bm25desk.ui.common.latest_only import LatestOnly
from bm25desk.ui.search.facet_panel import FacetPanel
from bm25desk.ui.search.work import SearchOutcome


class FacetWiring(QObject):
    """Owns the facet dock of the main window ``w`` and applies its filters to Search."""

    def __init__(self, w: Any) -> None:
        super().__init__(w)
        self.w = w
        self.panel = FacetPanel()
        self.panel.filters_changed.connect(self._on_panel_filters_changed)
        self.dock = QDockWidget("Facets", w)
        self.dock.setObjectName("facets")
        self.dock.setWidget(self.panel)
        features = QDockWidget.DockWidgetFeature
        self.dock.setFeatures(
            features.DockWidgetMovable | features.DockWidgetFloatable | features.DockWidgetClosable
        )
        self.toggle_action = self.dock.toggleViewAction()
        self.toggle_action.setText("&Facets")
        self.toggle_action.setShortcut("Ctrl+Shift+F")
        self.toggle_action.triggered.connect(self._on_toggle_action_triggered)
        w.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
        self.dock.hide()
        self.jobs = LatestOnly(w.runner, "facets", self)
        self.jobs.succeeded.connect(self.panel.show_facets)
        self.jobs.failed.connect(w.show_error)
        self._parsed: Any = None
        self.dock.visibilityChanged.connect(self._on_dock_visibility_changed)
        w.index_opened.connect(self._on_index_opened)
        w.search_panel.results_shown.connect(self._on_search_results_shown)
        w.search_panel.query_cleared.connect(lambda: self._count(None))

    @Slot(str)
    def _on_index_opened(self, _name: str) -> None:
        self.jobs.invalidate()
        self.panel.clear()
        self._parsed = None
        searcher = self.w.searcher
        # An empty index has nothing to count: no panel, and no hint pointing to one.
        has_keys = (
            searcher is not None and searcher.index.n_docs > 0 and bool(meta_keys(searcher.index))
        )
        show = has_keys
        if has_keys and self.dock.isHidden():
            narrow = self._fit_to_window()
            if narrow:
                # A floating panel opened by itself would cover the query field: on a narrow
                # window the user opens it (View → Facets), and it floats over the plots' corner.
                show = False
                self.w.statusBar().showMessage(
                    "This index has facets (type, folder, year…): View → Facets (Ctrl+Shift+F)",
                    10000,
                )
        self.dock.setVisible(show)
        self.toggle_action.setEnabled(has_keys)
        if has_keys:
            self._count(None)

    @Slot(bool)
    def _on_dock_visibility_changed(self, visible: bool) -> None:
        if visible:  # counts are not kept up to date while hidden: catch up with the query
            self._count(self._parsed)

    def _fit_to_window(self) -> bool:
        """Dock the panel when the window has room beside the tabs, else float it; True: floats."""
        room = self.w.width() - self.w.tabs.minimumSizeHint().width()
        narrow = room < self.panel.minimumWidth() + 20
        self.dock.setFloating(narrow)
        if narrow:
            self._place_floating()
        return narrow

    @Slot(bool)
    def _on_toggle_action_triggered(self, checked: bool) -> None:
        if checked:  # the window may have grown or shrunk since the index was opened
            self._fit_to_window()

    def _place_floating(self) -> None:
        """Put the floating panel in the window's bottom-right corner, clear of the query bar."""
        frame = self.w.geometry()
        width, height = max(self.panel.minimumWidth(), 260), min(360, frame.height() // 2)
        self.dock.resize(width, height)
        self.dock.move(frame.right() - width - 24, frame.bottom() - height - 48)

    @Slot(object)
    def _on_search_results_shown(self, outcome: SearchOutcome) -> None:
        self._count(outcome.result.analysis.parsed)

    def _count(self, parsed: Any) -> None:
        searcher = self.w.searcher
        self._parsed = parsed
        if searcher is None or self.dock.isHidden():
            return
        # The ranking's own matches (bm25f counts a term in any scored field), under the filters.
        filtered, variant = searcher.filtered(self.panel.filters()), self.w.search_panel.variant()
        self.jobs.request(lambda: search_facets(filtered, parsed, variant))

    @Slot(object)
    def _on_panel_filters_changed(self, filters: Filters) -> None:
        base = self.w.searcher
        if base is None:
            return
        search = self.w.search_panel
        search.searcher = base.filtered(filters)
        search.search_now()
        if not search.query().strip():
            self._count(None)
