"""UI fixtures: every UI test runs with a private data dir (indexes and settings)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _garbage_collected_on_the_gui_thread() -> Iterator[None]:
    """Disable automatic collection during a UI test and collect afterwards, on this thread.

    As in the app (pyqtgraph's GarbageCollector): a collection started on a worker thread could
    destroy Qt objects there and crash the process.
    """
    gc.disable()
    try:
        yield
    finally:
        gc.collect()
        gc.enable()


@pytest.fixture(autouse=True)
def _private_data_dir(data_dir: Path) -> Path:
    """Never touch the real user's indexes or settings."""
    return data_dir


@pytest.fixture
def make_window(qtbot) -> Iterator[Callable[[], object]]:
    """Return a factory of MainWindows; each is closed (cancel + wait) at teardown."""
    from bm25desk.ui.main_window import MainWindow

    made: list[MainWindow] = []

    def make() -> MainWindow:
        window = MainWindow()
        window.confirm = lambda title, text: True
        qtbot.addWidget(window)
        made.append(window)
        return window

    yield make
    for window in made:
        window.close()
        assert not window.runner.jobs or window.runner.wait(5000)


@pytest.fixture
def window(make_window, ui_index, qtbot):
    """A MainWindow with the test index open."""
    w = make_window()
    w.show()
    qtbot.waitUntil(lambda: w.searcher is not None, timeout=15000)
    return w
