"""The Search tab: search as you type, stale results dropped, live re-ranking, chips, details."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Qt

from bm25desk.engine import get_variant
from bm25desk.ui.search.results_model import Column


def test_typing_searches_after_the_debounce(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.results_shown, timeout=5000) as blocker:
        qtbot.keyClicks(panel.query_edit, "apple")
    assert blocker.args[0].result.query == "apple"
    qtbot.waitUntil(lambda: panel.model.rowCount() > 0)
    assert panel.model.hit(0).docid in ("d1", "d6")


def test_stale_results_are_dropped(qtbot, panel) -> None:
    shown: list[str] = []
    panel.results_shown.connect(lambda o: shown.append(o.result.query))
    panel.query_edit.setText("apple")
    panel.search_now()
    panel.query_edit.setText("cider")
    panel.search_now()
    panel.query_edit.setText("pear")
    panel.search_now()
    qtbot.waitUntil(lambda: bool(shown) and shown[-1] == "pear", timeout=5000)
    qtbot.wait(100)
    # "cider" was replaced while "apple" ran: it never ran; "apple" ran but was stale.
    assert shown == ["pear"]
    assert panel.model.hit(0).docid == "d3"


def test_a_parameter_change_reranks(qtbot, panel) -> None:
    panel.set_variant(get_variant("lucene"))
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple fruit trees")
    before = [(h.docid, h.score) for h in panel.model.hits()]
    control = panel.picker.params.controls()["b"]
    with qtbot.waitSignal(panel.results_shown) as blocker:
        control.slider.setValue(0)  # b = 0: no length normalisation
    outcome = blocker.args[0]
    assert outcome.result.variant == dataclasses.replace(get_variant("lucene"), b=0.0)
    after = [(h.docid, h.score) for h in panel.model.hits()]
    assert after != before
    assert control.spin.value() == 0.0


def test_switching_variant_reranks_and_keeps_the_selection(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("fruit trees")
    panel.select_row(2)
    docno = panel.selected_docno()
    qtbot.waitUntil(
        lambda: (
            panel.detail.outcome() is not None and panel.detail.outcome().explanation.docno == docno
        )
    )
    with qtbot.waitSignal(panel.results_shown):
        panel.set_variant(get_variant("bim"))
    qtbot.waitUntil(lambda: panel.detail.outcome().explanation.variant.key == "bim")
    assert panel.selected_docno() == docno


def test_chips_show_stop_words_unknown_terms_and_suggestions(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.results_shown) as blocker:
        panel.set_query("the aple orchard")
    outcome = blocker.args[0]
    assert "apl" in outcome.result.analysis.unknown  # as analysed (Porter)
    html = panel.chips.text()
    assert "<s>the</s>" in html
    assert "did you mean" in html
    suggestion = dict(outcome.suggestions)["apl"][0]
    with qtbot.waitSignal(panel.results_shown):
        panel.chips.suggestion_chosen.emit("aple", suggestion)
    assert panel.query() == f"the {suggestion} orchard"


def test_a_query_of_stop_words_says_why_nothing_is_searched(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.query_cleared):
        panel.set_query("the and of")
    assert "stop words" in panel.chips.text()
    assert panel.model.rowCount() == 0


def test_selecting_a_result_fills_preview_ledger_and_plots(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple cider")
    qtbot.waitUntil(lambda: panel.detail.outcome() is not None, timeout=5000)
    detail = panel.detail
    e = detail.ledger.explanation()
    assert e.docno == panel.model.hit(0).docno
    assert "✓" in detail.ledger.check.text()
    preview = detail.preview
    assert preview.match_count() >= 2
    preview.next_match()
    assert preview.current_match() == 0
    preview.previous_match()
    assert preview.current_match() == preview.match_count() - 1
    _start, _end, term = preview.document().spans[-1]
    assert preview.text.textCursor().selectedText().lower().startswith(term[:3])
    data = detail.plots.data()
    assert data is not None
    assert data.tf_points
    assert data.idf_curve is not None
    assert "Contributions" in panel.model.headerData(Column.PARTS, Qt.Orientation.Horizontal)


def test_down_arrow_moves_to_the_results(qtbot, panel) -> None:
    from PySide6.QtCore import Qt

    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("fruit")
    panel.query_edit.setFocus()
    qtbot.keyClick(panel.query_edit, Qt.Key.Key_Down)
    assert panel.view.hasFocus() or panel.view.selectionModel().hasSelection()
    qtbot.keyClick(panel.query_edit, Qt.Key.Key_Escape)
    assert panel.query() == ""


def test_painting_results_and_details_does_not_fail(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple fruit -pest")
    qtbot.waitUntil(lambda: panel.detail.outcome() is not None, timeout=5000)
    image = panel.grab().toImage()
    assert not image.isNull()
    assert image.width() > 100


def test_open_is_offered_for_files_and_urls(tmp_path) -> None:
    from bm25desk.ui.search.preview import openable

    f = tmp_path / "a.txt"
    f.write_text("x", encoding="utf-8")
    assert openable(str(f)) == str(f)
    assert openable("https://example.org/doc") == "https://example.org/doc"
    assert openable("") == ""
    assert openable(str(tmp_path / "gone.txt")) == ""


def test_snippets_past_the_first_rows_follow_the_results(qtbot, panel, monkeypatch) -> None:
    """Rows past SNIPPETS_FIRST are shown blank at once and get their snippets right after."""
    from bm25desk.ui.search import work as search_work

    monkeypatch.setattr(search_work, "SNIPPETS_FIRST", 1)
    with qtbot.waitSignal(panel.results_shown, timeout=5000) as blocker:
        panel.set_query("apple fruit trees cider pear")
    outcome = blocker.args[0]
    rows = panel.model.rowCount()
    assert rows > 2
    assert outcome.pending == tuple(h.docno for h in outcome.result.hits[1:])
    assert outcome.rows[0].snippet.text
    assert not outcome.rows[1].snippet.text
    column = Column.SNIPPET
    qtbot.waitUntil(
        lambda: all(panel.model.index(r, column).data() for r in range(rows)), timeout=5000
    )
    # The snippets cut afterwards are the ones a search now finds cut already: nothing pending.
    again = search_work.run_search(
        panel.searcher, "apple fruit trees cider pear", panel.variant(), 100
    )
    assert again.pending == ()
    assert [r.snippet.text for r in again.rows] == [
        panel.model.index(r, column).data() for r in range(rows)
    ]


def test_an_empty_ranking_says_which_part_of_the_query_left_nothing(qtbot, panel) -> None:
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("zebra")
    assert panel.empty_label.text() == "No document contains any of the query terms."
    # "pear" is in documents; the phrase is in none: the phrase left nothing, not the terms
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query('pear "bees honey"')
    assert panel.model.rowCount() == 0
    text = panel.empty_label.text()
    assert text == 'No document meets the query\'s conditions: "bees honey".'


def test_no_results_text_names_the_conditions_and_the_filters(searcher) -> None:
    from bm25desk.ui.search.panel import no_results_text

    both = searcher.analyze("apple -fruit title:cider")
    assert no_results_text(both, False) == (
        "No document meets the query's conditions: -fruit, title:cider."
    )
    assert no_results_text(both, True) == (
        "No document among those the filters keep meets the query's conditions: "
        "-fruit, title:cider."
    )
    plain = searcher.analyze("apple")
    assert no_results_text(plain, True) == (
        "No document among those the filters keep contains the query terms."
    )
    assert no_results_text(plain, False) == "No document matches the query."
    assert no_results_text(searcher.analyze("zebra -apple"), True) == (
        "No document contains any of the query terms."
    )
