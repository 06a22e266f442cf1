"""Tests for the EPUB extractor."""

from __future__ import annotations

from pathlib import Path

import pytest
from extract_helpers import MIXED, extract, rezip

from bm25desk.engine.extract.common import ExtractError
from bm25desk.engine.extract.epub import extract_epub


def test_epub_chapters_in_spine_order() -> None:
    title, text = extract("books/lighthouse.epub")
    assert title == "The Lighthouse Keeper"
    # The manifest lists chapter 3 first and chapter 2's file name needs URL-decoding.
    assert text.index("Arrival") < text.index("The Storm") < text.index("mirthwater")
    assert "Contents" not in text  # the navigation document is not in the spine
    assert "cssonlyibis" not in text


def test_epub_drm_and_damage(tmp_path: Path) -> None:
    epub = MIXED / "books/lighthouse.epub"
    encryption = (
        b'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        b'<EncryptedData><CipherData><CipherReference URI="OEBPS/text/ch1.xhtml"/></CipherData>'
        b"</EncryptedData></encryption>"
    )
    drm = rezip(epub, tmp_path / "drm.epub", add={"META-INF/encryption.xml": encryption})
    with pytest.raises(ExtractError, match=r"^DRM-protected e-book"):
        extract_epub(drm)
    no_container = rezip(epub, tmp_path / "nc.epub", drop="META-INF/container.xml")
    with pytest.raises(ExtractError, match=r"container.xml is missing"):
        extract_epub(no_container)
