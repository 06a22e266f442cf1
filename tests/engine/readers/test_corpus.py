"""Tests for bm25desk.engine.readers.corpus: readers, malformed input, detection, progress,
cancel."""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import pytest

from bm25desk.engine.progress import Cancelled, CancelToken
from bm25desk.engine.readers import corpus
from bm25desk.engine.readers.corpus import (
    EXTRACTORS,
    FORMATS,
    ColumnMap,
    CorpusError,
    Document,
    ExtractError,
    FileStat,
    ReadReport,
    detect_format,
    guess_columns,
    preview_rows,
    read_corpus,
    read_folder,
    read_tsv_header,
    scan_folder,
)

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "bm25desk" / "data" / "sample"  # CISI, shipped with the package
OPTIONAL_DATA = REPO.parent / "shared" / "data"  # SciFact, when it is beside the clone
FIXTURES = REPO / "tests" / "data" / "corpus"


def write(path: Path, data: str | bytes, *, gz: bool = False) -> Path:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def read_all(path: Path, fmt: str | None = None, **kw: object) -> tuple[list[Document], ReadReport]:
    report = ReadReport()
    docs = list(read_corpus(path, fmt, report=report, **kw))  # type: ignore[arg-type]
    assert report.read == len(docs)
    return docs, report


def skips(report: ReadReport) -> list[tuple[str, str]]:
    """(where without the directory, reason) pairs."""
    return [(os.path.basename(s.where), s.reason) for s in report.skipped]


def progress_log(path: Path, fmt: str | None = None) -> tuple[list[tuple[int, int]], int]:
    calls: list[tuple[int, int]] = []
    n = sum(1 for _ in read_corpus(path, fmt, progress=lambda d, t: calls.append((d, t))))
    return calls, n


def assert_progress_ok(calls: list[tuple[int, int]], total: int) -> None:
    assert calls, "no progress reported"
    dones = [d for d, _ in calls]
    assert dones == sorted(dones), "progress went backwards"
    assert all(t == total for _, t in calls)
    assert calls[-1] == (total, total)


# ------------------------------------------------------------------------------------------------
# Registry of formats


def test_formats_have_labels_and_readers(tmp_path: Path) -> None:
    assert set(FORMATS) == {
        "folder",
        "msmarco-docs",
        "msmarco-passages",
        "tsv-header",
        "beir",
        "smart",
        "trec",
    }
    assert all(label for label in FORMATS.values())


def test_unknown_format_and_missing_path(tmp_path: Path) -> None:
    f = write(tmp_path / "a.tsv", "1\thello\n")
    with pytest.raises(CorpusError, match="unknown corpus format 'csv'"):
        read_corpus(f, "csv")
    with pytest.raises(CorpusError, match="no such file or folder"):
        read_corpus(tmp_path / "missing.tsv")
    with pytest.raises(CorpusError, match="no such file or folder"):
        read_corpus(tmp_path / "missing.tsv", "msmarco-passages")
    with pytest.raises(CorpusError, match="is a folder"):
        read_corpus(tmp_path, "smart")
    with pytest.raises(CorpusError, match="not a folder"):
        read_corpus(f, "folder")


# ------------------------------------------------------------------------------------------------
# MS MARCO documents

DOCS_TSV = (
    "D1\thttp://a.example/1\tThe  Title\tFirst body.\n"
    "D2\thttp://a.example/2\t\tNo title here.\r\n"
    "\n"
    "D3\thttp://a.example/3\tonly three columns\n"
    "D1\thttp://a.example/dup\tDup\tDuplicate body.\n"
    "\thttp://a.example/4\tT\tno id\n"
    "D5\thttp://a.example/5\t \t  \n"
    "D6\thttp://a.example/6\tHeadline only\t\n"
    "D7\tu\tt\tbody\textra\n"
    "D8\thttp://a.example/8\tLast\tno newline at the end"
)


def test_msmarco_docs(tmp_path: Path) -> None:
    f = write(tmp_path / "docs.tsv", DOCS_TSV)
    docs, report = read_all(f, "msmarco-docs")
    assert [d.docid for d in docs] == ["D1", "D2", "D6", "D8"]
    d1 = docs[0]
    assert d1 == Document("D1", "The Title\nFirst body.", "The Title", "http://a.example/1")
    assert docs[1].text == "No title here."
    assert docs[1].title == ""
    assert docs[2].text == "Headline only"
    assert docs[3].text == "Last\nno newline at the end"
    assert skips(report) == [
        ("docs.tsv:4", "expected 4 tab-separated columns, found 3"),
        ("docs.tsv:5", "duplicate id 'D1' (first seen at line 1)"),
        ("docs.tsv:6", "empty id"),
        ("docs.tsv:7", "empty document"),
        ("docs.tsv:9", "expected 4 tab-separated columns, found 5"),
    ]


def test_msmarco_docs_gz_equals_plain(tmp_path: Path) -> None:
    plain = write(tmp_path / "docs.tsv", DOCS_TSV)
    packed = write(tmp_path / "docs.tsv.gz", DOCS_TSV, gz=True)
    assert detect_format(packed) == "msmarco-docs"
    a, ra = read_all(plain)
    b, rb = read_all(packed)
    assert a == b
    assert skips(ra) == [(w.replace(".gz", ""), r) for w, r in skips(rb)]


def test_undecodable_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    data = b"D1\tu\tCaf\xe9\tna\xefve \xff\xfe body\nD2\tu\tok\tfine \xc3\xa9t\xc3\xa9\n"
    docs, report = read_all(write(tmp_path / "d.tsv", data), "msmarco-docs")
    assert [d.docid for d in docs] == ["D1", "D2"]
    assert docs[0].title == "Caf\ufffd"
    assert docs[0].text == "Caf\ufffd\nna\ufffdve \ufffd\ufffd body"
    assert docs[1].text == "ok\nfine été"
    assert report.skipped == []


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    f = write(tmp_path / "p.tsv", b"\xef\xbb\xbf7\tbom first\n8\tsecond\n")
    assert detect_format(f) == "msmarco-passages"
    docs, _ = read_all(f)
    assert docs[0].docid == "7"


# ------------------------------------------------------------------------------------------------
# MS MARCO passages


def test_msmarco_passages(tmp_path: Path) -> None:
    data = "0\tfirst passage\n1\tsecond\twith a tab\n2\n3\t   \n0\tagain\n  \n4\tlast passage"
    docs, report = read_all(write(tmp_path / "p.tsv", data), "msmarco-passages")
    assert docs == [Document("0", "first passage"), Document("4", "last passage")]
    assert skips(report) == [
        ("p.tsv:2", "expected 2 tab-separated columns, found 3"),
        ("p.tsv:3", "expected 2 tab-separated columns, found 1"),
        ("p.tsv:4", "empty document"),
        ("p.tsv:5", "duplicate id '0' (first seen at line 1)"),
    ]


# ------------------------------------------------------------------------------------------------
# TSV with a header

HEADER_TSV = (
    "doc_id\tTitle\tabstract\tbody\tyear\n"
    "a\tFirst  paper\tShort abstract.\tLong body.\t2001\n"
    "b\t\tOnly abstract.\t\t2002\n"
    "c\tbroken row\n"
    "\tno id\tx\ty\t2003\n"
    "d\t\t\t\t2004\n"
    "a\tAgain\tx\ty\t2005\n"
)


def test_guess_columns() -> None:
    assert guess_columns(["doc_id", "Title", "abstract", "body", "year"]) == ColumnMap(
        "doc_id", ("abstract", "body"), "Title"
    )
    assert guess_columns(["_id", "text"]) == ColumnMap("_id", ("text",))
    assert guess_columns(["PID", "Passage"]) == ColumnMap("PID", ("Passage",))
    assert guess_columns(["id", "id", "contents"]) == ColumnMap("id", ("contents",))
    assert guess_columns(["name", "text"]) is None
    assert guess_columns(["id", "year"]) is None


def test_tsv_header_guessed(tmp_path: Path) -> None:
    f = write(tmp_path / "h.tsv", HEADER_TSV)
    assert detect_format(f) == "tsv-header"
    assert read_tsv_header(f) == ["doc_id", "Title", "abstract", "body", "year"]
    docs, report = read_all(f)
    assert docs == [
        Document("a", "First paper\nShort abstract.\nLong body.", "First paper"),
        Document("b", "Only abstract."),
    ]
    assert skips(report) == [
        ("h.tsv:4", "expected 5 tab-separated columns as in the header, found 2"),
        ("h.tsv:5", "empty id"),
        ("h.tsv:6", "empty document"),
        ("h.tsv:7", "duplicate id 'a' (first seen at line 2)"),
    ]


def test_tsv_header_explicit_columns(tmp_path: Path) -> None:
    f = write(tmp_path / "h.tsv", HEADER_TSV)
    cols = ColumnMap(docid="year", text=("body",))
    docs, _ = read_all(f, "tsv-header", columns=cols)
    assert [(d.docid, d.text) for d in docs] == [
        ("2001", "Long body."),
        ("2003", "y"),
        ("2005", "y"),
    ]


def test_tsv_header_unusable_mapping(tmp_path: Path) -> None:
    f = write(tmp_path / "h.tsv", "key\tvalue\nk1\tsome words here\n")
    with pytest.raises(CorpusError, match=r"which columns .* hold the id .*columns: key, value"):
        read_corpus(f, "tsv-header")
    with pytest.raises(CorpusError, match="column 'text' is not in the header"):
        read_corpus(f, "tsv-header", columns=ColumnMap("key", ("text",)))
    with pytest.raises(CorpusError, match="no text column"):
        read_corpus(f, "tsv-header", columns=ColumnMap("key", ()))
    docs, _ = read_all(f, "tsv-header", columns=ColumnMap("key", ("value",)))
    assert docs == [Document("k1", "some words here")]


def test_preview_rows(tmp_path: Path) -> None:
    f = write(tmp_path / "h.tsv.gz", "\nid\ttext\n1\t" + "x" * 1000 + "\n2\tb\n3\tc\n", gz=True)
    rows = preview_rows(f, 3)
    assert rows[0] == ["id", "text"]
    assert rows[1][0] == "1"
    assert len(rows[1][1]) == 500
    assert rows[1][1].endswith("…")
    assert rows[2] == ["2", "b"]
    assert len(preview_rows(f, 10)) == 4
    with pytest.raises(CorpusError):
        preview_rows(tmp_path / "nope.tsv")


# ------------------------------------------------------------------------------------------------
# BEIR


def test_beir(tmp_path: Path) -> None:
    lines = [
        '{"_id": "a", "title": "A  title", "text": "Body a.", "metadata": {}}',
        '{"_id": "b", "title": "", "text": "Body b."}',
        "",
        '{"_id": "c", "title": "broken", ',
        '{"title": "no id", "text": "x"}',
        '["not", "an", "object"]',
        '{"_id": "a", "title": "dup", "text": "x"}',
        '{"_id": "e", "title": " ", "text": ""}',
        '{"_id": 17, "text": "numeric id"}',
        '{"_id": "f", "text": ["not", "a", "string"]}',
        '{"_id": "g", "title": "Title only"}',
    ]
    f = write(tmp_path / "corpus.jsonl", "\n".join(lines) + "\n")
    assert detect_format(f) == "beir"
    assert detect_format(tmp_path) == "beir"  # a BEIR dataset folder
    docs, report = read_all(f)
    assert docs == [
        Document("a", "A title\nBody a.", "A title"),
        Document("b", "Body b."),
        Document("17", "numeric id"),
        Document("g", "Title only", "Title only"),
    ]
    got = skips(report)
    assert got[0][0] == "corpus.jsonl:4"
    assert got[0][1].startswith("invalid JSON: ")
    assert got[1:] == [
        ("corpus.jsonl:5", "missing _id"),
        ("corpus.jsonl:6", "expected a JSON object, found list"),
        ("corpus.jsonl:7", "duplicate id 'a' (first seen at line 1)"),
        ("corpus.jsonl:8", "empty document"),
        ("corpus.jsonl:10", "text is not a string"),
    ]
    from_dir, _ = read_all(tmp_path)
    assert from_dir == docs


def test_beir_gz_and_bad_bytes(tmp_path: Path) -> None:
    data = b'{"_id": "x", "title": "T", "text": "caf\xe9 \xc3\xa9"}\n'
    f = write(tmp_path / "corpus.jsonl.gz", data, gz=True)
    assert detect_format(f) == "beir"
    docs, report = read_all(f)
    assert docs == [Document("x", "T\ncaf\ufffd é", "T")]
    assert report.skipped == []


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path) -> None:
    body = "".join(f'{{"_id": "{i}", "text": "document number {i}"}}\n' for i in range(3000))
    packed = gzip.compress(body.encode())
    f = write(tmp_path / "corpus.jsonl.gz", packed[: len(packed) // 2])
    docs, report = read_all(f, "beir")
    assert 0 < len(docs) < 3000
    assert [d.docid for d in docs] == [str(i) for i in range(len(docs))]
    (skip,) = report.skipped
    assert skip.reason.startswith("damaged compressed data, reading stopped here")


def test_gzip_members_padding_and_corruption(tmp_path: Path) -> None:
    # Concatenated members (pigz, bgzip, `cat a.gz b.gz`) are one stream; zero padding is ignored.
    members = gzip.compress(b"1\tone\n2\ttw") + gzip.compress(b"o\n3\tthree\n") + bytes(8)
    docs, report = read_all(write(tmp_path / "m.tsv.gz", members), "msmarco-passages")
    assert [d.text for d in docs] == ["one", "two", "three"]
    assert report.skipped == []
    broken = bytearray(gzip.compress(b"1\tone\n2\ttwo\n"))
    broken[-8] ^= 0xFF  # the CRC no longer matches
    docs, report = read_all(write(tmp_path / "crc.tsv.gz", bytes(broken)), "msmarco-passages")
    (skip,) = report.skipped
    assert "incorrect data check" in skip.reason
    with pytest.raises(CorpusError, match="not a readable gzip file"):
        detect_format(write(tmp_path / "fake.gz", b"\x1f\x8bnot really gzip"))


# ------------------------------------------------------------------------------------------------
# SMART

SMART = (
    "stray text before any record\r\n"
    ".I 1\r\n"
    ".T\r\n"
    "A  Title\r\n"
    "on two lines\r\n"
    ".A\r\n"
    "Author, A.\r\n"
    ".A \r\n"
    "Author, B.\r\n"
    ".W\r\n"
    "   Body text\r\n"
    "continues.\r\n"
    ".X\r\n"
    "1\t5\t1\r\n"
    "92\t1\t1\r\n"
    ".B\r\n"
    "1970\r\n"
    ".I 2\r\n"
    ".T Inline title\r\n"
    ".W Inline body\r\n"
    ".K \r\n"
    "keyword one\r\n"
    ".I\r\n"
    ".W\r\n"
    "no id\r\n"
    ".I 3\r\n"
    ".X\r\n"
    "1\t1\t1\r\n"
    ".I 1\r\n"
    ".W\r\n"
    "duplicate\r\n"
    ".I 4\r\n"
    "text before any field\r\n"
    ".W\r\n"
    "last one, no newline"
)


def test_smart(tmp_path: Path) -> None:
    f = write(tmp_path / "TEST.ALL", SMART)
    with pytest.raises(CorpusError):  # the stray first line hides the .I
        detect_format(f)
    docs, report = read_all(f, "smart")
    assert [d.docid for d in docs] == ["1", "2", "4"]
    assert docs[0].title == "A Title on two lines"
    assert docs[0].text == (
        "A Title on two lines\nAuthor, A.\nAuthor, B.\nBody text\ncontinues.\n1970"
    )
    assert docs[1] == Document("2", "Inline title\nInline body\nkeyword one", "Inline title")
    assert docs[2].text == "text before any field\nlast one, no newline"
    assert skips(report) == [
        ("TEST.ALL:1", "text before the first .I record"),
        ("TEST.ALL:23", "missing id after .I"),
        ("TEST.ALL:26", "empty document"),
        ("TEST.ALL:29", "duplicate id '1' (first seen at line 2)"),
    ]


def test_smart_detect_and_gz(tmp_path: Path) -> None:
    text = SMART.split("\r\n", 1)[1]
    f = write(tmp_path / "t.all.gz", text, gz=True)
    assert detect_format(f) == "smart"
    docs, _ = read_all(f)
    assert [d.docid for d in docs] == ["1", "2", "4"]


# ------------------------------------------------------------------------------------------------
# TREC

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
    monkeypatch.setattr(corpus, "_CHUNK", 7)
    docs, report = read_all(write(tmp_path / "b.trec.gz", TREC, gz=True))
    assert docs == full
    assert len(report.skipped) == 6
    assert report.skipped[-1].where.endswith(":38")


# ------------------------------------------------------------------------------------------------
# Detection


def test_detect_format(tmp_path: Path) -> None:
    cases = {
        "docs.tsv": ("D1\thttp://u\tT\tbody words\nD2\thttp://v\tT2\tmore\n", "msmarco-docs"),
        "pass.tsv": ("0\tsome passage\n1\tanother passage\n", "msmarco-passages"),
        "pass-ids.tsv": ("doc-a\tsome passage\ndoc-b\tanother one\n", "msmarco-passages"),
        "hdr.tsv": ("id\ttext\n0\tsome passage\n", "tsv-header"),
        "hdr2.tsv": ("key\tcontent_en\nk1\tsome words\n", "tsv-header"),
        "smart.txt": ("\n.I 1\n.W\nhello\n", "smart"),
        "trec.sgml": ("  <DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n", "trec"),
        "c.jsonl": ('{"_id": "1", "text": "x"}\n', "beir"),
    }
    for name, (content, fmt) in cases.items():
        assert detect_format(write(tmp_path / name, content)) == fmt, name
    folder = tmp_path / "folder"
    folder.mkdir()
    assert detect_format(folder) == "folder"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.tsv", "", "is empty"),
        ("blank.tsv", "\n\n  \n", "is empty"),
        ("three.tsv", "1\t2\t3\n4\t5\t6\n", "3 tab-separated columns and no header row"),
        ("bin.dat", b"\x00\x01\x02abc", "binary"),
        ("wide.tsv", "id\ttext\n".encode("utf-16"), "save it as UTF-8"),
        ("q.jsonl", '{"id": "1", "text": "x"}\n', 'without an "_id" field'),
        ("arr.json", '[{"_id": "1"}]', "JSON array"),
        ("note.txt", "Just a note.\nNothing else.\n", "choose the folder"),
        ("my.notes.md.gz", "# Notes\n", "choose the folder"),
        ("words.csv", "a,b,c\n", "not TSV, JSON lines, SMART or TREC"),
        ("sentence.tsv", "hello there\tfriend\n", "2 tab-separated columns"),
    ],
)
def test_detect_format_refuses(tmp_path: Path, name: str, content: str, message: str) -> None:
    f = write(tmp_path / name, content)
    with pytest.raises(CorpusError, match=re.escape(message)):
        detect_format(f)
    with pytest.raises(CorpusError):
        read_corpus(f)


def test_detect_missing(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such file or folder"):
        detect_format(tmp_path / "nothing")


# ------------------------------------------------------------------------------------------------
# Progress and cancellation


def test_progress_is_monotone_and_complete(tmp_path: Path) -> None:
    body = "".join(f"{i}\tpassage number {i}\n" for i in range(5000))
    for name, gz in (("p.tsv", False), ("p.tsv.gz", True)):
        f = write(tmp_path / name, body, gz=gz)
        calls, n = progress_log(f)
        assert n == 5000
        assert_progress_ok(calls, f.stat().st_size)
    trec = "".join(f"<DOC><DOCNO>{i}</DOCNO>text {i}</DOC>\n" for i in range(2000))
    f = write(tmp_path / "t.trec", trec)
    calls, n = progress_log(f)
    assert n == 2000
    assert_progress_ok(calls, f.stat().st_size)


@pytest.mark.parametrize("fmt", ["msmarco-passages", "beir", "smart", "trec", "folder"])
def test_cancel(tmp_path: Path, fmt: str) -> None:
    n = 1000
    if fmt == "msmarco-passages":
        src = write(tmp_path / "p.tsv", "".join(f"{i}\tword {i}\n" for i in range(n)))
    elif fmt == "beir":
        src = write(
            tmp_path / "c.jsonl", "".join(f'{{"_id": "{i}", "text": "w"}}\n' for i in range(n))
        )
    elif fmt == "smart":
        src = write(tmp_path / "s.all", "".join(f".I {i}\n.W\nword\n" for i in range(n)))
    elif fmt == "trec":
        src = write(
            tmp_path / "t.trec", "".join(f"<DOC><DOCNO>{i}</DOCNO>w</DOC>\n" for i in range(n))
        )
    else:
        src = tmp_path / "folder"
        for i in range(20):
            write(src / f"{i:02}.txt", f"word {i}")
    token = CancelToken()
    report = ReadReport()
    docs = read_corpus(src, fmt, report=report, cancel=token)
    next(docs)
    token.set()
    with pytest.raises(Cancelled):
        for _ in docs:
            pass
    assert report.read < (20 if fmt == "folder" else n)


def test_cancel_before_start(tmp_path: Path) -> None:
    f = write(tmp_path / "p.tsv", "1\tx\n")
    token = CancelToken()
    token.set()
    with pytest.raises(Cancelled):
        list(read_corpus(tmp_path, "folder", cancel=token))
    # A short file may finish before the first periodic check; it must not yield more than it has.
    assert len(list(read_corpus(f, cancel=CancelToken()))) == 1


# ------------------------------------------------------------------------------------------------
# Folders


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root / "a.txt", "Short first line\n\nThe body of a.\n")
    write(root / "long.txt", ("x" * 130) + "\nrest\n")
    write(
        root / "sub" / "b.md", "Intro text\n```\n# not a heading\n```\n# Real   Title #\n\nBody.\n"
    )
    write(root / "sub" / "deeper" / "c.rst", ".. comment\n\n=====\n Top\n=====\n\nSome text.\n")
    write(root / "page.HTML", "<html><head><title>Page</title></head><body><p>Hello</p></body>")
    write(root / "cp1252.txt", "Price: 5 \u20ac and na\u00efve\n".encode("cp1252"))
    write(root / "latin1.txt", b"caf\xe9 \x81 done\n")  # 0x81 is not cp1252: falls to latin-1
    write(root / "bom.txt", "\ufeffWith BOM\r\nline two\r\n".encode())
    write(root / "utf16.txt", "UTF-16 text\n".encode("utf-16"))
    write(root / "empty.md", "   \n\n")
    write(root / "bin.txt", b"MZ\x00\x00binary")
    write(root / "image.png", b"\x89PNG")
    write(root / "sheet.xlsx", b"PK")
    write(root / "other.png", b"\x89PNG")
    write(root / "README", "no extension")
    write(root / ".hidden.txt", "secret")
    write(root / ".git" / "config.txt", "x")
    write(root / "node_modules" / "pkg" / "readme.md", "# pkg")
    write(root / "__pycache__" / "x.txt", "x")
    write(root / ".notes" / "n.txt", "x")
    return root


def test_scan_folder(tree: Path) -> None:
    report = ReadReport()
    stats = scan_folder(tree, report=report)
    assert list(stats) == [
        "a.txt",
        "bin.txt",
        "bom.txt",
        "cp1252.txt",
        "empty.md",
        "latin1.txt",
        "long.txt",
        "page.HTML",
        "sub/b.md",
        "sub/deeper/c.rst",
        "utf16.txt",
    ]
    st = (tree / "a.txt").stat()
    assert stats["a.txt"] == FileStat(st.st_mtime, st.st_size)
    reasons = sorted((os.path.relpath(s.where, tree), s.reason) for s in report.skipped)
    assert reasons == [
        (".", "unsupported type (no extension) (1 file)"),
        (".", "unsupported type .png (2 files)"),
        (".", "unsupported type .xlsx (1 file)"),
        (".git", "tool or cache folder"),
        (".hidden.txt", "hidden file"),
        (".notes", "hidden folder"),
        ("__pycache__", "tool or cache folder"),
        ("node_modules", "tool or cache folder"),
    ]


def test_scan_folder_include_exclude(tree: Path) -> None:
    assert list(scan_folder(tree, include=["*.md"])) == ["empty.md", "sub/b.md"]
    assert list(scan_folder(tree, include=["sub/*"], exclude=["*.rst"])) == ["sub/b.md"]
    assert "sub/b.md" not in scan_folder(tree, exclude=["sub"])
    assert list(scan_folder(tree, include=["sub/"])) == ["sub/b.md", "sub/deeper/c.rst"]
    assert list(scan_folder(tree, include=["sub"], exclude=["sub/deeper"])) == ["sub/b.md"]
    assert list(scan_folder(tree, exclude=["*"])) == []


def test_read_folder(tree: Path) -> None:
    report = ReadReport()
    docs = {d.docid: d for d in read_corpus(tree, report=report)}
    assert report.read == len(docs)
    assert list(docs) == [
        "a.txt",
        "bom.txt",
        "cp1252.txt",
        "latin1.txt",
        "long.txt",
        "page.HTML",
        "sub/b.md",
        "sub/deeper/c.rst",
        "utf16.txt",
    ]
    a = docs["a.txt"]
    st = (tree / "a.txt").stat()
    assert (a.title, a.text) == ("Short first line", "Short first line\n\nThe body of a.\n")
    assert (a.location, a.mtime, a.size) == (str(tree / "a.txt"), st.st_mtime, st.st_size)
    assert os.path.isabs(a.location)
    assert docs["long.txt"].title == "long.txt"
    assert docs["sub/b.md"].title == "Real Title"
    assert docs["sub/deeper/c.rst"].title == "Top"
    assert (docs["page.HTML"].title, docs["page.HTML"].text) == ("Page", "Page\nHello")
    assert docs["cp1252.txt"].text == "Price: 5 \u20ac and na\u00efve\n"
    assert docs["latin1.txt"].text == "caf\u00e9 \x81 done\n"
    assert docs["bom.txt"].text == "With BOM\nline two\n"
    assert docs["utf16.txt"].text == "UTF-16 text\n"
    by_file = {os.path.relpath(s.where, tree): s.reason for s in report.skipped}
    assert by_file["bin.txt"] == "binary file"
    assert by_file["empty.md"] == "no text"
    assert by_file[".hidden.txt"] == "hidden file"


def test_read_folder_relpaths(tree: Path) -> None:
    report = ReadReport()
    docs = list(
        read_folder(tree, ["sub/b.md", "a.txt", "gone.txt", "image.png", "a.txt"], report=report)
    )
    assert [d.docid for d in docs] == ["a.txt", "sub/b.md"]
    assert [(os.path.basename(s.where), s.reason) for s in report.skipped] == [
        ("docs", "unsupported type .png (1 file)"),
        ("gone.txt", "file not found (deleted since the folder was scanned?)"),
    ]


def test_read_folder_too_large(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_FILE_SIZE", 40)
    report = ReadReport()
    docs = [d.docid for d in read_folder(tree, report=report)]
    assert "long.txt" not in docs
    assert "a.txt" in docs
    reasons = {os.path.basename(s.where): s.reason for s in report.skipped}
    assert re.fullmatch(r"too large \(0\.0 MB; the limit is [0-9.e-]+ MB\)", reasons["long.txt"])


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="needs a POSIX user without root rights"
)
def test_read_folder_unreadable(tmp_path: Path) -> None:
    f = write(tmp_path / "locked.txt", "secret")
    write(tmp_path / "ok.txt", "fine")
    f.chmod(0)
    try:
        report = ReadReport()
        assert [d.docid for d in read_folder(tmp_path, report=report)] == ["ok.txt"]
        assert report.skipped[0].reason == "unreadable: permission denied"
    finally:
        f.chmod(0o600)


def test_read_folder_permission_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "locked.txt", "secret")
    write(tmp_path / "ok.txt", "fine")
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.txt":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    report = ReadReport()
    assert [d.docid for d in read_folder(tmp_path, report=report)] == ["ok.txt"]
    assert [s.reason for s in report.skipped] == ["unreadable: permission denied"]


def test_read_folder_progress(tree: Path) -> None:
    calls: list[tuple[int, int]] = []
    list(read_folder(tree, progress=lambda d, t: calls.append((d, t))))
    total = sum(fs.size for fs in scan_folder(tree).values())
    assert_progress_ok(calls, total)


def test_extractor_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def extract_csv(path: Path) -> tuple[str, str]:
        return "", path.read_text().replace(",", " ")

    def extract_broken(path: Path) -> tuple[str, str]:
        raise ValueError("corrupt archive")

    def extract_refuses(path: Path) -> tuple[str, str]:
        raise ExtractError("encrypted document")

    monkeypatch.setitem(EXTRACTORS, ".csv", extract_csv)
    monkeypatch.setitem(EXTRACTORS, ".zip", extract_broken)
    monkeypatch.setitem(EXTRACTORS, ".pdf", extract_refuses)
    write(tmp_path / "t.csv", "a,b,c")
    write(tmp_path / "z.zip", "PK")
    write(tmp_path / "p.pdf", "%PDF")
    report = ReadReport()
    docs = list(read_folder(tmp_path, report=report))
    assert docs == [
        Document(
            "t.csv",
            "a b c",
            "t.csv",
            str(tmp_path / "t.csv"),
            (tmp_path / "t.csv").stat().st_mtime,
            5,
        )
    ]
    assert [s.reason for s in report.skipped] == [
        "encrypted document",
        "could not extract text: ValueError: corrupt archive",
    ]


def test_html_extraction(tmp_path: Path) -> None:
    page = (
        '<!DOCTYPE html><html><head><meta charset="shift_jis">'
        "<style>p { color: red }</style><script>alert('x')</script></head>"
        "<body><noscript>enable js</noscript><template><p>hidden</p></template>"
        "<h1>Main  heading</h1><p>Caf&eacute; &amp; bar&nbsp;<b>bold</b></p>"
        "<ul><li>one</li><li>two</li></ul>text<br>after break<div>block</div>"
        "<p>\u65e5\u672c</p></body></html>"
    )
    f = write(tmp_path / "p.htm", page.encode("shift_jis"))
    title, text = EXTRACTORS[".htm"](f)
    assert title == "Main heading"
    assert text == (
        "Main heading\nCafé & bar bold\none\ntwo\ntext\nafter break\nblock\n\u65e5\u672c"
    )
    utf8 = write(tmp_path / "u.html", "<title>T\u00e9</title><p>\u00e9t\u00e9</p>")
    assert EXTRACTORS[".html"](utf8) == ("T\u00e9", "T\u00e9\n\u00e9t\u00e9")


def test_markdown_and_rst_titles(tmp_path: Path) -> None:
    md = EXTRACTORS[".md"]
    rst = EXTRACTORS[".rst"]
    assert md(write(tmp_path / "a.md", "---\ntitle: 'From front matter'\n---\n# H\n"))[0] == (
        "From front matter"
    )
    assert md(write(tmp_path / "b.md", "Setext title\n============\n\ntext\n"))[0] == "Setext title"
    assert md(write(tmp_path / "c.md", "## only level two\n"))[0] == ""
    assert rst(write(tmp_path / "a.rst", "Title\n-----\n"))[0] == "Title"
    assert rst(write(tmp_path / "b.rst", "Title\n--\n"))[0] == ""
    assert rst(write(tmp_path / "c.rst", "no title at all\n"))[0] == ""


def test_read_folder_missing_root(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no such folder"):
        read_folder(tmp_path / "absent")
    with pytest.raises(CorpusError, match="no such folder"):
        scan_folder(tmp_path / "absent")


# ------------------------------------------------------------------------------------------------
# Fixture files kept in the repository


def test_fixture_files() -> None:
    expected = {
        "cranfield-like.all": ("smart", 3),
        "news.trec.gz": ("trec", 2),
        "papers.tsv": ("tsv-header", 2),
    }
    for name, (fmt, n) in expected.items():
        f = FIXTURES / name
        assert detect_format(f) == fmt, name
        docs, report = read_all(f)
        assert len(docs) == n, name
        assert report.skipped == [], name


# ------------------------------------------------------------------------------------------------
# The real collections


def test_cisi() -> None:
    f = SAMPLE / "CISI.ALL"
    assert detect_format(f) == "smart"
    calls, _ = progress_log(f)
    assert_progress_ok(calls, f.stat().st_size)
    docs, report = read_all(f)
    assert len(docs) == 1460
    assert report.skipped == []
    assert [d.docid for d in docs] == [str(i) for i in range(1, 1461)]
    assert docs[0].title == "18 Editions of the Dewey Decimal Classifications"
    assert docs[0].text.startswith(
        "18 Editions of the Dewey Decimal Classifications\nComaromi, J.P."
    )
    assert docs[0].text.endswith("librarianship in this country and abroad.")
    xref = re.compile(r"^\d+\s+\d+\s+\d+$", re.M)
    assert not any(xref.search(d.text) for d in docs), ".X cross-references leaked into text"
    assert not any("\r" in d.text for d in docs)
    assert all(d.title for d in docs)


@pytest.mark.scifact
def test_scifact() -> None:
    f = OPTIONAL_DATA / "scifact" / "corpus.jsonl"
    if not f.exists():
        pytest.skip(f"optional data not found: {f}")
    assert detect_format(f) == "beir"
    assert detect_format(f.parent) == "beir"
    docs, report = read_all(f)
    assert len(docs) == 5183
    assert report.skipped == []
    assert len({d.docid for d in docs}) == 5183
    first = docs[0]
    assert first.docid == "4983"
    assert first.text.startswith(first.title + "\n")


def test_msmarco_passage_sample() -> None:
    """A file shaped like MS MARCO's first 101 passages (whose licence keeps them out of the
    repository): no newline after the last line, and double-encoded UTF-8 kept as it is."""
    f = FIXTURES / "msmarco-like-passages.tsv"
    assert not f.read_bytes().endswith(b"\n")
    assert detect_format(f) == "msmarco-passages"
    calls, _ = progress_log(f)
    assert_progress_ok(calls, f.stat().st_size)
    docs, report = read_all(f)
    assert len(docs) == 101
    assert report.skipped == []
    assert [d.docid for d in docs] == [str(i) for i in range(101)]
    assert any("Ã" in d.text for d in docs), "mojibake should be kept as it is"
    assert docs[-1].text == f.read_bytes().rsplit(b"\n", 1)[1].split(b"\t", 1)[1].decode()
    assert all(not d.text.endswith(("\n", "\r")) for d in docs)
