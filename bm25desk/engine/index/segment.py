"""Immutable index segments opened memory-mapped: lexicon, postings, lengths and stored documents.

Opening a segment reads nothing but its small ``meta.json``, so opening an index never loads its
postings. The files are described in :mod:`~bm25desk.engine.index.layout`; they are written by
:class:`~bm25desk.engine.index.segment_writer.SegmentWriter` or merged by
:func:`~bm25desk.engine.index.merge.merge_segments`. The names that used to live here are
re-exported, so ``from bm25desk.engine.index.segment import ...`` keeps working.
"""

from __future__ import annotations

import mmap
import time
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import (
    F64,
    I32,
    I64,
    RANDOM,
    WILLNEED,
    IndexCorruptError,
    advise,
    advise_range,
    load_array,
    map_under,
    read_through,
    save_array,
)
from bm25desk.engine.index.blobs import Blob, BlobWriter, map_file, name_bytes
from bm25desk.engine.index.layout import (
    BLOCK_FILES,
    COMMON_FILES,
    FORMAT,
    OLD_FILES,
    read_json,
    read_meta,
    segment_files,
    segment_meta,
    write_json,
)
from bm25desk.engine.index.lexicon import Lexicon, sort_terms, write_lexicon
from bm25desk.engine.index.postings_writer import PostingsWriter, write_postings
from bm25desk.engine.index.segment_writer import SegmentWriter, TermIds
from bm25desk.engine.index.textstore import ZBlob

__all__ = [
    "BLOCK_FILES",
    "COMMON_FILES",
    "F64",
    "FORMAT",
    "I32",
    "I64",
    "OLD_FILES",
    "Blob",
    "BlobWriter",
    "IndexCorruptError",
    "Lexicon",
    "PostingsWriter",
    "Segment",
    "SegmentWriter",
    "TermIds",
    "load_array",
    "map_in",
    "name_bytes",
    "plan_read_ahead",
    "read_json",
    "read_meta",
    "save_array",
    "segment_files",
    "segment_meta",
    "sort_terms",
    "write_json",
    "write_lexicon",
    "write_postings",
]


WHOLE_READ_AHEAD = 16 << 20
"""An index whose segments' ``blocks.bin`` files add up to at most this has them asked for whole
when it is opened for searching, and its terms' blocks are then not asked for one by one
(:meth:`Segment.prefetch`: a system call per new term, ~4 µs of a SciFact query's ~90 on its
first pass). A larger one (1 M passages: ~94 MB) is read a term at a time, as its queries need
it, except for what the page cache holds already (:meth:`Segment._resident_map`); so is any
index of many small segments, whose sum is what a cold open would read."""


RESIDENT_EVERY = (0.25, 5.0)
"""The fewest and most seconds between two residency maps of a segment's blocks.bin
(:meth:`Segment._resident_map`)."""


def plan_read_ahead(segments: list[Segment]) -> None:
    """Ask for every segment's blocks.bin whole if together they are small (see above).

    Else take the map of which of their pages are in memory (:meth:`Segment._resident_map`) at
    open rather than in the first query (~1 ms for 94 MB): terms in memory are not asked for.
    """
    mapped = [s for s in segments if s.format >= 3 and isinstance(s.blocks, mmap.mmap)]
    if not mapped:
        return
    if len(mapped) < len(segments) or sum(len(s.blocks) for s in mapped) > WHOLE_READ_AHEAD:
        fast = blocks._blocks
        if fast is not None and WILLNEED is not None:
            for seg in mapped:
                seg._resident_map(fast)
        return
    for seg in mapped:
        advise(seg.blocks, WILLNEED)
        seg.read_ahead_whole = True


MAP_IN_LIMIT = 256 << 20
"""Bytes of an index's maps, at most, that opening it for searching maps in (:func:`map_in`)."""


def map_in(maps: list[Any], limit: int = MAP_IN_LIMIT) -> int:
    """Put the pages of ``maps`` that are in memory into the page tables; the bytes mapped in.

    A query's first touch of a page of a map costs a page fault even when the page cache holds
    the page (a few µs in a VM: 1 M passages, rare-term queries, fresh process, 1-2 faults and
    up to ~24 µs of system time a query on their first pass). Mapped in at open, ~0.2 µs a page
    (160 MB of the 1 M index in ~8 ms), they cost the queries nothing. Only pages in memory
    are taken, in the order given, at most ``limit`` bytes: nothing is read from the device.
    Finding them costs ~0.4 ms for 100 MB of maps (mincore), so maps are looked at up to
    four times ``limit`` in all: a cold open of a large index (nothing in memory) costs at most
    a few ms more. Nothing where the system cannot (-1 from the compiled call: not Linux, or a
    kernel before 5.14).
    """
    fast = blocks._blocks
    done = scanned = 0
    if fast is None:
        return done
    for data in maps:
        if not isinstance(data, mmap.mmap) or done >= limit or scanned + len(data) > 4 * limit:
            continue
        scanned += len(data)
        got = int(fast.map_in(data, limit - done))
        if got < 0:
            break
        done += got
    return done


class Segment:
    """An immutable segment opened memory-mapped (its files: :mod:`~bm25desk.engine.index.layout`).

    Segments of format 1 and 2 (``docs.npy``/``tfs.npy``, plain ``text.bin``) are read as they
    are; :meth:`postings` returns the same arrays for every format.
    """

    read_ahead_whole = False
    """Whether blocks.bin was asked for whole (a small index: :func:`plan_read_ahead`)."""

    _resident: bytes | None = None  # blocks.bin's residency map (see _resident_map)
    _resident_until = -1.0  # when it is to be taken again (time.monotonic())

    def __init__(self, directory: Path) -> None:
        self.path = directory
        meta = read_meta(directory)
        self.format = meta["format"]
        self.n_docs = meta["n_docs"]
        self.total_len = meta["total_len"]
        self.nnz = meta["nnz"]
        self.lexicon = Lexicon(directory)
        # Offsets and counts: uint32 or int64 (see layout); read as they are, never copied.
        # Read-ahead (a cold cache): the per-term arrays and the lengths are left to the
        # kernel's read-around (the first queries read them through, or nearly); what is read
        # per document shown is read a page at a time (not megabytes around each), and so are
        # the blocks, which each term's first look-up asks for exactly (prefetch).
        self.ptr: I64 = load_array(directory / "ptr.npy")
        self.cf: I64 = load_array(directory / "cf.npy")
        self.tptr: I64 = load_array(directory / "tptr.npy", advice=RANDOM)
        self.tdocs: I32 = load_array(directory / "tdocs.npy", advice=RANDOM)
        self.doclen: I32 = load_array(directory / "doclen.npy")
        self.docid_order: I32 = load_array(directory / "docid_order.npy", advice=RANDOM)
        self.docids = Blob(directory, "docid", names=True, advice=RANDOM)
        self.titles = Blob(directory, "title", advice=RANDOM)
        self.locations = Blob(directory, "loc", names=True, advice=RANDOM)
        self.mtime: F64 = load_array(directory / "mtime.npy", advice=RANDOM)
        self.size: I64 = load_array(directory / "size.npy", advice=RANDOM)
        self.texts: Blob | ZBlob
        if self.format >= 3:
            self._open_blocks(directory, meta)
            self.texts = ZBlob(directory, "text")
        else:
            self.docs: I32 = load_array(directory / "docs.npy")
            self.tfs: I32 = load_array(directory / "tfs.npy")
            self.texts = Blob(directory, "text")
        n_terms = len(self.lexicon)
        if (
            len(self.ptr) != n_terms + 1
            or len(self.tptr) != n_terms + 1
            or len(self.doclen) != self.n_docs
            or len(self.docids) != self.n_docs
            or int(self.ptr[-1]) != self.nnz
            or (self.format < 3 and (len(self.docs) != self.nnz or len(self.tfs) != self.nnz))
        ):
            raise IndexCorruptError(f"segment {directory.name}: arrays disagree in size")

    def _open_blocks(self, directory: Path, meta: dict[str, int]) -> None:
        """Open the block-compressed postings (format 3) and check their sizes."""
        self.shift, self.cap = meta["shift"], meta["cap"]
        self.bptr: I64 = load_array(directory / "bptr.npy")
        self.blk_last: I32 = load_array(directory / "blk_last.npy")
        self.blk_off: I64 = load_array(directory / "blk_off.npy")
        self.blocks = map_file(directory / "blocks.bin", advice=RANDOM)
        self.ovf: I64 = load_array(directory / "ovf.npy")
        self.ovf_doc: I32 = load_array(directory / "ovf_doc.npy")
        self.ovf_tf: I32 = load_array(directory / "ovf_tf.npy")
        self.tfront_term: I32 = load_array(directory / "tfront_term.npy")
        self.tfront_off: I64 = load_array(directory / "tfront_off.npy")
        self.tfront = map_file(directory / "tfront.bin")
        # What the kernel reads for a term (topk.py hands it over as one tuple), as memoryviews:
        # the kernel takes all nine buffers per new term (and per one-call query), and a
        # memoryview hands its buffer over in a few dozen instructions where numpy builds its
        # format info each time (~1,000: 1.8 % of a SciFact first pass's instructions).
        self.kernel_arrays = tuple(
            memoryview(a)  # type: ignore[arg-type]  # (numpy arrays and maps are buffers)
            for a in (
                self.blocks,
                self.blk_off,
                self.blk_last,
                self.ptr,
                self.bptr,
                self.ovf,
                self.tfront_term,
                self.tfront_off,
                self.tfront,
            )
        )
        n_blocks = len(self.blk_last)
        for name, data, size in (
            (
                "blocks.bin",
                self.blocks,
                int(self.blk_off[-1]) + blocks.PAD if n_blocks + 1 == len(self.blk_off) else -1,
            ),
            ("tfront.bin", self.tfront, int(self.tfront_off[-1]) if len(self.tfront_off) else -1),
        ):
            if len(data) != size:
                raise IndexCorruptError(f"index file damaged: {name} has the wrong size")
        if (
            len(self.bptr) != len(self.ptr)
            or len(self.blk_off) != n_blocks + 1
            or (len(self.bptr) and int(self.bptr[-1]) != n_blocks)
            or not len(self.ovf) == len(self.ovf_doc) == len(self.ovf_tf)
            or len(self.tfront_off) != len(self.tfront_term) + 1
        ):
            raise IndexCorruptError(f"segment {directory.name}: block arrays disagree in size")

    def prefetch(self, term_id: int, end: int | None = None) -> None:
        """Ask the kernel to read the blocks of terms ``[term_id, end)`` in one request.

        ``end`` defaults to the next term. blocks.bin is mapped without read-around (a query
        reads a few terms' blocks, not megabytes around each): whatever reads blocks through
        the map asks for them first. A hint: nothing is read or checked here, and term ids or
        offsets out of range are ignored (decoding checks them and reports the damage).
        Nothing when the whole file was asked for (:attr:`read_ahead_whole`).
        """
        data = self.blocks if self.format >= 3 else None
        end = term_id + 1 if end is None else end
        if not isinstance(data, mmap.mmap) or WILLNEED is None or self.read_ahead_whole:
            return
        fast = blocks._blocks  # read per call: the compiled codec can be switched off (tests)
        if fast is not None:  # the same hint in one call: ~1 µs instead of ~6 (a query's new term)
            fast.prefetch(data, self.blk_off, self.bptr, term_id, end, self._resident_map(fast))
            return
        if not 0 <= term_id < end < len(self.bptr):
            return
        b0, b1 = int(self.bptr[term_id]), int(self.bptr[end])
        if not 0 <= b0 < b1 < len(self.blk_off):
            return
        a, z = int(self.blk_off[b0]), int(self.blk_off[b1])
        if 0 <= a < z <= len(data):
            start = a - a % mmap.PAGESIZE
            advise_range(data, WILLNEED, start, z - start)

    def prefetch_many(self, term_ids: list[int]) -> None:
        """Do :meth:`prefetch` for each of ``term_ids`` (a query's new terms), in one call."""
        data = self.blocks if self.format >= 3 else None
        fast = blocks._blocks
        if self.read_ahead_whole:
            return
        if not isinstance(data, mmap.mmap) or WILLNEED is None or fast is None:
            for t in term_ids:
                self.prefetch(t)
            return
        fast.prefetch_many(data, self.blk_off, self.bptr, term_ids, self._resident_map(fast))

    def _resident_map(self, fast: Any) -> bytes | None:
        """Return which pages of blocks.bin are in memory (a byte each), taken at most so often.

        A term whose blocks (up to 16 pages) are all in memory is not asked for: on an index the
        page cache holds, as one just built or searched is, the call finds every page there and
        reads nothing, ~1.5 µs a new term (8 % of a 1 M-passage rare-term query's first pass).
        The map is retaken after a thousand times what taking it cost (~0.4 ms for 94 MB: every
        0.4 s), between :data:`RESIDENT_EVERY` s; a page dropped meanwhile is read when the
        query needs it, as without the hint. None where the system cannot tell: every term is
        asked for.
        """
        now = time.monotonic()
        if now < self._resident_until:
            return self._resident
        started = time.perf_counter()
        self._resident = fast.resident(self.blocks)
        cost = time.perf_counter() - started
        lo, hi = RESIDENT_EVERY
        self._resident_until = now + min(hi, max(lo, 1000 * cost))
        return self._resident

    def query_maps(self) -> tuple[list[Any], list[Any]]:
        """Return the maps a query reads (for :func:`map_in`), and apart its postings' maps.

        The first list: the lexicon's, the per-term and the per-document arrays; the second,
        much larger: the postings (blocks.bin; docs and tfs in formats 1 and 2).
        """
        arrays = [self.ptr, self.cf, self.doclen]
        if self.format >= 3:
            arrays += [self.bptr, self.blk_last, self.blk_off, self.ovf, self.ovf_doc]
            arrays += [self.ovf_tf, self.tfront_term, self.tfront_off, self.tfront]
            postings = [self.blocks]
        else:
            postings = [map_under(self.docs), map_under(self.tfs)]
        return [*self.lexicon.maps(), *map(map_under, arrays)], postings

    def read_through(self) -> None:
        """Ask the kernel to read every map of the segment whole, in the background.

        For whatever reads the segment from end to end (its full check, an update's pass over
        its documents): the maps that queries read a page at a time would fault page by page.
        """
        read_through(self.tptr, self.tdocs, self.docid_order, self.mtime, self.size)
        for blob in (self.docids, self.titles, self.locations, self.texts):
            blob.read_through()
        if self.format >= 3:
            advise(self.blocks, WILLNEED)

    def postings(self, term_id: int) -> tuple[I32, I32]:
        """Return the (local docnos, tfs) of a term id."""
        a, b = int(self.ptr[term_id]), int(self.ptr[term_id + 1])
        if self.format < 3:
            return self.docs[a:b], self.tfs[a:b]
        return self.postings_range(term_id, term_id + 1)

    def postings_range(self, t0: int, t1: int) -> tuple[I32, I32]:
        """Return the postings of terms ``[t0, t1)`` back to back (decoded, checked)."""
        if self.format < 3:
            a, b = int(self.ptr[t0]), int(self.ptr[t1])
            return np.asarray(self.docs[a:b]), np.asarray(self.tfs[a:b])
        # Only the blocks of these terms (the codec widens narrow offsets: a slice, not the file).
        self.prefetch(t0, t1)
        bp = np.asarray(self.bptr[t0 : t1 + 1], dtype=np.int64)
        b0, b1 = int(bp[0]), int(bp[-1])
        try:
            return blocks.decode(
                self.blocks,
                self.blk_off[b0 : b1 + 1],
                self.blk_last[b0:b1],
                bp - b0,
                self.ptr[t0 : t1 + 1],
                self.n_docs,
                self.cap,
                self.shift,
            )
        except blocks.BlockError as exc:
            raise IndexCorruptError(f"segment {self.path.name}: postings damaged ({exc})") from None

    def overflow(self, term_id: int) -> tuple[I32, I32, I32]:
        """Return a term's postings with tf > cap (format 3): positions in its list, docnos, tfs."""
        a, b = int(self.ptr[term_id]), int(self.ptr[term_id + 1])
        i, j = np.searchsorted(self.ovf, [a, b]).tolist()
        pos = np.asarray(self.ovf[i:j]) - a
        return pos.astype(np.int32), np.asarray(self.ovf_doc[i:j]), np.asarray(self.ovf_tf[i:j])

    def frontier(self, term_id: int) -> bytes | None:
        """Return the stored frontier of a term of several blocks (None for one block or none)."""
        i = int(np.searchsorted(self.tfront_term, term_id))
        if i < len(self.tfront_term) and int(self.tfront_term[i]) == term_id:
            return bytes(self.tfront[int(self.tfront_off[i]) : int(self.tfront_off[i + 1])])
        return None

    def title_postings(self, term_id: int) -> I32:
        """Return the local docnos whose title contains the term."""
        return self.tdocs[int(self.tptr[term_id]) : int(self.tptr[term_id + 1])]

    def find_docid(self, docid: str) -> int:
        """Return the local docno of ``docid`` or -1 (binary search over the sorted order)."""
        key = name_bytes(docid)
        order = self.docid_order
        lo, hi = 0, len(order)
        while lo < hi:
            mid = (lo + hi) // 2
            probe = self.docids.get_bytes(int(order[mid]))
            if probe < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(order) and self.docids.get_bytes(int(order[lo])) == key:
            return int(order[lo])
        return -1
