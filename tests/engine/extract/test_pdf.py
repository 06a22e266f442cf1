"""Tests for the PDF extractor."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from extract_helpers import MIXED, extract

from bm25desk.engine.extract import pdf
from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.limits import Deadline


def test_pdf_pages_in_order_and_title() -> None:
    title, text = extract("papers/report.pdf")
    assert title == "Coastal Erosion: Annual Report"
    assert text.index("Introduction") < text.index("Methods") < text.index("xylocarp")


def test_pdf_failures(tmp_path: Path) -> None:
    with pytest.raises(ExtractError, match=r"^encrypted PDF \(a password is needed"):
        extract("failures/locked.pdf")
    with pytest.raises(ExtractError, match=r"^no text \(scanned PDF\?\)$"):
        extract("failures/scan.pdf")
    cut = tmp_path / "cut.pdf"
    cut.write_bytes((MIXED / "papers/report.pdf").read_bytes()[:900])
    with pytest.raises(ExtractError, match=r"^damaged PDF"):
        pdf.extract_pdf(cut)
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"this is not a PDF at all")
    with pytest.raises(ExtractError, match=r"^damaged PDF"):
        pdf.extract_pdf(junk)


def test_pdf_with_an_empty_user_password_opens(tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter(clone_from=MIXED / "papers/report.pdf")
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    path = tmp_path / "restricted.pdf"
    with path.open("wb") as f:
        writer.write(f)
    _, text = pdf.extract_pdf(path)
    assert "xylocarp" in text


def test_missing_library_is_a_skip_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # makes `import pypdf` raise ImportError
    # In this process: a worker process imports its own pypdf, which this test cannot take away.
    with (
        (MIXED / "papers/report.pdf").open("rb") as stream,
        pytest.raises(ExtractError, match=r"^PDF support is not installed \(pip install pypdf\)"),
    ):
        pdf.pdf_text(stream, Deadline(30))
