"""Search-tab fixtures: a shown Search panel on the small test index."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bm25desk.ui.search.panel import SearchPanel


@pytest.fixture
def panel(qtbot, runner, searcher) -> Iterator[SearchPanel]:
    """Return a Search panel, 1200×800 and shown, searching ``searcher``."""
    p = SearchPanel(runner)
    qtbot.addWidget(p)
    p.resize(1200, 800)
    p.show()
    p.set_searcher(searcher)
    yield p
    p.set_searcher(None)
