"""The bm25f variant (fields weighted before saturation) in the app: search, ledger, postings."""

from __future__ import annotations

from bm25desk.engine.scoring.browse import term_postings
from bm25desk.engine.scoring.variants import get_variant


def test_bm25f_ranks_explains_and_weighs_postings(qtbot, window) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown, timeout=10000):
        panel.set_query("apple cider")
    with qtbot.waitSignal(panel.results_shown, timeout=10000):
        panel.set_variant(get_variant("bm25f"))
    outcome = panel.outcome()
    assert outcome.result.variant.key == "bm25f"
    assert outcome.rows
    qtbot.waitUntil(lambda: panel.detail.ledger.explanation() is not None, timeout=10000)
    assert not window.message_bar.isVisible()
    terms = window.terms_panel
    with qtbot.waitSignal(terms.posting_jobs.succeeded, timeout=10000):
        window.show_tab(4)
    qtbot.waitUntil(lambda: terms.postings_model.rowCount() > 0, timeout=10000)
    expected = term_postings(window.searcher, terms.term(), panel.variant(), limit=None)
    got = [r.posting for r in terms.postings_model.rows()]
    assert got == list(expected.rows)
    assert "BM25F" in terms.postings_head.text()
    # df and cf count every scored field, unlike the term list's text counts: the header says so
    assert expected.fields == ("text", "title")
    assert f"cf = {expected.cf:,} over text + title," in terms.postings_head.text()
    assert term_postings(window.searcher, terms.term(), get_variant("lucene")).fields == ("text",)
