"""Plot data for every variant, and the plots panel drawing it so that a person can read it.

Issue 10: log axes labelled at decades only, markers that stay distinguishable when points
coincide, no labels sitting on the curves (a legend keyed by the term colours and shapes), exact
numbers on hover, the document's points on top, and curves that are 0 where a term is absent.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtWidgets import QApplication

from bm25desk.engine import all_variants, get_variant
from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.search.plot_data import PlotData, Point, Series, plot_data
from bm25desk.ui.search.plots import (
    LEGEND_TERMS,
    SYMBOL_GLYPHS,
    DecadeAxis,
    PlotsPanel,
    decade_label,
)


@pytest.mark.parametrize("variant", all_variants(), ids=lambda v: v.key)
def test_plot_data_for_every_variant(searcher, variant) -> None:
    result = searcher.search("apple fruit", variant, 3)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, variant)
    data = plot_data(searcher, variant, result.analysis.terms, e)
    assert data.tf_curves
    assert data.length_curves
    assert all(np.isfinite(c.ys).all() for c in data.tf_curves)
    matched = {t.term: t for t in e.terms if t.status == "matched"}
    for p in data.tf_points:
        assert p.y == pytest.approx(matched[p.term].tf_part)
    if variant.key == "bm25adpt":
        assert data.idf_curve is None
        assert data.notes
    else:
        assert data.idf_curve is not None
    assert {p.term for p in data.idf_points} == set(result.analysis.terms)


@pytest.mark.parametrize("variant", all_variants(), ids=lambda v: v.key)
def test_every_points_lies_on_its_terms_tf_curve(searcher, variant) -> None:
    """The document's point sits on the curve drawn (bm25f: the curve over its pseudo-tf)."""
    result = searcher.search("apple fruit", variant, 3)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, variant)
    data = plot_data(searcher, variant, result.analysis.terms, e)
    curves = {c.term: c for c in data.tf_curves}
    for p in data.tf_points:
        curve = curves.get(p.term, curves.get(None))
        assert curve is not None
        assert np.interp(p.x, curve.xs, curve.ys) == pytest.approx(p.y, rel=2e-3, abs=2e-3)
    if variant.key == "bm25f":
        assert data.tf_axis.startswith("pseudo-tf")
        assert not data.length_points


def test_curves_follow_the_parameters(searcher) -> None:
    terms = searcher.parse("apple").terms
    a = plot_data(searcher, get_variant("lucene", k1=0.5), terms)
    b = plot_data(searcher, get_variant("lucene", k1=2.5), terms)
    assert not np.allclose(a.tf_curves[0].ys, b.tf_curves[0].ys)


def test_plots_panel_draws_curves_and_points(qtbot, searcher) -> None:
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    v = get_variant("bm25l")
    result = searcher.search("apple orchard", v, 3)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, v)
    panel.set_data(
        plot_data(searcher, v, result.analysis.terms, e), TermColors(result.analysis.terms)
    )
    for plot in panel.plots():
        assert len(plot.getPlotItem().items) >= 2
    panel.set_data(None, TermColors())
    assert all(not p.getPlotItem().listDataItems() for p in panel.plots())


@pytest.mark.parametrize("variant", all_variants(), ids=lambda v: v.key)
def test_an_absent_term_adds_nothing_on_the_tf_curve(searcher, variant) -> None:
    """At tf = 0 every curve is 0 (BM25+'s δ, BM25L's shift and BIM's 1 start at tf > 0)."""
    result = searcher.search("apple fruit", variant, 3)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, variant)
    data = plot_data(searcher, variant, result.analysis.terms, e)
    for curve in data.tf_curves:
        assert curve.xs[0] == 0
        assert curve.ys[0] == 0
        assert (curve.ys[1:] > 0).all()  # and a positive tf part as soon as the term occurs
    if variant.key in {"bm25plus", "bim"}:  # a lower bound: the step shows on the curve
        assert min(c.ys[1] for c in data.tf_curves) >= 0.99


def test_log_axes_are_labelled_at_decades_only(qtbot) -> None:
    assert [decade_label(e) for e in range(7)] == ["1", "10", "100", "1k", "10k", "100k", "1M"]
    assert decade_label(-1) == "0.1"
    axis = DecadeAxis(orientation="bottom")
    values = [0.0, np.log10(2), np.log10(5), 1.0, 2.0, np.log10(300), 3.0]
    assert axis.logTickStrings(values, 1, 1) == ["1", "", "", "10", "100", "", "1k"]

    panel = shown_panel(qtbot)
    panel.set_data(sample_data(n_docs=1460), TermColors(["a", "b"]))
    panel.tabs.setCurrentWidget(panel.idf_plot)
    QApplication.processEvents()
    axis = panel.idf_plot.getPlotItem().getAxis("bottom")
    lo, hi = axis.range
    labels = []
    for spacing, values in axis.tickValues(lo, hi, axis.width()):
        labels += [t for t in axis.tickStrings(values, axis.autoSIPrefixScale, spacing) if t]
    assert labels
    assert set(labels) == {"1", "10", "100", "1k"}, labels


def test_coinciding_points_stay_distinguishable(qtbot) -> None:
    """Three terms on one spot: three shapes, three colours, nested large to small."""
    terms = ["apple", "fruit", "orchard"]
    panel = shown_panel(qtbot)
    panel.set_data(sample_data(same_point=True), TermColors(terms))
    for plot in panel.plots():
        scatter = scatter_of(plot)
        spots = scatter.data
        assert len({(x, y) for x, y in zip(spots["x"], spots["y"], strict=True)}) == 1
        assert len(set(spots["symbol"])) == 3
        assert len({b.color().name() for b in spots["brush"]}) == 3
        sizes = list(spots["size"])
        assert sizes == sorted(sizes, reverse=True)  # drawn big first, small ones on top
        assert len(set(sizes)) == 3
    legend = panel.legend.text()
    for i, term in enumerate(terms):
        assert f"{SYMBOL_GLYPHS[i]}</span>&nbsp;{term}" in legend


def test_no_label_sits_on_a_curve_and_points_are_on_top(qtbot) -> None:
    panel = shown_panel(qtbot)
    panel.set_data(sample_data(), TermColors(["a", "b"]))
    panel.tabs.setCurrentWidget(panel.length_plot)
    for plot in panel.plots():
        items = plot.getPlotItem().items
        assert not [i for i in items if isinstance(i, pg.TextItem)]  # the legend says it
        scatter = scatter_of(plot)
        assert all(scatter.zValue() > i.zValue() for i in items if i is not scatter)
    legend = panel.legend.text().replace("&nbsp;", " ")
    assert "Lavg = 75.9" in legend
    assert "this doc L = 134" in legend


def test_hovering_a_point_shows_its_exact_numbers(qtbot) -> None:
    panel = shown_panel(qtbot)
    panel.set_data(sample_data(same_point=True), TermColors(["apple", "fruit", "orchard"]))
    tips = {}
    for i, plot in enumerate(panel.plots()):
        panel.tabs.setCurrentIndex(i)
        QApplication.processEvents()
        scatter = scatter_of(plot)
        scatter.hoverEvent(Hover(scatter.points()[0].pos()))
        tips[i] = scatter.getViewBox().toolTip()
    assert "apple: tf = 3 → tf part = 1.234" in tips[0]
    assert "fruit: tf = 3 → tf part = 1.234" in tips[0]  # every term on the spot
    assert "orchard: L = 134 → tf part = 1.234" in tips[1]
    assert "apple: df = 660 → idf = 0.7939" in tips[2]


class Hover:
    """The part of a pyqtgraph hover event that ScatterPlotItem.hoverEvent reads."""

    exit = False

    def __init__(self, pos) -> None:
        self._pos = pos

    def pos(self):
        return self._pos


def shown_panel(qtbot) -> PlotsPanel:
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(420, 320)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def scatter_of(plot: pg.PlotWidget) -> pg.ScatterPlotItem:
    (scatter,) = [i for i in plot.getPlotItem().items if isinstance(i, pg.ScatterPlotItem)]
    return scatter


def sample_data(*, same_point: bool = False, n_docs: int = 100) -> PlotData:
    """Return plot data drawn by hand: two terms, or three on one spot of every plot."""
    terms = ("apple", "fruit", "orchard") if same_point else ("a", "b")
    tfs = [3.0] * len(terms) if same_point else [1.0, 4.0]
    dfs = [660.0] * len(terms) if same_point else [5.0, 50.0]
    parts = [1.234] * len(terms) if same_point else [0.8, 1.6]
    idfs = [0.7939] * len(terms) if same_point else [2.5, 1.2]
    xs = np.linspace(0.0, 10.0, 11)
    ls = np.linspace(1.0, 300.0, 11)
    dfg = np.geomspace(1.0, float(n_docs), 11)
    return PlotData(
        "test",
        134.0,
        75.93,
        n_docs,
        (Series(None, xs, xs / (1 + xs)),),
        tuple(Point(t, tf, p) for t, tf, p in zip(terms, tfs, parts, strict=True)),
        (Series(None, ls, 1 / ls),),
        tuple(Point(t, 134.0, p) for t, p in zip(terms, parts, strict=True)),
        Series(None, dfg, np.log(n_docs / dfg)),
        tuple(Point(t, df, i) for t, df, i in zip(terms, dfs, idfs, strict=True)),
    )


def test_a_long_query_keys_its_strongest_terms_and_counts_the_rest(qtbot) -> None:
    """A pasted paragraph (60 terms) keyed whole filled the panel with legend; now the
    LEGEND_TERMS terms that add most to the score are keyed, the rest counted, all in the tip."""
    terms = [f"t{i:02d}" for i in range(60)]
    strong = {"t07", "t59", "t33"}  # the largest idf x tf part, wherever they stand
    xs = np.linspace(0.0, 10.0, 11)
    data = PlotData(
        "test",
        134.0,
        75.9,
        100,
        (Series(None, xs, xs / (1 + xs)),),
        tuple(Point(t, 2.0, 1.5 if t in strong else 0.1 + i / 1000) for i, t in enumerate(terms)),
        (Series(None, xs, xs),),
        tuple(Point(t, 134.0, 1.0) for t in terms),
        Series(None, xs + 1, xs),
        tuple(Point(t, 10.0, 2.0) for t in terms),
    )
    panel = shown_panel(qtbot)
    panel.set_data(data, TermColors(terms))
    legend = panel.legend.text()
    keyed = [t for t in terms if f"&nbsp;{t}" in legend]
    assert len(keyed) == LEGEND_TERMS
    assert strong <= set(keyed)
    assert keyed == sorted(keyed)  # query order
    assert "+&nbsp;50&nbsp;more" in legend
    assert all(t in panel.legend.toolTip() for t in terms)
    assert panel.legend.sizeHint().height() < panel.tf_plot.height()
