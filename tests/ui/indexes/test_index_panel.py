"""The index list: rows, staleness, buttons, selection."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont

from bm25desk.engine import IndexStore, build_index
from bm25desk.ui.indexes.list_model import Column
from bm25desk.ui.indexes.panel import IndexPanel
from tests.conftest import UI_INDEX


def _row_center(panel: IndexPanel, name: str):
    row = panel.proxy.mapFromSource(panel.model.index(panel.model.row_of(name), 0)).row()
    return panel.view.visualRect(panel.proxy.index(row, Column.NAME)).center()


def test_a_click_selects_and_a_double_click_or_enter_opens(qtbot, ui_index) -> None:
    """Issue 10: one click on an index opened it (so deleting one opened it first)."""
    panel = IndexPanel(IndexStore())
    qtbot.addWidget(panel)
    panel.resize(700, 300)
    panel.show()
    panel.refresh()
    assert panel.names() == [UI_INDEX]
    assert not panel.update_button.isEnabled()  # nothing selected yet
    viewport = panel.view.viewport()
    with qtbot.assertNotEmitted(panel.open_requested, wait=100):
        qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=_row_center(panel, UI_INDEX))
    assert panel.current_name() == UI_INDEX
    assert panel.update_button.isEnabled()
    assert panel.delete_button.isEnabled()
    with qtbot.waitSignal(panel.delete_requested) as blocker:
        panel.delete_button.click()
    assert blocker.args == [UI_INDEX]
    with qtbot.waitSignal(panel.rebuild_requested) as blocker:
        panel.rebuild_button.click()
    assert blocker.args == [UI_INDEX]
    with qtbot.waitSignal(panel.open_requested) as blocker:
        qtbot.mouseDClick(viewport, Qt.MouseButton.LeftButton, pos=_row_center(panel, UI_INDEX))
    assert blocker.args == [UI_INDEX]
    panel.view.setFocus()
    with qtbot.waitSignal(panel.open_requested) as blocker:
        qtbot.keyClick(panel.view, Qt.Key.Key_Return)
    assert blocker.args == [UI_INDEX]
    panel.set_busy(True)
    assert not panel.new_button.isEnabled()
    assert not panel.rebuild_button.isEnabled()
    assert panel.folder_button.isEnabled()


def test_the_open_index_is_marked(qtbot, ui_index) -> None:
    panel = IndexPanel(IndexStore())
    qtbot.addWidget(panel)
    panel.refresh()
    name = panel.model.index(0, Column.NAME)
    assert name.data() == UI_INDEX
    assert not (name.data(Qt.ItemDataRole.FontRole) or QFont()).bold()
    panel.set_open_index(UI_INDEX)
    name = panel.model.index(0, Column.NAME)
    assert name.data() == f"● {UI_INDEX}"
    assert name.data(Qt.ItemDataRole.FontRole).bold()
    assert "(open)" in name.data(Qt.ItemDataRole.ToolTipRole)


def test_a_changed_source_is_marked(qtbot, ui_index, ui_corpus) -> None:
    panel = IndexPanel(IndexStore())
    qtbot.addWidget(panel)
    panel.refresh()
    status = panel.model.index(0, Column.STATUS)
    assert status.data() == "up to date"
    st = ui_corpus.stat()
    os.utime(ui_corpus, (st.st_atime, st.st_mtime + 10))
    try:
        panel.refresh()
        assert panel.model.index(0, Column.STATUS).data() == "changed"
    finally:
        os.utime(ui_corpus, (st.st_atime, st.st_mtime))


def test_a_corpus_folder_is_up_to_date_until_a_file_in_it_changes(qtbot, tmp_path) -> None:
    """A LISA (or BEIR) folder is one corpus: its folder's size is no change."""
    lisa = tmp_path / "lisa"
    shutil.copytree(Path(__file__).parents[2] / "data" / "corpus" / "lisa", lisa)
    store = IndexStore()
    build_index(lisa, name="lisa-folder", store=store)
    panel = IndexPanel(store)
    qtbot.addWidget(panel)
    panel.refresh()

    def status() -> tuple[str, str]:
        cell = panel.model.index(panel.model.row_of("lisa-folder"), Column.STATUS)
        return cell.data(), cell.data(Qt.ItemDataRole.ToolTipRole)

    assert status()[0] == "up to date"
    rewritten = lisa / "LISA0.001"
    before = rewritten.stat().st_mtime  # copytree kept the fixture's, older than the build
    later = time.time() + 3600
    os.utime(rewritten, (later, later))  # rewritten in place: the folder's mtime stays
    panel.refresh()
    text, tip = status()
    assert text == "changed"
    assert "LISA0.001" in tip
    os.utime(rewritten, (before, before))
    panel.refresh()
    assert status()[0] == "up to date"
    (lisa / "LISA9.999").write_text("Document 99\nADDED\n", encoding="ascii")
    panel.refresh()
    assert status()[0] == "changed"


def test_no_indexes_shows_a_hint(qtbot) -> None:
    panel = IndexPanel(IndexStore())
    qtbot.addWidget(panel)
    panel.refresh()
    assert panel.view.isHidden()
    assert not panel.empty_label.isHidden()
