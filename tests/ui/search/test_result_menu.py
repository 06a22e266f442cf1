"""Issue 10: right-click on a result offers Open, Open folder, Copy id / path / title, Explain in
Compare and Mark relevant (before: only the relevance marks)."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog

from bm25desk.ui.indexes.new_index_dialog import NewIndexDialog
from bm25desk.ui.search.results_model import Column


def _menu(panel, row: int):
    view = panel.view
    pos = view.visualRect(panel.proxy.index(row, Column.TITLE)).center()
    return view.context_menu(pos)


def test_the_menu_of_a_record(qtbot, window) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple cider")
    menu = _menu(panel, 1)
    actions = {a.text(): a for a in menu.actions() if a.text()}
    for text in ("Open", "Open folder", "Copy id", "Copy title", "Explain in Compare"):
        assert text in actions, text
    assert "Mark as relevant" in actions
    assert not actions["Open"].isEnabled()  # a TSV record: no file of its own
    hit = panel.model.hit(1)
    assert panel.selected_docno() == hit.docno  # the right-clicked row is selected
    actions["Copy id"].trigger()
    assert QGuiApplication.clipboard().text() == hit.docid
    actions["Copy title"].trigger()
    assert QGuiApplication.clipboard().text() == hit.title
    with qtbot.waitSignal(window.compare_panel.delta_jobs.succeeded, timeout=10000):
        actions["Explain in Compare"].trigger()
    assert window.tabs.currentWidget() is window.compare_panel
    assert window.compare_panel.delta_model.rowCount() > 0
    assert hit.title in window.compare_panel.delta_title.text()
    menu.close()


def test_the_menu_of_a_file(qtbot, window, tmp_path, monkeypatch) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "pears.txt").write_text("Pears\nPear trees like sun.", encoding="utf-8")
    monkeypatch.setattr(NewIndexDialog, "exec", lambda self: QDialog.DialogCode.Accepted)
    with qtbot.waitSignal(window.index_opened, timeout=30000):
        window.new_index(folder)
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("pear")
    opened: list[str] = []
    monkeypatch.setattr(
        "bm25desk.ui.search.result_menu.QDesktopServices.openUrl",
        lambda url: opened.append(url.toLocalFile()),
    )
    menu = _menu(panel, 0)
    actions = {a.text(): a for a in menu.actions() if a.text()}
    assert actions["Open"].isEnabled()
    actions["Open folder"].trigger()
    assert opened == [str(folder)]
    actions["Copy path"].trigger()
    assert QGuiApplication.clipboard().text() == str(folder / "pears.txt")
    menu.close()
