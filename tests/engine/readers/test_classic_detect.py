"""Every classic test collection's document file is detected by its content, whatever its name.

The SMART ones (CISI, CRAN, MED, CACM, ADI) and the Glasgow ones (NPL, LISA, TIME), from the
fixtures in their real layouts; the collections' query and judgement files, which often sit beside
them, are refused with a message that says what they are.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from reader_helpers import FIXTURES, REPO, read_all, write

from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import CorpusError

EVAL = REPO / "tests" / "data" / "eval"
SAMPLE = REPO / "bm25desk" / "data" / "sample"

DOCUMENT_FILES = [
    # (file, its real name, format, documents)
    (SAMPLE / "CISI.ALL", "CISI.ALL", "smart", 1460),
    (FIXTURES / "cranfield-like.all", "cran.all.1400", "smart", 3),
    (EVAL / "med" / "MED.ALL", "MED.ALL", "smart", 9),
    (EVAL / "cacm" / "cacm.all", "cacm.all", "smart", 8),
    (EVAL / "adi" / "ADI.ALL", "ADI.ALL", "smart", 5),
    (FIXTURES / "npl" / "doc-text", "doc-text", "npl", 12),
    (EVAL / "npl" / "doc-text", "doc-text", "npl", 6),
    (FIXTURES / "lisa" / "LISA0.001", "LISA0.001", "lisa", 4),
    (EVAL / "lisa" / "LISA0.001", "LISA0.001", "lisa", 6),
    (FIXTURES / "time" / "TIME.ALL", "TIME.ALL", "time", 7),
    (EVAL / "time" / "TIME.ALL", "TIME.ALL", "time", 5),
]


@pytest.mark.parametrize(
    ("path", "name", "fmt", "n"),
    DOCUMENT_FILES,
    ids=[f"{p.parent.name}/{p.name}" for p, *_ in DOCUMENT_FILES],
)
def test_document_files_are_detected_and_read(
    tmp_path: Path, path: Path, name: str, fmt: str, n: int
) -> None:
    # Under its real name, under a name that says nothing, and compressed: content decides.
    copies = [tmp_path / name, tmp_path / "corpus", tmp_path / f"{name}.gz"]
    shutil.copyfile(path, copies[0])
    shutil.copyfile(path, copies[1])
    write(copies[2], path.read_bytes(), gz=True)
    for f in copies:
        assert detect_format(f) == fmt, f.name
    docs, report = read_all(copies[0])
    assert len(docs) == n
    assert report.skipped == []


def test_folders_of_the_collections(tmp_path: Path) -> None:
    # The LISA folder as the Glasgow archive unpacks it (queries and judgements beside the files).
    assert detect_format(EVAL / "lisa") == "lisa"
    assert detect_format(FIXTURES / "lisa") == "lisa"
    # Other collections' folders are folders of documents: their files are chosen one by one.
    for collection in ("npl", "time", "med", "cacm", "adi"):
        assert detect_format(EVAL / collection) == "folder", collection
    assert detect_format(tmp_path) == "folder"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (EVAL / "time" / "TIME.QUE", "holds TIME queries (*FIND), not documents"),
        (EVAL / "npl" / "rlv-ass", "holds NPL judgements (rlv-ass), not documents"),
        (EVAL / "lisa" / "LISA.QUE", "holds LISA queries (LISA.QUE), not documents"),
        (EVAL / "lisa" / "LISARJ.NUM", "holds numbers only (judgements such as LISARJ.NUM"),
        (EVAL / "time" / "TIME.REL", "holds numbers only (judgements such as LISARJ.NUM"),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else "",
)
def test_query_and_judgement_files_say_what_they_are(path: Path, message: str) -> None:
    with pytest.raises(CorpusError, match=re.escape(message)) as caught:
        detect_format(path)
    assert "give this one to bm25desk eval" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_npl_query_text_has_the_document_layout() -> None:
    # query-text is laid out as doc-text is: it reads as documents if a user wants that.
    assert detect_format(EVAL / "npl" / "query-text") == "npl"


@pytest.mark.parametrize(
    "content",
    [
        "1\nsome text with no terminator\nand more\n",  # a number, then text: not NPL yet
        "Document\nA TITLE.\n",  # no number
        "*TEXTBOOK\n",
        "12 34\n56\n/\n",  # an NPL vector file (doc-vecs)
    ],
)
def test_near_misses_are_not_guessed(tmp_path: Path, content: str) -> None:
    with pytest.raises(CorpusError, match="cannot tell the format"):
        detect_format(write(tmp_path / "f", content))
