"""Assemble parts written by executors into one index: in order, duplicates resolved, atomically.

:func:`install_parts` moves the accepted attempts' segments into the index folder in part order,
merges them like any build's segments, marks deleted every document whose id an earlier document
had (the first wins: exactly the records a one-process build would have skipped) and reports
each with the same reason and, counted from the start of the source, the same line or row number
a one-process build gives. :func:`assemble_index` does that as a new generation of an index,
under its writer lock, like every other build; then it removes the parts' leftover attempts.
"""

from __future__ import annotations

import bisect
import heapq
import re
import shutil
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.arrays import IndexCorruptError, save_array
from bm25desk.engine.index.generation import Entries, NewGeneration, write_generation
from bm25desk.engine.index.ingest import merge_runs
from bm25desk.engine.index.parts import (
    PartError,
    PartInfo,
    build_record,
    executor_versions,
    read_part,
)
from bm25desk.engine.index.report import BuildReport
from bm25desk.engine.index.rows import duplicate_reason
from bm25desk.engine.index.segment import Segment
from bm25desk.engine.index.store import IndexStore
from bm25desk.engine.progress import CancelToken
from bm25desk.engine.readers.corpus import ReadReport

__all__ = ["assemble_index", "install_parts", "remove_attempts"]

_LINE_WHERE = re.compile(r"^(.*):(\d+)$")
_ROW_WHERE = re.compile(r"^(.*) row (\d+)$")
_FIRST_SEEN = re.compile(r"\(first seen at (line|row) (\d+)\)")


def assemble_index(
    name: str,
    parts_in_order: Sequence[PartInfo],
    analyzer: Analyzer,
    source: Mapping[str, Any],
    store: IndexStore | None = None,
    *,
    build: Mapping[str, Any] | None = None,
    replace: bool = False,
    allow_empty: bool = False,
    cancel: CancelToken | None = None,
) -> BuildReport:
    """Commit the parts as (a new generation of) index ``name``, atomically, under its lock.

    Parameters
    ----------
    name
        The index name.
    parts_in_order
        The accepted attempt of every part, numbered 0, 1, 2 … (the executor's results).
    analyzer
        The analyser the parts were asked to use (each part's is checked against it).
    source
        The manifest's ``source`` entry: at least ``{"path": …, "format": …}``. ``"kind":
        "external"`` marks a source bm25desk cannot read itself (``update`` then asks for a
        rebuild by the same engine).
    store
        The index store (default: the user's).
    build
        How the index was built (``{"engine": "spark", …}``), kept in the manifest.
    replace
        Replace an index of that name built from another source.
    allow_empty
        Commit an index without documents instead of raising :class:`EmptyBuildError`.
    cancel
        Checked while merging.

    Raises
    ------
    PartError
        A part missing, unfinished, numbered out of order, or written with another analyser or
        bm25desk version.
    """
    store = store or IndexStore()
    name = store.validate_name(name)
    check_parts(parts_in_order, analyzer)
    plan = NewGeneration(
        name=name,
        source=dict(source),
        analyzer=analyzer,
        build=build_record(
            {"engine": "external", **(build or {}), "parts": len(parts_in_order)},
            len({p.versions.get("host", "") for p in parts_in_order} - {""}),
        ),
        replace=replace,
        allow_empty=allow_empty,
        empty=lambda skipped: _empty_message(source, skipped),
    )
    report = write_generation(
        store, plan, lambda into, report: install_parts(into, parts_in_order, report, cancel)
    )
    # Only now: after a failure before the parts were moved (the index busy, a name taken by
    # another source) they are still whole, and the caller may assemble them again.
    remove_attempts(parts_in_order)
    return report


def check_parts(parts: Sequence[PartInfo], analyzer: Analyzer) -> None:
    """Raise :class:`PartError` unless ``parts`` are finished attempts numbered 0, 1, 2 … ."""
    spec = analyzer.spec()
    driver = executor_versions(analyzer)
    for i, p in enumerate(parts):
        if p.part != i:
            got = ", ".join(str(q.part) for q in parts[:20])
            raise PartError(f"parts must be numbered 0, 1, 2 … in order; got {got}")
        on_disk = read_part(p.path)
        if on_disk.attempt != p.attempt or on_disk.segments != p.segments:
            raise PartError(f"part {i}: {p.directory} holds another attempt than the one accepted")
        if p.analyzer != spec:
            raise PartError(f"part {i} was analysed differently from the analyser given")
        for key in ("bm25desk", "index_format"):
            if p.versions.get(key) != driver[key]:
                raise PartError(
                    f"part {i} was written by {key} {p.versions.get(key)} on "
                    f"{p.versions.get('host', '?')}; this process has {driver[key]}"
                )
        for seg in p.segments:
            if not (p.path / seg).is_dir():
                raise PartError(f"part {i}: segment {seg} is missing from {p.directory}")


def remove_attempts(parts: Sequence[PartInfo]) -> None:
    """Remove every attempt directory of the parts (accepted ones, failed or speculative ones)."""
    for p in parts:
        shutil.rmtree(p.path.parent, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class _Repeat:
    """A document whose id an earlier document had: where it is and where the first one is."""

    docno: int
    docid: str
    first: int


def install_parts(
    directory: Path, parts: Sequence[PartInfo], report: ReadReport, cancel: CancelToken | None
) -> tuple[Entries, int]:
    """Move the parts' segments into ``directory`` in order, merge them, resolve repeated ids.

    Fills ``report`` as a one-process build of the whole source would have: documents read, and
    every part's skipped records followed — in record order — by the repeats found here, all
    numbered from the start of the source. Returns the manifest entries and the live count.
    """
    names: list[str] = []
    for p in parts:
        for seg in p.segments:
            names.append(_move(p.path / seg, directory))
    repeats = _repeated_ids(directory, names)
    total = sum(p.documents for p in parts)
    names = merge_runs(directory, names, cancel)
    entries = _deletions(directory, names, [r.docno for r in repeats])
    _fill_report(report, parts, repeats)
    return entries, total - len(repeats)


def _move(segment: Path, directory: Path) -> str:
    """Move a segment folder into ``directory`` (renamed if its name is taken); return its name."""
    name = segment.name
    while (directory / name).exists():
        name = f"seg-{uuid.uuid4().hex[:12]}"
    shutil.move(str(segment), str(directory / name))  # a rename on one file system, else a copy
    return name


def _repeated_ids(directory: Path, names: list[str]) -> list[_Repeat]:
    """Return every document (by docno over ``names`` in order) whose id an earlier one had.

    Found from sorted runs, not a table of every id: each segment lists its ids in sorted order
    (``docid_order``, equal ids in docno order), and merging those runs brings equal ids
    together, the first by docno first. Memory is a segment's ids as stored, not ~50 bytes an
    id (~50 MB at 1 M documents) in a table.
    """
    runs = []
    base = 0
    for name in names:
        segment = Segment(directory / name)
        runs.append(_sorted_ids(segment, base))
        base += segment.n_docs
    repeats: list[_Repeat] = []
    last, first = None, -1
    for key, docno in heapq.merge(*runs):
        if key == last:
            repeats.append(_Repeat(docno, key.decode("utf-8", "replace"), first))
        else:
            last, first = key, docno
    repeats.sort(key=lambda r: r.docno)
    return repeats


def _sorted_ids(segment: Segment, base: int, piece: int = 1 << 16) -> Iterator[tuple[bytes, int]]:
    """Yield ``(id, docno)`` of a segment's documents in id order, equal ids in docno order.

    Raises
    ------
    IndexCorruptError
        When ``docid_order`` is not a permutation that sorts the ids that way.
    """
    n = segment.n_docs
    order = np.asarray(segment.docid_order)
    if order.shape != (n,) or (
        n and (int(order.min()) < 0 or int(order.max()) >= n or np.bincount(order).max() != 1)
    ):
        raise IndexCorruptError(f"segment {segment.path.name}: docid_order.npy is damaged")
    blob = segment.docids
    blob.read_through()
    data, off = blob.data(), blob.offsets  # the map itself: ids are read, never copied whole
    prev, prev_local = b"", -1
    for lo in range(0, n, piece):
        idx = order[lo : lo + piece].astype(np.int64)
        keys = map(data.__getitem__, map(slice, off[idx].tolist(), off[idx + 1].tolist()))
        for key, local in zip(keys, idx.tolist(), strict=True):
            if key < prev or (key == prev and local < prev_local):
                raise IndexCorruptError(f"segment {segment.path.name}: docid_order.npy is damaged")
            prev, prev_local = key, local
            yield key, base + local


def _deletions(directory: Path, names: list[str], docnos: list[int]) -> Entries:
    """Return the manifest entries of ``names`` with ``docnos`` (over all of them) deleted."""
    entries: Entries = []
    base = 0
    marked = np.asarray(sorted(docnos), dtype=np.int64)
    for name in names:
        n = Segment(directory / name).n_docs
        mine = marked[(marked >= base) & (marked < base + n)] - base
        dname: str | None = None
        if mine.size:
            mask = np.zeros(n, dtype=bool)
            mask[mine] = True
            dname = f"del-{name}-g1.npy"
            save_array(directory / dname, mask)
        entries.append((name, dname))
        base += n
    return entries


def _fill_report(report: ReadReport, parts: Sequence[PartInfo], repeats: list[_Repeat]) -> None:
    """Add the parts' reads and skips, renumbered from the source's start, and the repeats."""
    starts = list(np.cumsum([0] + [p.documents for p in parts]).tolist())
    offsets = list(np.cumsum([0] + [p.records for p in parts]).tolist())
    by_part: dict[int, list[tuple[int, _Repeat, int]]] = {}
    for r in repeats:
        i = bisect.bisect_right(starts, r.docno) - 1
        j = bisect.bisect_right(starts, r.first) - 1
        by_part.setdefault(i, []).append((r.docno - starts[i], r, j))
    records = _record_numbers(parts, starts, by_part)
    for i, p in enumerate(parts):
        report.read += p.documents
        rows: list[tuple[int, int, str, str]] = []
        last = 0
        for k, (where, reason) in enumerate(p.skipped):
            where, number = _shift_where(where, p.unit, offsets[i])
            last = number if number is not None else last
            rows.append((last, k, where, _shift_reason(reason, offsets[i])))
        for ordinal, r, j in by_part.get(i, []):
            line = offsets[i] + records[(i, ordinal)]
            first = offsets[j] + records[(j, r.first - starts[j])]
            where = _where(p, line)
            rows.append((line, len(rows), where, duplicate_reason(r.docid, first, p.unit)))
            report.read -= 1  # a one-process build would not have read it as a document
        for _, _, where, reason in sorted(rows):
            report.skip(where, reason)


def _where(part: PartInfo, number: int) -> str:
    """Return the ``where`` of record ``number`` of the source a part came from."""
    if part.unit == "line":
        return f"{part.origin.get('path', '')}:{number}"
    return f"{part.origin.get('name', 'rows')} row {number}"


def _shift_where(where: str, unit: str, offset: int) -> tuple[str, int | None]:
    """Return ``where`` with its part-relative record number made absolute, and that number."""
    m = (_LINE_WHERE if unit == "line" else _ROW_WHERE).match(where)
    if m is None:
        return where, None
    number = int(m.group(2)) + offset
    sep = ":" if unit == "line" else " row "
    return f"{m.group(1)}{sep}{number}", number


def _shift_reason(reason: str, offset: int) -> str:
    """Return a skip reason with a part-relative "(first seen at line N)" made absolute."""
    return _FIRST_SEEN.sub(
        lambda m: f"(first seen at {m.group(1)} {int(m.group(2)) + offset})", reason
    )


def _record_numbers(
    parts: Sequence[PartInfo], starts: list[int], by_part: dict[int, list[tuple[int, _Repeat, int]]]
) -> dict[tuple[int, int], int]:
    """Return ``(part, document ordinal) -> record number in the part`` for the repeats' records.

    Only the parts that hold a repeat or its first occurrence are walked: a part's records are
    its documents, its skipped records and (in a file) blank lines, in order.
    """
    wanted: dict[int, set[int]] = {}
    for i, items in by_part.items():
        for ordinal, r, j in items:
            wanted.setdefault(i, set()).add(ordinal)
            wanted.setdefault(j, set()).add(r.first - starts[j])
    out: dict[tuple[int, int], int] = {}
    for i, ordinals in wanted.items():
        p = parts[i]
        skipped = {n for w, _ in p.skipped if (n := _shift_where(w, p.unit, 0)[1]) is not None}
        ordinal = 0
        for number, blank in _records(p):
            if number in skipped or blank:
                continue
            if ordinal in ordinals:
                out[(i, ordinal)] = number
                if len(out) == sum(len(v) for v in wanted.values()):
                    return out
            ordinal += 1
    missing = [(i, o) for i, v in wanted.items() for o in v if (i, o) not in out]
    if missing:
        raise PartError(f"part {missing[0][0]}: its records do not match its documents")
    return out


def _records(part: PartInfo) -> Iterator[tuple[int, bool]]:
    """Yield ``(record number, blank)`` for every record of a part, from 1."""
    if part.unit == "row" or "range" not in part.origin:
        yield from ((n, False) for n in range(1, part.records + 1))
        return
    start, end = (int(x) for x in part.origin["range"])
    with open(part.origin["path"], "rb") as fh:
        fh.seek(start)
        done = 0
        for number, line in enumerate(fh, 1):
            if done >= end - start:
                break
            done += len(line)
            if number == 1 and start == 0 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]  # the readers drop a leading byte order mark
            yield number, not line.strip()


def _empty_message(source: Mapping[str, Any], skipped: tuple[Any, ...]) -> str:
    """Return the message of a build that found no document."""
    where = source.get("path") or "the source"
    text = f"no documents found in {where}"
    if skipped:
        text += f"; {len(skipped):,} records skipped, the first: {skipped[0].reason}"
    return text + "; build an empty index anyway with --allow-empty"
