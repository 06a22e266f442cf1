"""Generate the mixed-format fixtures in ``tests/data/formats/mixed/``.

The generated files are committed, so the tests need none of this script's dependencies. Run it
again only to change a fixture::

    .venv/bin/pip install reportlab pypdf python-docx
    .venv/bin/python tests/data/formats/make_fixtures.py

Every readable fixture holds one made-up word that occurs in no other fixture (see ``UNIQUE``), so
a search for it must return exactly that document. The rest must be skipped with a reason:

=====================  ======================================================================
``locked.pdf``         encrypted with a user password (RC4-128, readable by pypdf without extras)
``broken.docx``        a Word file cut in half: its ZIP central directory is gone
``scan.pdf``           one page holding only a picture of text: no text layer
=====================  ======================================================================

ZIP members get a fixed timestamp and PDFs reportlab's invariant mode, so a re-run changes only
what the fixture definitions change (the encrypted PDF's random /ID and key excepted).
"""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, datetime
from email.message import EmailMessage
from email.policy import SMTP
from pathlib import Path

OUT = Path(__file__).resolve().parent / "mixed"
ZIP_TIME = (2024, 5, 1, 12, 0, 0)

UNIQUE = {
    "notes.txt": "quillfeather",
    "readme.md": "marshglow",
    "guide.rst": "thistlecrown",
    "web/page.html": "lanternfish",
    "papers/report.pdf": "xylocarp",
    "papers/survey.docx": "vorpalhedge",
    "papers/minutes.odt": "tundrabloom",
    "books/lighthouse.epub": "mirthwater",
    "mail/letter.eml": "quokkaberry",
    "mail/archive.mbox": "fjordlinnet",
}
"""Relative path → the word found only in that document."""


def write(rel: str, data: bytes | str) -> None:
    path = OUT / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    print(f"{rel:28} {len(data):>7,} bytes")


def zip_bytes(members: list[tuple[str, bytes]], *, stored_first: bool = False) -> bytes:
    """A ZIP with fixed timestamps; ``stored_first`` keeps the first member uncompressed (ODF)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i, (name, data) in enumerate(members):
            info = zipfile.ZipInfo(name, ZIP_TIME)
            stored = stored_first and i == 0
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buf.getvalue()


def renormalise_zip(data: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zip_bytes([(i.filename, zf.read(i)) for i in zf.infolist()])


# --------------------------------------------------------------------------------------------------
# Plain formats


def plain() -> None:
    write(
        "notes.txt",
        "Field notes, spring\n\nThe heron returned to the pond on Tuesday. A quillfeather was "
        "found near the reeds, and the water level had dropped by a hand's width.\n",
    )
    write(
        "readme.md",
        "# Garden log\n\nPlanted tomatoes and basil. The *marshglow* seedlings need more light.\n\n"
        "```\nwater: daily\n```\n",
    )
    write(
        "guide.rst",
        "Bird ringing guide\n==================\n\nHold the bird gently; a thistlecrown ring fits "
        "most finches.\n\n.. note:: Record the ring number at once.\n",
    )
    write(
        "web/page.html",
        """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Night fishing on the estuary</title>
  <style>
    .styleonlyokapi { color: #336; font-family: Georgia, serif; }
    body { margin: 2em; }
  </style>
  <script>
    var scriptonlyzebra = "tracking";
    document.addEventListener("DOMContentLoaded", function () { console.log(scriptonlyzebra); });
  </script>
</head>
<body>
  <!-- commentonlyheron: an editor's note that readers never see -->
  <h1>Night fishing</h1>
  <p>After dark the <b>lanternfish</b> rise towards the surface &amp; the boats follow them.</p>
  <noscript>Please enable noscriptonlyvole to see the map.</noscript>
  <ul><li>Bring a lamp</li><li>Bring warm clothes</li></ul>
  <script type="application/ld+json">{"@type": "Article", "keywords": "jsonldonlymarmot"}</script>
</body>
</html>
""",
    )


# --------------------------------------------------------------------------------------------------
# PDF


def pdf_pages(pages: list[list[str]], title: str | None) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4, invariant=True)
    if title:
        c.setTitle(title)
    c.setAuthor("bm25desk fixtures")
    for lines in pages:
        text = c.beginText(72, 770)
        text.setFont("Helvetica", 12)
        for line in lines:
            text.textLine(line)
        c.drawText(text)
        c.showPage()
    c.save()
    return buf.getvalue()


REPORT_PAGES = [
    [
        "Coastal Erosion Report",
        "",
        "1. Introduction",
        "This report summarises three years of measurements along the northern shore.",
    ],
    [
        "2. Methods",
        "Cliff-top positions were surveyed twice a year with a total station.",
        "Sediment samples were sieved and weighed.",
    ],
    [
        "3. Results",
        "The mean retreat was 0.8 metres per year; the xylocarp shrubs held the dunes best.",
        "Storm surges caused most of the loss.",
    ],
]


def pdfs() -> None:
    from pypdf import PdfReader, PdfWriter
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    write("papers/report.pdf", pdf_pages(REPORT_PAGES, "Coastal Erosion: Annual Report"))

    locked = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_pages([["secretwalrus"]], "Secret"))))
    locked.encrypt(user_password="opensesame", owner_password="owner", algorithm="RC4-128")
    buf = io.BytesIO()
    locked.write(buf)
    write("failures/locked.pdf", buf.getvalue())

    # A "scan": a picture of a page (grey strokes standing for lines of text), no text layer.
    from PIL import Image, ImageDraw

    img = Image.new("L", (420, 300), 255)
    draw = ImageDraw.Draw(img)
    for y in range(30, 280, 22):
        draw.rectangle((30, y, 30 + (y * 37) % 340 + 40, y + 8), fill=90)
    png = io.BytesIO()
    img.save(png, format="PNG", optimize=True)
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4, invariant=True)
    c.setTitle("Scanned letter")
    c.drawImage(ImageReader(io.BytesIO(png.getvalue())), 72, 400, width=420, height=300)
    c.showPage()
    c.save()
    write("failures/scan.pdf", buf.getvalue())


def small_pdf(lines: list[str], title: str) -> bytes:
    return pdf_pages([lines], title)


# --------------------------------------------------------------------------------------------------
# DOCX


def docx_bytes() -> bytes:
    import docx

    d = docx.Document()
    cp = d.core_properties
    cp.title = "Wetland Survey Methods"
    cp.author = "bm25desk fixtures"
    cp.created = cp.modified = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    cp.revision = 1
    d.add_heading("Survey of the Glimmerfen wetland", level=1)
    d.add_paragraph("We counted breeding birds along four transects in May.")
    d.add_heading("Species recorded", level=2)
    table = d.add_table(rows=3, cols=3)
    rows = [
        ("Species", "Count", "Notes"),
        ("Reed warbler", "14", "singing males"),
        ("Bittern", "1", "heard near the vorpalhedge at dusk"),
    ]
    for r, values in enumerate(rows):
        for c, value in enumerate(values):
            table.cell(r, c).text = value
    d.add_heading("Conclusions", level=2)
    d.add_paragraph("Numbers were stable compared with last year.")
    buf = io.BytesIO()
    d.save(buf)
    return renormalise_zip(buf.getvalue())


def docxs() -> None:
    data = docx_bytes()
    write("papers/survey.docx", data)
    write("failures/broken.docx", data[: len(data) // 2])


# --------------------------------------------------------------------------------------------------
# ODT


def odt_bytes() -> bytes:
    office = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
    ns = (
        f'xmlns:office="{office}" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
        'office:version="1.3"'
    )
    content = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-content {ns}>
 <office:body>
  <office:text>
   <text:sequence-decls/>
   <text:h text:outline-level="1">Minutes of the allotment committee</text:h>
   <text:p>Present: five members.<text:s text:c="2"/>Apologies: none.</text:p>
   <text:p>The <text:span>tundrabloom</text:span> beds will be moved<text:note text:id="n1"
     text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body>
     <text:p>Subject to the landlord's consent.</text:p></text:note-body></text:note> to plot 7.
   </text:p>
   <text:tracked-changes><text:changed-region text:id="c1"><text:deletion>
     <text:p>deletedonlybadger</text:p></text:deletion></text:changed-region></text:tracked-changes>
   <table:table table:name="Budget">
    <table:table-row>
     <table:table-cell><text:p>Item</text:p></table:table-cell>
     <table:table-cell><text:p>Cost</text:p></table:table-cell>
    </table:table-row>
    <table:table-row>
     <table:table-cell><text:p>Compost</text:p></table:table-cell>
     <table:table-cell><text:p>40</text:p></table:table-cell>
    </table:table-row>
   </table:table>
   <text:list><text:list-item><text:p>Next meeting in June</text:p></text:list-item></text:list>
  </office:text>
 </office:body>
</office:document-content>
"""
    meta = f"""<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta {ns}>
 <office:meta><dc:title>Allotment Committee Minutes</dc:title>
 <meta:generator>bm25desk fixtures</meta:generator></office:meta>
</office:document-meta>
"""
    manifest = """<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
  manifest:version="1.3">
 <manifest:file-entry manifest:full-path="/"
   manifest:media-type="application/vnd.oasis.opendocument.text"/>
 <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>
 <manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/>
</manifest:manifest>
"""
    return zip_bytes(
        [
            ("mimetype", b"application/vnd.oasis.opendocument.text"),
            ("content.xml", content.encode()),
            ("meta.xml", meta.encode()),
            ("META-INF/manifest.xml", manifest.encode()),
        ],
        stored_first=True,
    )


# --------------------------------------------------------------------------------------------------
# EPUB


def chapter(title: str, paragraphs: list[str]) -> bytes:
    body = "\n".join(f"    <p>{p}</p>" for p in paragraphs)
    return f"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
  <head>
    <title>{title}</title>
    <link rel="stylesheet" href="../style.css" type="text/css"/>
  </head>
  <body>
    <h2>{title}</h2>
{body}
  </body>
</html>
""".encode()


def epub_bytes() -> bytes:
    container = b"""<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"""
    # The manifest lists the chapters out of reading order: the spine decides the order.
    opf = b"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="uid">urn:uuid:7f1c2a3e-bm25-desk-0000-fixture00001</dc:identifier>
    <dc:title>The Lighthouse Keeper</dc:title>
    <dc:creator>A. Fixture</dc:creator>
    <dc:language>en</dc:language>
    <meta property="dcterms:modified">2024-05-01T12:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="c3" href="text/ch3.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="text/ch1.xhtml" media-type="application/xhtml+xml"/>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c2" href="text/ch%202.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
  </manifest>
  <spine>
    <itemref idref="c1"/>
    <itemref idref="c2"/>
    <itemref idref="c3"/>
  </spine>
</package>
"""
    nav = b"""<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>Contents</title></head>
<body><nav epub:type="toc"><ol><li><a href="text/ch1.xhtml">One</a></li></ol></nav></body>
</html>
"""
    return zip_bytes(
        [
            ("mimetype", b"application/epub+zip"),
            ("META-INF/container.xml", container),
            ("OEBPS/content.opf", opf),
            ("OEBPS/nav.xhtml", nav),
            ("OEBPS/style.css", b"p { text-indent: 1em; } .cssonlyibis { color: red; }\n"),
            (
                "OEBPS/text/ch1.xhtml",
                chapter("Chapter One: Arrival", ["The keeper arrived on the island in autumn."]),
            ),
            (
                "OEBPS/text/ch 2.xhtml",
                chapter("Chapter Two: The Storm", ["Waves broke over the gallery all night."]),
            ),
            (
                "OEBPS/text/ch3.xhtml",
                chapter(
                    "Chapter Three: Morning",
                    ["At dawn the sea lay still, bright as mirthwater in a glass."],
                ),
            ),
        ],
        stored_first=True,
    )


# --------------------------------------------------------------------------------------------------
# Mail


def fixed_boundaries(msg: EmailMessage) -> None:
    for n, part in enumerate(p for p in msg.walk() if p.is_multipart()):
        part.set_boundary(f"=-=bm25desk-fixture-{n}=-=")


def letter() -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = "Quarterly figures and the field notes"
    msg["From"] = "Ana Lima <ana@example.org>"
    msg["To"] = "Ben Okafor <ben@example.org>"
    msg["Date"] = "Wed, 01 May 2024 12:00:00 +0000"
    msg["Message-ID"] = "<letter-1@example.org>"
    msg.set_content(
        "Hi Ben,\n\nThe quokkaberry harvest figures are attached, with my field notes.\n\nAna\n"
    )
    msg.add_alternative(
        "<html><body><p>Hi Ben,</p><p>The <b>quokkaberry</b> harvest figures are attached."
        "</p></body></html>",
        subtype="html",
    )
    msg.add_attachment(
        "Counted at the north gate: saffronkite, 12 crates.\n",
        filename="field-notes.txt",
    )
    msg.add_attachment(
        small_pdf(["Harvest summary", "Total: 340 crates; best grower: cobaltmoth farm."], "Sum"),
        maintype="application",
        subtype="pdf",
        filename="summary.pdf",
    )
    msg.add_attachment(
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 32, maintype="image", subtype="png", filename="crates.png"
    )
    fixed_boundaries(msg)
    return msg


def mbox_bytes() -> bytes:
    out = []
    for n, (subject, body) in enumerate(
        [
            ("Ferry times", "The fjordlinnet ferry leaves at nine.\nFrom now on, book ahead.\n"),
            ("Re: Ferry times", "Thanks! See you on the emberquill pier."),
        ],
        1,
    ):
        msg = EmailMessage()
        msg["Subject"] = subject
        msg["From"] = "kari@example.org"
        msg["To"] = "list@example.org"
        msg["Date"] = f"Thu, 02 May 2024 0{n}:00:00 +0000"
        msg["Message-ID"] = f"<ferry-{n}@example.org>"
        msg.set_content(body)
        raw = msg.as_bytes(policy=SMTP.clone(linesep="\n"))
        # mboxrd quoting: a body line starting with "From " gets a ">".
        lines = raw.split(b"\n")
        raw = b"\n".join(b">" + line if line.startswith(b"From ") else line for line in lines)
        out.append(b"From kari@example.org Thu May  2 0%d:00:00 2024\n" % n + raw.rstrip(b"\n"))
    return b"\n\n".join(out) + b"\n"


def mail() -> None:
    write("mail/letter.eml", letter().as_bytes(policy=SMTP.clone(linesep="\n")))
    write("mail/archive.mbox", mbox_bytes())


def main() -> None:
    plain()
    pdfs()
    docxs()
    write("papers/minutes.odt", odt_bytes())
    write("books/lighthouse.epub", epub_bytes())
    mail()


if __name__ == "__main__":
    main()
