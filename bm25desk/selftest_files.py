"""Tiny documents of every folder format, made in memory, for the self-test's format check.

Each maker returns a file whose only distinctive text is the given word, written by hand (no PDF or
office library), so that ``bm25desk --self-test`` proves every extractor works in an installation.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

__all__ = ["FORMAT_FILES"]


def _pdf(word: str) -> bytes:
    """Return a one-page PDF whose only text is ``word`` (written by hand: no PDF library)."""
    stream = f"BT /F1 12 Tf 72 720 Td (Self-test {word}) Tj ET".encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Title (Self-test PDF) >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.writelines(b"%010d 00000 n \n" % off for off in offsets)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n"
        % (len(objects) + 1, xref)
    )
    return out.getvalue()


def _zip(members: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return out.getvalue()


def _docx(word: str) -> bytes:
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    rels = "http://schemas.openxmlformats.org/package/2006/relationships"
    doc_rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    return _zip(
        {
            "[Content_Types].xml": (
                '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                '<Default Extension="rels" '
                'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                '<Default Extension="xml" ContentType="application/xml"/>'
                f'<Override PartName="/word/document.xml" ContentType="{main}"/></Types>'
            ),
            "_rels/.rels": (
                f'<Relationships xmlns="{rels}"><Relationship Id="rId1" Type="{doc_rel}" '
                'Target="word/document.xml"/></Relationships>'
            ),
            "word/document.xml": (
                f'<w:document xmlns:w="{w}"><w:body><w:p><w:r><w:t>Self-test</w:t></w:r></w:p>'
                f"<w:tbl><w:tr><w:tc><w:p><w:r><w:t>{word}</w:t></w:r></w:p></w:tc></w:tr>"
                "</w:tbl></w:body></w:document>"
            ),
        }
    )


def _odt(word: str) -> bytes:
    office = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
    text = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
    return _zip(
        {
            "mimetype": "application/vnd.oasis.opendocument.text",
            "content.xml": (
                f'<office:document-content xmlns:office="{office}" xmlns:text="{text}">'
                f"<office:body><office:text><text:p>Self-test {word}</text:p>"
                "</office:text></office:body></office:document-content>"
            ),
        }
    )


def _epub(word: str) -> bytes:
    return _zip(
        {
            "mimetype": "application/epub+zip",
            "META-INF/container.xml": (
                '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                '<rootfile full-path="book.opf"/></rootfiles></container>'
            ),
            "book.opf": (
                '<package xmlns="http://www.idpf.org/2007/opf"><metadata '
                'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Self-test</dc:title>'
                '</metadata><manifest><item id="c1" href="c1.xhtml" '
                'media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/>'
                "</spine></package>"
            ),
            "c1.xhtml": f"<html><body><p>Self-test {word}</p></body></html>",
        }
    )


def _mail(word: str) -> str:
    return f"Subject: Self-test\nFrom: a@example.org\nTo: b@example.org\n\nSelf-test {word}\n"


FORMAT_FILES: dict[str, Callable[[str], bytes | str]] = {
    "doc.txt": lambda w: f"Self-test\n{w}\n",
    "doc.md": lambda w: f"# Self-test\n\n{w}\n",
    "doc.html": lambda w: f"<title>Self-test</title><script>hiddenword()</script><p>{w}</p>",
    "doc.pdf": _pdf,
    "doc.docx": _docx,
    "doc.odt": _odt,
    "doc.epub": _epub,
    "doc.eml": _mail,
    "doc.mbox": lambda w: "From a@example.org Wed May  1 12:00:00 2024\n" + _mail(w),
}
