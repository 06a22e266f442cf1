"""Tests for the OpenDocument text extractor."""

from __future__ import annotations

from pathlib import Path

import pytest
from extract_helpers import MIXED, extract, rezip

from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.odt import extract_odt


def test_odt_text_title_table_and_notes() -> None:
    title, text = extract("papers/minutes.odt")
    assert title == "Allotment Committee Minutes"
    lines = text.split("\n")
    assert lines[0] == "Minutes of the allotment committee"
    assert "Present: five members.  Apologies: none." in lines  # text:s c="2"
    assert "The tundrabloom beds will be moved to plot 7." in lines  # the footnote moved out
    assert "Item\tCost" in lines
    assert "Compost\t40" in lines
    assert lines[-1] == "Subject to the landlord's consent."
    assert "deletedonlybadger" not in text


def test_odt_damage_and_encryption(tmp_path: Path) -> None:
    odt = MIXED / "papers/minutes.odt"
    with pytest.raises(ExtractError, match=r"damaged archive \(content.xml is missing\)"):
        extract_odt(rezip(odt, tmp_path / "a.odt", drop="content.xml"))
    manifest = (
        b'<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        b'<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/>'
        b"</manifest:file-entry></manifest:manifest>"
    )
    name = "META-INF/manifest.xml"
    enc = rezip(odt, tmp_path / "b.odt", drop=name, add={name: manifest})
    with pytest.raises(ExtractError, match=r"^encrypted document"):
        extract_odt(enc)
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]>'
        b'<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:'
        b'xmlns:office:1.0"/>'
    )
    unsafe = rezip(odt, tmp_path / "c.odt", drop="content.xml", add={"content.xml": bomb})
    with pytest.raises(ExtractError, match=r"^unsafe XML"):
        extract_odt(unsafe)
