"""Shared pytest configuration: offscreen Qt, UI fixtures, then the engine block at the bottom."""

from __future__ import annotations

import os

# Before any Qt import (git-cola's rule): no display is needed, anywhere.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from skip_policy import pytest_addoption as _skip_policy_options
from skip_policy import (  # the skip summary, and CI's failure on unexpected skips
    pytest_collectreport,
    pytest_runtest_logreport,
    pytest_sessionfinish,
    pytest_terminal_summary,
)

__all__ = [
    "pytest_collectreport",
    "pytest_runtest_logreport",
    "pytest_sessionfinish",
    "pytest_terminal_summary",
]

# --- UI fixtures -------------------------------------------------------------------------------

# (docid, title, text). "fruit" is in 6 of 8 documents (negative BIM/RSJ idf), "apple" repeats in
# d1 and d6, "the" is a stop word, and "cider" is in one document only.
UI_DOCS: tuple[tuple[str, str, str], ...] = (
    (
        "d1",
        "Apple orchards",
        "Apple trees grow in orchards. The apple harvest is in autumn; apple pie follows.",
    ),
    ("d2", "Fruit storage", "Store fruit in a cool place. Apples and pears keep for months."),
    ("d3", "Pear varieties", "The pear is a fruit. Pear trees need pollination by bees."),
    (
        "d4",
        "Bees and pollination",
        "Bees pollinate fruit trees. Without bees there is little fruit.",
    ),
    (
        "d5",
        "Orchard pests",
        "Pests damage fruit in the orchard: moths, aphids and birds eat the fruit.",
    ),
    (
        "d6",
        "Cider making",
        "Cider is made from apple juice, fermented for weeks. Good cider needs good apples.",
    ),
    (
        "d7",
        "Grafting",
        "Grafting joins a branch to a rootstock; fruit trees are grafted in spring.",
    ),
    (
        "d8",
        "Autumn in the orchard",
        "In autumn the orchard is full of fruit, and the trees lose their leaves.",
    ),
)
UI_INDEX = "orchard"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a QApplication as ``gui`` (qutebrowser's idea)."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "qtbot" in names or "qapp" in names:
            item.add_marker(pytest.mark.gui)


def write_ui_corpus(path: Path, docs: tuple[tuple[str, str, str], ...] = UI_DOCS) -> Path:
    """Write ``docs`` as a TSV with a header row (id, title, text)."""
    lines = ["id\ttitle\ttext", *(f"{d}\t{t}\t{b}" for d, t, b in docs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def ui_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The UI test corpus as a TSV file with a header row."""
    return write_ui_corpus(tmp_path_factory.mktemp("ui-corpus") / "orchard.tsv")


@pytest.fixture(scope="session")
def ui_index_root(tmp_path_factory: pytest.TempPathFactory, ui_corpus: Path) -> Path:
    """Build the UI test index once per session (English stop words, Porter); return its root."""
    from bm25desk.engine import IndexStore, build_index
    from bm25desk.engine.analysis.analyzer import Analyzer
    from bm25desk.engine.readers.corpus import ColumnMap

    root = tmp_path_factory.mktemp("ui-indexes")
    build_index(
        ui_corpus,
        name=UI_INDEX,
        fmt="tsv-header",
        columns=ColumnMap("id", ("text",), "title"),
        analyzer=Analyzer.create(stopwords="en", stemmer="porter"),
        store=IndexStore(root),
    )
    return root


@pytest.fixture(autouse=True)
def _no_data_dir_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start every test without a ``--data-dir`` an earlier test's CLI run set in this process."""
    from bm25desk import paths

    monkeypatch.setattr(paths, "_override", None)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point BM25DESK_DATA_DIR (indexes and settings) at a fresh temporary directory."""
    from bm25desk import paths

    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv("BM25DESK_DATA_DIR", str(root))
    monkeypatch.setattr(paths, "_override", None)
    return root


@pytest.fixture
def ui_index(data_dir: Path, ui_index_root: Path) -> Path:
    """Copy the session's test index into this test's data dir; return the index directory."""
    target = data_dir / "indexes" / UI_INDEX
    shutil.copytree(ui_index_root / UI_INDEX, target)
    return target


@pytest.fixture
def searcher(ui_index_root: Path):
    """A :class:`Searcher` over the session's test index (read-only)."""
    from bm25desk.engine import IndexStore, Searcher

    return Searcher(IndexStore(ui_index_root).open(UI_INDEX))


@pytest.fixture
def runner(qtbot) -> Iterator[object]:
    """A JobRunner; at teardown every job must have finished (napari's dangling-pool guard)."""
    from bm25desk.ui.common.jobs import JobRunner

    r = JobRunner()
    yield r
    r.cancel_all()
    assert r.wait(5000), "background jobs still running at the end of the test"
    qtbot.waitUntil(lambda: not r.jobs, timeout=2000)


# --- engine tests: golden-file regeneration (keep this block at the very bottom) ---------------
# pytest_addoption only works in a rootdir/initial conftest, hence here and not in tests/engine/.
def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--update-golden`` (rewrite tests/data/golden_*.json) and ``--strict-skips``."""
    _skip_policy_options(parser)
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="regenerate the golden score files in tests/data instead of checking against them",
    )
