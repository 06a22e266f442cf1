"""Checksums and structural checks: a damaged index is detected, never read out of bounds.

**Checksums.** Every file of a generation has its size and XXH3-64 hash in the manifest (xxHash:
13 GB/s on this machine, as fast as hardware CRC32C and 64 bits wide; see the report in
``docs``). Hashing a large index at every open would cost seconds, so a file's verification is
remembered in ``.stamps.json`` by its (inode, size, mtime, ctime): any later write, truncation or
replacement changes the ctime, and the next open hashes the file again. Stamps are only taken
for files whose ctime is at least :data:`RACY_SECONDS` old (file times are coarse: a write in the
same clock tick as the stamp could otherwise go unseen) — as Mercurial does for its dirstate.
``bm25desk check`` hashes everything regardless.

**Structure.** At every open, cheaply: dtypes and shapes, CSR pointers and blob offsets start
at 0, never decrease and end at their arrays' sizes, lengths sum to the recorded total, and the
postings of a few terms are spot-checked (ascending, within the segment). When a file is new to
this machine's stamps (or the index has no checksums), its segment gets the full check: every
posting's document within bounds and ascending per term, term frequencies positive, the
lexicon sorted, the docid order a permutation — so the C kernel can never read out of bounds.
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

from bm25desk.engine.index.segment import IndexCorruptError, Segment

RACY_SECONDS = 2.0
"""A file changed this recently is verified again at the next open rather than stamped."""

STAMPS = ".stamps.json"

SEGMENT_FILES = (
    "meta.json",
    "terms.bin",
    "terms.off.npy",
    "ptr.npy",
    "docs.npy",
    "tfs.npy",
    "cf.npy",
    "tptr.npy",
    "tdocs.npy",
    "doclen.npy",
    "docid_order.npy",
    "docid.bin",
    "docid.off.npy",
    "title.bin",
    "title.off.npy",
    "loc.bin",
    "loc.off.npy",
    "text.bin",
    "text.off.npy",
    "mtime.npy",
    "size.npy",
)
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
    """The remembered verifications of an index's files (a cache: losing it costs a re-hash)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / STAMPS
        self.entries: dict[str, list[Any]] = {}
        self.changed = False
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
        if time.time() - st.st_ctime_ns / 1e9 >= RACY_SECONDS:
            self.entries[rel] = self.key(st, checksum)
            self.changed = True

    def save(self, keep: set[str]) -> None:
        """Write the stamps of the files in ``keep`` (best effort: a read-only index is fine)."""
        if not self.changed:
            return
        data = {k: v for k, v in self.entries.items() if k in keep}
        tmp = self.path.with_name(f"{STAMPS}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)


def verify_files(
    directory: Path, manifest: dict[str, Any], expected: list[str], force: bool = False
) -> set[str]:
    """Check the size and checksum of every file in ``expected`` (relative paths).

    Files whose stamp matches are trusted without reading them (unless ``force``). Returns the
    files verified now — their segments get the full structural check. Without checksums (a
    format 1 index) only stamps are compared.

    Raises
    ------
    IndexCorruptError
        On a missing file, a wrong size, a checksum mismatch or a file the manifest does not list.
    """
    listed = manifest.get("files")
    if manifest.get("format", 1) >= 2 and not isinstance(listed, dict):
        raise IndexCorruptError("manifest.json has lost its checksums")
    stamps = Stamps(directory)
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
    stamps.save(set(expected) | set(stamps.entries if not isinstance(listed, dict) else listed))
    return fresh


# -- structure ------------------------------------------------------------------------------------


def _bad(seg: Segment, what: str) -> IndexCorruptError:
    return IndexCorruptError(f"segment {seg.path.name}: {what}")


def _check_array(seg: Segment, name: str, arr: Any, dtype: Any, length: int) -> None:
    if arr.dtype != np.dtype(dtype) or arr.shape != (length,):
        raise _bad(seg, f"{name} has the wrong type or size")


def _check_pointers(seg: Segment, name: str, ptr: Any, end: int) -> None:
    """Check a CSR pointer or offset array: starts at 0, never decreases, ends at ``end``."""
    if len(ptr) == 0 or int(ptr[0]) != 0 or int(ptr[-1]) != end:
        raise _bad(seg, f"{name} does not fit its data")
    if len(ptr) > 1 and bool((np.diff(ptr) < 0).any()):
        raise _bad(seg, f"{name} is not in order")


def check_segment(seg: Segment, meta_nnz: int, full: bool) -> None:
    """Check a segment's structure: cheap invariants always, every posting when ``full``."""
    n_docs, n_terms = seg.n_docs, len(seg.lexicon)
    nnz = len(seg.docs)
    if meta_nnz != nnz:
        raise _bad(seg, "meta.json does not match its postings")
    for name, arr, dtype, length in (
        ("ptr.npy", seg.ptr, np.int64, n_terms + 1),
        ("tptr.npy", seg.tptr, np.int64, n_terms + 1),
        ("docs.npy", seg.docs, np.int32, nnz),
        ("tfs.npy", seg.tfs, np.int32, nnz),
        ("cf.npy", seg.cf, np.int64, n_terms),
        ("tdocs.npy", seg.tdocs, np.int32, len(seg.tdocs)),
        ("doclen.npy", seg.doclen, np.int32, n_docs),
        ("docid_order.npy", seg.docid_order, np.int32, n_docs),
        ("mtime.npy", seg.mtime, np.float64, n_docs),
        ("size.npy", seg.size, np.int64, n_docs),
    ):
        _check_array(seg, name, arr, dtype, length)
    _check_pointers(seg, "ptr.npy", seg.ptr, nnz)
    _check_pointers(seg, "tptr.npy", seg.tptr, len(seg.tdocs))
    for blob_name, blob in (
        ("docid", seg.docids),
        ("title", seg.titles),
        ("loc", seg.locations),
        ("text", seg.texts),
    ):
        _check_array(seg, f"{blob_name}.off.npy", blob.offsets, np.int64, n_docs + 1)
        _check_pointers(seg, f"{blob_name}.off.npy", blob.offsets, int(blob.offsets[-1]))
    _check_array(seg, "terms.off.npy", seg.lexicon.offsets, np.int64, n_terms + 1)
    _check_pointers(seg, "terms.off.npy", seg.lexicon.offsets, int(seg.lexicon.offsets[-1]))
    lens = np.asarray(seg.doclen)
    if n_docs and (int(lens.min()) < 0 or int(lens.sum(dtype=np.int64)) != seg.total_len):
        raise _bad(seg, "document lengths do not add up to meta.json's total")
    _spot_check_postings(seg)
    if full:
        _full_check(seg)


def _spot_check_postings(seg: Segment) -> None:
    """Check the postings of a few terms (first, last and spread between) — a cheap sample."""
    n_terms = len(seg.lexicon)
    if n_terms == 0:
        return
    for tid in sorted({0, n_terms - 1, *np.linspace(0, n_terms - 1, 8).astype(int).tolist()}):
        docs, tfs = seg.postings(tid)
        if docs.size and (
            int(docs[0]) < 0
            or int(docs[-1]) >= seg.n_docs
            or bool((np.diff(docs) <= 0).any())
            or int(tfs.min()) < 1
        ):
            raise _bad(seg, f"the postings of term {tid} are out of order or out of range")


def _full_check(seg: Segment) -> None:
    """Check every posting, the lexicon order and the docid permutation (O(size of segment))."""
    ptr = np.asarray(seg.ptr)
    for name, docs, p in (("docs.npy", seg.docs, ptr), ("tdocs.npy", seg.tdocs, seg.tptr)):
        _check_csr(seg, name, np.asarray(docs), np.asarray(p))
    tfs = np.asarray(seg.tfs)
    if tfs.size and int(tfs.min()) < 1:
        raise _bad(seg, "tfs.npy holds a term frequency below 1")
    order = np.asarray(seg.docid_order)
    if order.size and (
        int(order.min()) < 0
        or int(order.max()) >= seg.n_docs
        or np.bincount(order, minlength=seg.n_docs).max() != 1
    ):
        raise _bad(seg, "docid_order.npy is not a permutation")
    terms = [seg.lexicon.term_bytes(i) for i in range(len(seg.lexicon))]
    if any(a >= b for a, b in itertools.pairwise(terms)):
        raise _bad(seg, "the lexicon is not sorted")


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
