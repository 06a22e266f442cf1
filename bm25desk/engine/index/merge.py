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
  per local term), and the merged ``ptr``/``tptr`` arrays (8 bytes per merged term each). The
  lexicon's hash is built from the written ``terms.bin`` (mapped) and its offsets (~12 bytes per
  merged term while it is built, compiled).
* **Postings.** The merged terms are cut into blocks of about ``block_postings`` postings. As the
  maps are monotone, a block of merged terms is a contiguous range of every source's term ids,
  hence a contiguous slice of its ``docs``/``tfs`` arrays, read with plain sequential file reads
  (no memory map, so the page cache is not charged to the process). Each slice is scattered to its
  place in the block — term by term in merged order, sources in order, documents shifted by the
  source's first docno — and the block is appended to the output. A single term with more
  postings than a block is copied source slice by source slice, in pieces.
* **Everything else.** Stored-field blobs are concatenated (offsets shifted); per-document arrays
  are concatenated; ``docid_order`` is a k-way merge of the sources' ``docid_order`` (ties keep
  docno order, like the stable sort in :func:`~bm25desk.engine.index.lexicon.sort_terms`).

``.npy`` files are written as a header for the known final shape followed by the data in pieces.
The result is identical, file for file and byte for byte, to the segment a single
:class:`~bm25desk.engine.index.segment_writer.SegmentWriter` would have written from all the
documents added in order — but for the compressed text, whose zstd frames are copied from the
sources (the same documents, cut into frames at the sources' boundaries too). Postings are decoded
and encoded again in blocks (a block of 128 never spans two sources' postings the way a copy would
leave it). Memory: 4 bytes per source term, ~24 bytes per merged term, ~40 bytes per posting of one
block (decoded, placed and encoded), the merged document lengths (4 bytes per document: the blocks'
frontiers need them), and ~25 MB for the rounds of the k-way merges.
"""

from __future__ import annotations

import contextlib
import itertools
import mmap
import shutil
from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from bm25desk.engine.index import termhash
from bm25desk.engine.index.arrays import (
    I32,
    IndexCorruptError,
    index_dtype,
    load_array,
    narrow,
    save_array,
)
from bm25desk.engine.index.blobs import Blob, map_file
from bm25desk.engine.index.kway import Chunk, rounds, split_records, whole_runs
from bm25desk.engine.index.layout import segment_meta, write_json
from bm25desk.engine.index.merge_postings import merge_body, merge_postings, merged_ptr
from bm25desk.engine.index.merge_source import MAX_I32, MergeSource, check_cancel
from bm25desk.engine.index.npyio import NpyWriter
from bm25desk.engine.index.textstore import ZBlob, ZBlobWriter
from bm25desk.engine.progress import CancelToken

__all__ = ["merge_segments"]


def _piece_size(n_streams: int) -> int:
    """Keys per piece and stream: ~256 k keys (~25 MB) loaded in all, at least 1 k per stream."""
    return max(1024, (1 << 18) // max(n_streams, 1))


def _lexicon_pieces(s: MergeSource, size: int) -> Iterator[Chunk]:
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
            return split_records(data, (o - o[0]).tolist()), np.arange(lo, hi, dtype=np.int64)

        yield from whole_runs(load, n, size)


def _merge_vocabulary(sources: list[MergeSource], dest: Path, cancel: CancelToken | None) -> int:
    """Write the union of the sources' lexicons to ``dest`` and set each source's term map."""
    size = _piece_size(len(sources))
    streams = [_lexicon_pieces(s, size) for s in sources]
    maps: list[list[I32]] = [[] for _ in sources]
    offsets = array("q", [0])
    n_terms = 0
    with open(dest / "terms.bin", "wb") as fh:
        for taken in rounds(streams, cancel):
            terms = sorted(set(itertools.chain.from_iterable(t for t, _ in taken)))
            if n_terms + len(terms) > MAX_I32:
                raise ValueError("too many terms for one segment")
            fh.write(b"".join(terms))
            lens = np.fromiter(map(len, terms), dtype=np.int64, count=len(terms))
            offsets.extend((np.cumsum(lens) + offsets[-1]).tolist())
            index = dict(zip(terms, range(n_terms, n_terms + len(terms)), strict=True))
            for pieces, (t, _) in zip(maps, taken, strict=True):
                pieces.append(np.fromiter(map(index.__getitem__, t), dtype=np.int32, count=len(t)))
            n_terms += len(terms)
    offs = np.frombuffer(offsets, dtype=np.int64)
    save_array(dest / "terms.off.npy", narrow(offs))
    data = map_file(dest / "terms.bin")
    try:
        termhash.write_table(dest, data, offs)
    finally:
        if isinstance(data, mmap.mmap):
            with contextlib.suppress(BufferError):  # a view still held: closed when freed
                data.close()
    for s, pieces in zip(sources, maps, strict=True):
        m = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
        if m.size > 1 and not bool(np.all(m[1:] > m[:-1])):
            # Only possible if two terms share their UTF-8 bytes (lone surrogates, replaced).
            raise IndexCorruptError(f"segment {s.path.name}: lexicon is not strictly sorted")
        s.map = m
    return n_terms


def _merge_text(sources: list[MergeSource], dest: Path, cancel: CancelToken | None) -> None:
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
            check_cancel(cancel)
        out.close()
    except BaseException:
        out.abort()
        raise


def _concat_arrays(
    sources: list[MergeSource], dest: Path, name: str, dtype: type[np.generic]
) -> int:
    """Concatenate a per-document array; return the sum of its elements when it is ``doclen``."""
    total = 0
    n = sum(s.n_docs for s in sources)
    out = NpyWriter(dest / f"{name}.npy", dtype, n)
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


def _concat_blob(sources: list[MergeSource], dest: Path, name: str, n: int) -> None:
    """Concatenate ``<name>.bin`` files and their offsets (shifted) for ``n`` records in all."""
    base = 0
    readers = [s.reader(f"{name}.off", np.int64) for s in sources]
    sizes = []
    for s, r in zip(sources, readers, strict=True):
        if r.n < 1:
            raise IndexCorruptError(f"segment {s.path.name}: {name}.off.npy is empty")
        sizes.append(int(r.read(r.n - 1, r.n)[0]))
    out = NpyWriter(dest / f"{name}.off.npy", index_dtype(sum(sizes)), n + 1)
    try:
        out.write(np.zeros(1, dtype=np.int64))
        with open(dest / f"{name}.bin", "wb") as fh:
            for s, r, size in zip(sources, readers, sizes, strict=True):
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


def _docid_pieces(s: MergeSource, size: int) -> Iterator[Chunk]:
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

        yield from whole_runs(load, s.n_docs, size)


def _merge_docid_order(
    sources: list[MergeSource], dest: Path, n_docs: int, cancel: CancelToken | None
) -> None:
    """Write the permutation sorting all docids by bytes, ties in docno order (a k-way merge)."""
    size = _piece_size(len(sources))
    out = NpyWriter(dest / "docid_order.npy", np.int32, n_docs)
    try:
        for taken in rounds([_docid_pieces(s, size) for s in sources], cancel):
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
    :class:`~bm25desk.engine.index.segment_writer.SegmentWriter` would write from all those
    documents added in order. Postings are merged in blocks of about ``block_postings`` postings
    (~20 bytes each of memory). On failure or cancellation ``dest`` is removed and the exception
    re-raised.
    """
    if block_postings < 1:
        raise ValueError("block_postings must be at least 1")
    dest.mkdir()  # FileExistsError when dest exists; its folder must exist (see SegmentWriter)
    opened: list[MergeSource] = []
    try:
        offset = 0
        for path in sources:
            s = MergeSource(Path(path), offset)
            opened.append(s)
            offset += s.n_docs
        n_docs = offset
        if n_docs > MAX_I32:
            raise ValueError("too many documents for one segment")
        check_cancel(cancel)

        n_terms = _merge_vocabulary(opened, dest, cancel)
        total_len = _concat_arrays(opened, dest, "doclen", np.int32)
        doclen = np.load(dest / "doclen.npy", allow_pickle=False)
        ptr = merged_ptr(opened, "ptr", n_terms)
        save_array(dest / "ptr.npy", narrow(ptr))
        merge_body(opened, ptr, dest, doclen, block_postings, cancel)
        nnz = int(ptr[-1])
        del ptr, doclen
        tptr = merged_ptr(opened, "tptr", n_terms)
        save_array(dest / "tptr.npy", narrow(tptr))
        merge_postings(opened, tptr, ("tptr", "tdocs", None, None), dest, block_postings, cancel)
        del tptr
        for s in opened:
            s.close()
        check_cancel(cancel)

        _concat_arrays(opened, dest, "mtime", np.float64)
        _concat_arrays(opened, dest, "size", np.int64)
        for name in ("docid", "title", "loc"):
            _concat_blob(opened, dest, name, n_docs)
            check_cancel(cancel)
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
