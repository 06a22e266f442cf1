"""Issue 10/16 with H6's generations: an index updated by another program is picked up by the open
window (before, the app kept showing the old index until it was reopened by hand)."""

from __future__ import annotations

from tests.conftest import UI_DOCS, UI_INDEX, write_ui_corpus


def test_a_generation_committed_elsewhere_is_opened(qtbot, window, tmp_path, tsv_index) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("quince")
    assert panel.model.rowCount() == 0
    assert window.searcher.index.n_docs == 8
    more = (*UI_DOCS, ("d9", "Quinces", "Quince jelly is made from quince, an old orchard fruit."))
    source = write_ui_corpus(tmp_path / "orchard.tsv", more)
    # "Another program": the engine, from this thread, while the window has the index open.
    tsv_index(source, UI_INDEX, replace=True)
    qtbot.waitUntil(lambda: window.searcher.index.n_docs == 9, timeout=15000)
    qtbot.waitUntil(lambda: panel.model.rowCount() == 1, timeout=5000)
    assert panel.query() == "quince"
    assert panel.model.hit(0).docid == "d9"
    assert "another program" in window.message_bar.text.text()
