"""Tests for the Word (DOCX) extractor."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from extract_helpers import extract

from bm25desk.engine.extract import word
from bm25desk.engine.extract.common import ExtractError


def test_docx_headings_and_table_cells_in_order() -> None:
    title, text = extract("papers/survey.docx")
    assert title == "Wetland Survey Methods"
    lines = text.split("\n")
    assert lines[0] == "Survey of the Glimmerfen wetland"
    assert "Species\tCount\tNotes" in lines
    assert "Bittern\t1\theard near the vorpalhedge at dusk" in lines
    assert lines.index("Species recorded") < lines.index("Species\tCount\tNotes")
    assert lines[-1] == "Numbers were stable compared with last year."


def test_docx_title_falls_back_to_first_heading_and_merged_cells_read_once(
    tmp_path: Path,
) -> None:
    docx = pytest.importorskip("docx")
    d = docx.Document()
    d.core_properties.title = ""
    d.add_heading("Inventory", level=1)
    table = d.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 2)).text = "spanningheader"
    table.cell(1, 0).text = "a"
    inner = table.cell(1, 1).add_table(rows=1, cols=1)
    inner.cell(0, 0).text = "nestedcell"
    path = tmp_path / "inv.docx"
    d.save(str(path))
    title, text = word.extract_docx(path)
    assert title == "Inventory"
    assert text.count("spanningheader") == 1
    assert "nestedcell" in text


def test_docx_damage(tmp_path: Path) -> None:
    with pytest.raises(ExtractError, match=r"^damaged archive"):
        extract("failures/broken.docx")
    ole = tmp_path / "protected.docx"
    ole.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    with pytest.raises(ExtractError, match=r"^encrypted Word document, or an old binary"):
        word.extract_docx(ole)
    not_word = tmp_path / "other.docx"
    with zipfile.ZipFile(not_word, "w") as zf:
        zf.writestr("hello.txt", "not a Word document")
    with pytest.raises(ExtractError, match=r"^damaged Word document"):
        word.extract_docx(not_word)
