"""Issue 10: switching indexes leaves nothing of the previous one on screen; a new query starts at
rank 1 while a re-ranking keeps the document; selecting an index (to delete it) does not open it.

Each test fails on the code before issue 10 (noted per test).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from bm25desk.engine import IndexStore, get_variant
from tests.conftest import UI_INDEX, write_ui_corpus

GARDEN = (
    ("g1", "Tomatoes", "Tomatoes need sun and water; pick tomatoes when red."),
    ("g2", "Beans", "Beans climb poles. Pick beans young."),
    ("g3", "Soil", "Good soil holds water and feeds the beans and tomatoes."),
)


@pytest.fixture
def two_indexes(ui_index: Path, tmp_path: Path, tsv_index) -> str:
    """The orchard test index and a second one, "garden"; return the second's name."""
    tsv_index(write_ui_corpus(tmp_path / "garden.tsv", GARDEN), "garden")
    return "garden"


def _switch(qtbot, window, name: str) -> None:
    with qtbot.waitSignal(window.index_opened, timeout=15000):
        window.index_picker.open_requested.emit(name)


def test_switching_index_resets_what_belongs_to_the_previous_one(
    qtbot, make_window, two_indexes, tmp_path
) -> None:
    """Before: the error banner, the match count, Compare's document, the term look-up and the
    Evaluation view's queries and judgements all survived the switch."""
    window = make_window()
    window.show()
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    if window.searcher.index.name != UI_INDEX:
        _switch(qtbot, window, UI_INDEX)
    search = window.search_panel
    with qtbot.waitSignal(search.results_shown):
        search.set_query("apple fruit")
    window.show_error(RuntimeError("a search failed"))
    assert window.message_bar.isVisible()
    with qtbot.waitSignal(window.compare_panel.jobs.succeeded, timeout=10000):
        window.show_tab(1)
    qtbot.waitUntil(lambda: window.compare_panel.delta_model.rowCount() > 0, timeout=10000)
    with qtbot.waitSignal(window.stats_panel.stats_jobs.succeeded, timeout=10000):
        window.show_tab(2)
    with qtbot.waitSignal(window.stats_panel.lookup_jobs.succeeded, timeout=10000):
        window.stats_panel.lookup_edit.setText("fruit")
    queries = tmp_path / "q.tsv"
    queries.write_text("1\tapple fruit\n", encoding="utf-8")
    qrels = tmp_path / "q.qrels"
    qrels.write_text("1 0 d1 1\n", encoding="utf-8")
    with qtbot.waitSignal(window.eval_panel.inputs_loaded, timeout=10000):
        window.eval_panel.set_files(queries, qrels)
    assert window.eval_panel.inputs.ready
    window.show_tab(0)

    with qtbot.waitSignal(search.results_shown, timeout=10000) as shown:
        _switch(qtbot, window, "garden")
    assert shown.args[0].result.n_docs == 3
    assert not window.message_bar.isVisible()
    assert "of 3 documents" in search.bar.status.text()
    compare = window.compare_panel
    assert compare.delta_model.rowCount() == 0
    assert "Select a document" in compare.delta_title.text()
    stats = window.stats_panel
    assert stats.lookup() is None or stats.lookup().n_docs == 3  # reloaded, never the old one
    assert "fruit" not in stats.lookup_result.text() or stats.lookup().n_docs == 3
    assert not window.eval_panel.inputs.ready
    assert window.eval_panel.result() is None
    assert window.index_picker.open_name() == "garden"
    assert (
        window.index_panel.model.index(window.index_panel.model.row_of("garden"), 0)
        .data()
        .startswith("●")
    )


def test_a_new_query_starts_at_rank_1_and_a_reranking_keeps_the_document(
    qtbot, window_at, sample_index
) -> None:
    """Before: a new query kept the selected document, opening the list at rank 50-something."""
    window = window_at(1280, 720)
    panel = window.search_panel
    view = panel.view
    with qtbot.waitSignal(panel.results_shown, timeout=10000):
        panel.set_query("information retrieval systems")
    # A document deep in this list that the next query also finds.
    later = panel.searcher.search("information retrieval evaluation", panel.variant(), 100)
    in_both = {h.docno for h in later.hits}
    row = next(r for r in range(40, panel.proxy.rowCount()) if panel.model.hit(r).docno in in_both)
    panel.select_row(row)
    docno = panel.selected_docno()
    QApplication.processEvents()
    assert view.verticalScrollBar().value() > 0

    # A variant change re-ranks the same query: the same document, scrolled into view.
    with qtbot.waitSignal(panel.results_shown, timeout=10000):
        panel.set_variant(get_variant("bm25l"))
    assert panel.selected_docno() == docno
    row = view.selectionModel().selectedRows()[0].row()
    QApplication.processEvents()
    assert view.viewport().rect().intersects(view.visualRect(panel.proxy.index(row, 0)))

    # A new query (one that also finds that document) selects rank 1 and shows the top.
    with qtbot.waitSignal(panel.results_shown, timeout=10000) as blocker:
        panel.set_query("information retrieval evaluation")
    assert docno in {r.hit.docno for r in blocker.args[0].rows}
    assert panel.model.hit(view.selectionModel().selectedRows()[0].row()).rank == 1
    QApplication.processEvents()
    assert view.verticalScrollBar().value() == 0

    # Home goes to rank 1 (not to the first column), End to the last result.
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.selectionModel().selectedRows()[0].row() == panel.proxy.rowCount() - 1
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.selectionModel().selectedRows()[0].row() == 0

    # A re-ranking that keeps a document of the first page shows the top, not that document
    # scrolled to the top edge with rank 1 above it (seen after a tie-heavy BIM list).
    panel.select_row(2)
    docno = panel.selected_docno()
    view.verticalScrollBar().setValue(view.verticalScrollBar().maximum())
    with qtbot.waitSignal(panel.results_shown, timeout=10000):
        panel.set_variant(get_variant("lucene"))
    assert panel.selected_docno() == docno
    assert view.selectionModel().selectedRows()[0].row() >= 1
    QApplication.processEvents()
    assert view.verticalScrollBar().value() == 0


def test_deleting_an_index_selected_in_the_manager_does_not_open_it(
    qtbot, make_window, two_indexes
) -> None:
    """Before: one click on an index opened it (and searched it) before it could be deleted."""
    window = make_window()
    window.show()
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    if window.searcher.index.name != UI_INDEX:
        _switch(qtbot, window, UI_INDEX)
    window.show_index_manager()
    panel = window.index_panel
    row = panel.proxy.mapFromSource(panel.model.index(panel.model.row_of("garden"), 0)).row()
    rect = panel.view.visualRect(panel.proxy.index(row, 0))
    with qtbot.assertNotEmitted(window.index_opened, wait=300):
        qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        assert panel.current_name() == "garden"
        panel.delete_button.click()
        qtbot.waitUntil(lambda: not IndexStore().exists("garden"), timeout=10000)
    assert window.searcher.index.name == UI_INDEX
    qtbot.waitUntil(lambda: panel.names() == [UI_INDEX], timeout=5000)
    assert window.index_picker.names() == [UI_INDEX]


def test_an_index_built_while_the_app_runs_is_in_the_picker_when_it_drops_down(
    qtbot, make_window, ui_index, tmp_path, tsv_index
) -> None:
    """Before: an index built by the CLI meanwhile was missing until the manager was opened."""
    window = make_window()
    window.show()
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    assert "garden" not in window.index_picker.names()
    tsv_index(write_ui_corpus(tmp_path / "garden.tsv", GARDEN), "garden")
    combo = window.index_picker.combo
    combo.showPopup()
    try:
        assert "garden" in window.index_picker.names()
        assert window.index_picker.open_name() == window.searcher.index.name
        assert combo.currentData() == window.searcher.index.name
    finally:
        combo.hidePopup()
