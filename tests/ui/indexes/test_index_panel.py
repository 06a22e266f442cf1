"""The index list: rows, staleness, buttons, selection."""

from __future__ import annotations

import os

from bm25desk.engine import IndexStore
from bm25desk.ui.indexes.list_model import Column
from bm25desk.ui.indexes.panel import IndexPanel
from tests.conftest import UI_INDEX


def test_lists_indexes_and_opens_on_selection(qtbot, ui_index) -> None:
    panel = IndexPanel(IndexStore())
    qtbot.addWidget(panel)
    panel.refresh()
    assert panel.names() == [UI_INDEX]
    assert not panel.update_button.isEnabled()  # nothing selected yet
    with qtbot.waitSignal(panel.open_requested) as blocker:
        panel.select(UI_INDEX)
    assert blocker.args == [UI_INDEX]
    assert panel.update_button.isEnabled()
    assert panel.delete_button.isEnabled()
    with qtbot.waitSignal(panel.rebuild_requested) as blocker:
        panel.rebuild_button.click()
    assert blocker.args == [UI_INDEX]
    panel.set_busy(True)
    assert not panel.new_button.isEnabled()
    assert not panel.rebuild_button.isEnabled()
    assert panel.folder_button.isEnabled()


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


def test_no_indexes_shows_a_hint(qtbot) -> None:
    panel = IndexPanel(IndexStore())
    qtbot.addWidget(panel)
    panel.refresh()
    assert panel.view.isHidden()
    assert not panel.empty_label.isHidden()
