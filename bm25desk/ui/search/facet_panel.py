"""The facet side panel: how many matching documents have each file type, folder, year or value.

Counts come from :func:`bm25desk.engine.scoring.facets.facets` for the Search tab's query (each
key counted under every filter but its own, as faceted search does); ticking a value filters
the results to it. Filters restrict what is returned, never N, df or the average length: the
scores stay the collection's.
"""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget

from bm25desk.engine.scoring.facets import Facets
from bm25desk.engine.scoring.filters import Filters

VALUES_SHOWN = 20
"""Values listed per key (the most frequent)."""
_NAMES = {"type": "File type", "folder": "Folder", "year": "Year modified"}
_VALUE_ROLE = Qt.ItemDataRole.UserRole + 1


def filters_of(chosen: dict[str, set[str]]) -> Filters:
    """Return the :class:`Filters` for the ticked values (key → values)."""
    years = sorted(int(y) for y in chosen.get("year", ()) if y.isdigit())
    where = {k: v for k, v in chosen.items() if k not in ("type", "folder", "year") and v}
    return Filters.of(
        types=chosen.get("type", ()),
        folders=chosen.get("folder", ()),
        modified_from=dt.date(years[0], 1, 1) if years else None,
        modified_to=dt.date(years[-1], 12, 31) if years else None,
        where=where,
    )


class FacetPanel(QWidget):
    """Lists facet counts with a tick box per value.

    Signals
    -------
    filters_changed(object)
        The ticked values changed: the new :class:`Filters`.
    """

    filters_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chosen: dict[str, set[str]] = {}
        self.setMinimumWidth(150)  # "Year modified" and a short value with its count
        self.note = QLabel("Tick a value to keep only those results (scores are unchanged).")
        self.note.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.note)
        layout.addWidget(self.tree, 1)
        self._filling = False

    def clear(self) -> None:
        """Forget the counts and the ticked values (another index)."""
        self.chosen = {}
        self.tree.clear()

    def filters(self) -> Filters:
        """Return the filters of the ticked values."""
        return filters_of(self.chosen)

    def show_facets(self, facets: Facets) -> None:
        """Show ``facets`` (ticked values stay ticked, listed even when their count is 0)."""
        self._filling = True
        self.tree.clear()
        for key in facets:
            pairs = list(facets[key][:VALUES_SHOWN])
            seen = {v for v, _ in pairs}
            pairs += [(v, 0) for v in sorted(self.chosen.get(key, ())) if v not in seen]
            top = QTreeWidgetItem([_NAMES.get(key, key)])
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            for value, count in pairs:
                shown = "(top folder)" if key == "folder" and value == "." else value
                item = QTreeWidgetItem([f"{shown}  ({count:,})"])
                item.setToolTip(0, value)
                item.setData(0, _VALUE_ROLE, (key, value))
                item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
                ticked = value in self.chosen.get(key, ())
                item.setCheckState(0, Qt.CheckState.Checked if ticked else Qt.CheckState.Unchecked)
                top.addChild(item)
            self.tree.addTopLevelItem(top)
            top.setExpanded(True)
        self._filling = False

    def items(self) -> list[QTreeWidgetItem]:
        """Return the value items, key by key."""
        out: list[QTreeWidgetItem] = []
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is not None:
                out += [c for j in range(top.childCount()) if (c := top.child(j)) is not None]
        return out

    @Slot(QTreeWidgetItem, int)
    def _on_tree_item_changed(self, item: QTreeWidgetItem, _column: int) -> None:
        data = item.data(0, _VALUE_ROLE)
        if self._filling or not data:
            return
        key, value = data
        values = self.chosen.setdefault(key, set())
        if item.checkState(0) == Qt.CheckState.Checked:
            values.add(value)
        else:
            values.discard(value)
        self.filters_changed.emit(self.filters())
