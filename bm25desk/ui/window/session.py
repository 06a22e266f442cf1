"""What the window remembers between runs.

Geometry, splitter positions (Search, Compare, Statistics, Evaluation), the results' columns, the
plot shown, the index manager's place, the variant and parameters of Search and Compare, the open
index, query and tab.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from PySide6.QtWidgets import QSplitter

from bm25desk.engine import VariantError, get_variant
from bm25desk.ui.common.settings import Settings


def splitters(w: Any) -> dict[str, QSplitter]:
    """Return the window's splitters by the name their positions are saved under."""
    return {
        "search": w.search_panel.splitter,
        "detail": w.search_panel.detail.splitter,
        "detail_right": w.search_panel.detail.right,
        "compare": w.compare_panel.splitter,
        "stats": w.stats_panel.splitter,
        "evaluation": w.eval_panel.splitter,
        "evaluation_results": w.eval_panel.results.splitter,
        "evaluation_per_query": w.eval_panel.per_query.splitter,
    }


def restore_layout(w: Any, s: Settings) -> None:
    """Put back the window's geometry, docks, splitters and the results' columns."""
    geometry = s.layout("geometry")
    if geometry is not None:
        w.restoreGeometry(geometry)
    state = s.layout("state")
    if state is not None:
        w.restoreState(state)
    for key, splitter in splitters(w).items():
        data = s.layout(f"splitter/{key}")
        if data is not None:
            splitter.restoreState(data)
    header = s.layout("results_header")
    if header is not None:
        w.search_panel.view.horizontalHeader().restoreState(header)
        w.search_panel.view.arrange_columns()
    with contextlib.suppress(TypeError, ValueError):
        w.search_panel.detail.plots.tabs.setCurrentIndex(int(s.value("layout/plot", 0)))
    manager = s.layout("index_manager")
    if manager is not None:
        w.index_manager.restoreGeometry(manager)


def restore_variants(w: Any, s: Settings) -> None:
    """Put back Search's variant with every variant's last parameters, and Compare's A and B."""
    picker = w.search_panel.picker
    for key in [picker.combo.itemData(i) for i in range(picker.combo.count())]:
        params = s.params(str(key))
        if params:
            picker.remember(str(key), params)
    picker.set_key(s.variant, s.params(s.variant))
    for which, pick in (("a", w.compare_panel.picker_a), ("b", w.compare_panel.picker_b)):
        saved = s.value(f"compare/{which}")
        if isinstance(saved, str) and saved:
            try:
                data = json.loads(saved)
                pick.set_variant(get_variant(data["key"], **data.get("params", {})))
            except (ValueError, KeyError, TypeError, VariantError):
                pass


def saved_tab(s: Settings) -> int | None:
    """Return the tab that was shown last (None if not saved or unreadable)."""
    try:
        return int(s.value("session/tab", 0))
    except (TypeError, ValueError):
        return None


def save(w: Any, s: Settings) -> None:
    """Remember the layout, the variants and parameters, the index, the query and the tab."""
    s.set_layout("geometry", w.saveGeometry())
    s.set_layout("state", w.saveState())
    for key, splitter in splitters(w).items():
        s.set_layout(f"splitter/{key}", splitter.saveState())
    s.set_layout("results_header", w.search_panel.view.horizontalHeader().saveState())
    s.set_value("layout/plot", w.search_panel.detail.plots.tabs.currentIndex())
    s.set_layout("index_manager", w.index_manager.saveGeometry())
    picker = w.search_panel.picker
    s.variant = picker.variant().key
    for key, values in picker.remembered().items():
        s.set_params(key, values)
    for which, pick in (("a", w.compare_panel.picker_a), ("b", w.compare_panel.picker_b)):
        v = pick.variant()
        s.set_value(f"compare/{which}", json.dumps({"key": v.key, "params": v.values()}))
    if w.searcher is not None:
        s.last_index = w.searcher.index.name
    s.last_query = w.search_panel.query()
    s.set_value("session/tab", w.tabs.currentIndex())
    s.sync()
