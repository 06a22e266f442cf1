"""Issue 10: a folder with no readable documents is not built without a word, and an empty index
shows an honest empty state everywhere (before: every query said "Something went wrong
(IndexError…)" and the length histogram had −60…60 axes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from bm25desk.engine import IndexStore, Searcher, build_index
from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog
from tests.conftest import UI_INDEX


@pytest.fixture
def unreadable_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "scans"
    folder.mkdir()
    (folder / "a.txt").write_bytes(b"\x00\x01\x02binary\x00")
    (folder / "b.txt").write_bytes(b"")
    (folder / "c.md").write_bytes(b"\x00\xff\x00")
    return folder


def test_an_empty_folder_is_not_built_without_asking(
    qtbot, make_window, unreadable_folder, monkeypatch
) -> None:
    window = make_window()
    window.show()
    monkeypatch.setattr(NewIndexDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    with qtbot.waitSignal(window.build_finished, timeout=30000) as blocker:
        window.new_index(unreadable_folder)
    assert blocker.args[0] is None  # nothing built
    assert not IndexStore().exists("scans")
    bar = window.message_bar
    text = bar.text.text()
    assert "no documents found in" in text
    assert "3 files skipped" in text
    assert "a.txt" in text
    assert "Build an empty index anyway" in text
    assert "--allow-empty" not in text  # the CLI's option means nothing in the app
    with qtbot.waitSignal(window.index_opened, timeout=30000):
        bar.action_requested.emit("build-empty")
    assert IndexStore().open("scans").n_docs == 0


def test_every_view_of_an_empty_index_says_so(
    qtbot, make_window, unreadable_folder, tmp_path
) -> None:
    build_index(unreadable_folder, name="scans", store=IndexStore(), allow_empty=True)
    window = make_window()
    window.show()
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    assert window.facets.dock.isHidden()  # a folder's facets, but nothing to count
    assert not window.facets.toggle_action.isEnabled()
    assert "Facets" not in window.statusBar().currentMessage()
    search = window.search_panel
    search.set_query("anything at all")
    qtbot.wait(300)
    assert not window.message_bar.isVisible()  # no "Something went wrong"
    assert "has no documents" in search.empty_label.text()
    assert search.empty_label.isVisible()
    window.show_tab(1)
    assert "has no documents" in window.compare_panel.query_label.text()
    assert "Select a document" not in window.compare_panel.delta_title.text()
    with qtbot.waitSignal(window.stats_panel.stats_jobs.succeeded, timeout=10000):
        window.show_tab(2)
    stats = window.stats_panel
    assert stats.fields["docs"].text() == "0"
    assert stats.histogram_stack.currentIndex() == 0  # a sentence, not an empty plot
    assert "no documents" in stats.histogram_stack.placeholder.text()
    with qtbot.waitSignal(window.terms_panel.term_jobs.succeeded, timeout=10000):
        window.show_tab(4)
    assert "has no documents" in window.terms_panel.postings_head.text()
    assert window.terms_panel.terms_count.text() == "0 terms in the index"
    assert not window.terms_panel.export_terms_button.isEnabled()
    window.show_tab(3)
    setup = window.eval_panel.setup
    assert not setup.run_button.isEnabled()
    assert "has no documents" in setup.run_status.text()
    assert not window.message_bar.isVisible()


def test_the_empty_state_goes_with_the_empty_index(
    qtbot, make_window, unreadable_folder, ui_index
) -> None:
    """Switching from an empty index to another: its sentence does not wait for the results."""
    build_index(unreadable_folder, name="scans", store=IndexStore(), allow_empty=True)
    window = make_window()
    window.show()
    search = window.search_panel
    with qtbot.waitSignal(window.index_opened, timeout=15000):
        window.open_index("scans", query="apple")
    qtbot.waitUntil(lambda: "has no documents" in search.empty_label.text(), timeout=5000)
    search.set_searcher(Searcher(IndexStore().open(UI_INDEX)))  # its search has not run yet
    assert not search.empty_label.isVisible()
    assert "scans" not in search.empty_label.text()
    with qtbot.waitSignal(search.results_shown, timeout=10000):
        pass
    assert search.view.isVisible()
