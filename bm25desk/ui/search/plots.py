"""Live plots (pyqtgraph): tf saturation, length normalisation and idf against df, one at a time.

They redraw from a :class:`~bm25desk.ui.search.plot_data.PlotData` computed off the GUI thread
each time the selection, the variant or a parameter changes, so dragging k1 or b bends the curves
live. Each plot has a tab of its own, so that it is never smaller than :data:`MIN_PLOT_SIZE`.

Readability: every query term has a colour and a marker shape (a legend under the plots says
which), so points that coincide stay distinguishable (their markers are drawn large to small, one
inside the other); log axes are labelled at decades only (1, 10, 100, 1k …); hovering a point
shows its exact numbers; the document's points are drawn above the curves.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from bm25desk.ui.common.colors import TermColors, muted_text
from bm25desk.ui.common.plot_style import make_plot, style_plot
from bm25desk.ui.search.plot_data import PlotData, Point, Series

MIN_PLOT_SIZE = QSize(240, 160)
"""No plot is drawn smaller than this (pixels); the detail area keeps room for it."""

SYMBOLS = ("o", "s", "t", "d", "star", "h", "p", "t1", "x", "+")
"""Marker shapes, by the term's position in the query (as its colour)."""
SYMBOL_GLYPHS = ("●", "■", "▲", "◆", "★", "⬢", "⬟", "▼", "✕", "✚")
"""The same shapes as text, for the legend."""
POINTS_Z = 10  # above curves and lines
POINTS_NOTE = "Points: this document's query terms. Curves: the current variant and parameters."


def decade_label(exponent: int) -> str:
    """Return ``1``, ``10``, ``100``, ``1k`` … ``1M`` for 10**exponent."""
    value = 10**exponent
    for unit, size in (("M", 10**6), ("k", 10**3)):
        if value >= size:
            return f"{value // size:,}{unit}"
    return f"{value:g}" if exponent >= 0 else f"{value:.{-exponent}f}"


class DecadeAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph has no type hints
    """A log axis labelled only at decades (the other ticks stay, unlabelled)."""

    def logTickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        """Return labels for decades, blanks elsewhere (pyqtgraph.AxisItem.logTickStrings)."""
        out = []
        for v in values:
            exponent = round(v)
            out.append(decade_label(exponent) if abs(v - exponent) < 1e-6 else "")
        return out


def _tip_tf(x: float, y: float, data: object) -> str:
    return f"{data}: tf = {x:.4g} → tf part = {y:.4g}"


def _tip_length(x: float, y: float, data: object) -> str:
    return f"{data}: L = {x:.4g} → tf part = {y:.4g}"


def _tip_idf(x: float, y: float, data: object) -> str:
    return f"{data}: df = {10**x:,.0f} → idf = {y:.4g}"


LEGEND_TERMS = 10
"""At most this many terms are keyed in the legend; the rest are counted."""


def legend_terms(data: PlotData, terms: list[str]) -> list[str]:
    """Return the terms to key: all of them, or the LEGEND_TERMS adding most to the score.

    A term's share is its idf times its tf part in this document (0 where it is absent); the
    terms keep their query order.
    """
    if len(terms) <= LEGEND_TERMS:
        return terms
    idf = {p.term: p.y for p in data.idf_points}
    part = {p.term: p.y for p in data.tf_points}

    def share(t: str) -> float:
        value = idf.get(t, 0.0) * part.get(t, 0.0)
        return value if math.isfinite(value) else 0.0

    best = set(sorted(terms, key=share, reverse=True)[:LEGEND_TERMS])
    return [t for t in terms if t in best]


class PlotsPanel(QWidget):
    """The three plots of the current variant (one tab each), with the document's points."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        pal = self.palette()
        self.tf_plot = make_plot("", "tf (occurrences in the document)", "tf part", pal)
        self.length_plot = make_plot("", "L (document length)", "tf part", pal)
        self.idf_plot = make_plot(
            "", "df (documents containing the term)", "idf", pal, axes={"bottom": DecadeAxis}
        )
        self.idf_plot.getPlotItem().setLogMode(x=True, y=False)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        for plot, title in (
            (self.tf_plot, "tf saturation"),
            (self.length_plot, "Length"),
            (self.idf_plot, "idf against df"),
        ):
            plot.setMinimumSize(MIN_PLOT_SIZE)
            self.tabs.addTab(plot, title)
        for i, tip in enumerate(
            (
                "The tf part over tf, at this document's length",
                "The tf part over the document length, at each term's tf",
                "The variant's idf over df (log scale), the query terms marked",
            )
        ):
            self.tabs.setTabToolTip(i, f"{tip}. {POINTS_NOTE}")
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 4)
        layout.setSpacing(2)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.legend)
        self._data: PlotData | None = None
        self._colors = TermColors()
        # (plot id, name) → (plot, item): curves, scatters and lines, updated in place
        self._items: dict[tuple[int, str], tuple[pg.PlotWidget, Any]] = {}
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)

    def _on_tabs_current_changed(self, _index: int) -> None:
        if self._data is not None:
            self.legend.setText(self._legend(self._data))

    def plots(self) -> tuple[pg.PlotWidget, pg.PlotWidget, pg.PlotWidget]:
        """Return the tf, length and idf plots."""
        return self.tf_plot, self.length_plot, self.idf_plot

    def data(self) -> PlotData | None:
        """Return the data drawn."""
        return self._data

    def set_data(self, data: PlotData | None, colors: TermColors) -> None:
        """Redraw from ``data`` (None: clear).

        Items are kept and updated in place (curves, points, lines): a slider drag then costs a
        few ``setData`` calls instead of rebuilding three scenes.
        """
        self._data = data
        self._colors = colors
        wanted: set[tuple[int, str]] = set()
        if data is None:
            self._prune(wanted)
            self.tabs.setTabText(0, "tf saturation")
            self.legend.setText("")
            return
        length = f"L = {data.length:.0f}" if data.length is not None else "L = Lavg"
        self.tabs.setTabText(0, f"tf saturation ({length})")
        self.tf_plot.setLabel("bottom", data.tf_axis)  # bm25f: its pseudo-tf
        wanted |= self._draw(self.tf_plot, data.tf_curves, data.tf_points, _tip_tf)
        wanted |= self._draw(self.length_plot, data.length_curves, data.length_points, _tip_length)
        wanted.add(self._vline(self.length_plot, data.avgdl, "Lavg", dashed=True))
        if data.length is not None:
            wanted.add(self._vline(self.length_plot, data.length, "this doc", dashed=False))
        curve = (data.idf_curve,) if data.idf_curve is not None else ()
        wanted |= self._draw(self.idf_plot, curve, data.idf_points, _tip_idf, log_x=True)
        zero_key = (id(self.idf_plot), "zero")
        if zero_key not in self._items:
            zero = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen(self._muted(), width=1))
            self._add(self.idf_plot, zero_key, zero)
        wanted.add(zero_key)
        self._prune(wanted)
        self.legend.setText(self._legend(data))

    def _legend(self, data: PlotData) -> str:
        """Return the legend: each term's colour and marker, the lines, and the notes."""
        muted = muted_text(self.palette()).name()
        terms = list(dict.fromkeys(p.term for p in (*data.idf_points, *data.tf_points)))
        shown = legend_terms(data, terms)
        keys = [
            f"<span style='color:{self._colors.color(t).name()}'>{self._glyph(t)}</span>"
            f"&nbsp;{escape(t)}"
            for t in shown
        ]
        if len(shown) < len(terms):
            # A pasted paragraph has 60 terms: keyed whole, the legend took the plots' room.
            keys.append(
                f"<span style='color:{muted}'>+&nbsp;{len(terms) - len(shown)}&nbsp;more "
                "(hover&nbsp;a&nbsp;point)</span>"
            )
        lines = [f"┆ Lavg = {data.avgdl:.1f}"]
        if data.length is not None:
            lines.append(f"│ this doc L = {data.length:.0f}")
        text = " &nbsp; ".join(keys)
        if self.tabs.currentWidget() is self.length_plot:
            # Each entry wraps whole ("this doc L =" then "134" on the next line was seen).
            text += " &nbsp; " + " &nbsp; ".join(escape(ln).replace(" ", "&nbsp;") for ln in lines)
        # Notes about the idf (BM25Adpt's G¹, relevance feedback) show under the idf plot; all
        # notes are in the legend's tooltip.
        tip = " ".join((POINTS_NOTE, *data.notes))
        if len(shown) < len(terms):
            tip = f"<qt>{escape(tip)}<br><br>The {len(shown)} terms keyed here add the most to "
            tip += f"this document's score; all {len(terms)}: {escape(', '.join(terms))}</qt>"
        self.legend.setToolTip(tip)
        if data.notes and self.tabs.currentWidget() is self.idf_plot:
            text += f"<br><small style='color:{muted}'>{escape(' '.join(data.notes))}</small>"
        return text

    def _glyph(self, term: str) -> str:
        terms = self._colors.terms
        i = terms.index(term) if term in terms else 0
        return SYMBOL_GLYPHS[i % len(SYMBOL_GLYPHS)]

    # -- retained items --------------------------------------------------------------------------

    def _add(self, plot: pg.PlotWidget, key: tuple[int, str], item: object) -> None:
        plot.getPlotItem().addItem(item)
        self._items[key] = (plot, item)

    def _prune(self, wanted: set[tuple[int, str]]) -> None:
        for key in [k for k in self._items if k not in wanted]:
            plot, item = self._items.pop(key)
            plot.getPlotItem().removeItem(item)

    def _muted(self) -> QColor:
        return muted_text(self.palette())

    def _curve_pen(self, term: str | None) -> Any:
        color = self._colors.color(term) if term is not None else self._muted()
        return pg.mkPen(color, width=2)

    def _draw(
        self,
        plot: pg.PlotWidget,
        curves: tuple[Series, ...],
        points: tuple[Point, ...],
        tip: Any,
        *,
        log_x: bool = False,
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
        if points:
            wanted.add(self._points(plot, points, tip, log_x))
        return wanted

    def _points(
        self, plot: pg.PlotWidget, points: tuple[Point, ...], tip: Any, log_x: bool
    ) -> tuple[int, str]:
        """Draw ``points``: each term in its colour and shape, larger ones first (underneath)."""
        base = self.palette().color(QPalette.ColorRole.Base)
        terms = self._colors.terms
        order = sorted(range(len(points)), key=lambda i: -self._size(points[i].term))
        xs = [points[i].x for i in order]
        spots = {
            "x": np.log10(xs) if log_x else np.asarray(xs, dtype=np.float64),
            "y": [points[i].y for i in order],
            "data": [points[i].term for i in order],
            "size": [self._size(points[i].term) for i in order],
            "symbol": [
                SYMBOLS[(terms.index(points[i].term) if points[i].term in terms else 0) % 10]
                for i in order
            ],
            "brush": [pg.mkBrush(self._colors.color(points[i].term)) for i in order],
            "pen": pg.mkPen(base, width=1.5),
        }
        key = (id(plot), "points")
        entry = self._items.get(key)
        if entry is None:
            scatter = pg.ScatterPlotItem(hoverable=True, tip=tip, **spots)
            scatter.setZValue(POINTS_Z)
            self._add(plot, key, scatter)
        else:
            entry[1].setData(**spots)
        return key

    def _size(self, term: str) -> float:
        """Return a term's marker size: the first term's largest, so coinciding ones nest."""
        terms = self._colors.terms
        i = terms.index(term) if term in terms else 0
        return max(7.0, 15.0 - 2.0 * i)

    def _vline(self, plot: pg.PlotWidget, x: float, name: str, *, dashed: bool) -> tuple[int, str]:
        key = (id(plot), f"vline:{name}")
        entry = self._items.get(key)
        if entry is not None:
            entry[1].setValue(x)
            return key
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        line = pg.InfiniteLine(pos=x, angle=90, pen=pg.mkPen(self._muted(), width=1, style=style))
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
