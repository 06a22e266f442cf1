"""The Evaluation tab on CISI: loading, running, cancelling, per-query drill-down, sweep, export."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QModelIndex, Qt

from bm25desk.engine import IndexStore, Searcher, build_index, get_variant
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.evaluation.detect import (
    QRELS_FORMAT_LABELS,
    QRELS_FORMATS,
    QUERY_FORMAT_LABELS,
    QUERY_FORMATS,
)
from bm25desk.evaluation.evaluate import (
    compare_to_baseline,
    read_qrels,
    read_queries,
    run_experiment,
)
from bm25desk.ui.common.table_model import ROW_ROLE
from bm25desk.ui.evaluation.config_model import ConfigRow, ConfigsModel
from bm25desk.ui.evaluation.labels import short_label
from bm25desk.ui.evaluation.panel import EvalPanel
from bm25desk.ui.evaluation.query_models import PerQueryModel, RelevantDocsModel
from bm25desk.ui.evaluation.result_models import SummaryModel, TestsModel
from bm25desk.ui.evaluation.work import axis_values, best_indices, companion_files, query_detail

CISI = Path(__file__).resolve().parents[3] / "bm25desk" / "data" / "sample"  # shipped
QRY, REL = CISI / "CISI.QRY", CISI / "CISI.REL"


@pytest.fixture(scope="module")
def cisi_folder(tmp_path_factory):
    """A copy of the shipped CISI files in a folder of their own (a user's test collection)."""
    folder = tmp_path_factory.mktemp("cisi")
    for name in ("CISI.ALL", "CISI.QRY", "CISI.REL"):
        shutil.copyfile(CISI / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def cisi(tmp_path_factory, cisi_folder):
    """The CISI index (English stop words, Porter), built once for this module."""
    root = tmp_path_factory.mktemp("cisi-index")
    build_index(
        str(cisi_folder / "CISI.ALL"),
        name="cisi",
        store=IndexStore(root),
        analyzer=Analyzer.create(stopwords="en", stemmer="porter"),
    )
    index = IndexStore(root).open("cisi")
    return index, Searcher(index)


@pytest.fixture(scope="module")
def experiment(cisi):
    """A small experiment computed directly with the engine (for the model tests)."""
    _, searcher = cisi
    return run_experiment(
        searcher,
        read_queries(QRY),
        read_qrels(REL),
        [get_variant("lucene"), get_variant("bm25l"), get_variant("lucene", k1=0.9, b=0.4)],
        ["RR@10", "nDCG@10"],
        k=20,
    )


@pytest.fixture
def panel(qtbot, runner, cisi):
    index, searcher = cisi
    p = EvalPanel(runner)
    qtbot.addWidget(p)
    p.resize(1300, 850)
    p.show()
    p.set_index(index, searcher)
    return p


def _load(qtbot, panel, queries=QRY, qrels=REL):
    with qtbot.waitSignal(panel.inputs_loaded, timeout=10000):
        panel.set_files(queries, qrels)


def _run(qtbot, panel, configs, metrics=("RR@10", "nDCG@10"), k=100):
    panel.set_configs(configs)
    panel.set_metrics(metrics)
    panel.setup.options_box.k_spin.setValue(k)
    with qtbot.waitSignal(panel.experiment_finished, timeout=30000):
        assert panel.run() is not None
    return panel.result()


# -- models --------------------------------------------------------------------------------------


def test_models_pass_the_model_tester(qapp, qtmodeltester, experiment, cisi) -> None:
    _, searcher = cisi
    configs = ConfigsModel()
    qtmodeltester.check(configs)
    configs.set_rows(
        [ConfigRow(get_variant("lucene"), True), ConfigRow(get_variant("bm25l"), False)]
    )
    qtmodeltester.check(configs)
    assert configs.checked() == (get_variant("lucene"),)
    idx = configs.index(1, 0)
    assert configs.setData(idx, Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert len(configs.checked()) == 2
    row = configs.duplicate(0)
    assert configs.removable(row)
    configs.remove(row)
    assert configs.rowCount() == 2
    configs.remove(0)  # the only row of a variant stays
    assert configs.rowCount() == 2

    summary = SummaryModel()
    qtmodeltester.check(summary)
    summary.set_result(experiment)
    qtmodeltester.check(summary)
    assert summary.rowCount() == 3
    assert summary.columnCount() == 2 + 2  # configuration, 2 metrics, time
    for j, metric in enumerate(experiment.metrics, start=1):
        values = [c.aggregate[metric] for c in experiment.configs]
        best = summary.best(metric)
        assert best == best_indices(values)
        for r in range(3):
            font = summary.data(summary.index(r, j), Qt.ItemDataRole.FontRole)
            assert (font is not None and font.bold()) == (r in best)

    tests = TestsModel()
    qtmodeltester.check(tests)
    paired = compare_to_baseline(experiment, 0, permutations=200)
    labels = {c.name: short_label(c.variant) for c in experiment.configs}
    tests.set_tests(paired, labels)
    qtmodeltester.check(tests)
    assert tests.rowCount() == 2 * 2

    queries = read_queries(QRY)
    qrels = read_qrels(REL)
    per_query = PerQueryModel()
    qtmodeltester.check(per_query)
    per_query.set_result(
        experiment,
        {q.qid: q.text for q in queries},
        {q: len(qrels.relevant(q)) for q in experiment.qids},
    )
    qtmodeltester.check(per_query)
    assert per_query.rowCount() == 76
    per_query.set_metric("nDCG@10")
    qtmodeltester.check(per_query)
    assert per_query.metric() == "nDCG@10"
    # Issue 10: one name per variant (its label, key in brackets), folded for a column header.
    assert per_query.headerData(4, Qt.Orientation.Horizontal) == "BM25L (Lv & Zhai 2011)\n[bm25l]"
    assert (
        per_query.headerData(5, Qt.Orientation.Horizontal)
        == "BM25 (Lucene / Elasticsearch)\n[lucene] k1=0.9 b=0.4"
    )

    docs = RelevantDocsModel()
    qtmodeltester.check(docs)
    detail = query_detail(
        searcher, "1", queries.text("1"), qrels.judgements["1"], get_variant("lucene"), 10
    )
    docs.set_detail(detail)
    qtmodeltester.check(docs)
    assert docs.rowCount() == len(qrels.relevant("1"))
    # Full ranks agree with the experiment's run where the run reaches.
    ranking = experiment.configs[0].run.rankings["1"]
    for d in detail.docs:
        if d.rank is not None and d.rank <= len(ranking):
            assert ranking.docids[d.rank - 1] == d.docid


def test_axis_values() -> None:
    assert axis_values(0.4, 0.75, 0.35) == (0.4, 0.75)
    assert axis_values(0.6, 1.8, 0.3) == (0.6, 0.9, 1.2, 1.5, 1.8)
    with pytest.raises(ValueError, match="backwards"):
        axis_values(1.0, 0.5, 0.1)
    with pytest.raises(ValueError, match="greater than 0"):
        axis_values(0.0, 1.0, 0.0)


def test_companion_files(cisi, cisi_folder) -> None:
    index, _ = cisi
    found = companion_files(index)
    assert found is not None
    assert found.queries == cisi_folder / "CISI.QRY"
    assert found.qrels == cisi_folder / "CISI.REL"
    sample = companion_files(SimpleNamespace(name="cisi-sample", source={}))
    assert sample is not None
    assert sample.label == "Load the sample's queries and judgements"
    assert sample.queries.is_file()
    assert sample.qrels.is_file()
    assert companion_files(SimpleNamespace(name="notes", source={"path": "/nowhere/x.tsv"})) is None


# -- the panel -----------------------------------------------------------------------------------


def test_loading_shows_formats_counts_and_the_offer(qtbot, panel) -> None:
    assert not panel.setup.run_button.isEnabled()
    assert not panel.setup.inputs_box.sample_button.isHidden()
    assert "CISI.QRY" in panel.setup.inputs_box.sample_button.text()
    with qtbot.waitSignal(panel.inputs_loaded, timeout=10000):
        panel.setup.inputs_box.sample_button.click()
    text = panel.setup.inputs_box.summary.text()
    assert "112 queries" in text
    assert "3,114 judgements" in text
    assert "SMART (detected)" in text
    assert "0 lines skipped" in text
    assert "76 of the 112 queries have judgements" in text
    assert panel.setup.inputs_box.skipped_view.isHidden()
    assert panel.setup.run_button.isEnabled()


def test_every_evaluation_format_can_be_chosen(panel) -> None:
    """The format boxes offer what the evaluation package reads (NPL, LISA, TIME too)."""
    box = panel.setup.inputs_box
    for combo, keys, labels in (
        (box.queries_format, QUERY_FORMATS, QUERY_FORMAT_LABELS),
        (box.qrels_format, QRELS_FORMATS, QRELS_FORMAT_LABELS),
    ):
        offered = [combo.itemData(i) for i in range(combo.count())]
        assert offered == ["auto", *keys]
        for i, key in enumerate(keys, start=1):
            assert combo.itemData(i, Qt.ItemDataRole.ToolTipRole) == labels[key]
    assert {"npl", "lisa", "time"} <= set(QUERY_FORMATS) & set(QRELS_FORMATS)
    hint = box.summary.text()  # before any file is chosen: which formats are read
    for name in ("TREC", "BEIR", "TSV", "SMART", "Cranfield", "NPL", "LISA", "TIME"):
        assert name in hint


def test_malformed_files_give_readable_messages(qtbot, panel, tmp_path) -> None:
    bad_queries = tmp_path / "queries.txt"
    bad_queries.write_text("this is not\na query file\n", encoding="utf-8")
    bad_qrels = tmp_path / "qrels.txt"
    bad_qrels.write_bytes(b"\x00\x01 nonsense")
    _load(qtbot, panel, bad_queries, bad_qrels)
    bar = panel.message_bar
    assert not bar.isHidden()
    message = bar.text.text()
    assert "Could not read the queries from" in message
    assert "Could not read the judgements from" in message
    assert "Traceback" not in message
    assert "Something went wrong" not in message
    assert not panel.inputs.ready
    assert not panel.setup.run_button.isEnabled()

    # Some malformed lines among good ones: read, and the skipped lines listed with line numbers.
    partly = tmp_path / "partly.qrels"
    partly.write_text("1 0 28 1\n1 0 35\n2 0 29 one\n2 0 38 1\n", encoding="utf-8")
    _load(qtbot, panel, QRY, partly)
    assert panel.message_bar.isHidden()
    assert "2 lines skipped" in panel.setup.inputs_box.summary.text()
    assert not panel.setup.inputs_box.skipped_view.isHidden()
    assert "partly.qrels:2" in panel.setup.inputs_box.skipped_view.toPlainText()
    assert "partly.qrels:3" in panel.setup.inputs_box.skipped_view.toPlainText()


def test_run_fills_the_tables_and_the_chart(qtbot, panel, tmp_path) -> None:
    _load(qtbot, panel)
    result = _run(qtbot, panel, [get_variant("lucene"), get_variant("bm25l")])
    assert [c.key for c in result.configs] == ["lucene", "bm25l"]
    assert panel.results.summary_model.rowCount() == 2
    assert panel.results.summary_model.columnCount() == 4
    assert (
        panel.results.summary_proxy.index(0, 1).data()
        == f"{result.configs[0].aggregate['RR@10']:.4f}"
    )
    assert len(panel.results.bars.bars()) == 2
    assert "76 queries" in panel.results.result_label.text()
    qtbot.waitUntil(lambda: panel.results.tests_model.rowCount() == 2, timeout=10000)
    t = panel.results.tests_model.test(0)
    assert t.wins + t.losses + t.ties == 76
    assert panel.per_query.model.rowCount() == 76
    assert not panel.setup.run_button.isHidden()
    assert panel.setup.run_button.isEnabled()
    assert panel.setup.progress.isHidden()

    # Baseline switch: the tests are recomputed against the other configuration.
    with qtbot.waitSignal(panel.results.tests_jobs.succeeded, timeout=10000):
        panel.results.set_baseline(1)
    assert panel.results.tests_model.test(0).baseline == result.configs[1].name

    # Export: run files, run cards, per-query CSV.
    out = tmp_path / "runs"
    job = panel.results.export_to(out)
    with qtbot.waitSignal(job.signals.finished, timeout=10000):
        pass
    names = sorted(p.name for p in out.iterdir())
    assert sum(n.endswith(".run") for n in names) == 2
    assert sum(n.endswith(".card.json") for n in names) == 2
    assert "per_query.csv" in names
    assert "Wrote" in panel.message_bar.text.text()


def test_cancel_stops_the_run(qtbot, panel) -> None:
    _load(qtbot, panel)
    panel.set_configs([get_variant(k) for k in ("lucene", "okapi", "bm25l", "bm25plus", "atire")])
    panel.setup.options_box.k_spin.setValue(1000)
    with qtbot.waitSignal(panel.runner.busy_changed, timeout=5000):
        job = panel.run()
    assert not panel.setup.run_button.isEnabled()
    assert panel.setup.cancel_button.isEnabled()
    # No qtbot blocker on progressed: the pool thread queues many of them, and one delivered after
    # the blocker had disconnected and gone crashed pytest-qt now and then (SIGSEGV).
    progressed: list[object] = []
    job.signals.progressed.connect(lambda *args: progressed.append(args))
    qtbot.waitUntil(lambda: bool(progressed), timeout=10000)
    with (
        qtbot.waitSignal(job.signals.cancelled, timeout=10000),
        qtbot.assertNotEmitted(panel.experiment_finished, wait=200),
    ):
        panel.setup.cancel_button.click()
    qtbot.waitUntil(lambda: panel.setup.run_button.isEnabled(), timeout=5000)
    assert panel.result() is None
    assert panel.message_bar.text.text() == "Evaluation cancelled."
    assert panel.setup.progress.isHidden()


def test_per_query_double_click_and_why_not(qtbot, panel) -> None:
    _load(qtbot, panel)
    result = _run(qtbot, panel, [get_variant("lucene"), get_variant("bm25plus")])
    panel.tabs.setCurrentIndex(1)
    view, proxy = panel.per_query.view, panel.per_query.proxy
    row = next(r for r in range(proxy.rowCount()) if proxy.index(r, 0).data(ROW_ROLE) == "3")
    rect = view.visualRect(proxy.index(row, 1))
    qrels = read_qrels(REL)
    queries = read_queries(QRY)

    def same(text: str, relevant: object) -> bool:
        return text == queries.text("3") and relevant == qrels.relevant("3")

    with qtbot.waitSignal(panel.open_query_requested, timeout=5000, check_params_cb=same):
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())

    # The click selected the query: its relevant documents are ranked, and the best-ranked one
    # below the top 10 is explained.
    qtbot.waitUntil(lambda: panel.per_query.why() is not None, timeout=10000)
    detail = panel.per_query.docs_model.detail()
    assert detail.qid == "3"
    assert len(detail.docs) == len(qrels.relevant("3"))
    why = panel.per_query.why()
    missed = [d for d in detail.docs if d.in_index and (d.rank is None or d.rank > 10)]
    assert why.docid == missed[0].docid
    assert why.rank == missed[0].rank
    assert why.rank > 10
    ranking = result.configs[0].run.rankings["3"]
    assert why.cutoff_score == pytest.approx(float(ranking.scores[9]))
    assert why.gap == pytest.approx(why.cutoff_score - why.explanation.score)
    if why.rank <= len(ranking):
        assert ranking.docids[why.rank - 1] == why.docid
    assert f"#{why.rank}" in panel.per_query.why_title.text()
    assert "score of" in panel.per_query.ledger_text.toPlainText()
    assert panel.per_query.ledger_model.rowCount() > 0

    # Another cut-off and another configuration re-rank the drill-down.
    with qtbot.waitSignal(panel.per_query.detail_jobs.succeeded, timeout=10000):
        panel.per_query.config_combo.setCurrentIndex(1)
    assert panel.per_query.docs_model.detail().variant == get_variant("bm25plus")


def test_sweep_heatmap_click_applies_the_cell(qtbot, panel) -> None:
    _load(qtbot, panel)
    panel.tabs.setCurrentIndex(2)
    panel.sweep.set_ranges("lucene", k1=(0.9, 1.2, 0.3), b=(0.4, 0.75, 0.35))
    panel.sweep.metric_combo.setCurrentIndex(panel.sweep.metric_combo.findData("nDCG@10"))
    assert "2 k1 × 2 b = 4 runs" in panel.sweep.size_label.text()
    with qtbot.waitSignal(panel.sweep_finished, timeout=30000):
        panel.run_sweep()
    sweep = panel.sweep.result()
    assert sweep.axes == ("k1", "b")
    assert sweep.values == ((0.9, 1.2), (0.4, 0.75))
    assert "Best nDCG@10" in panel.sweep.best_label.text()
    assert (
        not panel.sweep.heatmap.best_box.isVisible()
        or panel.sweep.heatmap.best_box.rect().width() == 1.0
    )
    qtbot.waitUntil(lambda: panel.sweep.heatmap.plot.isVisible())

    heat = panel.sweep.heatmap
    scene_pos = heat.cell_center(1, 0)
    pos = heat.plot.mapFromScene(scene_pos)
    with qtbot.waitSignal(panel.apply_parameters_requested, timeout=5000) as blocker:
        qtbot.mouseClick(heat.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args[0] == get_variant("lucene", k1=1.2, b=0.4)
    assert heat.chosen_box.isVisible()

    with qtbot.waitSignal(panel.apply_parameters_requested, timeout=5000) as blocker:
        panel.sweep.apply_best_button.click()
    assert blocker.args[0] == sweep.best["nDCG@10"].variant


def test_sweep_with_delta_shows_slices(qtbot, panel) -> None:
    _load(qtbot, panel)
    panel.tabs.setCurrentIndex(2)
    panel.sweep.set_ranges("bm25l", k1=(1.2, 1.2, 0.1), b=(0.4, 0.75, 0.35), delta=(0.0, 1.0, 1.0))
    assert panel.sweep.spins["delta"][1].isEnabled()
    with qtbot.waitSignal(panel.sweep_finished, timeout=30000):
        panel.run_sweep()
    sweep = panel.sweep.result()
    assert sweep.axes == ("k1", "b", "delta")
    assert panel.sweep.slice_combo.count() == 2
    assert panel.sweep.slice_combo.currentIndex() == sweep.best[sweep.metrics[0]].index[2]
    panel.sweep.slice_combo.setCurrentIndex(1)
    assert panel.sweep.heatmap.slice_index() == 1
    with qtbot.waitSignal(panel.apply_parameters_requested, timeout=5000) as blocker:
        panel.sweep.heatmap.cell_clicked.emit(panel.sweep.heatmap.full_index(0, 1))
    assert blocker.args[0] == get_variant("bm25l", k1=1.2, b=0.75, delta=1.0)


def test_closing_the_index_clears_and_disables(qtbot, panel) -> None:
    _load(qtbot, panel)
    _run(qtbot, panel, [get_variant("lucene")], metrics=("P@10",), k=10)
    assert panel.results.summary_model.rowCount() == 1
    assert panel.results.tests_model.rowCount() == 0  # one configuration: nothing to compare
    panel.set_index(None, None)
    assert panel.result() is None
    assert panel.results.summary_model.rowCount() == 0
    assert panel.per_query.model.rowCount() == 0
    assert not panel.setup.run_button.isEnabled()
    assert panel.setup.inputs_box.sample_button.isHidden()
    assert panel.inputs.ready  # the loaded files stay
    assert panel.per_query.view.model().rowCount(QModelIndex()) == 0
