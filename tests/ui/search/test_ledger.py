"""The score ledger: parts sum to the score under every variant; copy as text, Markdown, JSON."""

from __future__ import annotations

import json
import math

import pytest
from PySide6.QtGui import QGuiApplication

from bm25desk.engine import all_variants
from bm25desk.ui.common.colors import TermColors
from bm25desk.ui.common.ledger_model import Column
from bm25desk.ui.search.ledger_panel import LedgerPanel, sum_check


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


def test_formulas_follow_the_selected_row(qtbot, searcher) -> None:
    from bm25desk.engine import get_variant

    panel = LedgerPanel()
    qtbot.addWidget(panel)
    v = get_variant("bm25plus")
    result = searcher.search("apple orchard", v, 3)
    e = searcher.explain_docno(result.analysis.parsed, result.hits[0].docno, v)
    panel.set_explanation(e, TermColors(result.analysis.terms))
    assert "tf part =" in panel.formulas.text()
    last = panel.model.rowCount() - 1
    panel.view.selectRow(last)
    term = panel.model.term_row(last).term
    assert term in panel.formulas.text() or panel.formulas.text() == ""
