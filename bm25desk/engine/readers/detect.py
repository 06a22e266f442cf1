"""Telling a corpus path's format from its first bytes (decompressed if it is gzip)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

from bm25desk.engine.extract.decoding import BINARY_SNIFF, has_unicode_bom
from bm25desk.engine.extract.registry import extractor_for
from bm25desk.engine.readers.beir import beir_corpus_file
from bm25desk.engine.readers.document import CorpusError
from bm25desk.engine.readers.lisa import has_lisa_files, is_lisa_header
from bm25desk.engine.readers.npl import npl_layout
from bm25desk.engine.readers.source import head_lines, open_text_head
from bm25desk.engine.readers.time_magazine import is_time_header
from bm25desk.engine.readers.tsv import ID_NAMES, TEXT_NAMES, TITLE_NAMES, norm_name

__all__ = ["BINARY_SHARE", "detect_format", "looks_binary"]

BINARY_SHARE = 0.01
"""Share of control bytes (NUL and the like; not tab, line breaks or escape) in a file's first
8 KB from which it is called binary. One stray NUL in a record does not make a corpus binary."""

_SNIFF_BYTES = 64 * 1024
_CONTROL = bytes(b for b in range(32) if b not in b"\t\n\v\f\r\x1b")
_KNOWN_NAMES = frozenset(ID_NAMES + TEXT_NAMES + TITLE_NAMES + ("url",))
_NUMBERS = re.compile(r" *\d+(?: +\d+)* *")  # judgement files of the Glasgow collections
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")
_FORMAT_HINT = "if it is a corpus, choose its format (--format msmarco-passages, tsv-header …)"
_EVAL_HINT = "index the collection's document file and give this one to bm25desk eval"


def looks_binary(head: bytes) -> bool:
    """Return whether the start of a file looks binary rather than text (by its control bytes)."""
    sample = head[:BINARY_SNIFF]
    if not sample:
        return False
    control = len(sample) - len(sample.translate(None, _CONTROL))
    return control >= max(1.0, BINARY_SHARE * len(sample))


def _looks_like_header(first: list[str], rest: list[list[str]]) -> bool:
    if any(not f.strip() or f.strip().isdigit() for f in first):
        return False
    if any(norm_name(f) in _KNOWN_NAMES for f in first):
        return True
    # Unfamiliar names still look like a header when they are all identifiers and the rows below
    # hold free text (words with spaces) where the first row has none.
    return (
        all(_IDENTIFIER.fullmatch(f.strip()) for f in first)
        and bool(rest)
        and any(" " in f for row in rest for f in row[1:])
    )


def _id_like(s: str) -> bool:
    s = s.strip()
    return 0 < len(s) <= 64 and not any(c.isspace() for c in s)


def _is_document(p: Path) -> bool:
    """Whether the file is a single document of a type the folder reader reads."""
    return extractor_for(p.name.lower().removesuffix(".gz")) is not None


def detect_format(path: str | os.PathLike[str]) -> str:
    """Guess the format of a corpus path: a key of :data:`~bm25desk.engine.readers.api.FORMATS`.

    A folder is ``folder`` (``beir`` if it holds ``corpus.jsonl``, ``lisa`` if it holds LISA
    files: see :func:`~.lisa.lisa_files`). A file is recognised by its first bytes, decompressed if
    it is gzip: ``.I`` → smart, ``<DOC>`` → trec, JSON objects with ``_id`` → beir, ``Document N``
    → lisa, ``*TEXT`` → time, a number alone then text up to a ``/`` line → npl; tab-separated
    rows → tsv-header if the first row looks like column names, else msmarco-docs (4 columns) or
    msmarco-passages (2 columns, an id first).

    Parameters
    ----------
    path
        A file or folder.

    Returns
    -------
    str
        The format key.

    Raises
    ------
    CorpusError
        If the path is missing or the format cannot be told with confidence.
    """
    p = Path(path)
    if not p.exists():
        raise CorpusError(f"no such file or folder: {path}")
    if p.is_dir():
        if beir_corpus_file(p):
            return "beir"
        return "lisa" if has_lisa_files(p) else "folder"
    head = open_text_head(p, _SNIFF_BYTES)
    if not head.strip():
        raise CorpusError(f"{path} is empty")
    if has_unicode_bom(head):
        raise CorpusError(f"{path} is UTF-16 or UTF-32 text: save it as UTF-8")
    if looks_binary(head):
        if _is_document(p):
            raise CorpusError(
                f"{path} is a binary file, not a corpus; "
                "to index single documents, choose the folder that holds them"
            )
        raise CorpusError(f"{path} looks like a binary file, not a corpus; {_FORMAT_HINT}")
    text = head.decode("utf-8", "replace").lstrip()
    if re.match(r"\.I(\s|$)", text):
        return "smart"
    if re.match(r"<doc[\s>]", text, re.I):
        return "trec"
    if text.startswith("{"):
        return _detect_json(p, path)
    if text.startswith("["):
        raise CorpusError(f"{path} is a JSON array; a BEIR corpus has one JSON object per line")
    return _detect_glasgow(text, path) or _detect_tsv(p, path)


def _detect_glasgow(text: str, path: str | os.PathLike[str]) -> str | None:
    """Return lisa, time or npl for the document files of those collections (else None).

    Their query and judgement files, which look alike, get a message that says what they are.
    """
    lines = text.splitlines()[:400]
    first = lines[0]
    if is_lisa_header(first):
        return "lisa"
    if is_time_header(first):
        return "time"
    if first.startswith("*FIND"):
        raise CorpusError(f"{path} holds TIME queries (*FIND), not documents: {_EVAL_HINT}")
    layout = npl_layout(lines)
    if layout == "judgements":
        raise CorpusError(f"{path} holds NPL judgements (rlv-ass), not documents: {_EVAL_HINT}")
    if layout == "docs":
        return "npl"
    if _lisa_queries(lines):
        raise CorpusError(f"{path} holds LISA queries (LISA.QUE), not documents: {_EVAL_HINT}")
    if all(_NUMBERS.fullmatch(line) for line in lines if line.strip()):
        raise CorpusError(
            f"{path} holds numbers only (judgements such as LISARJ.NUM or TIME.REL?), "
            f"not documents: {_EVAL_HINT}"
        )
    return None


def _lisa_queries(lines: list[str]) -> bool:
    """Whether the lines are LISA.QUE's: a number alone, then text whose last line ends in ``#``."""
    if not lines[0].strip().isdigit():
        return False
    for line in lines[1:]:
        s = line.strip()
        if s.endswith("#"):
            return True
        if s.isdigit():
            return False
    return False


def _detect_json(p: Path, path: str | os.PathLike[str]) -> str:
    first = head_lines(p, 1)[0]
    try:
        obj = json.loads(first.decode("utf-8", "replace"))
    except ValueError:
        has_id = re.search(rb'"_id"\s*:', first) is not None
    else:
        has_id = isinstance(obj, dict) and "_id" in obj
    if has_id:
        return "beir"
    raise CorpusError(f'{path} holds JSON lines without an "_id" field: not a BEIR corpus')


def _detect_tsv(p: Path, path: str | os.PathLike[str]) -> str:
    rows = [line.decode("utf-8", "replace").split("\t") for line in head_lines(p, 20)]
    if len(rows[0]) < 2:
        hint = "; to index single documents, choose the folder that holds them"
        raise CorpusError(
            f"cannot tell the format of {path}: not TSV, JSON lines, SMART, TREC, NPL, LISA or TIME"
            + (hint if _is_document(p) else f"; {_FORMAT_HINT}")
        )
    if _looks_like_header(rows[0], rows[1:]):
        return "tsv-header"
    counts = Counter(len(r) for r in rows)
    ncols, n = counts.most_common(1)[0]
    # A stray malformed line among the first rows should not defeat detection.
    if 3 * n >= 2 * len(rows):
        if ncols == 4:
            return "msmarco-docs"
        if ncols == 2 and all(_id_like(r[0]) for r in rows if len(r) == 2):
            return "msmarco-passages"
    raise CorpusError(
        f"cannot tell the format of {path}: {ncols} tab-separated columns and no header row "
        "(add a header row and choose 'TSV with a header row')"
    )
