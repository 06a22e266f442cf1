"""The compact index picker beside the tabs: which index is open, and a menu to switch or manage.

The full list (sizes, dates, staleness, Update, Rebuild, Delete) lives in the index manager
(:mod:`~bm25desk.ui.indexes.manager_dialog`); the picker only shows the open index and opens
another when one is chosen.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolButton, QWidget

from bm25desk.engine import IndexInfo
from bm25desk.ui.common.formatting import plural
from bm25desk.ui.common.plain_text import plain_tooltip


def index_caption(info: IndexInfo) -> str:
    """Return ``name · 1,460 documents`` (or ``name · damaged``) for a list entry."""
    if info.error:
        return f"{info.name} · damaged"
    return f"{info.name} · {plural(info.n_docs, 'document')}"


class _ListingCombo(QComboBox):
    """A combo box that says when its list is about to drop down."""

    about_to_drop = Signal()

    def showPopup(self) -> None:
        """Let the list be read again first (QComboBox.showPopup)."""
        self.about_to_drop.emit()
        super().showPopup()


class IndexPicker(QWidget):
    """``Index: [name · N documents ▾] [Manage…]``.

    Signals
    -------
    open_requested(str)
        The user chose another index.
    manage_requested()
        The user wants the index manager.
    list_requested()
        The list is about to drop down: an index built meanwhile (by the CLI, another window)
        should be in it.
    """

    open_requested = Signal(str)
    manage_requested = Signal()
    list_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel("&Index:")
        self.combo = _ListingCombo()
        self.combo.about_to_drop.connect(self.list_requested)
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.combo.setMinimumContentsLength(18)
        self.combo.setToolTip("The open index: choose another to search it (Ctrl+I: manage)")
        self.combo.setAccessibleName("Open index")
        self.label.setBuddy(self.combo)
        self.manage_button = QToolButton()
        self.manage_button.setText("Manage…")
        self.manage_button.setToolTip("New, update, rebuild or delete indexes (Ctrl+I)")
        self.manage_button.clicked.connect(self.manage_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 0)
        layout.setSpacing(4)
        layout.addWidget(self.label)
        layout.addWidget(self.combo)
        layout.addWidget(self.manage_button)
        self._open = ""
        self.combo.activated.connect(self._on_combo_activated)

    def set_indexes(self, infos: list[IndexInfo], open_name: str = "") -> None:
        """List ``infos``, showing ``open_name`` as the current one."""
        self.combo.blockSignals(True)
        self.combo.clear()
        for info in infos:
            self.combo.addItem(index_caption(info), info.name)
            tip = plain_tooltip(str(info.source.get("path", "")))
            self.combo.setItemData(self.combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.combo.blockSignals(False)
        self.set_open(open_name or self._open)

    def names(self) -> list[str]:
        """Return the listed index names."""
        return [str(self.combo.itemData(i)) for i in range(self.combo.count())]

    def set_open(self, name: str) -> None:
        """Show ``name`` as the open index ("" when none)."""
        self._open = name
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(self.combo.findData(name) if name else -1)
        self.combo.blockSignals(False)

    def open_name(self) -> str:
        """Return the name shown as open."""
        return self._open

    @Slot(int)
    def _on_combo_activated(self, i: int) -> None:
        name = str(self.combo.itemData(i) or "")
        if name and name != self._open:
            self.open_requested.emit(name)
