"""Readers fill documents' metadata and fields: folders their own, corpus files chosen columns."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from reader_helpers import read_all, write

from bm25desk.engine.readers.document import ColumnMap, CorpusError, ExtraColumns
from bm25desk.engine.readers.folder import file_fields_and_meta, read_folder


def _local(year: int, month: int, day: int) -> float:
    return time.mktime((year, month, day, 12, 0, 0, 0, 0, -1))


def test_folder_documents_carry_type_folder_year_name_and_path(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    files = {
        "top.TXT": _local(2021, 5, 1),
        "notes/2024/2024-06 budget notes.md": _local(2024, 6, 30),
        "notes/page.html": _local(2023, 12, 31),
    }
    for rel, mtime in files.items():
        path = write(root / rel, "<p>hello there</p>" if rel.endswith("html") else "hello there")
        os.utime(path, (mtime, mtime))
    docs = {d.docid: d for d in read_folder(root)}
    assert docs["top.TXT"].meta == (("type", "txt"), ("folder", "."), ("year", "2021"))
    assert docs["top.TXT"].fields == (("name", "top"),)
    budget = docs["notes/2024/2024-06 budget notes.md"]
    assert budget.meta == (("type", "md"), ("folder", "notes/2024"), ("year", "2024"))
    assert budget.fields == (("name", "2024-06 budget notes"), ("path", "notes 2024"))
    assert dict(docs["notes/page.html"].meta)["year"] == "2023"


def test_odd_names_give_printable_metadata() -> None:
    fields, meta = file_fields_and_meta("bad\udcff/.profile.txt", 0.0)
    assert dict(meta) == {"type": "txt", "folder": "bad\ufffd"}  # no year without an mtime
    assert dict(fields)["name"] == ".profile"


TSV = (
    "id\ttext\tlang\ttags\tyear\n"
    "a\tfirst text\ten\tred green\t2001\n"
    "b\tsecond text\t\t\t 2002 \n"
    "c\tthird text\tfr\tblue\t\n"
)


def test_tsv_meta_and_field_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "c.tsv", TSV)
    extra = ExtraColumns(meta=("lang", "year"), fields=("tags",))
    docs, _ = read_all(path, "tsv-header", columns=ColumnMap("id", ("text",)), extra=extra)
    assert [d.meta for d in docs] == [
        (("lang", "en"), ("year", "2001")),
        (("year", "2002"),),  # blank values are absent, values are stripped
        (("lang", "fr"),),
    ]
    assert [d.fields for d in docs] == [(("tags", "red green"),), (), (("tags", "blue"),)]
    assert docs[0].text == "first text"  # the columns do not go into the body
    with pytest.raises(CorpusError, match="'colour' is not in the header"):
        read_all(path, "tsv-header", extra=ExtraColumns(meta=("colour",)))


def test_jsonl_meta_and_field_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path / "corpus.jsonl",
        '{"_id": "1", "text": "one", "lang": "en", "year": 2020, "tags": ["x", "y"]}\n'
        '{"_id": "2", "text": "two", "lang": null, "tags": {"no": 1}}\n'
        '{"_id": "3", "text": "three", "lang": "  de "}\n',
    )
    extra = ExtraColumns(meta=("lang", "year"), fields=("tags",))
    docs, _ = read_all(path, "beir", extra=extra)
    assert [d.meta for d in docs] == [
        (("lang", "en"), ("year", "2020")),
        (),
        (("lang", "de"),),
    ]
    assert [d.fields for d in docs] == [(("tags", "x y"),), (), ()]


def test_other_formats_refuse_extra_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "p.tsv", "1\tsome passage\n")
    with pytest.raises(CorpusError, match="header row or a BEIR/JSONL"):
        read_all(path, "msmarco-passages", extra=ExtraColumns(meta=("lang",)))
    assert not ExtraColumns()
