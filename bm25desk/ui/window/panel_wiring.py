"""How the tabs talk to each other through the window.

Compare ranks the Search tab's query; the Evaluation view sends a query or a sweep cell's
parameters to Search; a hidden tab computes nothing until it is shown; the Search tab's hint shows
in the status bar only while that tab is shown.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Slot

from bm25desk.engine import Variant
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.search.work import SearchOutcome


class PanelWiring(QObject):
    """Connects the main window ``w``'s tabs; owns the Search tab's status-bar hint."""

    def __init__(self, w: Any) -> None:
        super().__init__(w)
        self.w = w
        self.search_hint = ""
        search = w.search_panel
        search.results_shown.connect(self._on_search_results_shown)
        search.query_cleared.connect(lambda: w.compare_panel.set_query(None))
        search.variant_changed.connect(self._on_search_variant_changed)
        search.status_hint.connect(self._on_search_status_hint)
        search.explain_requested.connect(self._on_search_explain_requested)
        w.eval_panel.apply_parameters_requested.connect(self._on_eval_apply_parameters)
        w.eval_panel.open_query_requested.connect(self._on_eval_open_query)
        w.tabs.currentChanged.connect(self._on_tabs_current_changed)

    def show_search_hint(self) -> None:
        """Show the Search tab's hint in the status bar while that tab is shown."""
        w = self.w
        shown = w.stack.currentWidget() is w.tabs and w.tabs.currentWidget() is w.search_panel
        if self.search_hint and shown:
            w.statusBar().showMessage(self.search_hint)
        else:
            w.statusBar().clearMessage()

    @Slot(object)
    def _on_search_results_shown(self, outcome: SearchOutcome) -> None:
        self.w.compare_panel.set_query(outcome.result.analysis.parsed)

    @Slot(object)
    def _on_search_variant_changed(self, variant: Variant) -> None:
        self.w.variant_label.set_full_text(variant_summary(variant))

    @Slot(int)
    def _on_search_explain_requested(self, docno: int) -> None:
        self.w.compare_panel.show_document(docno)
        self.w.show_tab(self.w.tabs.indexOf(self.w.compare_panel))

    @Slot(str)
    def _on_search_status_hint(self, text: str) -> None:
        self.search_hint = text
        self.show_search_hint()

    @Slot(int)
    def _on_tabs_current_changed(self, index: int) -> None:
        w = self.w
        w.compare_panel.set_active(w.tabs.widget(index) is w.compare_panel)
        w.stats_panel.set_active(w.tabs.widget(index) is w.stats_panel)
        w.terms_panel.set_active(w.tabs.widget(index) is w.terms_panel)
        self.show_search_hint()

    @Slot(object)
    def _on_eval_apply_parameters(self, variant: Variant) -> None:
        self.w.search_panel.set_variant(variant)
        self.w.show_tab(self.w.tabs.indexOf(self.w.search_panel))

    @Slot(str, object)
    def _on_eval_open_query(self, text: str, relevant: frozenset[str]) -> None:
        self.w.search_panel.set_query(text, relevant)
        self.w.show_tab(self.w.tabs.indexOf(self.w.search_panel))
