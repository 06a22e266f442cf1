"""Merge segments into one, streaming, in memory bounded independently of the corpus size.

A build keeps its memory bounded by flushing a small segment whenever :class:`SegmentWriter`
holds a budget of postings (see ``build.write_segments``); searching many small segments is
slower than searching one, so — as Lucene does — the small segments are then merged. A merge
must not bring back the memory the flushes saved, so :func:`merge_segments` never loads a
postings array, a stored field or a per-document array: it streams them.

* **Vocabulary.** Every lexicon is sorted by UTF-8 bytes, so the merged lexicon is a k-way merge
  of the sources' lexicons, written to ``terms.bin`` as it is produced. The merge runs in rounds
  of a few hundred thousand terms (set, sort and dict at C speed; a heap per term is ~5× slower).
  What stays in memory is, per source, the monotone map local term id → merged term id (4 bytes
  per local term), and the merged ``ptr``/``tptr`` arrays (8 bytes per merged term each).
* **Postings.** The merged terms are cut into blocks of about ``block_postings`` postings. As the
  maps are monotone, a block of merged terms is a contiguous range of every source's term ids,
  hence a contiguous slice of its ``docs``/``tfs`` arrays, read with plain sequential file reads
  (no memory map, so the page cache is not charged to the process). Each slice is scattered to its
  place in the block — term by term in merged order, sources in order, documents shifted by the
  source's first docno — and the block is appended to the output. A single term with more
  postings than a block is copied source slice by source slice, in pieces.
* **Everything else.** Stored-field blobs are concatenated (offsets shifted); per-document arrays
  are concatenated; ``docid_order`` is a k-way merge of the sources' ``docid_order`` (ties keep
  docno order, like the stable sort in :func:`~bm25desk.engine.index.segment.sort_terms`).

``.npy`` files are written as a header for the known final shape followed by the data in pieces.
The result is identical, file for file and byte for byte, to the segment a single
:class:`~bm25desk.engine.index.segment.SegmentWriter` would have written from all the documents
added in order — but for the compressed text, whose zstd frames are copied from the sources
(the same documents, cut into frames at the sources' boundaries too). Postings are decoded and
encoded again in blocks (a block of 128 never spans two sources' postings the way a copy would
leave it). Memory: 4 bytes per source term, ~24 bytes per merged term, ~40 bytes per posting of
one block (decoded, placed and encoded), the merged document lengths (4 bytes per document: the
blocks' frontiers need them), and ~25 MB for the rounds of the k-way merges.
"""

from __future__ import annotations

import bisect
import contextlib
import io
import itertools
import mmap
import shutil
from array import array
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from bm25desk.engine.index import blocks
from bm25desk.engine.index.segment import (
    Blob,
    IndexCorruptError,
    PostingsWriter,
    load_array,
    read_meta,
    save_array,
    segment_meta,
    write_json,
)
from bm25desk.engine.index.textstore import ZBlob, ZBlobWriter
from bm25desk.engine.progress import CancelToken

__all__ = ["merge_segments"]

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

_CHUNK = 1 << 20
"""Elements per read when streaming per-term or per-document arrays."""

_CHECK_EVERY = 1 << 16
"""Items between cancellation checks in the Python-level merges (vocabulary, docids)."""

_MAX_I32 = np.iinfo(np.int32).max


class _NpyReader:
    """Range reads of a 1-d ``.npy`` file with plain file reads (no memory map)."""

    def __init__(self, path: Path, dtype: type[np.generic]) -> None:
        self.path = path
        try:
            self._fh: io.BufferedReader = open(path, "rb")  # noqa: SIM115 - closed in close()
        except FileNotFoundError as exc:
            raise IndexCorruptError(f"index file missing: {path.name}") from exc
        try:
            version = np.lib.format.read_magic(self._fh)
            if version == (1, 0):
                shape, fortran, dt = np.lib.format.read_array_header_1_0(self._fh)
            else:
                shape, fortran, dt = np.lib.format.read_array_header_2_0(self._fh)
            if len(shape) != 1 or fortran or dt != np.dtype(dtype):
                raise IndexCorruptError(f"index file damaged: {path.name} has the wrong type")
        except ValueError as exc:
            self._fh.close()
            raise IndexCorruptError(f"index file damaged: {path.name} ({exc})") from exc
        except BaseException:
            self._fh.close()
            raise
        self.dtype = np.dtype(dtype)
        self.n = int(shape[0])
        self._start = self._fh.tell()

    def read(self, lo: int, hi: int) -> npt.NDArray[Any]:
        """Return elements ``[lo, hi)`` as a new array."""
        out = np.empty(hi - lo, dtype=self.dtype)
        if hi > lo:
            self._fh.seek(self._start + lo * self.dtype.itemsize)
            got = self._fh.readinto(out.data.cast("B"))
            if got != out.nbytes:
                raise IndexCorruptError(f"index file damaged: {self.path.name} is truncated")
        return out

    def chunks(self, lo: int = 0, hi: int | None = None) -> Iterator[npt.NDArray[Any]]:
        """Yield elements ``[lo, hi)`` in pieces of at most ``_CHUNK``."""
        end = self.n if hi is None else hi
        for a in range(lo, end, _CHUNK):
            yield self.read(a, min(a + _CHUNK, end))

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


class _NpyWriter:
    """Write a 1-d ``.npy`` of known length piece by piece (same bytes as ``np.save``)."""

    def __init__(self, path: Path, dtype: type[np.generic], n: int) -> None:
        self.path = path
        self.dtype = np.dtype(dtype)
        self.n = n
        self.count = 0
        self._fh: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in close()
        header = {
            "descr": np.lib.format.dtype_to_descr(self.dtype),
            "fortran_order": False,
            "shape": (n,),
        }
        # np.save picks format 1.0 whenever the header fits, which a 1-d header always does.
        np.lib.format.write_array_header_1_0(self._fh, header)

    def write(self, arr: npt.NDArray[Any]) -> None:
        """Append elements (converted to the file's dtype)."""
        data = np.ascontiguousarray(arr, dtype=self.dtype)
        self._fh.write(data.data)
        self.count += len(data)

    def close(self) -> None:
        """Close the file (an unfinished file is removed with the destination directory)."""
        self._fh.close()

    def finish(self) -> None:
        """Close the file, checking that exactly ``n`` elements were written."""
        self._fh.close()
        if self.count != self.n:
            raise RuntimeError(f"{self.path.name}: wrote {self.count} of {self.n} elements")


class _Source:
    """One source segment being merged: its size, first merged docno and open readers."""

    def __init__(self, directory: Path, doc_offset: int) -> None:
        self.path = directory
        meta = read_meta(directory)
        self.n_docs = meta["n_docs"]
        self.total_len = meta["total_len"]
        self.format = meta["format"]
        self.shift = meta.get("shift", blocks.SHIFT)
        self.cap = meta.get("cap", blocks.CAP)
        self.doc_offset = doc_offset
        self.map: I32 = np.zeros(0, dtype=np.int32)  # local term id → merged term id
        self._readers: list[_NpyReader | BinaryIO] = []

    def reader(self, name: str, dtype: type[np.generic]) -> _NpyReader:
        """Open ``<name>.npy`` for range reads (closed by :meth:`close`)."""
        r = _NpyReader(self.path / f"{name}.npy", dtype)
        self._readers.append(r)
        return r

    def raw(self, name: str) -> BinaryIO:
        """Open a file for reading (closed by :meth:`close`)."""
        try:
            fh: BinaryIO = open(self.path / name, "rb")  # noqa: SIM115 - closed in close()
        except FileNotFoundError as exc:
            raise IndexCorruptError(f"index file missing: {name}") from exc
        self._readers.append(fh)
        return fh

    def close(self) -> None:
        """Close every reader opened by :meth:`reader` or :meth:`raw`."""
        for r in self._readers:
            r.close()
        self._readers = []


def _check(cancel: CancelToken | None) -> None:
    if cancel is not None:
        cancel.check()


Chunk = tuple[list[bytes], I64]
"""Sorted keys (UTF-8 bytes) and a payload per key (a local term id, a merged docno)."""


def _whole_runs(load: Callable[[int, int], Chunk], n: int, size: int) -> Iterator[Chunk]:
    """Yield ``load`` over ``[0, n)`` in pieces of about ``size`` that never split equal keys."""
    lo = 0
    while lo < n:
        hi = min(lo + size, n)
        keys, vals = load(lo, hi)
        while hi < n:  # duplicates (docids) continuing past the piece belong to it
            more, extra = load(hi, hi + 1)
            if more[0] != keys[-1]:
                break
            keys += more
            vals = np.concatenate([vals, extra])
            hi += 1
        yield keys, vals
        lo = hi


def _rounds(streams: list[Iterator[Chunk]], cancel: CancelToken | None) -> Iterator[list[Chunk]]:
    """K-way merge of sorted streams, a round at a time (C-speed work, not a heap per key).

    Each round takes from every stream its pending keys up to ``bound``, the smallest last key
    loaded by a stream not yet exhausted: as pieces never split equal keys, no key ``<= bound``
    is still unloaded, so the union of what is taken precedes everything left. The stream that
    set the bound is used up, so every round consumes at least one piece. Yields, per round, what
    each stream gave (possibly nothing), in stream order.
    """
    k = len(streams)
    keys: list[list[bytes]] = [[] for _ in range(k)]
    vals: list[I64] = [np.zeros(0, dtype=np.int64) for _ in range(k)]
    start = [0] * k  # first pending key of keys[s]
    done = [False] * k
    while True:
        _check(cancel)
        for s in range(k):
            if not done[s] and start[s] == len(keys[s]):
                piece = next(streams[s], None)
                if piece is None:
                    done[s] = True
                    keys[s], vals[s], start[s] = [], vals[s][:0], 0
                else:
                    keys[s], vals[s] = piece
                    start[s] = 0
        limits = [keys[s][-1] for s in range(k) if not done[s]]
        if not limits and all(start[s] == len(keys[s]) for s in range(k)):
            return
        bound = min(limits) if limits else None
        taken: list[Chunk] = []
        for s in range(k):
            a = start[s]
            b = len(keys[s]) if bound is None else bisect.bisect_right(keys[s], bound, lo=a)
            taken.append((keys[s][a:b], vals[s][a:b]))
            start[s] = b
        yield taken


def _piece_size(n_streams: int) -> int:
    """Keys per piece and stream: ~256 k keys (~25 MB) loaded in all, at least 1 k per stream."""
    return max(1024, (1 << 18) // max(n_streams, 1))


def _split(data: bytes, rel: list[int]) -> list[bytes]:
    """Cut ``data`` at the relative offsets ``rel`` (n + 1 of them) into n records."""
    return list(map(data.__getitem__, map(slice, rel[:-1], rel[1:])))


def _lexicon_pieces(s: _Source, size: int) -> Iterator[Chunk]:
    """Yield a source's lexicon in pieces: (terms, their local ids)."""
    off = s.reader("terms.off", np.int64)
    n = off.n - 1
    if n < 0:
        raise IndexCorruptError(f"segment {s.path.name}: terms.off.npy is empty")
    with open(s.path / "terms.bin", "rb") as fh:

        def load(lo: int, hi: int) -> Chunk:
            o = off.read(lo, hi + 1)
            fh.seek(int(o[0]))
            data = fh.read(int(o[-1] - o[0]))
            if len(data) != int(o[-1] - o[0]):
                raise IndexCorruptError(f"segment {s.path.name}: terms.bin is truncated")
            return _split(data, (o - o[0]).tolist()), np.arange(lo, hi, dtype=np.int64)

        yield from _whole_runs(load, n, size)


def _merge_vocabulary(sources: list[_Source], dest: Path, cancel: CancelToken | None) -> int:
    """Write the union of the sources' lexicons to ``dest`` and set each source's term map."""
    size = _piece_size(len(sources))
    streams = [_lexicon_pieces(s, size) for s in sources]
    maps: list[list[I32]] = [[] for _ in sources]
    offsets = array("q", [0])
    n_terms = 0
    with open(dest / "terms.bin", "wb") as fh:
        for taken in _rounds(streams, cancel):
            terms = sorted(set(itertools.chain.from_iterable(t for t, _ in taken)))
            if n_terms + len(terms) > _MAX_I32:
                raise ValueError("too many terms for one segment")
            fh.write(b"".join(terms))
            lens = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
            offsets.extend((np.cumsum(lens) + offsets[-1]).tolist())
            index = dict(zip(terms, range(n_terms, n_terms + len(terms)), strict=True))
            for pieces, (t, _) in zip(maps, taken, strict=True):
                pieces.append(np.fromiter(map(index.__getitem__, t), dtype=np.int32, count=len(t)))
            n_terms += len(terms)
    save_array(dest / "terms.off.npy", np.frombuffer(offsets, dtype=np.int64))
    for s, pieces in zip(sources, maps, strict=True):
        m = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
        if m.size > 1 and not bool(np.all(m[1:] > m[:-1])):
            # Only possible if two terms share their UTF-8 bytes (lone surrogates, replaced).
            raise IndexCorruptError(f"segment {s.path.name}: lexicon is not strictly sorted")
        s.map = m
    return n_terms


def _merged_ptr(sources: list[_Source], name: str, n_terms: int) -> I64:
    """Return the merged CSR pointer array ``name`` (``ptr`` or ``tptr``)."""
    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    tail = ptr[1:]
    for s in sources:
        r = s.reader(name, np.int64)
        if r.n != len(s.map) + 1:
            raise IndexCorruptError(f"segment {s.path.name}: {name}.npy has the wrong length")
        for lo in range(0, r.n - 1, _CHUNK):
            counts = np.diff(r.read(lo, min(lo + _CHUNK + 1, r.n)))
            tail[s.map[lo : lo + len(counts)]] += counts
    np.cumsum(ptr, out=ptr)
    return ptr


class _PostingsOut:
    """The output files of one CSR family: docs, and tfs and cf when the family has them."""

    def __init__(
        self, dest: Path, names: tuple[str, str | None, str | None], nnz: int, n_terms: int
    ):
        docs_name, tfs_name, cf_name = names
        self.docs = _NpyWriter(dest / f"{docs_name}.npy", np.int32, nnz)
        self.tfs = _NpyWriter(dest / f"{tfs_name}.npy", np.int32, nnz) if tfs_name else None
        self.cf = _NpyWriter(dest / f"{cf_name}.npy", np.int64, n_terms) if cf_name else None

    def _all(self) -> list[_NpyWriter]:
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

    def __init__(self, s: _Source, names: tuple[str, str, str | None, str | None]) -> None:
        ptr_name, docs_name, tfs_name, cf_name = names
        self.source = s
        self.ptr = s.reader(ptr_name, np.int64)
        self.docs = s.reader(docs_name, np.int32)
        self.tfs = s.reader(tfs_name, np.int32) if tfs_name else None
        self.cf = s.reader(cf_name, np.int64) if cf_name else None
        if self.docs.n != int(self.ptr.read(self.ptr.n - 1, self.ptr.n)[0]):
            raise IndexCorruptError(f"segment {s.path.name}: {docs_name}.npy has the wrong length")


def _merge_postings(
    sources: list[_Source],
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
        t0 = 0
        while t0 < n_terms:
            _check(cancel)
            p_start = int(ptr[t0])
            t1 = int(np.searchsorted(ptr, p_start + block, side="right")) - 1
            t1 = min(max(t1, t0 + 1), n_terms)
            size = int(ptr[t1]) - p_start
            if t1 == t0 + 1 and size > block:
                _copy_big_term(srcs, cursors, t0, out, block, cancel)
            else:
                _merge_block(srcs, cursors, ptr, t0, t1, out)
            t0 = t1
        out.finish()
    finally:
        out.close()


def _advance(sp: _SourcePostings, cursors: list[int], k: int, t1: int) -> tuple[int, int]:
    """Return the local term ids ``[a, b)`` of source ``k`` that map below merged id ``t1``."""
    a = cursors[k]
    b = a + int(np.searchsorted(sp.source.map[a:], t1))
    cursors[k] = b
    return a, b


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
        a, b = _advance(sp, cursors, k, t1)
        if a == b:
            continue
        mids = sp.source.map[a:b].astype(np.int64) - t0
        if cf is not None and sp.cf is not None:
            cf[mids] += sp.cf.read(a, b)
        lp = sp.ptr.read(a, b + 1)
        q0, q1 = int(lp[0]), int(lp[-1])
        if q0 == q1:
            continue
        # Each source posting goes to its term's next free place: term by term in merged
        # order, sources in order, so documents stay ascending within every term.
        counts = np.diff(lp)
        place = np.repeat(fill[mids] - (lp[:-1] - q0), counts)
        place += np.arange(q1 - q0, dtype=np.int64)
        docs[place] = sp.docs.read(q0, q1) + np.int32(sp.source.doc_offset)
        if tfs is not None and sp.tfs is not None:
            tfs[place] = sp.tfs.read(q0, q1)
        fill[mids] += counts
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
        a, b = _advance(sp, cursors, k, t0 + 1)
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
            _check(cancel)
    if out.cf is not None:
        out.cf.write(cf)


class _SourceBody:
    """Range reads of one source's body postings, decoded (any segment format)."""

    def __init__(self, s: _Source) -> None:
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


def _merge_body(
    sources: list[_Source],
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
    cf_out = _NpyWriter(dest / "cf.npy", np.int64, n_terms)
    cursors = [0] * len(sources)
    try:
        t0 = 0
        while t0 < n_terms:
            _check(cancel)
            p_start = int(ptr[t0])
            t1 = int(np.searchsorted(ptr, p_start + block, side="right")) - 1
            t1 = min(max(t1, t0 + 1), n_terms)
            rel = ptr[t0 : t1 + 1] - p_start
            docs, tfs, cf = _gather_run(srcs, cursors, ptr, t0, t1)
            out.add(rel, docs, tfs, doclen)
            cf_out.write(cf)
            t0 = t1
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
        a = cursors[k]
        b = a + int(np.searchsorted(sp.source.map[a:], t1))
        cursors[k] = b
        if a == b:
            continue
        mids = sp.source.map[a:b].astype(np.int64) - t0
        cf[mids] += sp.cf.read(a, b)
        lp, sd, st = sp.read(a, b)
        q0, q1 = int(lp[0]), int(lp[-1])
        if q0 == q1:
            continue
        counts = np.diff(lp)
        place = np.repeat(fill[mids] - (lp[:-1] - q0), counts)
        place += np.arange(q1 - q0, dtype=np.int64)
        docs[place] = sd + np.int32(sp.source.doc_offset)
        tfs[place] = st
        fill[mids] += counts
    return docs, tfs, cf


def _merge_text(sources: list[_Source], dest: Path, cancel: CancelToken | None) -> None:
    """Concatenate the sources' texts into one compressed blob.

    Their zstd frames are copied (compressing is most of the cost of writing text); older plain
    texts are compressed.
    """
    out = ZBlobWriter(dest, "text")
    try:
        for s in sources:
            if s.format >= 3:
                out.add_blob(ZBlob(s.path, "text"))
            else:
                old = Blob(s.path, "text")
                for i in range(len(old)):
                    out.add(old.get_bytes(i))
            _check(cancel)
        out.close()
    except BaseException:
        out.abort()
        raise


def _concat_arrays(sources: list[_Source], dest: Path, name: str, dtype: type[np.generic]) -> int:
    """Concatenate a per-document array; return the sum of its elements when it is ``doclen``."""
    total = 0
    n = sum(s.n_docs for s in sources)
    out = _NpyWriter(dest / f"{name}.npy", dtype, n)
    try:
        for s in sources:
            r = s.reader(name, dtype)
            if r.n != s.n_docs:
                raise IndexCorruptError(f"segment {s.path.name}: {name}.npy has the wrong length")
            for chunk in r.chunks():
                out.write(chunk)
                if name == "doclen":
                    total += int(chunk.sum(dtype=np.int64))
        out.finish()
    finally:
        out.close()
    return total


def _concat_blob(sources: list[_Source], dest: Path, name: str, n: int) -> None:
    """Concatenate ``<name>.bin`` files and their offsets (shifted) for ``n`` records in all."""
    base = 0
    out = _NpyWriter(dest / f"{name}.off.npy", np.int64, n + 1)
    try:
        out.write(np.zeros(1, dtype=np.int64))
        with open(dest / f"{name}.bin", "wb") as fh:
            for s in sources:
                r = s.reader(f"{name}.off", np.int64)
                if r.n < 1:
                    raise IndexCorruptError(f"segment {s.path.name}: {name}.off.npy is empty")
                size = int(r.read(r.n - 1, r.n)[0])
                path = s.path / f"{name}.bin"
                if not path.exists() or path.stat().st_size != size:
                    raise IndexCorruptError(f"segment {s.path.name}: {name}.bin has the wrong size")
                for chunk in r.chunks(1):
                    out.write(chunk + np.int64(base))
                with open(path, "rb") as src:
                    shutil.copyfileobj(src, fh, 1 << 20)
                base += size
        out.finish()
    finally:
        out.close()


def _docid_pieces(s: _Source, size: int) -> Iterator[Chunk]:
    """Yield a source's docids in docid order, in pieces: (docids, merged docnos)."""
    order = s.reader("docid_order", np.int32)
    off = load_array(s.path / "docid.off.npy")
    if order.n != s.n_docs or off.shape != (s.n_docs + 1,):
        raise IndexCorruptError(f"segment {s.path.name}: docid_order.npy has the wrong length")
    total = int(off[-1])
    path = s.path / "docid.bin"
    if not path.exists() or path.stat().st_size != total:
        raise IndexCorruptError(f"segment {s.path.name}: docid.bin has the wrong size")
    with open(path, "rb") as fh, contextlib.ExitStack() as stack:
        data: mmap.mmap | bytes = b""
        if total:
            data = stack.enter_context(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))

        def load(lo: int, hi: int) -> Chunk:
            idx = order.read(lo, hi).astype(np.int64)
            starts, ends = off[idx].tolist(), off[idx + 1].tolist()
            keys = list(map(data.__getitem__, map(slice, starts, ends)))
            return keys, idx + s.doc_offset

        yield from _whole_runs(load, s.n_docs, size)


def _merge_docid_order(
    sources: list[_Source], dest: Path, n_docs: int, cancel: CancelToken | None
) -> None:
    """Write the permutation sorting all docids by bytes, ties in docno order (a k-way merge)."""
    size = _piece_size(len(sources))
    out = _NpyWriter(dest / "docid_order.npy", np.int32, n_docs)
    try:
        for taken in _rounds([_docid_pieces(s, size) for s in sources], cancel):
            keys = list(itertools.chain.from_iterable(k for k, _ in taken))
            docs = np.concatenate([d for _, d in taken])
            # Stable: equal docids keep source order, and within a source docno order.
            perm = sorted(range(len(keys)), key=keys.__getitem__)
            out.write(docs[np.array(perm, dtype=np.int64)])
        out.finish()
    finally:
        out.close()


def merge_segments(
    sources: Sequence[Path],
    dest: Path,
    *,
    cancel: CancelToken | None = None,
    block_postings: int = 8_000_000,
) -> dict[str, int]:
    """Merge segment directories into the new segment ``dest`` and return its meta.

    The sources hold no deleted documents, and the documents of ``sources[i]`` follow those of
    ``sources[i - 1]``. ``dest`` must not exist; it ends up identical to the segment a single
    :class:`~bm25desk.engine.index.segment.SegmentWriter` would write from all those documents
    added in order. Postings are merged in blocks of about ``block_postings`` postings (~20 bytes
    each of memory). On failure or cancellation ``dest`` is removed and the exception re-raised.
    """
    if block_postings < 1:
        raise ValueError("block_postings must be at least 1")
    dest.mkdir(parents=True)  # raises FileExistsError when dest exists
    opened: list[_Source] = []
    try:
        offset = 0
        for path in sources:
            s = _Source(Path(path), offset)
            opened.append(s)
            offset += s.n_docs
        n_docs = offset
        if n_docs > _MAX_I32:
            raise ValueError("too many documents for one segment")
        _check(cancel)

        n_terms = _merge_vocabulary(opened, dest, cancel)
        total_len = _concat_arrays(opened, dest, "doclen", np.int32)
        doclen = np.load(dest / "doclen.npy", allow_pickle=False)
        ptr = _merged_ptr(opened, "ptr", n_terms)
        save_array(dest / "ptr.npy", ptr)
        _merge_body(opened, ptr, dest, doclen, block_postings, cancel)
        nnz = int(ptr[-1])
        del ptr, doclen
        tptr = _merged_ptr(opened, "tptr", n_terms)
        save_array(dest / "tptr.npy", tptr)
        _merge_postings(opened, tptr, ("tptr", "tdocs", None, None), dest, block_postings, cancel)
        del tptr
        for s in opened:
            s.close()
        _check(cancel)

        _concat_arrays(opened, dest, "mtime", np.float64)
        _concat_arrays(opened, dest, "size", np.int64)
        for name in ("docid", "title", "loc"):
            _concat_blob(opened, dest, name, n_docs)
            _check(cancel)
        _merge_text(opened, dest, cancel)
        _merge_docid_order(opened, dest, n_docs, cancel)
        meta = segment_meta(n_docs, n_terms, nnz, total_len)
        write_json(dest / "meta.json", meta)
        return meta
    except BaseException:
        for s in opened:
            s.close()
        shutil.rmtree(dest, ignore_errors=True)
        raise
    finally:
        for s in opened:
            s.close()
