"""Issue 16.7: text from documents is shown as text, never read as HTML.

A document titled ``<img src=file:///etc/passwd>`` (and a source path with tags in it) appears
literally in the results, their tooltips, the preview, the ledger, Compare, the index list and
picker, the skipped-files report and the Evaluation tables. Before, tooltips rendered it as HTML
(Qt loads the image from disk).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from bm25desk.engine import IndexStore, build_index, get_variant
from bm25desk.ui.compare.models import HeatmapModel
from bm25desk.ui.evaluation.query_models import DocColumn, RelevantDocsModel
from bm25desk.ui.evaluation.work import query_detail
from bm25desk.ui.indexes.skip_report_dialog import SkipReportDialog
from bm25desk.ui.search.results_model import Column
from tests.conftest import write_ui_corpus

TITLE = "<img src=file:///etc/passwd> & <b>bold</b>"
TIP = Qt.ItemDataRole.ToolTipRole


def _hostile_index(tmp_path: Path, tsv_index) -> Path:
    folder = tmp_path / "<b>odd<b> folder"
    folder.mkdir()
    docs = (
        ("<b>x</b>", TITLE, "An apple and a <script>pear</script>."),
        ("d2", "Plain", "Another apple."),
    )
    source = write_ui_corpus(folder / "hostile.tsv", docs)
    tsv_index(source, "hostile")
    return source


def test_document_text_shows_as_text_everywhere(
    qtbot, make_window, tmp_path, shown, tsv_index
) -> None:
    source = _hostile_index(tmp_path, tsv_index)
    window = make_window()
    window.show()
    qtbot.waitUntil(lambda: window.searcher is not None, timeout=15000)
    panel = window.search_panel
    with qtbot.waitSignal(panel.results_shown):
        panel.set_query("apple")
    row = panel.model.row_of_docid("<b>x</b>")
    title = panel.model.index(row, Column.TITLE)
    assert title.data() == TITLE
    assert TITLE in shown(title.data(TIP))
    assert "An apple and a <script>pear</script>." in shown(
        panel.model.index(row, Column.SNIPPET).data(TIP)
    )
    panel.select_row(panel.view.proxy_row_of_docno(panel.model.hit(row).docno))
    qtbot.waitUntil(
        lambda: (
            panel.detail.outcome() is not None
            and panel.detail.outcome().explanation.docid == "<b>x</b>"
        ),
        timeout=5000,
    )
    preview = panel.detail.preview
    for label in (preview.title, panel.detail.ledger.title):
        assert label.textFormat() == Qt.TextFormat.PlainText
        assert TITLE in label.full_text()
        assert TITLE in shown(label.toolTip())
    assert shown(preview.location.toolTip()) == "id <b>x</b>"

    with qtbot.waitSignal(window.compare_panel.jobs.succeeded, timeout=10000):
        window.show_tab(1)
    compare = window.compare_panel
    compare.view.clearSelection()
    rows = [compare.model.index(r, 5) for r in range(compare.model.rowCount())]
    hostile = next(i for i in rows if i.data() == TITLE)
    assert TITLE in shown(hostile.data(TIP))
    heat = compare.heat_model
    assert isinstance(heat, HeatmapModel)
    tips = [
        shown(heat.headerData(c, Qt.Orientation.Horizontal, TIP)) for c in range(heat.columnCount())
    ]
    assert any(TITLE in t for t in tips)
    with qtbot.waitSignal(compare.delta_jobs.succeeded, timeout=10000):
        compare.view.selectRow(compare.proxy.mapFromSource(hostile).row())
    assert TITLE in shown(compare.delta_title.text())
    assert shown(compare.delta_title.toolTip()) == TITLE

    window.show_index_manager()
    listed = window.index_panel.model.index(0, 0)
    assert str(source) in shown(listed.data(TIP))
    picker = window.index_picker.combo
    assert shown(picker.itemData(picker.currentIndex(), TIP)) == str(source)

    detail = query_detail(
        window.searcher, "q1", "apple", {"<b>x</b>": 1}, get_variant("lucene"), 10
    )
    docs = RelevantDocsModel()
    docs.set_detail(detail)
    assert docs.index(0, DocColumn.TITLE).data() == TITLE
    assert TITLE in shown(docs.index(0, DocColumn.TITLE).data(TIP))


def test_the_skip_report_shows_file_names_as_text(qtbot, data_dir, tmp_path, shown) -> None:
    folder = tmp_path / "scans"
    folder.mkdir()
    (folder / "keep.txt").write_text("Text.", encoding="utf-8")
    (folder / "<img src=x>.txt").write_bytes(b"\x00\x01binary")
    report = build_index(folder, name="scans", store=IndexStore())
    dialog = SkipReportDialog(report)
    qtbot.addWidget(dialog)
    place = dialog.model.index(0, 0)
    assert place.data() == "<img src=x>.txt"
    assert shown(place.data(TIP)).endswith("<img src=x>.txt")
