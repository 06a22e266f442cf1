"""Merge the postings of several segments term by term, streaming runs of about a block each.

Body postings are decoded from each source (any segment format), placed in merged term order
and encoded again as blocks; title postings (plain ``tdocs``) are copied the same way without
the encoding. See :mod:`~bm25desk.engine.index.merge` for the whole merge.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import I32, I64, IndexCorruptError, index_dtype
from bm25desk.engine.index.merge_source import MergeSource, check_cancel
from bm25desk.engine.index.npyio import CHUNK, NpyWriter
from bm25desk.engine.index.postings_writer import PostingsWriter
from bm25desk.engine.progress import CancelToken

__all__ = ["merge_body", "merge_postings", "merged_ptr"]


def merged_ptr(sources: list[MergeSource], name: str, n_terms: int) -> I64:
    """Return the merged CSR pointer array ``name`` (``ptr`` or ``tptr``)."""
    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    tail = ptr[1:]
    for s in sources:
        r = s.reader(name, np.int64)
        if r.n != len(s.map) + 1:
            raise IndexCorruptError(f"segment {s.path.name}: {name}.npy has the wrong length")
        for lo in range(0, r.n - 1, CHUNK):
            counts = np.diff(r.read(lo, min(lo + CHUNK + 1, r.n)))
            tail[s.map[lo : lo + len(counts)]] += counts
    np.cumsum(ptr, out=ptr)
    return ptr


class _PostingsOut:
    """The output files of one CSR family: docs, and tfs and cf when the family has them."""

    def __init__(
        self, dest: Path, names: tuple[str, str | None, str | None], nnz: int, n_terms: int
    ):
        docs_name, tfs_name, cf_name = names
        self.docs = NpyWriter(dest / f"{docs_name}.npy", np.int32, nnz)
        self.tfs = NpyWriter(dest / f"{tfs_name}.npy", np.int32, nnz) if tfs_name else None
        self.cf = NpyWriter(dest / f"{cf_name}.npy", np.int64, n_terms) if cf_name else None

    def _all(self) -> list[NpyWriter]:
        return [w for w in (self.docs, self.tfs, self.cf) if w is not None]

    def finish(self) -> None:
        """Close every file, checking its length."""
        for w in self._all():
            w.finish()

    def close(self) -> None:
        """Close every file (after a failure)."""
        for w in self._all():
            w.close()


class _SourcePostings:
    """Range readers of one source's CSR family (``ptr``, ``docs``, and ``tfs``/``cf``)."""

    def __init__(self, s: MergeSource, names: tuple[str, str, str | None, str | None]) -> None:
        ptr_name, docs_name, tfs_name, cf_name = names
        self.source = s
        self.ptr = s.reader(ptr_name, np.int64)
        self.docs = s.reader(docs_name, np.int32)
        self.tfs = s.reader(tfs_name, np.int32) if tfs_name else None
        self.cf = s.reader(cf_name, np.int64) if cf_name else None
        if self.docs.n != int(self.ptr.read(self.ptr.n - 1, self.ptr.n)[0]):
            raise IndexCorruptError(f"segment {s.path.name}: {docs_name}.npy has the wrong length")


def merge_postings(
    sources: list[MergeSource],
    ptr: I64,
    names: tuple[str, str, str | None, str | None],
    dest: Path,
    block: int,
    cancel: CancelToken | None,
) -> None:
    """Stream the merged postings of one CSR family into ``dest``.

    ``names`` is ``(ptr, docs, tfs or None, cf or None)``: body postings carry term frequencies
    and a collection frequency per term, title postings neither. The merged terms are taken in
    blocks of about ``block`` postings (see the module docstring).
    """
    n_terms = len(ptr) - 1
    srcs = [_SourcePostings(s, names) for s in sources]
    out = _PostingsOut(dest, names[1:], int(ptr[-1]), n_terms)
    cursors = [0] * len(sources)  # first local term id not yet merged, per source
    try:
        for t0, t1 in _runs(ptr, block, cancel):
            if t1 == t0 + 1 and int(ptr[t1]) - int(ptr[t0]) > block:
                _copy_big_term(srcs, cursors, t0, out, block, cancel)
            else:
                _merge_block(srcs, cursors, ptr, t0, t1, out)
        out.finish()
    finally:
        out.close()


def _runs(ptr: I64, block: int, cancel: CancelToken | None) -> Iterator[tuple[int, int]]:
    """Yield the merged terms ``[t0, t1)`` by runs of about ``block`` postings (a term at least)."""
    n_terms = len(ptr) - 1
    t0 = 0
    while t0 < n_terms:
        check_cancel(cancel)
        t1 = int(np.searchsorted(ptr, int(ptr[t0]) + block, side="right")) - 1
        t1 = min(max(t1, t0 + 1), n_terms)
        yield t0, t1
        t0 = t1


def _advance(source: MergeSource, cursors: list[int], k: int, t1: int) -> tuple[int, int]:
    """Return the local term ids ``[a, b)`` of source ``k`` that map below merged id ``t1``."""
    a = cursors[k]
    b = a + int(np.searchsorted(source.map[a:], t1))
    cursors[k] = b
    return a, b


def _places(fill: I64, mids: I64, lp: I64) -> I64:
    """Return where a source's postings go in the run, and move ``fill`` past them.

    ``fill`` is the next free place of each merged term of the run, ``mids`` the source's terms
    (as merged ids relative to the run) and ``lp`` their slice of the source's CSR pointer. Each
    source posting goes to its term's next free place: term by term in merged order, sources in
    order, so documents stay ascending within every term.
    """
    counts = np.diff(lp)
    place = np.repeat(fill[mids] - (lp[:-1] - lp[0]), counts)
    place += np.arange(int(lp[-1]) - int(lp[0]), dtype=np.int64)
    fill[mids] += counts
    return place


def _merge_block(
    srcs: list[_SourcePostings], cursors: list[int], ptr: I64, t0: int, t1: int, out: _PostingsOut
) -> None:
    """Merge the postings of merged terms ``[t0, t1)`` in memory and append them to ``out``."""
    p_start = int(ptr[t0])
    size = int(ptr[t1]) - p_start
    docs = np.empty(size, dtype=np.int32)
    tfs = np.empty(size, dtype=np.int32) if out.tfs is not None else None
    cf = np.zeros(t1 - t0, dtype=np.int64) if out.cf is not None else None
    fill = ptr[t0:t1] - p_start  # next free place in the block, per merged term
    for k, sp in enumerate(srcs):
        a, b = _advance(sp.source, cursors, k, t1)
        if a == b:
            continue
        mids = sp.source.map[a:b].astype(np.int64) - t0
        if cf is not None and sp.cf is not None:
            cf[mids] += sp.cf.read(a, b)
        lp = sp.ptr.read(a, b + 1)
        q0, q1 = int(lp[0]), int(lp[-1])
        if q0 == q1:
            continue
        place = _places(fill, mids, lp)
        docs[place] = sp.docs.read(q0, q1) + np.int32(sp.source.doc_offset)
        if tfs is not None and sp.tfs is not None:
            tfs[place] = sp.tfs.read(q0, q1)
    out.docs.write(docs)
    if out.tfs is not None and tfs is not None:
        out.tfs.write(tfs)
    if out.cf is not None and cf is not None:
        out.cf.write(cf)


def _copy_big_term(
    srcs: list[_SourcePostings],
    cursors: list[int],
    t0: int,
    out: _PostingsOut,
    block: int,
    cancel: CancelToken | None,
) -> None:
    """Append the postings of merged term ``t0`` (larger than a block): source slices in order."""
    cf = np.zeros(1, dtype=np.int64)
    for k, sp in enumerate(srcs):
        a, b = _advance(sp.source, cursors, k, t0 + 1)
        if a == b:
            continue
        if sp.cf is not None:
            cf += sp.cf.read(a, b)
        lp = sp.ptr.read(a, b + 1)
        for lo in range(int(lp[0]), int(lp[-1]), block):
            hi = min(lo + block, int(lp[-1]))
            out.docs.write(sp.docs.read(lo, hi) + np.int32(sp.source.doc_offset))
            if out.tfs is not None and sp.tfs is not None:
                out.tfs.write(sp.tfs.read(lo, hi))
            check_cancel(cancel)
    if out.cf is not None:
        out.cf.write(cf)


class _SourceBody:
    """Range reads of one source's body postings, decoded (any segment format)."""

    def __init__(self, s: MergeSource) -> None:
        self.source = s
        self.ptr = s.reader("ptr", np.int64)
        self.cf = s.reader("cf", np.int64)
        if s.format >= 3:
            self.bptr = s.reader("bptr", np.int64)
            self.off = s.reader("blk_off", np.int64)
            self.last = s.reader("blk_last", np.int32)
            self.stream = s.raw("blocks.bin")
        else:
            self.docs = s.reader("docs", np.int32)
            self.tfs = s.reader("tfs", np.int32)

    def read(self, a: int, b: int) -> tuple[I64, I32, I32]:
        """Return the postings of local terms ``[a, b)``: their ptr slice, docnos and tfs."""
        s = self.source
        lp = self.ptr.read(a, b + 1)
        if s.format < 3:
            return (
                lp,
                self.docs.read(int(lp[0]), int(lp[-1])),
                self.tfs.read(int(lp[0]), int(lp[-1])),
            )
        bp = self.bptr.read(a, b + 1)
        b0, b1 = int(bp[0]), int(bp[-1])
        off = self.off.read(b0, b1 + 1)
        lo, hi = int(off[0]), int(off[-1])
        self.stream.seek(lo)
        data = self.stream.read(hi - lo + blocks.PAD)
        data += bytes(max(0, hi - lo + blocks.PAD - len(data)))  # decoding checks the sizes
        try:
            docs, tfs = blocks.decode(
                data, off - lo, self.last.read(b0, b1), bp - b0, lp, s.n_docs, s.cap, s.shift
            )
        except blocks.BlockError as exc:
            raise IndexCorruptError(f"segment {s.path.name}: postings damaged ({exc})") from None
        return lp, docs, tfs


def merge_body(
    sources: list[MergeSource],
    ptr: I64,
    dest: Path,
    doclen: I32,
    block: int,
    cancel: CancelToken | None,
) -> None:
    """Merge the body postings and write them as blocks (``cf.npy`` beside them).

    Merged terms are taken in runs of about ``block`` postings: each source's postings of the
    run are decoded, placed term by term in merged order (sources in order, docnos shifted), and
    the run is encoded. A term with more postings than a run is gathered whole (one term's
    postings: at most 8 bytes per document of the merged segment).
    """
    n_terms = len(ptr) - 1
    srcs = [_SourceBody(s) for s in sources]
    out = PostingsWriter(dest)
    # cf's dtype follows the segment's occurrences (reserved terms are not in the lengths), as
    # the segment writer chooses it.
    occurrences = sum(int(c.sum(dtype=np.int64)) for sp in srcs for c in sp.cf.chunks())
    cf_out = NpyWriter(dest / "cf.npy", index_dtype(occurrences), n_terms)
    cursors = [0] * len(sources)
    try:
        for t0, t1 in _runs(ptr, block, cancel):
            docs, tfs, cf = _gather_run(srcs, cursors, ptr, t0, t1)
            out.add(ptr[t0 : t1 + 1] - ptr[t0], docs, tfs, doclen)
            cf_out.write(cf)
        out.finish()
        cf_out.finish()
    finally:
        out.abort()
        cf_out.close()


def _gather_run(
    srcs: list[_SourceBody], cursors: list[int], ptr: I64, t0: int, t1: int
) -> tuple[I32, I32, I64]:
    """Return the merged postings of merged terms ``[t0, t1)`` and their collection frequencies."""
    p_start = int(ptr[t0])
    size = int(ptr[t1]) - p_start
    docs = np.empty(size, dtype=np.int32)
    tfs = np.empty(size, dtype=np.int32)
    cf = np.zeros(t1 - t0, dtype=np.int64)
    fill = ptr[t0:t1] - p_start  # next free place in the run, per merged term
    for k, sp in enumerate(srcs):
        a, b = _advance(sp.source, cursors, k, t1)
        if a == b:
            continue
        mids = sp.source.map[a:b].astype(np.int64) - t0
        cf[mids] += sp.cf.read(a, b)
        lp, sd, st = sp.read(a, b)
        if int(lp[0]) == int(lp[-1]):
            continue
        place = _places(fill, mids, lp)
        docs[place] = sd + np.int32(sp.source.doc_offset)
        tfs[place] = st
    return docs, tfs, cf
