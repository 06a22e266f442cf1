"""The Compare tab: moved / entered / left, overlap@k, Kendall τ, a document's change by term."""

from __future__ import annotations

import math

import pytest

from bm25desk.engine import get_variant
from bm25desk.ui.compare.panel import ComparePanel
from bm25desk.ui.compare.work import kendall_tau_b, run_compare


def test_kendall_tau() -> None:
    assert kendall_tau_b([1, 2, 3], [1, 2, 3]) == 1.0
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == -1.0
    assert kendall_tau_b([1], [1]) is None
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(2 / 3)


def test_identical_configurations_agree(searcher) -> None:
    parsed = searcher.parse("apple fruit")
    o = run_compare(searcher, parsed, get_variant("lucene"), get_variant("lucene"), 5)
    assert o.overlap == len(o.result_a.hits)
    assert o.tau == 1.0
    assert all(r.movement == "same" for r in o.rows)


def test_different_configurations_move_documents(searcher) -> None:
    parsed = searcher.parse("fruit trees orchard")
    o = run_compare(searcher, parsed, get_variant("lucene"), get_variant("bim"), 3)
    moves = {r.movement for r in o.rows}
    assert moves - {"same"}
    for r in o.rows:
        if r.movement == "entered":
            assert r.in_b
            assert not r.in_a
            assert r.rank_a > 3
        if r.movement == "left":
            assert r.in_a
            assert not r.in_b
            assert r.rank_b > 3
    assert o.tau is None or -1.0 <= o.tau <= 1.0
    for col in o.heat_a:
        hit = next(h for h in o.result_a.hits if h.docno == col.docno)
        assert math.isclose(sum(col.weights), hit.score, rel_tol=1e-9)


def test_panel_computes_when_active(qtbot, runner, searcher) -> None:
    panel = ComparePanel(runner)
    qtbot.addWidget(panel)
    panel.set_searcher(searcher)
    panel.set_configs(get_variant("lucene"), get_variant("bim"))
    panel.set_query(searcher.parse("fruit trees orchard"))
    assert panel.outcome() is None  # hidden tab: nothing computed yet
    with qtbot.waitSignal(panel.jobs.succeeded, timeout=10000):
        panel.set_active(True)
    assert "overlap@10" in panel.summary.text()
    assert "Kendall τ" in panel.summary.text()
    assert "τ-b" in panel.summary.text()  # issue 10: say how ties were counted
    assert "ties counted" in panel.summary.text()
    qtbot.waitUntil(lambda: panel.delta_model.rowCount() > 0, timeout=10000)
    assert "split by term" in panel.delta_title.text()
    assert panel.heat_model.rowCount() == 3
    with qtbot.waitSignal(panel.jobs.succeeded, timeout=10000):
        panel.k_spin.setValue(3)
    assert panel.outcome().k == 3
    panel.heat_which.setCurrentIndex(1)
    assert panel.heat_model.columnCount() == len(panel.outcome().heat_b)
    panel.set_query(None)
    assert panel.model.rowCount() == 0
