"""UI fixtures: every UI test runs with a private data dir (indexes and settings)."""

from __future__ import annotations

import gc
import shutil
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
def window_at(make_window, qtbot) -> Callable[[int, int], object]:
    """Return a factory of MainWindows of a size, shown, with their index open."""

    def make(width: int, height: int) -> object:
        w = make_window()
        w.resize(width, height)
        w.show()
        qtbot.waitUntil(lambda: w.searcher is not None, timeout=15000)
        return w

    return make


@pytest.fixture
def window(make_window, ui_index, qtbot):
    """A MainWindow with the test index open."""
    w = make_window()
    w.show()
    qtbot.waitUntil(lambda: w.searcher is not None, timeout=15000)
    return w


@pytest.fixture(scope="session")
def sample_index_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the bundled sample (CISI, 1,460 documents) once per session; return its root."""
    from bm25desk.engine import IndexStore, build_index
    from bm25desk.ui.indexes.build_request import sample_request

    root = tmp_path_factory.mktemp("sample-indexes")
    request = sample_request()
    build_index(
        request.source,
        name=request.name,
        fmt=request.fmt,
        analyzer=request.make_analyzer(),
        store=IndexStore(root),
    )
    return root


@pytest.fixture
def sample_index(data_dir: Path, sample_index_root: Path) -> Path:
    """Copy the session's sample index into this test's data dir; return its directory."""
    from bm25desk.ui.common.sample import SAMPLE_NAME

    target = data_dir / "indexes" / SAMPLE_NAME
    shutil.copytree(sample_index_root / SAMPLE_NAME, target)
    return target


def shown_text(text: str) -> str:
    """Return what a label or tooltip shows for ``text`` (Qt reads it as HTML if it looks so)."""
    from PySide6 import QtGui

    doc = QtGui.QTextDocument()
    if QtGui.Qt.mightBeRichText(text):
        doc.setHtml(text)
    else:
        doc.setPlainText(text)
    return doc.toPlainText()


@pytest.fixture
def shown() -> Callable[[str], str]:
    """Return :func:`shown_text` (what a label or tooltip shows for a string)."""
    return shown_text


def build_tsv_index(source: Path, name: str, **options: object) -> object:
    """Build index ``name`` from a TSV with a header (id, title, text) into the test's store."""
    from bm25desk.engine import IndexStore, build_index
    from bm25desk.engine.analysis.analyzer import Analyzer
    from bm25desk.engine.readers.corpus import ColumnMap

    return build_index(
        source,
        name=name,
        fmt="tsv-header",
        columns=ColumnMap("id", ("text",), "title"),
        analyzer=Analyzer.create(stopwords="en", stemmer="porter"),
        store=IndexStore(),
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def tsv_index() -> Callable[..., object]:
    """Return :func:`build_tsv_index`."""
    return build_tsv_index
