"""BEIR corpora: ``corpus.jsonl`` with one ``{"_id", "title", "text", ...}`` object a line.

A record with a title and no text is indexed by its title, as BEIR's own BM25 does (TREC-COVID has
thousands of such records, and its judgements count them); the report notes each one.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bm25desk.engine.extract.common import collapse, is_blank, join_title
from bm25desk.engine.readers.document import Document, ExtraColumns
from bm25desk.engine.readers.records import Admission
from bm25desk.engine.readers.source import Source

__all__ = ["TITLE_ONLY", "beir_corpus_file", "read_beir"]

TITLE_ONLY = "no text: indexed by its title only"
"""The note on a record that has a title and no text."""


def beir_corpus_file(directory: Path) -> Path | None:
    """Return the ``corpus.jsonl`` (or ``.gz``) of a BEIR dataset folder, or None."""
    for name in ("corpus.jsonl", "corpus.jsonl.gz"):
        if (directory / name).is_file():
            return directory / name
    return None


def _json_str(obj: dict[str, object], key: str) -> str | None:
    """Return the string value of ``key`` ("" when absent or null; None when not a string)."""
    value = obj.get(key)
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _record(obj: Any) -> tuple[str, str, str] | str:
    """(docid, title, body) of a parsed line, or the reason it is not a record."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, found {type(obj).__name__}"
    if "_id" not in obj:
        return "missing _id"
    docid = _json_str(obj, "_id")
    if docid is None:
        return "_id is not a string"
    docid = docid.strip()
    if not docid:
        return "empty id"
    title, body = _json_str(obj, "title"), _json_str(obj, "text")
    if title is None or body is None:
        return f"{'title' if title is None else 'text'} is not a string"
    return docid, collapse(title), body


def _json_text(obj: dict[str, object], key: str) -> str | None:
    """Return ``key``'s value as text: a string or number, a list of them joined; else None."""
    value = obj.get(key)
    if isinstance(value, list):
        parts = [_json_text({"v": v}, "v") for v in value]
        return " ".join(p for p in parts if p) or None
    text = _json_str(obj, key)
    return text or None


def read_beir(src: Source, extra: ExtraColumns | None = None) -> Iterator[Document]:
    """Yield the documents of a BEIR ``corpus.jsonl``.

    ``extra`` names keys read as metadata keywords and as fields (a missing, null or non-text
    value is simply absent).
    """
    report, name = src.report, src.name
    admit = Admission(report, skip_repeats=src.skip_repeats)
    extra = extra or ExtraColumns()
    for lineno, line in src.lines():
        if not line.strip():
            continue
        where = f"{name}:{lineno}"
        try:
            obj = json.loads(line.decode("utf-8", "replace"))
        except ValueError as exc:
            report.skip(where, f"invalid JSON: {exc}")
            continue
        record = _record(obj)
        if isinstance(record, str):
            report.skip(where, record)
            continue
        docid, title, body = record
        fields, meta = extra.pairs(functools.partial(_json_text, obj)) if extra else ((), ())
        doc = admit(
            where,
            lineno,
            Document(docid, join_title(title, body), title, fields=fields, meta=meta),
        )
        if doc is not None:
            if is_blank(body):
                report.note(where, TITLE_ONLY)
            yield doc
