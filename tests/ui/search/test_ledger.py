"""The score ledger: parts sum to the score under every variant; copy as text, Markdown, JSON."""

from __future__ import annotations

import json
import math

import pytest
from PySide6.QtGui import QGuiApplication

from bm25desk.engine import all_variants
from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.common.ledger_model import Column
from bm25desk.ui.search.ledger_panel import LedgerPanel, shown, sum_check


@pytest.mark.parametrize("variant", all_variants(), ids=lambda v: v.key)
def test_the_ledger_sums_to_the_score(qtbot, searcher, variant) -> None:
    panel = LedgerPanel()
    qtbot.addWidget(panel)
    result = searcher.search("the apple fruit trees orchard zzyzx", variant, 8)
    colors = TermColors(result.analysis.terms)
    for hit in result.hits:
        e = searcher.explain_docno(result.analysis.parsed, hit.docno, variant)
        panel.set_explanation(e, colors)
        model = panel.model
        weights = [
            float(model.data(model.index(r, Column.WEIGHT)))
            for r in range(model.rowCount())
            if model.term_row(r).status == "matched"
        ]
        assert math.isclose(sum(weights), hit.score, rel_tol=1e-3, abs_tol=1e-3)
        assert math.isclose(e.parts_sum, hit.score, rel_tol=1e-12, abs_tol=1e-12)
        ok, text = sum_check(e)
        assert ok, text
        assert "✓" in panel.check.text()
        statuses = {model.term_row(r).status for r in range(model.rowCount())}
        assert "stop" in statuses
        assert "unknown" in statuses


def test_copy_as_text_markdown_and_json(qtbot, searcher) -> None:
    from bm25desk.engine import get_variant

    panel = LedgerPanel()
    qtbot.addWidget(panel)
    assert panel.copy("text") == ""  # nothing to copy yet
    v = get_variant("okapi")
    result = searcher.search("apple cider", v, 3)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, v)
    panel.set_explanation(e, TermColors(result.analysis.terms))
    assert "sum of" in panel.copy("text")
    assert QGuiApplication.clipboard().text().startswith(panel.copy("text")[:20])
    assert "| term |" in panel.copy("markdown")
    data = json.loads(panel.copy("json"))
    assert data["docid"] == e.docid
    assert panel.copy_button.isEnabled()


def _explained(qtbot, searcher, key: str, query: str):
    """Return a ledger panel showing the top hit of ``query`` under variant ``key``, and it."""
    from bm25desk.engine import get_variant

    panel = LedgerPanel()
    qtbot.addWidget(panel)
    v = get_variant(key)
    result = searcher.search(query, v, 3)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, v)
    panel.set_explanation(e, TermColors(result.analysis.terms))
    return panel, e


def test_formulas_follow_the_selected_row(qtbot, searcher) -> None:
    panel, _e = _explained(qtbot, searcher, "bm25plus", "apple orchard")
    assert "tf part =" in panel.formulas.text()
    last = panel.model.rowCount() - 1
    panel.view.selectRow(last)
    term = panel.model.term_row(last).term
    assert term in panel.formulas.text() or panel.formulas.text() == ""


def test_values_shared_by_every_row_are_in_the_heading(qtbot, searcher) -> None:
    """Issue 10: N, L and Lavg repeat on every row, so they move into the ledger's heading."""
    panel, e = _explained(qtbot, searcher, "lucene", "apple cider fruit")
    for column in (Column.N, Column.L, Column.LAVG):
        assert panel.view.isColumnHidden(column)
    for column in (Column.TERM, Column.TF, Column.DF, Column.IDF, Column.WEIGHT, Column.SHARE):
        assert not panel.view.isColumnHidden(column)
    heading = panel.heading.text()
    assert f"L = {e.length} terms" in heading
    assert f"Lavg = {e.avgdl:.2f}" in heading
    assert f"N = {e.n_docs:,} documents" in heading
    long_title = "A title long enough to be cut " * 5
    panel.resize(500, 300)
    panel.title.set_full_text(long_title)
    assert long_title in panel.title.toolTip()  # cut in the heading, whole in the tooltip


def test_numbers_are_rounded_once_as_the_contribution_line_rounds_them() -> None:
    from bm25desk.engine.scoring.formulas import fmt

    assert shown(4.8218749) == fmt(4.8218749) == "4.82187"  # was "4.82188" beside "4.82187"
    assert shown(3e-17) == shown(-3e-17) == "0"
    assert shown(-1.25) == "-1.25"
    assert shown(12.0) == "12"


def test_a_long_sum_is_cut_in_the_middle(searcher) -> None:
    """At most ``most`` items: the first parts, "… (n parts)", the last two; same verdict."""
    from bm25desk.engine import get_variant

    variant = get_variant("lucene")
    result = searcher.search("the apple fruit trees orchard zzyzx", variant, 1)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, variant)
    matched = [shown(t.weight) for t in e.terms if t.status == "matched"]
    assert len(matched) >= 3
    ok, whole = sum_check(e)
    assert whole.count(" + ") == len(matched) - 1
    most = len(matched) - 1  # one part too many
    ok_cut, cut = sum_check(e, most)
    assert ok_cut == ok
    items = [*matched[: most - 2], f"… ({len(matched)} parts)", *matched[-2:]]
    assert cut.startswith(f"Σ parts = {' + '.join(items)} = ")
    assert cut.split(" = ")[2:] == whole.split(" = ")[2:]  # the total and the verdict
    assert sum_check(e, len(matched)) == (ok, whole)  # room for every part: nothing cut
