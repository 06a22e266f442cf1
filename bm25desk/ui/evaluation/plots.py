"""Plots of the Evaluation view (pyqtgraph): results as grouped bars, the sweep heatmap.

The bar chart has one group per metric and one bar per configuration, in the configuration's
colour (the same as in the tables). The heatmap shows one metric over two swept parameters (the
first two axes of the sweep; a third, δ, is shown one slice at a time), with the value in each cell
when the grid is small enough to read, a colour bar, the best cell outlined, and the clicked cell
reported by :attr:`SweepHeatmap.cell_clicked`.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QGraphicsRectItem, QLabel, QVBoxLayout, QWidget

from bm25desk.evaluation.evaluate import ExperimentResult, SweepResult
from bm25desk.ui.common.colors import mix, muted_text
from bm25desk.ui.common.plot_style import make_plot, style_plot
from bm25desk.ui.common.variant_picker import variant_summary
from bm25desk.ui.evaluation.labels import config_color

# Viridis (perceptually uniform, readable in grey and by most colour-blind readers), written out
# so that no colour-map file has to be found at run time (PyInstaller bundles).
_VIRIDIS = pg.ColorMap(
    pos=np.array([0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0]),
    color=np.array(
        [
            (68, 1, 84),
            (71, 44, 122),
            (59, 81, 139),
            (44, 113, 142),
            (33, 144, 141),
            (39, 173, 129),
            (92, 200, 99),
            (170, 220, 50),
            (253, 231, 37),
        ],
        dtype=np.uint8,
    ),
)

AXIS_LABELS = {"k1": "k1", "b": "b", "delta": "δ"}
_MAX_CELL_LABELS = 160


def axis_label(name: str) -> str:
    """Return the symbol of a swept parameter (``delta`` → ``δ``)."""
    return AXIS_LABELS.get(name, name)


class MetricBars(QWidget):
    """Grouped bars: one group per metric, one bar per configuration, and a legend below."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plot = make_plot("", "", "value", self.palette())
        self.plot.setMinimumHeight(180)
        item = self.plot.getPlotItem()
        item.showGrid(x=False, y=True, alpha=0.15)
        item.getAxis("left").enableAutoSIPrefix(False)
        item.getViewBox().setDefaultPadding(0.02)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.legend)
        self._bars: list[pg.BarGraphItem] = []
        self._result: ExperimentResult | None = None

    def bars(self) -> tuple[pg.BarGraphItem, ...]:
        """Return the bar items (one per configuration)."""
        return tuple(self._bars)

    def set_result(self, result: ExperimentResult | None) -> None:
        """Draw ``result`` (None: clear)."""
        self._result = result
        item = self.plot.getPlotItem()
        for bar in self._bars:
            item.removeItem(bar)
        self._bars = []
        if result is None or not result.configs:
            self.legend.setText("")
            item.getAxis("bottom").setTicks(None)
            return
        n = len(result.configs)
        group = min(0.8, 0.2 * n)  # a lone bar stays a bar, not a wall
        width = group / n
        xs = np.arange(len(result.metrics), dtype=np.float64)
        top = 0.0
        base = self.palette().color(QPalette.ColorRole.Base)
        for i, c in enumerate(result.configs):
            heights = np.array([c.aggregate[m] for m in result.metrics], dtype=np.float64)
            heights = np.where(np.isfinite(heights), heights, 0.0)
            top = max(top, float(heights.max(initial=0.0)))
            color = config_color(i)
            bar = pg.BarGraphItem(
                x=xs - group / 2 + width * (i + 0.5),
                height=heights,
                width=width * 0.92,
                brush=pg.mkBrush(color),
                pen=pg.mkPen(mix(color, base, 0.4), width=1),
                name=variant_summary(c.variant),
            )
            item.addItem(bar)
            self._bars.append(bar)
        item.getAxis("bottom").setTicks([[(float(j), m) for j, m in enumerate(result.metrics)]])
        item.setXRange(-0.5, len(result.metrics) - 0.5, padding=0)
        item.setYRange(0.0, max(0.05, min(1.0, top * 1.12)) if top <= 1.0 else top * 1.1)
        self.legend.setText(
            " &nbsp; ".join(
                f"<span style='color:{config_color(i).name()}'>■</span>&nbsp;"
                f"{escape(variant_summary(c.variant))}"
                for i, c in enumerate(result.configs)
            )
        )

    def changeEvent(self, event: QEvent) -> None:
        """Follow palette changes (light/dark) (QWidget.changeEvent)."""
        if event.type() == QEvent.Type.PaletteChange:
            style_plot(self.plot, self.palette())
            self.set_result(self._result)
        super().changeEvent(event)


class SweepHeatmap(QWidget):
    """One metric over two swept parameters, as a heatmap with a colour bar.

    Signals
    -------
    cell_clicked(object)
        The clicked cell's full grid index (a tuple, including the δ slice shown).
    """

    cell_clicked = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pal = self.palette()
        self.plot = make_plot("", "", "", pal)
        self.plot.setMinimumSize(320, 240)
        item = self.plot.getPlotItem()
        item.showGrid(x=False, y=False)
        item.getViewBox().setDefaultPadding(0.0)
        self.image = pg.ImageItem(axisOrder="row-major")
        item.addItem(self.image)
        self.colorbar = pg.ColorBarItem(
            values=(0.0, 1.0),
            colorMap=_VIRIDIS,
            interactive=False,
            width=14,
            colorMapMenu=False,
        )
        self.colorbar.setImageItem(self.image, insert_in=item)
        self.best_box = QGraphicsRectItem()
        self.best_box.setZValue(10)
        self.best_box.hide()
        item.addItem(self.best_box, ignoreBounds=True)
        self.chosen_box = QGraphicsRectItem()
        self.chosen_box.setZValue(11)
        self.chosen_box.hide()
        item.addItem(self.chosen_box, ignoreBounds=True)
        self._labels: list[pg.TextItem] = []
        self._sweep: SweepResult | None = None
        self._metric = ""
        self._slice = 0
        self._shape2d: tuple[int, int] = (0, 0)
        self._chosen: tuple[int, ...] | None = None
        self.plot.scene().sigMouseClicked.connect(self._on_scene_mouse_clicked)
        self.plot.scene().sigMouseMoved.connect(self._on_scene_mouse_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        self._style_boxes()

    # -- data ------------------------------------------------------------------------------------

    def sweep(self) -> SweepResult | None:
        """Return the sweep shown."""
        return self._sweep

    def slice_index(self) -> int:
        """Return the δ slice shown (0 when the sweep has two axes or fewer)."""
        return self._slice

    def set_sweep(self, sweep: SweepResult | None, metric: str = "", slice_index: int = 0) -> None:
        """Draw ``sweep``'s grid of ``metric`` (default: its first), δ slice ``slice_index``."""
        self._sweep = sweep
        self._chosen = None
        self.chosen_box.hide()
        item = self.plot.getPlotItem()
        for label in self._labels:
            item.removeItem(label)
        self._labels = []
        if sweep is None:
            self.image.clear()
            self.best_box.hide()
            item.setTitle("")
            item.getAxis("bottom").setTicks(None)
            item.getAxis("left").setTicks(None)
            self._shape2d = (0, 0)
            return
        self._metric = metric if metric in sweep.grids else sweep.metrics[0]
        n_axes = len(sweep.axes)
        self._slice = min(max(0, slice_index), len(sweep.values[2]) - 1) if n_axes > 2 else 0
        grid2d = self._grid2d()
        nx, ny = grid2d.shape
        self._shape2d = (nx, ny)
        all_finite = sweep.grids[self._metric][np.isfinite(sweep.grids[self._metric])]
        # One colour scale for every δ slice, so that slices can be compared by eye.
        lo = float(all_finite.min()) if all_finite.size else 0.0
        hi = float(all_finite.max()) if all_finite.size else 1.0
        if hi - lo < 1e-12:
            lo, hi = lo - 0.5e-3, hi + 0.5e-3
        shown = np.where(np.isfinite(grid2d), grid2d, lo)
        self.image.setImage(shown.T, levels=(lo, hi), autoLevels=False)
        self.image.setRect(QRectF(-0.5, -0.5, nx, ny))
        self.colorbar.setLevels((lo, hi))
        x_name = sweep.axes[0]
        y_name = sweep.axes[1] if n_axes > 1 else ""
        item.getAxis("bottom").setTicks(
            [[(float(i), f"{v:g}") for i, v in enumerate(sweep.values[0])]]
        )
        left_ticks = (
            [(float(j), f"{v:g}") for j, v in enumerate(sweep.values[1])] if n_axes > 1 else []
        )
        item.getAxis("left").setTicks([left_ticks])
        item.setLabel("bottom", axis_label(x_name))
        item.setLabel("left", axis_label(y_name))
        title = f"{self._metric} of {type(sweep.base).display_name()}"
        if n_axes > 2:
            title += f" at {axis_label(sweep.axes[2])} = {sweep.values[2][self._slice]:g}"
        text = self.palette().color(QPalette.ColorRole.Text)
        item.setTitle(escape(title), size="10pt", color=text.name())
        item.setXRange(-0.5, nx - 0.5, padding=0)
        item.setYRange(-0.5, ny - 0.5, padding=0)
        if nx * ny <= _MAX_CELL_LABELS:
            self._draw_labels(grid2d, lo, hi)
        best = sweep.best[self._metric].index
        if n_axes <= 2 or best[2] == self._slice:
            bx, by = best[0], best[1] if n_axes > 1 else 0
            self.best_box.setRect(QRectF(bx - 0.5, by - 0.5, 1.0, 1.0))
            self.best_box.show()
        else:
            self.best_box.hide()

    def _grid2d(self) -> np.ndarray:
        """Return the shown slice as an array indexed ``[x, y]``."""
        assert self._sweep is not None
        grid = np.asarray(self._sweep.grids[self._metric], dtype=np.float64)
        if grid.ndim == 1:
            return grid.reshape(-1, 1)
        if grid.ndim == 2:
            return grid
        return grid[:, :, self._slice]

    def _draw_labels(self, grid2d: np.ndarray, lo: float, hi: float) -> None:
        item = self.plot.getPlotItem()
        nx, ny = grid2d.shape
        for i in range(nx):
            for j in range(ny):
                v = float(grid2d[i, j])
                t = (v - lo) / (hi - lo) if math.isfinite(v) else 0.0
                color = QColor("#111111") if t > 0.62 else QColor("#f4f4f4")
                label = pg.TextItem(f"{v:.3f}" if math.isfinite(v) else "—", color=color)
                label.setAnchor((0.5, 0.5))
                label.setPos(float(i), float(j))
                label.setZValue(5)
                item.addItem(label, ignoreBounds=True)
                self._labels.append(label)

    def full_index(self, x: int, y: int) -> tuple[int, ...]:
        """Return the sweep's grid index of the shown cell (x, y)."""
        assert self._sweep is not None
        n_axes = len(self._sweep.axes)
        if n_axes == 1:
            return (x,)
        if n_axes == 2:
            return (x, y)
        return (x, y, self._slice)

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        """Return the shown cell (x, y) under a scene position, or None outside the grid."""
        if self._sweep is None:
            return None
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        x, y = round(p.x()), round(p.y())
        nx, ny = self._shape2d
        if 0 <= x < nx and 0 <= y < ny:
            return int(x), int(y)
        return None

    def cell_center(self, x: int, y: int) -> QPointF:
        """Return the scene position of the centre of cell (x, y) (for tests and tooltips)."""
        vb = self.plot.getPlotItem().getViewBox()
        return vb.mapViewToScene(QPointF(float(x), float(y)))

    def mark_chosen(self, x: int, y: int) -> None:
        """Outline cell (x, y) as the one whose parameters were applied."""
        self._chosen = (x, y)
        self.chosen_box.setRect(QRectF(x - 0.5 + 0.08, y - 0.5 + 0.08, 0.84, 0.84))
        self.chosen_box.show()

    def describe_cell(self, x: int, y: int) -> str:
        """Return ``k1 = 0.9, b = 0.4: nDCG@10 = 0.3921`` for a shown cell."""
        assert self._sweep is not None
        cell = self._sweep.cell(self.full_index(x, y), self._metric)
        params = ", ".join(f"{axis_label(a)} = {v:g}" for a, v in cell.params.items())
        return f"{params}: {self._metric} = {cell.value:.4f}"

    # -- events ----------------------------------------------------------------------------------

    def _on_scene_mouse_clicked(self, event: object) -> None:
        if event.button() != Qt.MouseButton.LeftButton:  # type: ignore[attr-defined]
            return
        cell = self.cell_at(event.scenePos())  # type: ignore[attr-defined]
        if cell is None:
            return
        self.mark_chosen(*cell)
        self.cell_clicked.emit(self.full_index(*cell))

    def _on_scene_mouse_moved(self, pos: QPointF) -> None:
        cell = self.cell_at(pos)
        tip = (
            f"{self.describe_cell(*cell)}\nClick to use these parameters in the Search tab"
            if cell is not None
            else ""
        )
        if self.plot.toolTip() != tip:
            self.plot.setToolTip(tip)

    def _style_boxes(self) -> None:
        pal = self.palette()
        best_pen = pg.mkPen(QColor("#ffffff"), width=3)
        self.best_box.setPen(best_pen)
        chosen_pen = pg.mkPen(muted_text(pal), width=2, style=Qt.PenStyle.DashLine)
        chosen_pen.setColor(QColor("#e15759"))
        self.chosen_box.setPen(chosen_pen)

    def changeEvent(self, event: QEvent) -> None:
        """Follow palette changes (light/dark) (QWidget.changeEvent)."""
        if event.type() == QEvent.Type.PaletteChange:
            style_plot(self.plot, self.palette())
            self._style_boxes()
            self.set_sweep(self._sweep, self._metric, self._slice)
        super().changeEvent(event)
