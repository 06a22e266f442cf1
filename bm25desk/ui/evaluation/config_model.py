"""The configurations to evaluate: every variant (and copies with other parameters), checkable."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QModelIndex, Qt

from bm25desk.engine import Variant, all_variants
from bm25desk.ui.common.table_model import ModelIndex, RowTableModel
from bm25desk.ui.common.variant_picker import variant_tooltip
from bm25desk.ui.evaluation.labels import params_text


@dataclass(frozen=True, slots=True)
class ConfigRow:
    """One configuration in the list: a variant with its parameters, and whether to run it."""

    variant: Variant
    checked: bool


class ConfigColumn(IntEnum):
    """Columns of :class:`ConfigsModel`."""

    VARIANT = 0
    PARAMS = 1


class ConfigsModel(RowTableModel[ConfigRow]):
    """Every variant (and copies with other parameters), checkable, with its parameters."""

    headers = ("Ranking function", "Parameters")
    rich_tooltips = True  # the variant's formula, formatted (no document content)

    def checked(self) -> tuple[Variant, ...]:
        """Return the checked configurations, in list order."""
        return tuple(r.variant for r in self._rows if r.checked)

    def variant(self, row: int) -> Variant:
        """Return the configuration of ``row``."""
        return self._rows[row].variant

    def _replace(self, row: int, new: ConfigRow) -> None:
        self._rows = (*self._rows[:row], new, *self._rows[row + 1 :])

    def set_variant(self, row: int, variant: Variant) -> None:
        """Change the parameters (or variant) of ``row``."""
        self._replace(row, replace(self._rows[row], variant=variant))
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(ConfigColumn) - 1))

    def set_checked(self, row: int, checked: bool) -> None:
        """Check or uncheck ``row``."""
        self._replace(row, replace(self._rows[row], checked=checked))
        idx = self.index(row, ConfigColumn.VARIANT)
        self.dataChanged.emit(idx, idx, [Qt.ItemDataRole.CheckStateRole])

    def check_all(self, checked: bool) -> None:
        """Check or uncheck every row."""
        self._rows = tuple(replace(r, checked=checked) for r in self._rows)
        self.emit_column_changed(ConfigColumn.VARIANT, [Qt.ItemDataRole.CheckStateRole])

    def duplicate(self, row: int) -> int:
        """Insert a checked copy of ``row`` below it (to run other parameters); return its row."""
        new = ConfigRow(self._rows[row].variant, True)
        self.beginInsertRows(QModelIndex(), row + 1, row + 1)
        self._rows = (*self._rows[: row + 1], new, *self._rows[row + 1 :])
        self.endInsertRows()
        return row + 1

    def remove(self, row: int) -> None:
        """Remove ``row`` (only copies: one row of each variant always stays)."""
        if not self.removable(row):
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        self._rows = (*self._rows[:row], *self._rows[row + 1 :])
        self.endRemoveRows()

    def removable(self, row: int) -> bool:
        """Return whether ``row`` is a copy that :meth:`remove` would remove."""
        if not 0 <= row < len(self._rows):
            return False
        key = self._rows[row].variant.key
        return sum(1 for r in self._rows if r.variant.key == key) > 1

    def display(self, row: ConfigRow, column: int) -> str:
        """Return the variant's label or its parameters."""
        if column == ConfigColumn.VARIANT:
            return type(row.variant).display_name()
        return params_text(row.variant)

    def tooltip(self, row: ConfigRow, column: int) -> str:
        """Return the variant's formula and citation, or its parameters whole."""
        if column == ConfigColumn.PARAMS:
            return params_text(row.variant)
        return variant_tooltip(type(row.variant))

    def cell_data(self, row: ConfigRow, column: int, role: int) -> Any:
        """Return the check mark of the first column."""
        if role == Qt.ItemDataRole.CheckStateRole and column == ConfigColumn.VARIANT:
            return Qt.CheckState.Checked if row.checked else Qt.CheckState.Unchecked
        return None

    def flags(self, index: ModelIndex) -> Qt.ItemFlag:
        """Make the first column checkable (QAbstractTableModel.flags)."""
        if not self.valid(index):
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == ConfigColumn.VARIANT:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def setData(self, index: ModelIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """Check or uncheck a configuration (QAbstractTableModel.setData)."""
        if (
            not self.valid(index)
            or role != Qt.ItemDataRole.CheckStateRole
            or index.column() != ConfigColumn.VARIANT
        ):
            return False
        state = value.value if isinstance(value, Qt.CheckState) else int(value)
        self.set_checked(index.row(), state == Qt.CheckState.Checked.value)
        return True


def default_rows(checked: Sequence[str]) -> list[ConfigRow]:
    """Return one row per registered variant, those in ``checked`` (keys) checked."""
    return [ConfigRow(v, v.key in checked) for v in all_variants()]


def rows_for(variants: Sequence[Variant]) -> list[ConfigRow]:
    """Return one row per registered variant, with exactly ``variants`` checked.

    A variant given more than once (other parameters) gets one row per setting.
    """
    rows: list[ConfigRow] = []
    for v in all_variants():
        mine = [w for w in variants if w.key == v.key]
        rows.extend([ConfigRow(w, True) for w in mine] or [ConfigRow(v, False)])
    return rows
