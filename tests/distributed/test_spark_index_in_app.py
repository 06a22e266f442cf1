"""An index built with Spark opens in the app and ranks there as it does in the engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from dist_helpers import analyzer, clean_corpus

from bm25desk import spark as bspark
from bm25desk.engine import IndexStore, Searcher

pytestmark = pytest.mark.slow


def test_a_spark_built_index_opens_in_the_app(spark, qtbot, data_dir: Path, tmp_path) -> None:
    from bm25desk.ui.main_window import MainWindow

    corpus = clean_corpus(tmp_path / "corpus.jsonl")
    bspark.build_index(str(corpus), "sparked", analyzer=analyzer(), partitions=2, spark=spark)
    window = MainWindow()
    window.confirm = lambda title, text: True
    qtbot.addWidget(window)
    window.show()
    window.open_index("sparked")
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    with qtbot.waitSignal(window.search_panel.results_shown, timeout=15000) as shown:
        window.search_panel.set_query("river bank")
    outcome = shown.args[0]
    engine = Searcher(IndexStore().open("sparked")).search("river bank", k=10)
    got = [(h.docid, h.score) for h in outcome.result.hits[:10]]
    assert got == [(h.docid, h.score) for h in engine.hits]
    assert window.windowTitle().startswith("sparked")
    window.close()
    assert not window.runner.jobs or window.runner.wait(5000)
