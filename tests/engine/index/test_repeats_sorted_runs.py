"""The driver finds repeated ids from the segments' sorted id runs: first wins, damage is caught."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine.index import assemble
from bm25desk.engine.index.arrays import IndexCorruptError, save_array
from bm25desk.engine.index.segment_writer import SegmentWriter

SEGMENTS = [
    ["a", "b", "a", "caf\xe9", "z", "b"],
    ["c", "a", "\U0001f642", "caf\xe9", "c", "y"],
    ["\U0001f642", "q", "a"],
]


def _write(directory: Path) -> list[str]:
    names = []
    for n, ids in enumerate(SEGMENTS):
        writer = SegmentWriter(directory / f"seg-{n}")
        for docid in ids:
            writer.add(["w"], [], docid=docid, title="", location="", text="w")
        writer.finish()
        names.append(f"seg-{n}")
    return names


def test_every_repeat_points_at_the_first_document_with_its_id(tmp_path: Path) -> None:
    names = _write(tmp_path)
    first: dict[str, int] = {}
    expected = []
    for docno, docid in enumerate(i for ids in SEGMENTS for i in ids):
        seen = first.setdefault(docid, docno)
        if seen != docno:
            expected.append((docno, docid, seen))
    got = assemble._repeated_ids(tmp_path, names)
    assert [(r.docno, r.docid, r.first) for r in got] == expected


def test_a_damaged_id_order_is_an_error_not_a_wrong_report(tmp_path: Path) -> None:
    names = _write(tmp_path)
    path = tmp_path / names[1] / "docid_order.npy"
    order = np.load(path)
    save_array(path, order[::-1].copy())  # a permutation, but not the sorted one
    with pytest.raises(IndexCorruptError, match="docid_order"):
        assemble._repeated_ids(tmp_path, names)
    damaged = order.copy()
    damaged[1] = damaged[0]  # not a permutation (sorted still, as far as it goes)
    save_array(path, damaged)
    with pytest.raises(IndexCorruptError, match="docid_order"):
        assemble._repeated_ids(tmp_path, names)
