"""The ranking functions an experiment evaluates, each with its parameters.

Every variant is listed and checkable; a copy of a variant evaluates other parameters beside the
first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from html import escape

from PySide6.QtCore import QEvent, QObject, Signal, Slot
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from bm25desk.engine import Variant
from bm25desk.ui.common.params_form import ParamsForm
from bm25desk.ui.common.table_view import setup_view
from bm25desk.ui.evaluation.config_model import ConfigColumn, ConfigsModel, default_rows, rows_for
from bm25desk.ui.evaluation.labels import small

DEFAULT_CHECKED = ("lucene", "okapi", "bm25l", "bm25plus")
"""Configurations checked when the view opens."""

PARAMS_SHARE = 0.5
"""At most this share of the list's width goes to the parameters column."""


def _tool_button(text: str, tip: str = "") -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    return button


class ConfigsBox(QGroupBox):
    """The configurations list, its check buttons, and the selected one's parameters.

    Signals
    -------
    changed()
        A configuration was checked, unchecked, added, removed or given other parameters.
    """

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Ranking functions", parent)
        self.model = ConfigsModel(self)
        self.model.set_rows(default_rows(DEFAULT_CHECKED))
        self.view = setup_view(QTableView(), compact=True)
        self.view.setModel(self.model)
        self.view.setAlternatingRowColors(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(ConfigColumn.VARIANT, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(ConfigColumn.PARAMS, QHeaderView.ResizeMode.Interactive)
        self.view.viewport().installEventFilter(self)
        self.view.setMinimumHeight(150)
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
        for signal in (self.model.dataChanged, self.model.rowsInserted, self.model.rowsRemoved):
            signal.connect(self._on_model_changed)
        self.params_title = QLabel()
        self.params_form = ParamsForm()
        self.params_form.values_changed.connect(self._on_params_form_values_changed)
        self.copy_button = _tool_button(
            "Add a copy",
            "Evaluate the selected ranking function a second time, with other parameters",
        )
        self.copy_button.clicked.connect(self._on_copy_button_clicked)
        self.remove_button = _tool_button("Remove", "Remove this copy")
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.all_button = _tool_button("All")
        self.all_button.clicked.connect(lambda: self.model.check_all(True))
        self.none_button = _tool_button("None")
        self.none_button.clicked.connect(lambda: self.model.check_all(False))
        buttons = QHBoxLayout()
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        buttons.addWidget(QLabel("Check:"))
        buttons.addWidget(self.all_button)
        buttons.addWidget(self.none_button)
        box = QVBoxLayout(self)
        box.addWidget(self.view, 1)
        box.addLayout(buttons)
        box.addWidget(self.params_title)
        box.addWidget(self.params_form)
        self.view.selectRow(next((i for i, r in enumerate(self.model.rows()) if r.checked), 0))
        self._on_view_selection_changed()

    def configs(self) -> tuple[Variant, ...]:
        """Return the checked configurations."""
        return self.model.checked()

    def set_configs(self, variants: Sequence[Variant]) -> None:
        """Check exactly ``variants`` (rows are added for extra parameter settings)."""
        self.model.set_rows(rows_for(list(variants)))
        self._on_view_selection_changed()
        self.changed.emit()

    def _selected_row(self) -> int:
        rows = self.view.selectionModel().selectedRows()
        return rows[0].row() if rows else -1

    @Slot()
    def _on_view_selection_changed(self, *_args: object) -> None:
        row = self._selected_row()
        if row < 0:
            self.params_title.setText(
                small("Select a ranking function to edit its parameters.", self)
            )
            self.params_form.hide()
            self.copy_button.setEnabled(False)
            self.remove_button.setEnabled(False)
            return
        variant = self.model.variant(row)
        self.params_title.setText(f"Parameters of <b>{escape(type(variant).display_name())}</b>:")
        self.params_form.set_variant(variant)
        self.params_form.show()
        self.copy_button.setEnabled(True)
        self.remove_button.setEnabled(self.model.removable(row))

    @Slot(dict)
    def _on_params_form_values_changed(self, values: dict[str, float]) -> None:
        row = self._selected_row()
        if row < 0:
            return
        try:
            variant = dataclasses.replace(self.model.variant(row), **values)  # type: ignore[type-var]
        except (TypeError, ValueError):
            return
        self.model.set_variant(row, variant)

    @Slot()
    def _on_copy_button_clicked(self) -> None:
        row = self._selected_row()
        if row >= 0:
            self.view.selectRow(self.model.duplicate(row))

    @Slot()
    def _on_remove_button_clicked(self) -> None:
        row = self._selected_row()
        if row >= 0:
            self.model.remove(row)
            self._on_view_selection_changed()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Share the list's width out again when it is resized (QObject.eventFilter)."""
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        return False

    def _fit_columns(self) -> None:
        # The parameters take what they need, up to PARAMS_SHARE of the list: bm25f's five
        # would otherwise leave the names no room (they elide instead, whole in the tooltips).
        cap = int(self.view.viewport().width() * PARAMS_SHARE)
        want = self.view.sizeHintForColumn(ConfigColumn.PARAMS)
        self.view.horizontalHeader().resizeSection(ConfigColumn.PARAMS, max(min(want, cap), 40))

    @Slot()
    def _on_model_changed(self, *_args: object) -> None:
        self._fit_columns()
        self.changed.emit()
