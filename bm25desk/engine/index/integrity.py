"""Checksums and structural checks: a damaged index is detected, never read out of bounds.

**Checksums.** Every file of a generation has its size and XXH3-64 hash in the manifest (xxHash:
13 GB/s on this machine, as fast as hardware CRC32C and 64 bits wide; see the report in
``docs``). Hashing a large index at every open would cost seconds, so a file's verification is
remembered in ``.stamps.json`` by its (inode, size, mtime, ctime): any later write, truncation or
replacement changes the ctime, and the next open hashes the file again. Stamps are only taken
for files whose ctime is at least :data:`RACY_SECONDS` old (file times are coarse: a write in the
same clock tick as the stamp could otherwise go unseen) — as Mercurial does for its dirstate.
``bm25desk check`` hashes everything regardless.

**Structure.** When a file is new to this machine's stamps (or the index has no checksums), its
segment gets the full check: CSR pointers and blob offsets start at 0, never decrease and end at
their arrays' sizes, lengths sum to the recorded total, every posting's document within bounds
and ascending per term, term frequencies positive, the lexicon sorted (and its hash, where it has
one, the table its terms give), the docid order a permutation — so the C kernel can never read
out of bounds. Only then are the files stamped: a
stamp stands for the checksum *and* the structure (and, on ``manifest.json``, for the
statistics checked against the arrays), so an open whose stamps all match reads nothing
through — dtypes, shapes and the ends of pointer arrays, a page per file (issue 15: 1 M
passages open in a few milliseconds instead of ~100). What a stamp cannot see (a file's bytes
rotting in place on disk, with the same times) is still never read out of bounds: the kernel
checks each term's ranges and every block as it decodes it (``bm25desk check`` reads all).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import INDEX_DTYPES, IndexCorruptError
from bm25desk.engine.index.layout import FORMAT, segment_files
from bm25desk.engine.index.segment import Segment
from bm25desk.engine.index.textstore import ZBlob

RACY_SECONDS = 2.0
"""A file changed this recently is verified again at the next open rather than stamped."""
FINE_RACY_SECONDS = 0.05
"""The same on a file system that keeps sub-second times: Linux advances file times one clock
tick (1-10 ms) at a time, so 50 ms is five ticks. A file whose mtime and ctime both have a
sub-second part comes from such a file system (FAT's 2 s mtimes have none)."""


def racy_seconds(st: os.stat_result) -> float:
    """Return how old a file's ctime must be before its state can be stamped."""
    fine = st.st_mtime_ns % 1_000_000_000 and st.st_ctime_ns % 1_000_000_000
    return FINE_RACY_SECONDS if fine else RACY_SECONDS


STAMPS = ".stamps.json"

SEGMENT_FILES = segment_files(FORMAT)
"""The files of a segment written now (older segments: :func:`segment_files` of their format)."""
LEXICON_FILES = ("terms.bin", "terms.off.npy", "df.npy", "cf.npy")

_READ = 1 << 22


def file_checksum(path: Path) -> str:
    """Return the XXH3-64 hash of a file's content as 16 hex digits (streamed)."""
    h = xxhash.xxh3_64()
    with open(path, "rb") as fh:
        while chunk := fh.read(_READ):
            h.update(chunk)
    return h.hexdigest()


def checksum_entries(directory: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """Return ``{relative path: {"size", "xxh3"}}`` for every file under the named entries."""
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        p = directory / name
        paths = sorted(q for q in p.rglob("*") if q.is_file()) if p.is_dir() else [p]
        for q in paths:
            rel = q.relative_to(directory).as_posix()
            out[rel] = {"size": q.stat().st_size, "xxh3": file_checksum(q)}
    return out


class Stamps:
    """The remembered verifications of an index's files (a cache: losing it costs a re-hash).

    A stamp means: this file, in this state, matched its checksum *and* passed the full
    structural check of its segment (or, for ``manifest.json``, the statistics check) — so an
    open that finds every stamp matching checks nothing that reads an array through.
    ``read=False``: start empty (nothing is trusted).
    """

    def __init__(self, directory: Path, read: bool = True) -> None:
        self.path = directory / STAMPS
        self.entries: dict[str, list[Any]] = {}
        self.changed = False
        if not read:
            return
        with contextlib.suppress(OSError, ValueError, TypeError):
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict):
                self.entries = {k: v for k, v in data.items() if isinstance(v, list)}

    @staticmethod
    def key(st: os.stat_result, checksum: str | None) -> list[Any]:
        """Return the stamp of a file's state and the checksum it was verified against."""
        return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, checksum]

    def fresh(self, rel: str, st: os.stat_result, checksum: str | None) -> bool:
        """Return whether the file must be verified (no stamp matches its current state)."""
        return self.entries.get(rel) != self.key(st, checksum)

    def stamp(self, rel: str, st: os.stat_result, checksum: str | None) -> None:
        """Remember a verification, unless the file changed too recently to be sure."""
        if time.time() - st.st_ctime_ns / 1e9 >= racy_seconds(st):
            self.entries[rel] = self.key(st, checksum)
            self.changed = True

    def save(self, keep: set[str]) -> None:
        """Write the stamps of the files in ``keep`` (best effort: a read-only index is fine)."""
        if not self.changed or not self.path.parent.is_dir():
            return
        data = {k: v for k, v in self.entries.items() if k in keep}
        tmp = self.path.with_name(f"{STAMPS}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)


def verify_files(
    directory: Path,
    manifest: dict[str, Any],
    expected: list[str],
    force: bool = False,
    stamps: Stamps | None = None,
) -> set[str]:
    """Check the size and checksum of every file in ``expected`` (relative paths).

    Files whose stamp in ``stamps`` matches are trusted without reading them (unless
    ``force``); the files verified now are stamped there, and the caller saves the stamps once
    its structural checks have passed too (a stamp stands for both). Returns the files verified
    now — their segments get the full structural check. Without checksums (a format 1 index)
    only stamps are compared.

    Raises
    ------
    IndexCorruptError
        On a missing file, a wrong size, a checksum mismatch or a file the manifest does not list.
    """
    listed = manifest.get("files")
    if manifest.get("format", 1) >= 2 and not isinstance(listed, dict):
        raise IndexCorruptError("manifest.json has lost its checksums")
    if stamps is None:
        stamps = Stamps(directory, read=False)
    fresh: set[str] = set()
    for rel in expected:
        entry = None
        if isinstance(listed, dict):
            entry = listed.get(rel)
            if not isinstance(entry, dict):
                raise IndexCorruptError(f"manifest.json does not list {rel}")
        try:
            st = os.stat(directory / rel)
        except FileNotFoundError as exc:
            raise IndexCorruptError(f"index file missing: {rel}") from exc
        checksum = None if entry is None else str(entry.get("xxh3"))
        if entry is not None and st.st_size != entry.get("size"):
            raise IndexCorruptError(f"index file damaged: {rel} has the wrong size")
        if not force and not stamps.fresh(rel, st, checksum):
            continue
        if checksum is not None and file_checksum(directory / rel) != checksum:
            raise IndexCorruptError(f"index file damaged: {rel} (checksum mismatch)")
        fresh.add(rel)
        stamps.stamp(rel, st, checksum)
    return fresh


# -- structure ------------------------------------------------------------------------------------


def _bad(seg: Segment, what: str) -> IndexCorruptError:
    return IndexCorruptError(f"segment {seg.path.name}: {what}")


_OFFSETS = "offsets"
"""The dtype of an offset or count array: int64 up to format 3; from format 4 uint32 or int64."""


def _check_array(seg: Segment, name: str, arr: Any, dtype: Any, length: int) -> None:
    if dtype is _OFFSETS:
        ok = arr.dtype in INDEX_DTYPES if seg.format >= 4 else arr.dtype == np.int64
    else:
        ok = arr.dtype == np.dtype(dtype)
    if not ok or arr.shape != (length,):
        raise _bad(seg, f"{name} has the wrong type or size")


def _check_pointers(seg: Segment, name: str, ptr: Any, end: int, order: bool) -> None:
    """Check a CSR pointer or offset array: starts at 0, ends at ``end``, never decreases.

    The last (reading the whole array) only when ``order``.
    """
    if len(ptr) == 0 or int(ptr[0]) != 0 or int(ptr[-1]) != end:
        raise _bad(seg, f"{name} does not fit its data")
    # Compared, not differenced: a difference of unsigned offsets cannot go below 0.
    if order and len(ptr) > 1 and bool((ptr[1:] < ptr[:-1]).any()):
        raise _bad(seg, f"{name} is not in order")


def check_segment(seg: Segment, meta_nnz: int, full: bool, deep: bool = False) -> None:
    """Check a segment's structure: what costs nothing always, everything when ``full``.

    Not ``full`` (every file of the segment verified on this machine before, with this check,
    and unchanged since: see :class:`Stamps`): types, sizes and the ends of every pointer array
    — nothing that reads an array through. ``full``: every pointer array in order, the lengths'
    total, every posting, the lexicon's order and hash, the docid permutation. ``deep`` (``bm25desk
    check``) also re-encodes every block and decompresses every frame of stored text (a search
    reads only the frames of the documents it shows, each checked as it is read).
    """
    order = full or deep
    n_docs, n_terms = seg.n_docs, len(seg.lexicon)
    nnz = int(seg.ptr[-1]) if len(seg.ptr) else 0
    if meta_nnz != nnz:
        raise _bad(seg, "meta.json does not match its postings")
    arrays = [
        ("ptr.npy", seg.ptr, _OFFSETS, n_terms + 1),
        ("tptr.npy", seg.tptr, _OFFSETS, n_terms + 1),
        ("cf.npy", seg.cf, _OFFSETS, n_terms),
        ("tdocs.npy", seg.tdocs, np.int32, len(seg.tdocs)),
        ("doclen.npy", seg.doclen, np.int32, n_docs),
        ("docid_order.npy", seg.docid_order, np.int32, n_docs),
        ("mtime.npy", seg.mtime, np.float64, n_docs),
        ("size.npy", seg.size, np.int64, n_docs),
    ]
    if seg.format >= 3:
        arrays += _block_arrays(seg, n_terms)
    else:
        arrays += [("docs.npy", seg.docs, np.int32, nnz), ("tfs.npy", seg.tfs, np.int32, nnz)]
    for name, arr, dtype, length in arrays:
        _check_array(seg, name, arr, dtype, length)
    _check_pointers(seg, "ptr.npy", seg.ptr, nnz, order)
    _check_pointers(seg, "tptr.npy", seg.tptr, len(seg.tdocs), order)
    if seg.format >= 3:
        _check_block_pointers(seg, nnz, n_terms, order)
    for blob_name, blob in (
        ("docid", seg.docids),
        ("title", seg.titles),
        ("loc", seg.locations),
        ("text", seg.texts),
    ):
        kind = np.int64 if blob_name == "text" else _OFFSETS  # text.off: int64 in every format
        _check_array(seg, f"{blob_name}.off.npy", blob.offsets, kind, n_docs + 1)
        _check_pointers(seg, f"{blob_name}.off.npy", blob.offsets, int(blob.offsets[-1]), order)
    if isinstance(seg.texts, ZBlob):
        _check_frames(seg, seg.texts, order)
    _check_array(seg, "terms.off.npy", seg.lexicon.offsets, _OFFSETS, n_terms + 1)
    lex_end = int(seg.lexicon.offsets[-1])
    _check_pointers(seg, "terms.off.npy", seg.lexicon.offsets, lex_end, order)
    if not order:
        return
    seg.read_through()  # what follows reads it all
    lens = np.asarray(seg.doclen)
    if n_docs and (int(lens.min()) < 0 or int(lens.sum(dtype=np.int64)) != seg.total_len):
        raise _bad(seg, "document lengths do not add up to meta.json's total")
    _full_check(seg, deep)
    if deep and isinstance(seg.texts, ZBlob):
        for f in range(len(seg.texts.zdoc) - 1):
            seg.texts.frame(f)  # decompresses and checks its size


def _block_arrays(seg: Segment, n_terms: int) -> list[tuple[str, Any, Any, int]]:
    """Return the arrays of block-compressed postings (format 3) with their types and lengths."""
    n_blocks, n_ovf, n_front = len(seg.blk_last), len(seg.ovf), len(seg.tfront_term)
    return [
        ("bptr.npy", seg.bptr, _OFFSETS, n_terms + 1),
        ("blk_last.npy", seg.blk_last, np.int32, n_blocks),
        ("blk_off.npy", seg.blk_off, _OFFSETS, n_blocks + 1),
        ("ovf.npy", seg.ovf, np.int64, n_ovf),
        ("ovf_doc.npy", seg.ovf_doc, np.int32, n_ovf),
        ("ovf_tf.npy", seg.ovf_tf, np.int32, n_ovf),
        ("tfront_term.npy", seg.tfront_term, np.int32, n_front),
        ("tfront_off.npy", seg.tfront_off, np.int64, n_front + 1),
    ]


def _check_block_pointers(seg: Segment, nnz: int, n_terms: int, order: bool) -> None:
    """Block pointers and offsets in range; in order, blocks per term as its postings need."""
    _check_pointers(seg, "bptr.npy", seg.bptr, len(seg.blk_last), order)
    _check_pointers(seg, "blk_off.npy", seg.blk_off, len(seg.blocks) - blocks.PAD, order)
    _check_pointers(seg, "tfront_off.npy", seg.tfront_off, len(seg.tfront), order)
    if not order:
        return
    size = 1 << seg.shift
    if bool((np.diff(seg.bptr) != (np.diff(seg.ptr) + size - 1) >> seg.shift).any()):
        raise _bad(seg, "bptr.npy does not match the postings per term")
    for name, arr, hi in (("ovf.npy", seg.ovf, nnz), ("tfront_term.npy", seg.tfront_term, n_terms)):
        a = np.asarray(arr)
        if a.size and (int(a[0]) < 0 or int(a[-1]) >= hi or bool((np.diff(a) <= 0).any())):
            raise _bad(seg, f"{name} is out of order or out of range")


def _check_frames(seg: Segment, blob: ZBlob, order: bool) -> None:
    """Check the frames of compressed text: covering the file and every document, in order."""
    _check_pointers(seg, f"{blob.name}.zoff.npy", blob.zoff, blob.size, order)
    _check_pointers(seg, f"{blob.name}.zdoc.npy", blob.zdoc, seg.n_docs, order)
    for name, arr in ((f"{blob.name}.zoff.npy", blob.zoff), (f"{blob.name}.zdoc.npy", blob.zdoc)):
        if arr.dtype != np.int64:
            raise _bad(seg, f"{name} has the wrong type or size")


def _full_check(seg: Segment, deep: bool) -> None:
    """Check every posting, the lexicon order and the docid permutation (O(size of segment))."""
    if seg.format >= 3:
        _full_check_blocks(seg, deep)
    else:
        _check_csr(seg, "docs.npy", np.asarray(seg.docs), np.asarray(seg.ptr))
        tfs = np.asarray(seg.tfs)
        if tfs.size and int(tfs.min()) < 1:
            raise _bad(seg, "tfs.npy holds a term frequency below 1")
    _check_csr(seg, "tdocs.npy", np.asarray(seg.tdocs), np.asarray(seg.tptr))
    order = np.asarray(seg.docid_order)
    if order.size and (
        int(order.min()) < 0
        or int(order.max()) >= seg.n_docs
        or np.bincount(order, minlength=seg.n_docs).max() != 1
    ):
        raise _bad(seg, "docid_order.npy is not a permutation")
    ok = seg.lexicon.strictly_sorted()
    if ok is None:
        terms = [seg.lexicon.term_bytes(i) for i in range(len(seg.lexicon))]
        ok = not any(a >= b for a, b in itertools.pairwise(terms))
    if not ok:
        raise _bad(seg, "the lexicon is not sorted")
    if not seg.lexicon.check_hash():
        raise _bad(seg, "terms.hash.npy does not match the lexicon")


_RUN = 1 << 22
"""Postings decoded at a time by the full check."""


def _full_check_blocks(seg: Segment, deep: bool) -> None:
    """Decode every block (each checked: sizes, widths, docnos, tfs, frontier entries in range).

    ``deep`` also re-encodes every block and compares it byte for byte (so each frontier is the
    one its postings give), and checks the overflow lists, the collection frequencies and the
    terms' frontiers. That reads every posting's document length (random access: ~1 s per 10 M
    postings), so it is ``bm25desk check``'s; at open, the checksums stand for it.
    """
    # Widened once (format 4 stores them narrow; the codec takes int64).
    ptr = np.asarray(seg.ptr, dtype=np.int64)
    bptr = np.asarray(seg.bptr, dtype=np.int64)
    blk_off = np.asarray(seg.blk_off, dtype=np.int64)
    doclen = np.asarray(seg.doclen)
    n_terms = len(ptr) - 1
    t0 = 0
    while t0 < n_terms:
        t1 = max(t0 + 1, int(np.searchsorted(ptr, int(ptr[t0]) + _RUN, side="right")) - 1)
        t1 = min(t1, n_terms)
        seg.prefetch(t0, t1)  # blocks.bin is mapped without read-around
        try:
            docs, tfs = blocks.decode(
                seg.blocks, blk_off, seg.blk_last, bptr[t0 : t1 + 1], ptr[t0 : t1 + 1],
                seg.n_docs, seg.cap, seg.shift, doclen if deep else None,
            )  # fmt: skip
        except blocks.BlockError as exc:
            raise _bad(seg, f"blocks.bin is damaged ({exc})") from None
        if not deep:
            t0 = t1
            continue
        a = int(ptr[t0])
        rel = ptr[t0 : t1 + 1] - a
        i, j = np.searchsorted(seg.ovf, [a, int(ptr[t1])]).tolist()
        ovf = np.flatnonzero(tfs > seg.cap)
        if (
            not np.array_equal(np.asarray(seg.ovf[i:j]) - a, ovf)
            or not np.array_equal(seg.ovf_doc[i:j], docs[ovf])
            or not np.array_equal(seg.ovf_tf[i:j], tfs[ovf])
        ):
            raise _bad(seg, "the overflow postings do not match the blocks")
        term = np.repeat(np.arange(t1 - t0), np.diff(rel))
        cf = np.bincount(term, weights=tfs, minlength=t1 - t0)
        if not np.array_equal(cf.astype(np.int64), np.asarray(seg.cf[t0:t1], dtype=np.int64)):
            raise _bad(seg, "cf.npy does not match the postings")
        _check_frontiers(seg, _stored_frontiers(seg, t0, t1, doclen), t0, t1)
        t0 = t1


def _stored_frontiers(seg: Segment, t0: int, t1: int, doclen: Any) -> blocks.Frontiers:
    """Return the term frontiers that the stored blocks of terms [t0, t1) give.

    The blocks have already been found byte-identical to what their postings encode to.
    """
    b0, b1 = int(seg.bptr[t0]), int(seg.bptr[t1])
    off = np.asarray(seg.blk_off[b0 : b1 + 1], dtype=np.int64)
    view = blocks.Encoded(
        np.frombuffer(
            seg.blocks, dtype=np.uint8, count=int(off[-1]) - int(off[0]), offset=int(off[0])
        ),
        np.asarray(seg.blk_last[b0:b1]),
        off - off[0],
        np.asarray(seg.bptr[t0 : t1 + 1], dtype=np.int64) - b0,
        np.zeros(0, dtype=np.int64),
    )
    return blocks.term_frontiers(view, doclen, seg.cap)


def _check_frontiers(seg: Segment, got: blocks.Frontiers, t0: int, t1: int) -> None:
    """Check that the stored frontiers of terms [t0, t1) are the ones their postings give."""
    i, j = np.searchsorted(seg.tfront_term, [t0, t1]).tolist()
    off = np.asarray(seg.tfront_off)
    stored = bytes(seg.tfront[int(off[i]) : int(off[j])])
    if (
        not np.array_equal(np.asarray(seg.tfront_term[i:j]) - t0, got.terms)
        or not np.array_equal(off[i : j + 1] - off[i], got.off)
        or stored != got.data.tobytes()
    ):
        raise _bad(seg, "tfront.bin does not match the postings")


def _check_csr(seg: Segment, name: str, docs: Any, ptr: Any) -> None:
    """Every value within the segment, strictly ascending inside each term's list."""
    if not docs.size:
        return
    if int(docs.min()) < 0 or int(docs.max()) >= seg.n_docs:
        raise _bad(seg, f"{name} points outside the segment")
    step = 1 << 24
    starts = np.zeros(docs.size, dtype=bool)
    starts[np.asarray(ptr[:-1])[np.diff(ptr) > 0]] = True
    for lo in range(1, docs.size, step):
        hi = min(lo + step, docs.size)
        bad = (docs[lo:hi] <= docs[lo - 1 : hi - 1]) & ~starts[lo:hi]
        if bool(bad.any()):
            raise _bad(seg, f"{name} is not ascending within a term")
