"""The skipped-files dialog names each file (not its folder) and gives the whole reason."""

from __future__ import annotations

from PySide6.QtCore import Qt

from bm25desk.engine import IndexStore, build_index
from bm25desk.ui.indexes.skip_report_dialog import SkipReportDialog


def test_skipped_files_are_named_with_their_whole_reason(qtbot, data_dir, tmp_path, shown):
    folder = tmp_path / "a-folder-with-a-long-name" / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "keep.txt").write_text("Something to index.", encoding="utf-8")
    (folder / "sub" / "scan.txt").write_bytes(b"\x00\x01binary\x00")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    report = build_index(folder, name="notes", store=IndexStore())
    dialog = SkipReportDialog(report)
    qtbot.addWidget(dialog)
    dialog.show()
    model = dialog.model
    places = sorted(model.index(r, 0).data() for r in range(model.rowCount()))
    assert places == ["broken.pdf", "sub/scan.txt"]
    reasons = {model.index(r, 0).data(): model.index(r, 1).data() for r in range(2)}
    assert reasons["sub/scan.txt"] == "binary file"
    assert reasons["broken.pdf"].startswith("damaged PDF (")  # the whole reason, not cut
    full = model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert shown(full).startswith(str(folder))
