"""One HTML parser for .html files, EPUB chapters and HTML mail: the same markup, the same text."""

from __future__ import annotations

import zipfile
from email.message import EmailMessage
from pathlib import Path

from bm25desk.engine.extract.epub import extract_epub
from bm25desk.engine.extract.html_text import extract_html, parse_html
from bm25desk.engine.extract.mail import extract_eml

BODY = (
    "<h1>Tide  tables</h1>"
    "<script>var hidden = 'scriptword';</script><style>p {color: red}</style>"
    "<p>High water at <b>dawn</b>&nbsp;today.</p>"
    "<pre>col1   col2\n  indented</pre>"
    "<table><thead><tr><th>Port</th><th>Time</th></tr></thead>"
    "<tbody><tr><td>Leith</td><td>06:10</td></tr></tbody></table>"
    "<details><summary>More</summary>Spring tides</details>"
    "<svg><text>svgword</text></svg>text<br/>after break"
)
PAGE = f"<html><head><title>Tides</title></head><body>{BODY}</body></html>"
EXPECTED = (
    "Tide tables\nHigh water at dawn today.\ncol1   col2\nindented\nPort\nTime\nLeith\n06:10\n"
    "More\nSpring tides\ntext\nafter break"
)


def _epub(path: Path, chapter: str) -> Path:
    opf = (
        '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Book</dc:title></metadata>'
        '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c1"/></spine></package>'
    )
    container = (
        '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
        '<rootfile full-path="OEBPS/book.opf"/></rootfiles></container>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mimetype", "application/epub+zip")
        zf.writestr("META-INF/container.xml", container)
        zf.writestr("OEBPS/book.opf", opf)
        zf.writestr("OEBPS/c1.xhtml", chapter)
    return path


def test_parse_html() -> None:
    page = parse_html(PAGE)
    assert (page.title, page.h1, page.body) == ("Tides", "Tide tables", EXPECTED)


def test_the_same_text_from_a_page_a_chapter_and_a_mail(tmp_path: Path) -> None:
    html = tmp_path / "tides.html"
    html.write_text(PAGE, encoding="utf-8")
    assert extract_html(html) == ("Tides", f"Tides\n{EXPECTED}")

    _, book = extract_epub(_epub(tmp_path / "tides.epub", PAGE))
    assert book == EXPECTED

    msg = EmailMessage()
    msg["Subject"] = "Tides"
    msg.set_content(PAGE, subtype="html")
    mail = tmp_path / "tides.eml"
    mail.write_bytes(msg.as_bytes())
    _, text = extract_eml(mail)
    assert text == f"Subject: Tides\n\n{EXPECTED}"
