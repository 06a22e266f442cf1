"""Live plots (pyqtgraph): tf saturation, length normalisation and idf against df.

They redraw from a :class:`~bm25desk.ui.search.plot_data.PlotData` computed off the GUI thread each
time the selection, the variant or a parameter changes, so dragging k1 or b bends the curves live.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from bm25desk.ui.common.colors import TermColors, muted_text
from bm25desk.ui.common.plot_style import make_plot, style_plot
from bm25desk.ui.search.plot_data import PlotData, Point, Series


def _tip(x: float, y: float, data: object) -> str:
    return f"{data}: ({x:.4g}, {y:.4g})"


def _tip_log(x: float, y: float, data: object) -> str:
    return f"{data}: df {10**x:,.0f}, idf {y:.4g}"


class PlotsPanel(QWidget):
    """The three plots of the current variant, with the selected document's points."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        orientation: Qt.Orientation = Qt.Orientation.Horizontal,
    ) -> None:
        super().__init__(parent)
        pal = self.palette()
        self.tf_plot = make_plot(
            "tf saturation", "tf (occurrences in the document)", "tf part", pal
        )
        self.length_plot = make_plot("Length normalisation", "L (document length)", "tf part", pal)
        self.idf_plot = make_plot(
            "idf against df", "df (documents containing the term)", "idf", pal
        )
        self.idf_plot.getPlotItem().setLogMode(x=True, y=False)
        self.idf_plot.getPlotItem().getViewBox().setDefaultPadding(0.2)  # room for the labels
        self.note = QLabel()
        self.note.setWordWrap(True)
        row = QHBoxLayout() if orientation == Qt.Orientation.Horizontal else QVBoxLayout()
        row.setSpacing(6)
        for p in (self.tf_plot, self.length_plot, self.idf_plot):
            row.addWidget(p, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(row, 1)
        layout.addWidget(self.note)
        self._data: PlotData | None = None
        self._colors = TermColors()
        # (plot id, name) → (plot, item); items are curves, scatters, labels and lines
        self._items: dict[tuple[int, str], tuple[pg.PlotWidget, Any]] = {}

    def plots(self) -> tuple[pg.PlotWidget, pg.PlotWidget, pg.PlotWidget]:
        """Return the tf, length and idf plots."""
        return self.tf_plot, self.length_plot, self.idf_plot

    def data(self) -> PlotData | None:
        """Return the data drawn."""
        return self._data

    def set_data(self, data: PlotData | None, colors: TermColors) -> None:
        """Redraw from ``data`` (None: clear).

        Items are kept and updated in place (curves, points, labels, lines): a slider drag then
        costs a few ``setData`` calls instead of rebuilding three scenes.
        """
        self._data = data
        self._colors = colors
        wanted: set[tuple[int, str]] = set()
        if data is None:
            self._prune(wanted)
            self.note.setText("")
            return
        length = (
            f"L = {data.length:.0f}" if data.length is not None else f"L = Lavg = {data.avgdl:.1f}"
        )
        self._title(self.tf_plot, f"tf saturation at {length}")
        wanted |= self._draw(self.tf_plot, data.tf_curves, data.tf_points)
        wanted |= self._draw(self.length_plot, data.length_curves, data.length_points)
        wanted.add(self._vline(self.length_plot, data.avgdl, "Lavg", dashed=True))
        if data.length is not None:
            wanted.add(self._vline(self.length_plot, data.length, "this doc", dashed=False))
        curve = (data.idf_curve,) if data.idf_curve is not None else ()
        wanted |= self._draw(
            self.idf_plot,
            curve,
            data.idf_points,
            log_x=True,
            label_points=len(data.idf_points) <= 6,
        )
        zero_key = (id(self.idf_plot), "zero")
        if zero_key not in self._items:
            zero = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen(self._muted(), width=1))
            self._add(self.idf_plot, zero_key, zero)
        wanted.add(zero_key)
        self._prune(wanted)
        muted = muted_text(self.palette()).name()
        notes = list(data.notes)
        if data.tf_points:
            notes.insert(
                0,
                "Points: this document's query terms. Curves: the current variant and parameters.",
            )
        self.note.setText(f"<small style='color:{muted}'>{' '.join(notes)}</small>")

    # -- retained items --------------------------------------------------------------------------

    def _add(self, plot: pg.PlotWidget, key: tuple[int, str], item: object) -> None:
        plot.getPlotItem().addItem(item)
        self._items[key] = (plot, item)

    def _prune(self, wanted: set[tuple[int, str]]) -> None:
        for key in [k for k in self._items if k not in wanted]:
            plot, item = self._items.pop(key)
            plot.getPlotItem().removeItem(item)

    def _title(self, plot: pg.PlotWidget, text: str) -> None:
        item = plot.getPlotItem()
        if item.titleLabel.text != text:
            color = self.palette().color(QPalette.ColorRole.Text).name()
            item.setTitle(text, size="9pt", color=color)

    def _muted(self) -> QColor:
        return muted_text(self.palette())

    def _curve_pen(self, term: str | None) -> pg.QtGui.QPen:
        color = self._colors.color(term) if term is not None else self._muted()
        return pg.mkPen(color, width=2)

    def _draw(
        self,
        plot: pg.PlotWidget,
        curves: tuple[Series, ...],
        points: tuple[Point, ...],
        *,
        log_x: bool = False,
        label_points: bool = False,
    ) -> set[tuple[int, str]]:
        wanted: set[tuple[int, str]] = set()
        pid = id(plot)
        for i, c in enumerate(curves):
            xs, ys = np.asarray(c.xs), np.asarray(c.ys)
            ok = np.isfinite(ys) & ((xs > 0) if log_x else True)
            key = (pid, f"curve{i}")
            entry = self._items.get(key)
            if entry is None:
                self._add(plot, key, pg.PlotDataItem(xs[ok], ys[ok], pen=self._curve_pen(c.term)))
            else:
                entry[1].setData(xs[ok], ys[ok])
                entry[1].setPen(self._curve_pen(c.term))
            wanted.add(key)
        if not points:
            return wanted
        base = self.palette().color(QPalette.ColorRole.Base)
        xs_plot = np.log10([p.x for p in points]) if log_x else np.array([p.x for p in points])
        spec = {
            "x": xs_plot,
            "y": [p.y for p in points],
            "data": [p.term for p in points],
            "size": 11,
            "brush": [pg.mkBrush(self._colors.color(p.term)) for p in points],
            "pen": pg.mkPen(base, width=1.5),
        }
        key = (pid, "points")
        entry = self._items.get(key)
        if entry is None:
            scatter = pg.ScatterPlotItem(hoverable=True, tip=_tip_log if log_x else _tip, **spec)
            self._add(plot, key, scatter)
        else:
            entry[1].setData(**spec)
        wanted.add(key)
        if label_points:
            wanted |= self._labels(plot, points, xs_plot, curves, log_x)
        return wanted

    def _labels(
        self,
        plot: pg.PlotWidget,
        points: tuple[Point, ...],
        xs_plot: np.ndarray,
        curves: tuple[Series, ...],
        log_x: bool,
    ) -> set[tuple[int, str]]:
        wanted: set[tuple[int, str]] = set()
        text = self.palette().color(QPalette.ColorRole.Text)
        lo, hi = float(np.min(xs_plot)), float(np.max(xs_plot))
        if curves:
            cx = np.asarray(curves[0].xs)
            cx = np.log10(cx[cx > 0]) if log_x else cx
            lo, hi = min(lo, float(cx.min())), max(hi, float(cx.max()))
        last_x, flip = -np.inf, False
        for i in np.argsort(xs_plot):
            p, x = points[i], float(xs_plot[i])
            # Labels near the right edge grow leftwards, so they stay inside the plot; a label
            # close to the previous one goes below its point instead of above.
            right = hi > lo and (x - lo) / (hi - lo) > 0.7
            close = hi > lo and (x - last_x) / (hi - lo) < 0.12
            flip = close and not flip
            anchor = (1 if right else 0, 0 if flip else 1)
            key = (id(plot), f"label:{p.term}")
            entry = self._items.get(key)
            if entry is None:
                label = pg.TextItem(p.term, color=text, anchor=anchor)
                self._add(plot, key, label)
            else:
                label = entry[1]
                label.setAnchor(anchor)
            label.setPos(x, p.y)
            wanted.add(key)
            last_x = x
        return wanted

    def _vline(self, plot: pg.PlotWidget, x: float, label: str, *, dashed: bool) -> tuple[int, str]:
        key = (id(plot), f"vline:{label}")
        entry = self._items.get(key)
        if entry is not None:
            entry[1].setValue(x)
            return key
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        line = pg.InfiniteLine(
            pos=x,
            angle=90,
            pen=pg.mkPen(self._muted(), width=1, style=style),
            label=label,
            labelOpts={"position": 0.92 if dashed else 0.7, "color": self._muted()},
        )
        self._add(plot, key, line)
        return key

    def changeEvent(self, event: QEvent) -> None:
        """Follow palette changes (light/dark) (QWidget.changeEvent)."""
        if event.type() == QEvent.Type.PaletteChange:
            for p in self.plots():
                style_plot(p, self.palette())
            self._prune(set())  # items carry the old colours: draw them again
            self.set_data(self._data, self._colors)
        super().changeEvent(event)
