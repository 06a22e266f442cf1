"""Issue 10's Evaluation view, in the main window at 1280×720: Run in view, the right pane says
what comes next, the progress bar whole, and View → Evaluation (Ctrl+4). Each failed before."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication, QWidget


def _in_view(widget: QWidget, window: QWidget) -> bool:
    """Return whether ``widget`` is shown whole inside ``window`` (not scrolled out of view)."""
    if not widget.isVisible() or widget.visibleRegion().isEmpty():
        return False
    top_left = widget.mapTo(window, widget.rect().topLeft())
    box = QRect(top_left, widget.size())
    return window.rect().contains(box) and widget.visibleRegion().boundingRect() == widget.rect()


def test_the_evaluation_view_at_1280x720(qtbot, make_window, sample_index) -> None:
    window = make_window()
    window.resize(1280, 720)
    window.show()
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    shortcuts = {
        a.shortcut().toString(): a.text() for a in window.findChildren(type(window.new_action))
    }
    assert shortcuts.get("Ctrl+4") == "&Evaluation"
    qtbot.keyClick(window, "4", modifier=window.new_action.shortcut()[0].keyboardModifiers())
    panel = window.eval_panel
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is panel, timeout=2000)
    QApplication.processEvents()
    setup = panel.setup
    assert _in_view(setup.run_button, window)
    assert "Load a query file and a judgement file" in panel.results.placeholder.text()

    with qtbot.waitSignal(panel.inputs_loaded, timeout=10000):
        setup.inputs_box.sample_button.click()
    assert "Load a query file" not in panel.results.placeholder.text()
    assert "Ready" in panel.results.placeholder.text()
    assert setup.run_button.isEnabled()
    assert _in_view(setup.run_button, window)

    setup.options_box.k_spin.setValue(1000)
    with qtbot.waitSignal(setup.experiments.progressed, timeout=10000):
        job = panel.run()
    QApplication.processEvents()
    assert _in_view(setup.progress, window)
    assert setup.progress.height() >= setup.progress.sizeHint().height()
    with qtbot.waitSignal(job.signals.finished, timeout=60000):
        pass
    qtbot.waitUntil(lambda: panel.result() is not None or not setup.experiments.busy())
    assert panel.result() is not None
    QApplication.processEvents()
    # Every metric of the results table is in view: the configuration's name elides instead.
    view = panel.results.summary_view
    last = view.model().columnCount() - 1
    assert last >= 5
    assert not view.horizontalScrollBar().isVisible()
    right = view.horizontalHeader().sectionViewportPosition(last) + view.columnWidth(last)
    assert right <= view.viewport().width()

    panel.tabs.setCurrentWidget(panel.per_query)  # one column per configuration there too
    QApplication.processEvents()
    view = panel.per_query.view
    last = view.model().columnCount() - 1
    assert last >= 4
    right = view.horizontalHeader().sectionViewportPosition(last) + view.columnWidth(last)
    assert right <= view.viewport().width()
    assert view.columnWidth(1) >= 150  # and the query text keeps room


def test_ranking_function_names_keep_their_room_beside_bm25f_parameters(
    qtbot, window_at, sample_index
) -> None:
    """bm25f's five parameters took the whole list: its names column shrank to "Rar" at 1920."""
    from bm25desk.ui.evaluation.config_model import ConfigColumn
    from bm25desk.ui.evaluation.configs_box import PARAMS_SHARE

    window = window_at(1920, 1050)
    window.show_tab(window.tabs.indexOf(window.eval_panel))
    box = window.eval_panel.setup.configs_box
    QApplication.processEvents()
    header = box.view.horizontalHeader()
    room = box.view.viewport().width()
    assert header.sectionSize(ConfigColumn.PARAMS) <= room * PARAMS_SHARE + 1
    assert header.sectionSize(ConfigColumn.VARIANT) >= room * (1 - PARAMS_SHARE) - 1
    rows = box.model.rows()
    bm25f = next(r for r, row in enumerate(rows) if row.variant.key == "bm25f")
    tip = box.model.index(bm25f, ConfigColumn.PARAMS).data(Qt.ItemDataRole.ToolTipRole)
    assert "w_title" in tip
    assert "b_title" in tip
