"""Markdown headings become the ``heading`` field of folder documents; bm25f can weigh them."""

from __future__ import annotations

from pathlib import Path

from bm25desk.engine import IndexStore, Searcher, build_index
from bm25desk.engine.extract.plain import markdown_headings
from bm25desk.engine.index.reserved import field_length_term, field_term
from bm25desk.engine.readers.corpus import read_folder
from bm25desk.engine.scoring.variants import get_variant

SOURCE = """---
title: Orchard notes
---
# Pears #

Grafting pears onto quince.

Cider apples
============

```
# not a heading: code
```

## Storage

A paragraph with a # sign inside.
"""


def test_markdown_headings_are_atx_and_setext_outside_code() -> None:
    assert markdown_headings(SOURCE) == ["Pears", "Cider apples", "Storage"]
    assert markdown_headings("no headings here\n#hashtag\n") == []


def test_folder_markdown_files_get_a_heading_field(tmp_path: Path, data_dir: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "orchard.md").write_text(SOURCE, encoding="utf-8")
    (folder / "plain.txt").write_text("Storage of pears in a cellar.\n", encoding="utf-8")
    docs = {d.docid: d for d in read_folder(folder)}
    assert ("heading", "Pears\nCider apples\nStorage") in docs["orchard.md"].fields
    assert not any(f == "heading" for f, _ in docs["plain.txt"].fields)

    store = IndexStore()
    build_index(folder, name="notes", store=store)
    index = store.open("notes")
    assert index.postings(field_term("heading", "storage"))[0].size == 1
    assert index.postings(field_length_term("heading"))[1].tolist() == [4]
    # Weighing headings lifts the file whose heading says "storage" over the one that only
    # mentions it in its text (same tf 1 in the text for both).
    heavy = get_variant("bm25f", w_heading=5.0)
    hits = Searcher(index).search("storage", heavy, 2).hits
    assert hits[0].docid == "orchard.md"
    plain = Searcher(index).search("storage", get_variant("lucene"), 2).hits
    assert {h.docid for h in plain} == {"orchard.md", "plain.txt"}
