"""The main window: first start, builds (progress, cancel, close while building), restore,
delete, damaged indexes, tabs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog

from bm25desk.engine import IndexStore, get_variant
from bm25desk.ui.common.sample import SAMPLE_NAME
from bm25desk.ui.indexes.build_request import BuildRequest
from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog
from tests.conftest import UI_INDEX

WORDS = [
    "apple",
    "pear",
    "plum",
    "cherry",
    "orchard",
    "tree",
    "fruit",
    "bee",
    "honey",
    "cider",
    "juice",
    "autumn",
    "spring",
    "branch",
    "leaf",
    "root",
    "graft",
    "harvest",
    "storage",
    "pest",
    "moth",
    "aphid",
    "bird",
    "garden",
    "soil",
    "rain",
    "sun",
]


def big_corpus(path: Path, n: int) -> Path:
    rng = random.Random(7)
    lines = ["id\ttitle\ttext"]
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(40))
        lines.append(f"g{i}\tDoc {i}\t{words}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fingerprint(data_dir: Path, name: str) -> str:
    return IndexStore().open(name).fingerprint


def test_first_start_offers_the_sample(qtbot, make_window, data_dir) -> None:
    window = make_window()
    window.show()
    assert window.stack.currentWidget() is window.welcome
    assert window.welcome.sample_button.isEnabled()
    assert window.settings.sample_offered  # offered once
    assert Path(window.settings.file_name).is_relative_to(data_dir)


@pytest.mark.slow
def test_the_sample_builds_and_shows_results(qtbot, make_window) -> None:
    window = make_window()
    window.show()
    with qtbot.waitSignal(window.search_panel.results_shown, timeout=60000) as blocker:
        window.build_sample()
        assert window.build_progress.isVisible()
        assert not window.welcome.sample_button.isEnabled()
    assert blocker.args[0].result.n_docs == 1460
    assert window.searcher.index.name == SAMPLE_NAME
    assert window.search_panel.model.rowCount() > 0
    assert not window.build_progress.isVisible()
    assert "Indexed 1,460" in window.message_bar.text.text()


def test_cancelling_a_build_keeps_the_old_index(qtbot, window, data_dir, tmp_path) -> None:
    before = fingerprint(data_dir, UI_INDEX)
    source = big_corpus(tmp_path / "big.tsv", 30000)
    with qtbot.waitSignal(window.build_finished, timeout=30000) as blocker:
        job = window.start_build(BuildRequest(source, UI_INDEX, "tsv-header", {"stopwords": "en"}))
        assert job is not None
        window.build_progress.cancel_button.click()
    assert blocker.args[0] is None
    assert fingerprint(data_dir, UI_INDEX) == before
    assert IndexStore().open(UI_INDEX).n_docs == 8
    assert "cancelled" in window.message_bar.text.text()
    assert not list((data_dir / "indexes").glob(".tmp-*"))
    # The builds are idle before anyone hears that the build ended: nothing to wait for.
    assert window.index_panel.new_button.isEnabled()
    assert window.menu_actions.new.isEnabled()
    assert not window.builds.jobs.busy()


def test_a_space_typed_as_a_build_starts_does_not_cancel_it(
    qtbot, make_window, data_dir, tmp_path
) -> None:
    """The clicked button is disabled for the build: its focus must not pass to Cancel."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    window = make_window()
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    window.welcome.sample_button.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.welcome.sample_button)
    source = big_corpus(tmp_path / "big.tsv", 30000)
    with qtbot.waitSignal(window.build_finished, timeout=60000) as blocker:
        window.start_build(BuildRequest(source, "typed", "tsv-header", {}))
        focused = QApplication.focusWidget()
        assert focused is not window.build_progress.cancel_button
        qtbot.keyClick(focused or window, Qt.Key.Key_Space)
        qtbot.keyClick(focused or window, Qt.Key.Key_Return)
        assert window.build_progress.cancel_button.text() == "Cancel"
    assert blocker.args[0] is not None  # built, not cancelled
    assert IndexStore().open("typed").n_docs == 30000


def test_closing_during_a_build_cancels_and_waits(qtbot, window, data_dir, tmp_path) -> None:
    source = big_corpus(tmp_path / "big.tsv", 60000)
    job = window.start_build(BuildRequest(source, "big", "tsv-header", {}))
    # No qtbot blocker on progressed: the pool thread queues many of them, and one delivered after
    # the blocker had disconnected and gone crashed pytest-qt now and then (SIGSEGV).
    progressed: list[object] = []
    job.signals.progressed.connect(lambda *args: progressed.append(args))
    qtbot.waitUntil(lambda: bool(progressed), timeout=30000)
    window.close()
    assert not window.runner.jobs
    assert job.cancel.is_set()
    assert not IndexStore().exists("big")
    assert not list((data_dir / "indexes").glob(".tmp-*"))
    assert IndexStore().open(UI_INDEX).n_docs == 8


def test_a_build_report_lists_skipped_files(qtbot, window, data_dir, tmp_path, monkeypatch) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("Apple cider vinegar keeps for years.", encoding="utf-8")
    (folder / "b.md").write_text("# Pears\n\nPear trees like sun.", encoding="utf-8")
    (folder / "c.txt").write_bytes(b"\x00\x01binary\x00")
    monkeypatch.setattr(NewIndexDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    with qtbot.waitSignal(window.index_opened, timeout=30000) as blocker:
        window.new_index(folder)
    assert blocker.args[0] == "notes"
    report = window.last_report
    assert report.indexed == 2
    assert report.skipped
    assert "skipped" in window.message_bar.text.text().lower()
    assert window.index_panel.names() == ["notes", UI_INDEX]

    (folder / "d.txt").write_text("Plum jam.", encoding="utf-8")
    with qtbot.waitSignal(window.build_finished, timeout=30000) as done:
        window.update_index("notes")
    assert done.args[0].indexed == 1
    qtbot.waitUntil(lambda: window.searcher.index.n_docs == 3, timeout=10000)


def test_settings_are_restored(qtbot, make_window, ui_index, data_dir) -> None:
    first = make_window()
    first.show()
    qtbot.waitUntil(lambda: first.searcher is not None, timeout=15000)
    first.search_panel.set_variant(get_variant("bm25l", k1=0.9, b=0.4))
    with qtbot.waitSignal(first.search_panel.results_shown):
        first.search_panel.set_query("apple cider")
    first.tabs.setCurrentIndex(2)
    first.close()
    ini = Path(first.settings.file_name)
    assert ini.is_relative_to(data_dir / "config")

    second = make_window()
    second.show()
    qtbot.waitUntil(lambda: second.searcher is not None, timeout=15000)
    assert second.search_panel.variant() == get_variant("bm25l", k1=0.9, b=0.4)
    assert second.search_panel.query() == "apple cider"
    assert second.tabs.currentIndex() == 2
    assert json.loads(second.settings.value("compare/a"))["key"] == "lucene"


def test_deleting_the_open_index_returns_to_the_start_page(qtbot, window) -> None:
    asked = []
    window.confirm = lambda title, text: asked.append(text) or True
    window.delete_index(UI_INDEX)
    qtbot.waitUntil(lambda: window.stack.currentWidget() is window.welcome, timeout=10000)
    assert asked
    assert UI_INDEX in asked[0]
    assert not IndexStore().exists(UI_INDEX)
    assert window.searcher is None


def test_a_damaged_index_gets_a_readable_message(qtbot, make_window, ui_index) -> None:
    (ui_index / "manifest.json").write_text("{not json", encoding="utf-8")
    window = make_window()
    window.show()
    qtbot.waitUntil(lambda: window.message_bar.isVisible(), timeout=15000)
    text = window.message_bar.text.text()
    assert UI_INDEX in text
    assert "Traceback" not in text
    row = window.index_panel.model.row_of(UI_INDEX)
    assert window.index_panel.model.index_row(row).status == "damaged"
    window.rebuild_index(UI_INDEX)  # the source is unknown: said so, nothing started
    assert window.build_job is None
    assert "delete the index" in window.message_bar.text.text()


def test_compare_and_statistics_tabs_compute_when_shown(qtbot, window) -> None:
    with qtbot.waitSignal(window.search_panel.results_shown):
        window.search_panel.set_query("apple fruit trees")
    with qtbot.waitSignal(window.compare_panel.jobs.succeeded, timeout=10000):
        window.show_tab(1)
    assert window.compare_panel.outcome().query == "apple fruit trees"
    with qtbot.waitSignal(window.stats_panel.stats_jobs.succeeded, timeout=10000):
        window.show_tab(2)
    assert window.stats_panel.stats().n_docs == 8


def test_shortcuts_exist_for_the_common_actions(window) -> None:
    shortcuts = {a.shortcut().toString() for a in window.findChildren(type(window.new_action))}
    for key in (
        "Ctrl+N",
        "F5",
        "Ctrl+L",
        "Ctrl+]",
        "Ctrl+[",
        "Ctrl+0",
        "Ctrl+1",
        "Ctrl+2",
        "Ctrl+3",
        "F1",
        "Ctrl+Q",
        "Ctrl+Shift+C",
    ):
        assert key in shortcuts, key


def test_the_layout_is_remembered(qtbot, make_window, ui_index) -> None:
    """Issue 10: splitter positions and the chosen layout (here the plot shown) come back."""
    first = make_window()
    first.resize(1280, 720)
    first.show()
    qtbot.waitUntil(lambda: first.searcher is not None, timeout=15000)
    splitter = first.search_panel.splitter
    splitter.setSizes([200, sum(splitter.sizes()) - 200])
    sizes = splitter.sizes()
    first.search_panel.detail.plots.tabs.setCurrentIndex(2)
    first.close()
    second = make_window()
    second.show()
    qtbot.waitUntil(lambda: second.searcher is not None, timeout=15000)
    assert second.search_panel.splitter.sizes() == sizes
    assert second.search_panel.detail.plots.tabs.currentIndex() == 2
