"""Issue 10: one name per variant everywhere (the registry's label with its key), never "Lucene" in
one place and "lucene" or "TFlDpIDF(…)" in another."""

from __future__ import annotations

from PySide6.QtCore import Qt

from bm25desk.engine import get_variant
from bm25desk.ui.common.variant_picker import variant_summary


def test_the_search_tab_and_the_status_bar_use_the_one_name(qtbot, window, shown) -> None:
    panel = window.search_panel
    v = get_variant("tfldp")
    name = type(v).display_name()  # "TF₁∘δ∘p×IDF (Rousseau & Vazirgiannis 2013) [tfldp]"
    with qtbot.waitSignal(panel.results_shown):
        panel.set_variant(v)
        panel.set_query("apple")
    qtbot.waitUntil(lambda: panel.detail.outcome() is not None, timeout=5000)
    assert panel.picker.combo.currentText() == name
    assert shown(panel.bar.variant_name.text()).startswith(name)
    assert window.variant_label.full_text() == variant_summary(v)
    assert variant_summary(v).startswith(name)
    assert name in shown(panel.detail.ledger.heading.text())
    assert "TFlDpIDF(" not in panel.detail.ledger.heading.text()


def test_compare_and_evaluation_use_the_one_name(qtbot, window, shown) -> None:
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple fruit")
    with qtbot.waitSignal(window.compare_panel.jobs.succeeded, timeout=10000):
        window.show_tab(1)
    summary = shown(window.compare_panel.summary.text())
    assert "BM25 (Lucene / Elasticsearch) [lucene]" in summary
    assert "BM25L (Lv & Zhai 2011) [bm25l]" in summary
    configs = window.eval_panel.setup.configs_box.model
    names = [configs.index(r, 0).data() for r in range(configs.rowCount())]
    assert "BM25 (Lucene / Elasticsearch) [lucene]" in names
    sweep = window.eval_panel.sweep.variant_combo
    assert sweep.currentText() == "BM25 (Lucene / Elasticsearch) [lucene]"
    assert configs.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
