"""A parameter panel generated from a variant's parameter metadata: slider + spin box each."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QGridLayout,
    QLabel,
    QSlider,
    QToolButton,
    QWidget,
)

from bm25desk.engine import Variant
from bm25desk.engine.scoring.variants import ParamSpec


def _decimals(step: float) -> int:
    return max(1, min(4, -math.floor(math.log10(step)))) if step > 0 else 2


class ParamControl:
    """One parameter's slider and spin box, kept in step."""

    def __init__(self, spec: ParamSpec, value: float) -> None:
        self.spec = spec
        self.steps = max(1, round((spec.hi - spec.lo) / spec.step))
        self.label = QLabel(spec.symbol)
        self.label.setToolTip(f"{spec.symbol}: {spec.help} (default {spec.default:g})")
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, self.steps)  # one position per step
        self.slider.setMinimumWidth(90)
        self.slider.setToolTip(self.label.toolTip())
        self.slider.setAccessibleName(spec.name)
        self.spin = QDoubleSpinBox()
        self.spin.setRange(spec.lo, spec.hi)
        self.spin.setSingleStep(spec.step)
        self.spin.setDecimals(_decimals(spec.step))
        self.spin.setKeyboardTracking(False)
        self.spin.setToolTip(self.label.toolTip())
        self.spin.setAccessibleName(spec.name)
        self.set_value(value)

    def value(self) -> float:
        """Return the current value."""
        return float(self.spin.value())

    def set_value(self, value: float) -> None:
        """Show ``value`` on both controls without emitting."""
        value = min(max(value, self.spec.lo), self.spec.hi)
        for w in (self.slider, self.spin):
            w.blockSignals(True)
        self.spin.setValue(value)
        self.slider.setValue(self._to_slider(value))
        for w in (self.slider, self.spin):
            w.blockSignals(False)

    def _to_slider(self, value: float) -> int:
        span = self.spec.hi - self.spec.lo
        return round((value - self.spec.lo) / span * self.slider.maximum()) if span else 0

    def from_slider(self, position: int) -> float:
        """Return the value at a slider position."""
        span = self.spec.hi - self.spec.lo
        value = self.spec.lo + span * position / max(1, self.slider.maximum())
        return round(value, _decimals(self.spec.step))


class ParamsForm(QWidget):
    """Controls for the current variant's parameters, generated from :meth:`Variant.params`.

    Signals
    -------
    values_changed(dict)
        ``{name: value}`` after any change (slider drag, spin box, reset).
    """

    values_changed = Signal(dict)

    def __init__(self, parent: QWidget | None = None, *, compact: bool = False) -> None:
        super().__init__(parent)
        self._compact = compact
        self._controls: dict[str, ParamControl] = {}
        self._sliders = True
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setHorizontalSpacing(6)
        self._grid.setVerticalSpacing(2)
        self.reset_button = QToolButton()
        self.reset_button.setText("Defaults")
        self.reset_button.setToolTip("Reset the parameters to the variant's defaults (Ctrl+0)")
        self.reset_button.clicked.connect(self.reset)
        self.none_label = QLabel("no parameters")
        self.none_label.setEnabled(False)

    def controls(self) -> dict[str, ParamControl]:
        """Return the controls by parameter name."""
        return dict(self._controls)

    def set_variant(self, variant: Variant) -> None:
        """Rebuild the controls for ``variant``'s parameters, showing its values."""
        while self._grid.count():
            item = self._grid.takeAt(0)
            w = item.widget() if item is not None else None
            if w is not None and w not in (self.reset_button, self.none_label):
                w.hide()  # at once: deleteLater waits for the event loop
                w.deleteLater()
        self._controls = {}
        values = variant.values()
        specs = type(variant).params()
        # In one row, more than two sliders do not fit a 1280-pixel window (bm25f has five
        # parameters): spin boxes only, then; the slider still holds the value in step.
        self._sliders = not (self._compact and len(specs) > 2)
        for i, spec in enumerate(specs):
            control = ParamControl(spec, values.get(spec.name, spec.default))
            self._controls[spec.name] = control
            control.slider.valueChanged.connect(
                lambda pos, c=control: self._on_slider_moved(c, pos)
            )
            control.spin.valueChanged.connect(lambda v, c=control: self._on_spin_changed(c, v))
            if self._compact:
                row, col = 0, i * 3
            else:
                row, col = i, 0
            self._grid.addWidget(control.label, row, col)
            if self._sliders:
                self._grid.addWidget(control.slider, row, col + 1)
            self._grid.addWidget(control.spin, row, col + 2)
        if specs:
            pos = (0, len(specs) * 3) if self._compact else (len(specs), 2)
            self._grid.addWidget(self.reset_button, *pos)
            self.reset_button.show()
            self.none_label.hide()
        else:
            self._grid.addWidget(self.none_label, 0, 0)
            self.none_label.show()
            self.reset_button.hide()

    def focus_chain(self) -> list[QWidget]:
        """Return the controls in keyboard (Tab) order: each slider and spin box, then Defaults."""
        chain: list[QWidget] = []
        for control in self._controls.values():
            chain.extend((control.slider, control.spin) if self._sliders else (control.spin,))
        if self._controls:
            chain.append(self.reset_button)
        return chain

    def values(self) -> dict[str, float]:
        """Return the values shown."""
        return {name: c.value() for name, c in self._controls.items()}

    def set_values(self, values: dict[str, float]) -> None:
        """Show ``values`` (unknown names ignored) without emitting."""
        for name, value in values.items():
            if name in self._controls:
                self._controls[name].set_value(value)

    @Slot()
    def reset(self) -> None:
        """Restore every parameter's default and emit."""
        for c in self._controls.values():
            c.set_value(c.spec.default)
        self.values_changed.emit(self.values())

    def _on_slider_moved(self, control: ParamControl, position: int) -> None:
        value = control.from_slider(position)
        control.spin.blockSignals(True)
        control.spin.setValue(value)
        control.spin.blockSignals(False)
        self.values_changed.emit(self.values())

    def _on_spin_changed(self, control: ParamControl, value: float) -> None:
        control.slider.blockSignals(True)
        control.slider.setValue(control._to_slider(value))
        control.slider.blockSignals(False)
        self.values_changed.emit(self.values())
