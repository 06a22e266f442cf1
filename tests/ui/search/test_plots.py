"""Plot data for every variant, and the plots panel drawing it."""

from __future__ import annotations

import numpy as np
import pytest

from bm25desk.engine import all_variants, get_variant
from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.search.plot_data import plot_data
from bm25desk.ui.search.plots import PlotsPanel


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
