"""Tests for the TREC SGML reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from reader_helpers import read_all, skips, write

from bm25desk.engine.readers import source
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    Document,
)

TREC = """<DOC>
<DOCNO> FT911-1 </DOCNO>
<PROFILE>_AN-BEOA7AAIFT</PROFILE>
<HEADLINE>
FT  11 MAY 91 / Rates &amp; <i>yields</i>
</HEADLINE>
<TEXT>
<P>First paragraph &hyph; with an entity.</P>
<P>Second   paragraph.</P>
</TEXT>
</DOC>
junk between documents
<DOC>
<DOCNO>NO-TITLE-2</DOCNO>
<TEXT>Plain text only.</TEXT>
</DOC>
<doc><docno>lower-3</docno><text>lower case tags</text></doc><DOC><DOCNO>same-line-4</DOCNO>
<TEXT>two on one line</TEXT></DOC>
<DOC>
<TEXT>no docno</TEXT>
</DOC>
<DOC>
<DOCNO>unterminated-6</DOCNO>
<DOC>
<DOCNO>FT911-1</DOCNO>
<TEXT>duplicate</TEXT>
</DOC>
<DOC>
<DOCNO>empty-8</DOCNO>
<TEXT> </TEXT>
</DOC>
<DOC>
<DOCNO>web-9</DOCNO>
<DOCHDR>http://x.example/ HTTP/1.0 200 OK</DOCHDR>
<html><head><title>Web page</title><script>var x = 1;</script></head>
<body><!-- a comment --><p>Visible words</p></body></html>
</DOC>
<DOC>
<DOCNO>cut-10</DOCNO>
<TEXT>the file ends inside this document
"""


def test_trec(tmp_path: Path) -> None:
    f = write(tmp_path / "fr.trec", TREC)
    assert detect_format(f) == "trec"
    docs, report = read_all(f)
    assert [d.docid for d in docs] == ["FT911-1", "NO-TITLE-2", "lower-3", "same-line-4", "web-9"]
    ft = docs[0]
    assert ft.title == "FT 11 MAY 91 / Rates & yields"
    assert ft.text == (
        "FT 11 MAY 91 / Rates & yields\n_AN-BEOA7AAIFT\n"
        "First paragraph - with an entity.\nSecond   paragraph."
    )
    assert docs[1] == Document("NO-TITLE-2", "Plain text only.")
    assert docs[2].text == "lower case tags"
    assert docs[3].text == "two on one line"
    assert docs[4] == Document("web-9", "Web page\nVisible words", "Web page")
    assert skips(report) == [
        ("fr.trec:12", "text outside <DOC> … </DOC>"),
        ("fr.trec:19", "missing <DOCNO>"),
        ("fr.trec:22", "unterminated <DOC>: no </DOC> before the next <DOC> at line 24"),
        ("fr.trec:24", "duplicate id 'FT911-1' (first seen at line 1)"),
        ("fr.trec:28", "empty document"),
        ("fr.trec:38", "unterminated <DOC>: no </DOC> before end of file"),
    ]


def test_trec_across_chunk_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    full, _ = read_all(write(tmp_path / "a.trec", TREC))
    # Tiny chunks split every tag and record; the result must not change.
    monkeypatch.setattr(source, "CHUNK", 7)
    docs, report = read_all(write(tmp_path / "b.trec.gz", TREC, gz=True))
    assert docs == full
    assert len(report.skipped) == 6
    assert report.skipped[-1].where.endswith(":38")
