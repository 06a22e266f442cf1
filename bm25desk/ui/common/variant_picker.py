"""Choose a ranking function and its parameters: a combo of every variant plus a ParamsForm."""

from __future__ import annotations

import dataclasses
from html import escape

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from bm25desk.engine import Variant, VariantError, get_variant, variant_classes
from bm25desk.ui.common.params_form import ParamsForm


def variant_tooltip(cls: type[Variant]) -> str:
    """Return a variant's formula and citation for tooltips."""
    lines = [
        f"<b>{escape(cls.display_name())}</b>",
        f"idf = {escape(cls.idf_formula)}",
        f"tf part = {escape(cls.tf_formula)}",
        "w(t, d) = qtf · idf · tf part, summed over the query terms in the document",
    ]
    if cls.citation:
        lines.append(f"<i>{escape(cls.citation)}</i>")
    return "<br>".join(lines)


def variant_summary(variant: Variant) -> str:
    """Return the variant's one name with its parameters: ``BM25L (…) [bm25l] k1=1.2 b=0.75``.

    Everywhere a variant is named (status bar, formula line, ledger, Compare, Evaluation) it is
    named this way: the registry's label, its key in brackets, then the parameters.
    """
    return variant.display_with_params()


def variant_html(variant: Variant) -> str:
    """Return :func:`variant_summary` as rich text: the label, then the key and values small."""
    cls = type(variant)
    rest = variant.display_with_params()[len(cls.label) :].strip()
    return f"{escape(cls.label)} <small>{escape(rest)}</small>"


class VariantPicker(QWidget):
    """A variant combo (formula tooltips) and its generated parameter controls.

    Each variant remembers its own parameters while the user switches between them.

    Signals
    -------
    variant_changed(object)
        The chosen :class:`Variant` (with its parameters) after any change.
    """

    variant_changed = Signal(object)

    def __init__(self, parent: QWidget | None = None, *, layout: str = "stacked") -> None:
        """Build the controls, placed as ``layout`` says.

        ``stacked``: the combo over the parameters, with the formula; ``row``: the combo over
        the parameters, no formula; ``detached``: the caller places :attr:`combo`,
        :attr:`formula` and :attr:`params` in its own layout.
        """
        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for cls in variant_classes():
            self.combo.addItem(cls.display_name(), cls.key)
            self.combo.setItemData(
                self.combo.count() - 1, variant_tooltip(cls), Qt.ItemDataRole.ToolTipRole
            )
        self.params = ParamsForm(compact=layout != "stacked")
        self.formula = QLabel()
        self.formula.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.formula.setWordWrap(True)
        self._params: dict[str, dict[str, float]] = {}
        self._variant: Variant = get_variant(str(self.combo.currentData()))
        if layout == "row":
            box = QVBoxLayout(self)
            box.setContentsMargins(0, 0, 0, 0)
            top = QHBoxLayout()
            top.addWidget(self.combo)
            top.addStretch(1)
            box.addLayout(top)
            box.addWidget(self.params)
            self.formula.hide()
        elif layout == "stacked":
            box = QVBoxLayout(self)
            box.setContentsMargins(0, 0, 0, 0)
            box.addWidget(self.combo)
            box.addWidget(self.formula)
            box.addWidget(self.params)
        else:
            self.hide()
        self.combo.currentIndexChanged.connect(self._on_combo_current_index_changed)
        self.params.values_changed.connect(self._on_params_values_changed)
        self._show(self._variant)

    def variant(self) -> Variant:
        """Return the chosen variant with its parameters."""
        return self._variant

    def set_variant(self, variant: Variant) -> None:
        """Show ``variant`` and its parameters (emits ``variant_changed``)."""
        self._params[variant.key] = variant.values()
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(self.combo.findData(variant.key))
        self.combo.blockSignals(False)
        self._apply(variant)

    def set_key(self, key: str, params: dict[str, float] | None = None) -> None:
        """Choose variant ``key`` with ``params`` (invalid values fall back to defaults)."""
        try:
            variant = get_variant(key, **(params or {}))
        except VariantError:
            try:
                variant = get_variant(key)
            except VariantError:
                variant = get_variant(str(self.combo.itemData(0)))
        self.set_variant(variant)

    def step(self, delta: int) -> None:
        """Choose the next (``delta`` = 1) or previous (-1) variant in the list."""
        n = self.combo.count()
        self.combo.setCurrentIndex((self.combo.currentIndex() + delta) % n)

    def remember(self, key: str, params: dict[str, float]) -> None:
        """Use ``params`` the next time variant ``key`` is chosen."""
        self._params[key] = dict(params)

    def remembered(self) -> dict[str, dict[str, float]]:
        """Return the parameters each variant was last used with."""
        return {**self._params, self._variant.key: self._variant.values()}

    def _apply(self, variant: Variant) -> None:
        changed = variant != self._variant
        self._variant = variant
        self._show(variant)
        if changed:
            self.variant_changed.emit(variant)

    def _show(self, variant: Variant) -> None:
        cls = type(variant)
        self.params.set_variant(variant)
        self.combo.setToolTip(variant_tooltip(cls))
        self.formula.setText(
            f"<small>idf = {escape(cls.idf_formula)}<br>tf part = {escape(cls.tf_formula)}</small>"
        )
        self.formula.setToolTip(variant_tooltip(cls))

    @Slot(int)
    def _on_combo_current_index_changed(self, _index: int) -> None:
        self._params[self._variant.key] = self._variant.values()
        key = str(self.combo.currentData())
        try:
            variant = get_variant(key, **self._params.get(key, {}))
        except VariantError:
            variant = get_variant(key)
        self._apply(variant)

    @Slot(dict)
    def _on_params_values_changed(self, values: dict[str, float]) -> None:
        try:
            variant = dataclasses.replace(self._variant, **values)  # type: ignore[type-var]
        except (TypeError, ValueError):
            return
        self._variant = variant
        self._params[variant.key] = variant.values()
        self.variant_changed.emit(variant)
