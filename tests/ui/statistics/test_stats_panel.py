"""The Statistics tab: numbers, histogram, top terms, term look-up with flagged idf."""

from __future__ import annotations

from bm25desk.ui.statistics.panel import StatsPanel
from bm25desk.ui.statistics.work import index_stats, term_lookup


def test_index_stats(searcher) -> None:
    stats = index_stats(searcher)
    assert stats.n_docs == 8
    assert sum(stats.counts) == 8
    assert stats.top_terms[0][0] == "fruit"


def test_term_lookup_flags_negative_idf(searcher) -> None:
    lookup = term_lookup(searcher, "Fruits")
    assert lookup.term == "fruit"
    assert lookup.df == 6
    assert lookup.status == "ok"
    by_key = {r.key: r for r in lookup.rows}
    assert by_key["bim"].idf < 0
    assert by_key["lucene"].idf > 0
    assert term_lookup(searcher, "the").status == "stop"
    unknown = term_lookup(searcher, "appel")
    assert unknown.status == "unknown"


def test_panel_loads_when_shown_and_looks_up(qtbot, runner, searcher) -> None:
    panel = StatsPanel(runner)
    qtbot.addWidget(panel)
    panel.set_searcher(searcher)
    assert panel.stats() is None
    with qtbot.waitSignal(panel.stats_jobs.succeeded, timeout=10000):
        panel.set_active(True)
    assert panel.fields["docs"].text() == "8"
    assert panel.terms_model.rowCount() > 5
    assert panel.histogram.getPlotItem().items
    with qtbot.waitSignal(panel.lookup_jobs.succeeded, timeout=10000):
        panel.lookup_edit.setText("fruit")
    assert "negative idf" in panel.lookup_result.text()
    assert panel.idf_model.rowCount() >= 10
    with qtbot.waitSignal(panel.lookup_jobs.succeeded, timeout=10000):
        panel.lookup_edit.setText("the")
    assert "stop word" in panel.lookup_result.text()


def test_the_built_row_says_how_the_index_was_built(qtbot, runner, searcher) -> None:
    """As ``bm25desk info`` does: one process, several, or Spark/Dask with their set-up."""
    panel = StatsPanel(runner)
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.stats_jobs.succeeded, timeout=10000):
        panel.set_searcher(searcher)
        panel.set_active(True)
    built = panel.fields["built"].text()
    assert "by bm25desk" in built
    assert "process" in built
