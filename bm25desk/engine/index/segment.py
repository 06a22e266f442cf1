"""Immutable index segments: lexicon, postings, document lengths and stored documents on disk.

A segment is a directory of ``.npy`` arrays (written with ``allow_pickle=False``, opened with
``mmap_mode="r"``) and byte blobs; opening one reads nothing but a small JSON file, so opening an
index never loads its postings. Layout (format 3)::

    meta.json            format, n_docs, n_terms, nnz, total_len, block layout (shift, cap)
    terms.bin/.off.npy   the vocabulary, sorted by UTF-8 bytes (binary search, no dict to load)
    ptr.npy cf.npy       postings per term (CSR pointer: df = diff), collection frequency
    bptr.npy             first block of each term (its blocks are bptr[t]..bptr[t+1])
    blocks.bin           the blocks of 128 postings: frontier, bit-packed gaps and tfs (blocks.py)
    blk_last blk_off     per block: last docno (skipping reads no block), offset in blocks.bin
    ovf ovf_doc ovf_tf   the postings with tf > cap: position, docno, tf (exact tf parts)
    tfront*              the frontier of each term of several blocks (its bound for any function)
    tptr.npy tdocs.npy   title postings (documents whose title contains the term)
    doclen.npy           exact document lengths in analysed tokens
    docid|title|loc .bin/.off.npy   stored fields; text.zst & co: zstd frames (textstore.py)
    mtime.npy size.npy   file times and sizes
    docid_order.npy      permutation sorting docids by bytes (docid → docno by binary search)

Segments of format 1 and 2 (``docs.npy``/``tfs.npy`` int32 postings, plain ``text.bin``, no
stored bounds) are still read; everything written is format 3.
"""

from __future__ import annotations

import json
import mmap
import os
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import (
    F64,
    I32,
    I64,
    IndexCorruptError,
    load_array,
    save_array,
)
from bm25desk.engine.index.textstore import ZBlob, ZBlobWriter

__all__ = [
    "F64",
    "I32",
    "I64",
    "IndexCorruptError",
    "Lexicon",
    "Segment",
    "SegmentWriter",
    "TermIds",
    "load_array",
    "save_array",
]


FORMAT = 3
"""Segment format written: block-compressed postings with stored bounds, compressed text."""

COMMON_FILES = (
    "meta.json",
    "terms.bin",
    "terms.off.npy",
    "ptr.npy",
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
    "text.off.npy",
    "mtime.npy",
    "size.npy",
)
BLOCK_FILES = (
    "bptr.npy",
    "blk_last.npy",
    "blk_off.npy",
    "blocks.bin",
    "ovf.npy",
    "ovf_doc.npy",
    "ovf_tf.npy",
    "tfront_term.npy",
    "tfront_off.npy",
    "tfront.bin",
    "text.zst",
    "text.zoff.npy",
    "text.zdoc.npy",
)
OLD_FILES = ("docs.npy", "tfs.npy", "text.bin")
"""The postings and text of segments of format 1 and 2 (still read)."""


def name_bytes(name: str) -> bytes:
    """Return the UTF-8 of a docid or path, keeping non-UTF-8 file name bytes (surrogateescape)."""
    try:
        return name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # lone surrogates that are not escaped bytes
        return name.encode("utf-8", "replace")


class BlobWriter:
    """Append byte strings to ``<name>.bin`` and record offsets in ``<name>.off.npy``.

    ``names``: the strings are docids or paths, kept byte for byte (:func:`name_bytes`).
    """

    def __init__(self, directory: Path, name: str, names: bool = False) -> None:
        self._dir = directory
        self._name = name
        self._names = names
        self._fh: BinaryIO = open(directory / f"{name}.bin", "wb")  # noqa: SIM115 - closed in close()
        self._offsets = array("q", [0])
        self._pos = 0

    def add(self, data: bytes) -> None:
        """Append one record."""
        self._fh.write(data)
        self._pos += len(data)
        self._offsets.append(self._pos)

    def add_text(self, text: str) -> None:
        """Append one string (UTF-8; lone surrogates replaced, or kept as bytes for names)."""
        self.add(name_bytes(text) if self._names else text.encode("utf-8", "replace"))

    def __len__(self) -> int:
        """Return the number of records."""
        return len(self._offsets) - 1

    def abort(self) -> None:
        """Close the file of a blob that will not be finished."""
        self._fh.close()

    def close(self) -> None:
        """Flush the blob and write the offsets."""
        self._fh.close()
        save_array(
            self._dir / f"{self._name}.off.npy", np.frombuffer(self._offsets, dtype=np.int64)
        )


class Blob:
    """Read-only access to a blob written by :class:`BlobWriter` (memory-mapped)."""

    def __init__(self, directory: Path, name: str, names: bool = False) -> None:
        self._errors = "surrogateescape" if names else "replace"
        self.offsets: I64 = np.asarray(load_array(directory / f"{name}.off.npy"))
        path = directory / f"{name}.bin"
        if not path.exists():
            raise IndexCorruptError(f"index file missing: {path.name}")
        size = path.stat().st_size
        if self.offsets.ndim != 1 or len(self.offsets) == 0 or int(self.offsets[-1]) != size:
            raise IndexCorruptError(f"index file damaged: {path.name} has the wrong size")
        # mmap + memoryview: slicing and indexing them costs ~0.1 µs, numpy memmaps ~3 µs.
        self._data: mmap.mmap | bytes = b""
        if size:
            with open(path, "rb") as fh:
                self._data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        self._off = np.ascontiguousarray(self.offsets, dtype=np.int64).data.cast("B").cast("q")

    def __len__(self) -> int:
        """Return the number of records."""
        return len(self.offsets) - 1

    def get_bytes(self, i: int) -> bytes:
        """Return record ``i`` as bytes."""
        off = self._off
        assert off is not None
        return self._data[off[i] : off[i + 1]]

    def data(self) -> mmap.mmap | bytes:
        """Return the whole blob as a buffer (no copy)."""
        return self._data

    def raw(self) -> bytes:
        """Return the whole blob (all records concatenated)."""
        return bytes(self._data)

    def get(self, i: int) -> str:
        """Return record ``i`` as text."""
        return self.get_bytes(i).decode("utf-8", self._errors)


class Lexicon:
    """A sorted vocabulary on disk: term ↔ id by binary search over UTF-8 bytes."""

    def __init__(self, directory: Path, name: str = "terms") -> None:
        self._blob = Blob(directory, name)

    def __len__(self) -> int:
        """Return the number of records."""
        return len(self._blob)

    @property
    def offsets(self) -> I64:
        """Return the offsets of the terms in ``terms.bin`` (n + 1 of them)."""
        return self._blob.offsets

    def term_bytes(self, i: int) -> bytes:
        """Return the UTF-8 bytes of the term with id ``i``."""
        return self._blob.get_bytes(i)

    def term(self, i: int) -> str:
        """Return the term with id ``i``."""
        return self._blob.get(i)

    def find(self, term: str) -> int:
        """Return the id of ``term``, or -1 when it is not in the vocabulary."""
        key = term.encode("utf-8", "replace")
        if blocks.compiled():  # a binary search in C: ~1 µs instead of ~50
            try:
                return int(blocks.find(self._blob.data(), self._blob.offsets, key))
            except ValueError as exc:
                raise IndexCorruptError(f"index file damaged: terms ({exc})") from None
        lo, hi = 0, len(self._blob)
        get = self._blob.get_bytes
        while lo < hi:
            mid = (lo + hi) // 2
            probe = get(mid)
            if probe < key:
                lo = mid + 1
            elif probe > key:
                hi = mid
            else:
                return mid
        return -1

    def strictly_sorted(self) -> bool | None:
        """Return whether the terms ascend strictly (None: no compiled check; compare in Python)."""
        return blocks.strictly_sorted(self._blob.data(), self._blob.offsets)

    def terms(self) -> list[str]:
        """Return the whole vocabulary (for merges and suggestions; loads it)."""
        data = self._blob.raw()
        off = self._blob.offsets.tolist()
        return [data[off[i] : off[i + 1]].decode("utf-8", "replace") for i in range(len(off) - 1)]


def write_lexicon(directory: Path, terms: Iterable[str], name: str = "terms") -> None:
    """Write terms (already sorted by UTF-8 bytes) as a :class:`Lexicon`."""
    encoded = [t.encode("utf-8", "replace") for t in terms]
    with open(directory / f"{name}.bin", "wb") as fh:
        fh.write(b"".join(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    save_array(directory / f"{name}.off.npy", offsets)


def sort_terms(terms: Sequence[str]) -> I64:
    """Return the permutation that sorts ``terms`` by their UTF-8 bytes (the lexicon order)."""
    keys = [t.encode("utf-8", "replace") for t in terms]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write JSON atomically (temporary file + fsync + rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any]:
    """Read a JSON object, turning damage into :class:`IndexCorruptError`."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index file missing: {path.name}") from exc
    except (OSError, ValueError) as exc:
        raise IndexCorruptError(f"index file damaged: {path.name} ({exc})") from exc
    if not isinstance(data, dict):
        raise IndexCorruptError(f"index file damaged: {path.name} is not a JSON object")
    return data


def read_meta(directory: Path) -> dict[str, int]:
    """Read a segment's ``meta.json`` as integers.

    n_docs, n_terms, nnz, total_len, and the segment format with its block layout (format 1 and
    2 segments: format 2, no blocks).
    """
    meta = read_json(directory / "meta.json")
    try:
        out = {k: int(meta[k]) for k in ("n_docs", "n_terms", "nnz", "total_len")}
        out["format"] = int(meta.get("format", 2))
        if out["format"] >= 3:
            out["shift"], out["cap"] = int(meta["shift"]), int(meta["cap"])
    except (KeyError, ValueError, TypeError) as exc:
        raise IndexCorruptError(f"segment {directory.name}: bad meta.json") from exc
    if out["format"] > FORMAT:
        raise IndexCorruptError(
            f"segment {directory.name} has format {out['format']}, newer than this bm25desk "
            f"understands ({FORMAT}): upgrade bm25desk or rebuild the index"
        )
    if out["format"] >= 3 and not (
        2 <= out["shift"] <= blocks.MAX_SHIFT and 1 <= out["cap"] <= blocks.MAX_CAP
    ):
        raise IndexCorruptError(f"segment {directory.name}: bad meta.json (block layout)")
    return out


def segment_files(fmt: int) -> tuple[str, ...]:
    """Return the files of a segment of format ``fmt`` (what checksums and checks cover)."""
    return COMMON_FILES + (BLOCK_FILES if fmt >= 3 else OLD_FILES)


def _open_bytes(path: Path) -> mmap.mmap | bytes:
    """Map a file read-only (an empty file reads as b"")."""
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index file missing: {path.name}") from exc
    if not size:
        return b""
    with open(path, "rb") as fh:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


class Segment:
    """An immutable segment opened memory-mapped (see the module docstring for the layout).

    Segments of format 1 and 2 (``docs.npy``/``tfs.npy``, plain ``text.bin``) are read as they
    are; :meth:`postings` returns the same arrays for every format.
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory
        meta = read_meta(directory)
        self.format = meta["format"]
        self.n_docs = meta["n_docs"]
        self.total_len = meta["total_len"]
        self.nnz = meta["nnz"]
        self.lexicon = Lexicon(directory)
        self.ptr: I64 = load_array(directory / "ptr.npy")
        self.cf: I64 = load_array(directory / "cf.npy")
        self.tptr: I64 = load_array(directory / "tptr.npy")
        self.tdocs: I32 = load_array(directory / "tdocs.npy")
        self.doclen: I32 = load_array(directory / "doclen.npy")
        self.docid_order: I32 = load_array(directory / "docid_order.npy")
        self.docids = Blob(directory, "docid", names=True)
        self.titles = Blob(directory, "title")
        self.locations = Blob(directory, "loc", names=True)
        self.mtime: F64 = load_array(directory / "mtime.npy")
        self.size: I64 = load_array(directory / "size.npy")
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
        self.blocks = _open_bytes(directory / "blocks.bin")
        self.ovf: I64 = load_array(directory / "ovf.npy")
        self.ovf_doc: I32 = load_array(directory / "ovf_doc.npy")
        self.ovf_tf: I32 = load_array(directory / "ovf_tf.npy")
        self.tfront_term: I32 = load_array(directory / "tfront_term.npy")
        self.tfront_off: I64 = load_array(directory / "tfront_off.npy")
        self.tfront = _open_bytes(directory / "tfront.bin")
        # What the kernel reads for a term (topk.py hands it over as one tuple).
        self.kernel_arrays = (
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
        try:
            return blocks.decode(
                self.blocks,
                self.blk_off,
                self.blk_last,
                self.bptr[t0 : t1 + 1],
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


class TermIds(dict[str, int]):
    """term → provisional id, assigning the next id to a new term (lets ``map`` run at C speed).

    One instance may serve several consecutive :class:`SegmentWriter` s of a build (the
    token → id table built on it stays valid); each segment keeps only the terms it contains.
    """

    def __missing__(self, term: str) -> int:
        """Assign the next id to a new term."""
        value = self[term] = len(self)
        return value


class SegmentWriter:
    """Accumulate analysed documents and write them as one segment.

    Postings are gathered as flat term-id buffers and turned into sorted (term, doc, tf) triples
    every :data:`FLUSH_TOKENS` tokens, so memory is ~12 bytes per posting plus the current buffer.
    Stored fields stream to disk as they arrive. Call :meth:`finish` once; :attr:`n_postings`
    lets the caller start a new segment when a memory budget is reached.
    """

    FLUSH_TOKENS = 1_000_000

    def __init__(self, directory: Path, vocabulary: TermIds | None = None) -> None:
        directory.mkdir(parents=True)
        self.path = directory
        self._ids = vocabulary if vocabulary is not None else TermIds()
        self._buf = array("i")  # provisional term ids, -1 for dropped tokens
        self._lens = array("i")  # entries of _buf per document in the current buffer
        self._chunks: list[tuple[I64, I32]] = []  # (key = tid << 32 | doc, tf)
        self._title_pairs = array("q")  # tid << 32 | doc
        self._doclen = array("i")  # documents before the current buffer
        self._n_docs = 0
        self._mtime = array("d")
        self._size = array("q")
        self._docids: list[str] = []
        self._blobs: dict[str, BlobWriter | ZBlobWriter] = {
            n: BlobWriter(directory, n, names=n in ("docid", "loc"))
            for n in ("docid", "title", "loc")
        }
        self._blobs["text"] = ZBlobWriter(directory, "text")
        self.n_postings = 0

    @property
    def n_docs(self) -> int:
        """Return the number of documents added."""
        return self._n_docs

    def add(
        self,
        terms: list[str],
        title_terms: list[str],
        *,
        docid: str,
        title: str,
        location: str,
        text: str,
        mtime: float = 0.0,
        size: int = 0,
    ) -> None:
        """Add one analysed document (its terms, its title's terms and its stored fields)."""
        ids = self._ids
        self.add_ids(
            array("i", map(ids.__getitem__, terms)),
            {ids[t] for t in title_terms},
            docid=docid,
            title=title,
            location=location,
            text=text,
            mtime=mtime,
            size=size,
        )

    def add_ids(
        self,
        term_ids: array[int],
        title_ids: Iterable[int],
        *,
        docid: str,
        title: str,
        location: str,
        text: str,
        mtime: float = 0.0,
        size: int = 0,
    ) -> None:
        """Add one document as ids of this writer's vocabulary (-1 = a dropped token, skipped)."""
        doc = self._n_docs
        self._n_docs += 1
        self._buf.extend(term_ids)
        self._lens.append(len(term_ids))
        pairs = self._title_pairs
        for t in title_ids:
            if t >= 0:
                pairs.append((t << 32) | doc)
        self._mtime.append(mtime)
        self._size.append(size)
        self._docids.append(docid)
        blobs = self._blobs
        blobs["docid"].add_text(docid)
        blobs["title"].add_text(title)
        blobs["loc"].add_text(location)
        blobs["text"].add_text(text)
        if len(self._buf) >= self.FLUSH_TOKENS:
            self._flush()

    def _flush(self) -> None:
        if not self._lens:
            return
        tids = np.frombuffer(self._buf, dtype=np.int32)
        first = len(self._doclen)
        lens = np.frombuffer(self._lens, dtype=np.int32)
        docs = np.repeat(np.arange(first, first + len(lens), dtype=np.int64), lens)
        keep = tids >= 0
        if keep.all():
            self._doclen.frombytes(lens.tobytes())
        else:
            dropped = np.bincount(docs[~keep] - first, minlength=len(lens))
            self._doclen.frombytes((lens - dropped).astype(np.int32).tobytes())
            tids, docs = tids[keep], docs[keep]
        keys = (tids.astype(np.int64) << 32) | docs
        del tids, docs, keep
        keys.sort()
        if keys.size:
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            counts = np.diff(np.r_[starts, keys.size]).astype(np.int32)
            self._chunks.append((keys[starts], counts))
            self.n_postings += int(starts.size)
        self._buf = array("i")
        self._lens = array("i")

    def abort(self) -> None:
        """Close the files of a segment that will not be finished (a failed or cancelled build)."""
        for blob in self._blobs.values():
            blob.abort()

    def finish(self) -> dict[str, int]:
        """Sort the vocabulary and postings, write every array, and return the segment's meta."""
        self._flush()
        for blob in self._blobs.values():
            blob.close()
        d = self.path
        if self._chunks:
            keys = np.concatenate([k for k, _ in self._chunks])
            tfs = np.concatenate([t for _, t in self._chunks])
        else:
            keys = np.zeros(0, dtype=np.int64)
            tfs = np.zeros(0, dtype=np.int32)
        self._chunks = []
        pairs = np.unique(np.frombuffer(self._title_pairs, dtype=np.int64))
        # The lexicon: the terms this segment contains (the vocabulary may be shared), sorted.
        vocab = list(self._ids)  # insertion order == provisional id
        used = np.zeros(len(vocab), dtype=bool)
        used[keys >> 32] = True
        used[pairs >> 32] = True
        used_ids = np.flatnonzero(used)
        terms = [vocab[i] for i in used_ids.tolist()]
        del vocab, used
        perm = sort_terms(terms)
        new_id = np.full(len(self._ids), -1, dtype=np.int32)
        new_id[used_ids[perm]] = np.arange(len(terms), dtype=np.int32)
        write_lexicon(d, (terms[i] for i in perm.tolist()))
        n_terms = len(terms)
        del terms, perm, used_ids

        # Each chunk is sorted by (provisional id, doc) and chunks follow each other in doc
        # order, so a stable sort by the final term id alone leaves docs ascending per term.
        tid = new_id[keys >> 32]
        doc = (keys & 0xFFFFFFFF).astype(np.int32)
        del keys
        order = np.argsort(tid, kind="stable")
        tid, doc, tfs = tid[order], doc[order], tfs[order]
        del order
        counts = np.bincount(tid, minlength=n_terms)
        ptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        cf = np.bincount(tid, weights=tfs, minlength=n_terms).astype(np.int64)
        del tid
        doclen = np.frombuffer(self._doclen, dtype=np.int32)
        save_array(d / "ptr.npy", ptr)
        save_array(d / "cf.npy", cf)
        write_postings(d, ptr, doc, tfs.astype(np.int32), doclen)
        del doc, tfs

        ttid = new_id[pairs >> 32].astype(np.int64)
        tdoc = (pairs & 0xFFFFFFFF).astype(np.int32)
        torder = np.argsort((ttid << 32) | tdoc, kind="stable")
        tcounts = np.bincount(ttid[torder], minlength=n_terms)
        tptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(tcounts, out=tptr[1:])
        save_array(d / "tptr.npy", tptr)
        save_array(d / "tdocs.npy", tdoc[torder])

        save_array(d / "doclen.npy", doclen)
        save_array(d / "mtime.npy", np.frombuffer(self._mtime, dtype=np.float64))
        save_array(d / "size.npy", np.frombuffer(self._size, dtype=np.int64))
        docid_keys = [name_bytes(docid) for docid in self._docids]
        docid_order = sorted(range(len(docid_keys)), key=docid_keys.__getitem__)
        save_array(d / "docid_order.npy", np.array(docid_order, dtype=np.int32))
        meta = segment_meta(len(doclen), n_terms, int(ptr[-1]), int(doclen.sum(dtype=np.int64)))
        write_json(d / "meta.json", meta)
        return meta


def segment_meta(n_docs: int, n_terms: int, nnz: int, total_len: int) -> dict[str, int]:
    """Return the ``meta.json`` of a new (format 3) segment."""
    return {
        "format": FORMAT,
        "n_docs": n_docs,
        "n_terms": n_terms,
        "nnz": nnz,
        "total_len": total_len,
        "shift": blocks.SHIFT,
        "cap": blocks.CAP,
    }


class PostingsWriter:
    """Append encoded postings, a run of terms at a time, to a segment's block files.

    The segment writer writes all its terms at once; a merge writes them in runs (offsets and
    block numbers of each run continue those of the previous ones).
    """

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        names = ("blk_last", "blk_off", "bptr", "ovf", "ovf_doc", "ovf_tf", "tfront_term")
        self._parts: dict[str, list[npt.NDArray[Any]]] = {n: [] for n in names}
        self._parts["tfront_off"] = []
        self._fh: BinaryIO = open(directory / "blocks.bin", "wb")  # noqa: SIM115 - closed in finish()
        self._front: BinaryIO = open(directory / "tfront.bin", "wb")  # noqa: SIM115 - the same
        self._bytes = self._blocks = self._postings = self._terms = self._front_bytes = 0

    def add(self, ptr: I64, docs: I32, tfs: I32, doclen: I32) -> None:
        """Encode and append the terms of a CSR run (``ptr`` from 0; docnos of the segment)."""
        enc = blocks.encode(ptr, docs, tfs, doclen, blocks.CAP, blocks.SHIFT)
        front = blocks.term_frontiers(enc, doclen, blocks.CAP)
        self._fh.write(enc.stream.tobytes())
        self._front.write(front.data.tobytes())
        p = self._parts
        p["blk_last"].append(enc.blk_last)
        p["blk_off"].append(enc.blk_off[:-1] + self._bytes)
        p["bptr"].append(enc.bptr[:-1] + self._blocks)
        p["ovf"].append(enc.ovf + self._postings)
        p["ovf_doc"].append(docs[enc.ovf])
        p["ovf_tf"].append(tfs[enc.ovf])
        p["tfront_term"].append(front.terms + np.int32(self._terms))
        p["tfront_off"].append(front.off[:-1] + self._front_bytes)
        self._bytes += int(enc.blk_off[-1])
        self._blocks += int(enc.bptr[-1])
        self._postings += int(ptr[-1])
        self._terms += len(ptr) - 1
        self._front_bytes += int(front.off[-1])

    def abort(self) -> None:
        """Close the files (after a failure)."""
        self._fh.close()
        self._front.close()

    def finish(self) -> None:
        """Pad the blocks, close the files and write the block arrays."""
        self._fh.write(bytes(blocks.PAD))
        self.abort()
        p = self._parts
        p["blk_off"].append(np.array([self._bytes], dtype=np.int64))
        p["bptr"].append(np.array([self._blocks], dtype=np.int64))
        p["tfront_off"].append(np.array([self._front_bytes], dtype=np.int64))
        dtypes = {"blk_last": np.int32, "ovf_doc": np.int32, "ovf_tf": np.int32}
        dtypes["tfront_term"] = np.int32
        for name, parts in p.items():
            dt = dtypes.get(name, np.int64)
            arr = np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)
            save_array(self._dir / f"{name}.npy", arr)


def write_postings(directory: Path, ptr: I64, docs: I32, tfs: I32, doclen: I32) -> None:
    """Write a whole segment's postings as blocks (see :class:`PostingsWriter`)."""
    out = PostingsWriter(directory)
    try:
        out.add(ptr, docs, tfs, doclen)
        out.finish()
    except BaseException:
        out.abort()
        raise
