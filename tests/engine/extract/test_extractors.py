"""Extractors for PDF, DOCX, ODT, EPUB, EML and mbox, and a folder index that mixes every format.

The fixtures live in ``tests/data/formats/mixed`` (made by ``tests/data/formats/make_fixtures.py``;
committed, so these tests need neither reportlab nor network). Each readable fixture holds a word
that no other one holds.
"""

from __future__ import annotations

import io
import shutil
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from bm25desk.engine import BuildReport, IndexStore, Searcher, build_index
from bm25desk.engine.extract import extractors
from bm25desk.engine.extract.extractors import Deadline, run_limited
from bm25desk.engine.readers import corpus
from bm25desk.engine.readers.corpus import ExtractError, ReadReport, read_folder

MIXED = Path(__file__).resolve().parents[2] / "data" / "formats" / "mixed"

# Relative path → (a word only this document holds, the title the index should show).
UNIQUE: dict[str, tuple[str, str]] = {
    "notes.txt": ("quillfeather", "Field notes, spring"),
    "readme.md": ("marshglow", "Garden log"),
    "guide.rst": ("thistlecrown", "Bird ringing guide"),
    "web/page.html": ("lanternfish", "Night fishing on the estuary"),
    "papers/report.pdf": ("xylocarp", "Coastal Erosion: Annual Report"),
    "papers/survey.docx": ("vorpalhedge", "Wetland Survey Methods"),
    "papers/minutes.odt": ("tundrabloom", "Allotment Committee Minutes"),
    "books/lighthouse.epub": ("mirthwater", "The Lighthouse Keeper"),
    "mail/letter.eml": ("quokkaberry", "Quarterly figures and the field notes"),
    "mail/archive.mbox": ("fjordlinnet", "archive.mbox"),
}

# Words found only where they may be found: in a heading, a table, an attachment, a 2nd message.
ALSO_FOUND = {
    "glimmerfen": "papers/survey.docx",  # a Heading 1
    "bittern": "papers/survey.docx",  # a table cell
    "compost": "papers/minutes.odt",  # a table cell
    "landlord": "papers/minutes.odt",  # a footnote
    "saffronkite": "mail/letter.eml",  # text attachment
    "cobaltmoth": "mail/letter.eml",  # PDF attachment
    "emberquill": "mail/archive.mbox",  # second message
}

# Words that are in the files but are not text a reader sees: they must not be indexed.
NEVER_FOUND = [
    "scriptonlyzebra",  # HTML <script>
    "styleonlyokapi",  # HTML <style>
    "commentonlyheron",  # HTML comment
    "noscriptonlyvole",  # HTML <noscript>
    "jsonldonlymarmot",  # JSON-LD <script>
    "deletedonlybadger",  # ODT tracked deletion
    "cssonlyibis",  # EPUB stylesheet
    "secretwalrus",  # the encrypted PDF
]

FAILURES = {
    "failures/locked.pdf": "encrypted PDF",
    "failures/broken.docx": "damaged archive",
    "failures/scan.pdf": "no text (scanned PDF?)",
}


def extract(rel: str) -> tuple[str, str]:
    path = MIXED / rel
    return corpus.EXTRACTORS[path.suffix](path)


# --------------------------------------------------------------------------------------------------
# The mixed folder, end to end


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Searcher, BuildReport]:
    store = IndexStore(tmp_path_factory.mktemp("store"))
    report = build_index(MIXED, name="mixed", store=store)
    return Searcher(store.open("mixed")), report


def test_registered_extensions() -> None:
    for ext in (".pdf", ".docx", ".odt", ".epub", ".eml", ".mbox"):
        assert corpus.EXTRACTORS[ext] is extractors.FORMAT_EXTRACTORS[ext]


def test_every_format_is_found_by_its_unique_word(mixed: tuple[Searcher, BuildReport]) -> None:
    searcher, _ = mixed
    for rel, (word, title) in UNIQUE.items():
        result = searcher.search(word)
        assert [h.docid for h in result.hits] == [rel], word
        assert result.hits[0].title == title
    for word, rel in ALSO_FOUND.items():
        assert [h.docid for h in searcher.search(word).hits] == [rel], word


def test_invisible_text_is_not_indexed(mixed: tuple[Searcher, BuildReport]) -> None:
    searcher, _ = mixed
    for word in NEVER_FOUND:
        result = searcher.search(word)
        assert result.n_matches == 0, word


def test_failures_are_skipped_and_listed(mixed: tuple[Searcher, BuildReport]) -> None:
    _, report = mixed
    assert report.indexed == len(UNIQUE)
    skipped = {s.where: s.reason for s in report.skipped}
    for rel, reason in FAILURES.items():
        assert skipped[str(MIXED / rel)].startswith(reason), skipped
    assert set(skipped) == {str(MIXED / rel) for rel in FAILURES}
    summary = report.summary()
    assert "encrypted PDF" in summary
    assert "damaged archive" in summary


# --------------------------------------------------------------------------------------------------
# Each format


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
        extractors.extract_pdf(cut)
    junk = tmp_path / "junk.pdf"
    junk.write_bytes(b"this is not a PDF at all")
    with pytest.raises(ExtractError, match=r"^damaged PDF"):
        extractors.extract_pdf(junk)


def test_pdf_with_an_empty_user_password_opens(tmp_path: Path) -> None:
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter(clone_from=MIXED / "papers/report.pdf")
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    path = tmp_path / "restricted.pdf"
    with path.open("wb") as f:
        writer.write(f)
    _, text = extractors.extract_pdf(path)
    assert "xylocarp" in text


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
    title, text = extractors.extract_docx(path)
    assert title == "Inventory"
    assert text.count("spanningheader") == 1
    assert "nestedcell" in text


def test_docx_damage(tmp_path: Path) -> None:
    with pytest.raises(ExtractError, match=r"^damaged archive"):
        extract("failures/broken.docx")
    ole = tmp_path / "protected.docx"
    ole.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    with pytest.raises(ExtractError, match=r"^encrypted Word document, or an old binary"):
        extractors.extract_docx(ole)
    not_word = tmp_path / "other.docx"
    with zipfile.ZipFile(not_word, "w") as zf:
        zf.writestr("hello.txt", "not a Word document")
    with pytest.raises(ExtractError, match=r"^damaged Word document"):
        extractors.extract_docx(not_word)


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


def rezip(src: Path, dst: Path, *, drop: str = "", add: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            if info.filename != drop:
                zout.writestr(info, zin.read(info))
        for name, data in (add or {}).items():
            zout.writestr(name, data)
    return dst


def test_odt_damage_and_encryption(tmp_path: Path) -> None:
    odt = MIXED / "papers/minutes.odt"
    with pytest.raises(ExtractError, match=r"damaged archive \(content.xml is missing\)"):
        extractors.extract_odt(rezip(odt, tmp_path / "a.odt", drop="content.xml"))
    manifest = (
        b'<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        b'<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/>'
        b"</manifest:file-entry></manifest:manifest>"
    )
    name = "META-INF/manifest.xml"
    enc = rezip(odt, tmp_path / "b.odt", drop=name, add={name: manifest})
    with pytest.raises(ExtractError, match=r"^encrypted document"):
        extractors.extract_odt(enc)
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]>'
        b'<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:'
        b'xmlns:office:1.0"/>'
    )
    unsafe = rezip(odt, tmp_path / "c.odt", drop="content.xml", add={"content.xml": bomb})
    with pytest.raises(ExtractError, match=r"^unsafe XML"):
        extractors.extract_odt(unsafe)


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
        extractors.extract_epub(drm)
    no_container = rezip(epub, tmp_path / "nc.epub", drop="META-INF/container.xml")
    with pytest.raises(ExtractError, match=r"container.xml is missing"):
        extractors.extract_epub(no_container)


def test_eml_headers_body_and_attachments() -> None:
    title, text = extract("mail/letter.eml")
    assert title == "Quarterly figures and the field notes"
    assert "From: Ana Lima <ana@example.org>" in text
    assert "To: Ben Okafor <ben@example.org>" in text
    assert "Date: Wed, 01 May 2024 12:00:00 +0000" in text
    assert text.count("quokkaberry") == 1  # the plain body, not also its HTML alternative
    assert "Attachment: field-notes.txt\nCounted at the north gate: saffronkite" in text
    assert "Attachment: summary.pdf\n" in text
    assert "cobaltmoth" in text
    assert "Attachment: crates.png" in text


def test_eml_html_only_body_and_unreadable_attachment(tmp_path: Path) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["Subject"] = "Newsletter"
    msg.set_content(
        "<html><head><style>.x{}</style></head><body><p>Hello <i>readers</i></p>"
        "<script>hiddenscript()</script></body></html>",
        subtype="html",
    )
    msg.add_attachment(
        (MIXED / "failures/locked.pdf").read_bytes(),
        maintype="application",
        subtype="pdf",
        filename="locked.pdf",
    )
    path = tmp_path / "news.eml"
    path.write_bytes(msg.as_bytes())
    title, text = extractors.extract_eml(path)
    assert title == "Newsletter"
    assert "Hello readers" in text
    assert "hiddenscript" not in text
    assert "Attachment: locked.pdf (not indexed: encrypted PDF" in text


def test_mbox_one_document_and_per_message_view(tmp_path: Path) -> None:
    title, text = extract("mail/archive.mbox")
    assert title == ""  # the folder reader names it after the file
    assert text.index("fjordlinnet") < text.index("emberquill")
    assert "\nFrom now on, book ahead." in text  # the mboxrd ">From " quoting is undone
    messages = list(extractors.iter_mbox(MIXED / "mail/archive.mbox"))
    assert [(k, t) for k, t, _ in messages] == [
        ("ferry-1@example.org", "Ferry times"),
        ("ferry-2@example.org", "Re: Ferry times"),
    ]
    bad = tmp_path / "not.mbox"
    bad.write_text("Dear diary,\nFrom today on I write daily.\n")
    with pytest.raises(ExtractError, match=r"^not an mbox file"):
        extractors.extract_mbox(bad)


# --------------------------------------------------------------------------------------------------
# Limits


def test_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extractors, "SIZE_LIMIT", 1000)
    with pytest.raises(ExtractError, match=r"^too large \(0.0 MB; the limit is"):
        extract("papers/report.pdf")


def test_unpacked_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extractors, "UNPACKED_LIMIT", 1000)
    with pytest.raises(ExtractError, match=r"^too large when unpacked"):
        extract("papers/survey.docx")


def test_time_limit_stops_a_slow_extractor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extractors, "TIME_LIMIT", 0.2)
    stopped = threading.Event()

    def slow(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
        try:
            while True:  # cooperative: checks the deadline between units of work
                time.sleep(0.01)
                deadline.check()
        finally:
            stopped.set()

    path = tmp_path / "slow.txt"
    path.write_text("x")
    started = time.monotonic()
    with pytest.raises(ExtractError, match=r"^timed out after 0.2 s$"):
        run_limited(slow, path)
    assert time.monotonic() - started < 2
    assert stopped.wait(2)


def test_time_limit_does_not_wait_for_a_stuck_extractor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extractors, "TIME_LIMIT", 0.1)
    release = threading.Event()

    def stuck(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
        release.wait(5)  # never checks the deadline: only the caller's timeout can save it
        return "", ""

    path = tmp_path / "stuck.txt"
    path.write_text("x")
    started = time.monotonic()
    with pytest.raises(ExtractError, match=r"^timed out after 0.1 s$"):
        run_limited(stuck, path)
    assert time.monotonic() - started < 2
    release.set()


def test_timeout_is_a_skip_reason_in_a_folder_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extractors, "TIME_LIMIT", 0.1)

    def never_done(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
        while True:
            time.sleep(0.01)
            deadline.check()

    monkeypatch.setitem(corpus.EXTRACTORS, ".slow", lambda p: run_limited(never_done, p))
    (tmp_path / "a.slow").write_text("x")
    shutil.copy(MIXED / "notes.txt", tmp_path / "b.txt")
    report = ReadReport()
    docs = list(read_folder(tmp_path, report=report))
    assert [d.docid for d in docs] == ["b.txt"]
    assert [(Path(s.where).name, s.reason) for s in report.skipped] == [
        ("a.slow", "timed out after 0.1 s")
    ]


def test_errors_of_the_extractor_reach_the_caller(tmp_path: Path) -> None:
    def broken(stream: io.BufferedIOBase, deadline: Deadline) -> tuple[str, str]:
        raise ValueError("boom")

    path = tmp_path / "x.bin"
    path.write_text("x")
    with pytest.raises(ValueError, match="boom"):
        run_limited(broken, path)


def test_missing_library_is_a_skip_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)  # makes `import pypdf` raise ImportError
    with pytest.raises(ExtractError, match=r"^PDF support is not installed \(pip install pypdf\)"):
        extract("papers/report.pdf")
