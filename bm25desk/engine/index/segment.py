"""Immutable index segments: lexicon, postings, document lengths and stored documents on disk.

A segment is a directory of ``.npy`` arrays (written with ``allow_pickle=False``, opened with
``mmap_mode="r"``) and byte blobs; opening one reads nothing but a small JSON file, so opening an
index never loads its postings. Layout::

    meta.json            n_docs, n_terms, nnz, total_len
    terms.bin/.off.npy   the vocabulary, sorted by UTF-8 bytes (binary search, no dict to load)
    ptr.npy docs.npy tfs.npy    body postings, CSR: term i owns docs[ptr[i]:ptr[i+1]] (ascending)
    cf.npy               collection frequency per term
    tptr.npy tdocs.npy   title postings (documents whose title contains the term)
    doclen.npy           exact document lengths in analysed tokens
    docid|title|loc|text .bin/.off.npy   stored fields; mtime.npy, size.npy
    docid_order.npy      permutation sorting docids by bytes (docid → docno by binary search)
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

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


class IndexCorruptError(RuntimeError):
    """An index file is missing, truncated or inconsistent: the index must be rebuilt."""


def save_array(path: Path, arr: npt.NDArray[Any]) -> None:
    """Write ``arr`` as ``.npy`` without pickle."""
    with open(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)


def load_array(path: Path, mmap: bool = True) -> npt.NDArray[Any]:
    """Open an ``.npy`` array memory-mapped (empty arrays are read normally: mmap needs bytes)."""
    try:
        if mmap and path.stat().st_size > 256:
            # A plain ndarray view of the memmap: indexing a np.memmap subclass is ~20× slower.
            arr: npt.NDArray[Any] = np.asarray(np.load(path, mmap_mode="r", allow_pickle=False))
        else:
            arr = np.load(path, allow_pickle=False)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index file missing: {path.name}") from exc
    except Exception as exc:  # numpy's header parser raises ValueError, TokenError, SyntaxError...
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise IndexCorruptError(f"index file damaged: {path.name} ({reason})") from exc
    if not isinstance(arr, np.ndarray) or arr.ndim != 1:  # every index array is 1-d
        raise IndexCorruptError(f"index file damaged: {path.name} has the wrong shape")
    return arr


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
    """Read a segment's ``meta.json`` (n_docs, n_terms, nnz, total_len) as integers."""
    meta = read_json(directory / "meta.json")
    try:
        return {k: int(meta[k]) for k in ("n_docs", "n_terms", "nnz", "total_len")}
    except (KeyError, ValueError, TypeError) as exc:
        raise IndexCorruptError(f"segment {directory.name}: bad meta.json") from exc


class Segment:
    """An immutable segment opened memory-mapped (see the module docstring for the layout)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory
        meta = read_meta(directory)
        self.n_docs = meta["n_docs"]
        self.total_len = meta["total_len"]
        self.nnz = meta["nnz"]
        self.lexicon = Lexicon(directory)
        self.ptr: I64 = load_array(directory / "ptr.npy")
        self.docs: I32 = load_array(directory / "docs.npy")
        self.tfs: I32 = load_array(directory / "tfs.npy")
        self.cf: I64 = load_array(directory / "cf.npy")
        self.tptr: I64 = load_array(directory / "tptr.npy")
        self.tdocs: I32 = load_array(directory / "tdocs.npy")
        self.doclen: I32 = load_array(directory / "doclen.npy")
        self.docid_order: I32 = load_array(directory / "docid_order.npy")
        self.docids = Blob(directory, "docid", names=True)
        self.titles = Blob(directory, "title")
        self.locations = Blob(directory, "loc", names=True)
        self.texts = Blob(directory, "text")
        self.mtime: F64 = load_array(directory / "mtime.npy")
        self.size: I64 = load_array(directory / "size.npy")
        n_terms = len(self.lexicon)
        if (
            len(self.ptr) != n_terms + 1
            or len(self.tptr) != n_terms + 1
            or len(self.doclen) != self.n_docs
            or len(self.docids) != self.n_docs
            or int(self.ptr[-1]) != len(self.docs)
            or len(self.docs) != len(self.tfs)
        ):
            raise IndexCorruptError(f"segment {directory.name}: arrays disagree in size")

    def postings(self, term_id: int) -> tuple[I32, I32]:
        """Return the (local docnos, tfs) of a term id."""
        a, b = int(self.ptr[term_id]), int(self.ptr[term_id + 1])
        return self.docs[a:b], self.tfs[a:b]

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
        self._blobs = {
            n: BlobWriter(directory, n, names=n in ("docid", "loc"))
            for n in ("docid", "title", "loc", "text")
        }
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
            blob._fh.close()

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
        save_array(d / "ptr.npy", ptr)
        save_array(d / "docs.npy", doc)
        save_array(d / "tfs.npy", tfs.astype(np.int32))
        save_array(d / "cf.npy", cf)
        del tid, doc, tfs

        ttid = new_id[pairs >> 32].astype(np.int64)
        tdoc = (pairs & 0xFFFFFFFF).astype(np.int32)
        torder = np.argsort((ttid << 32) | tdoc, kind="stable")
        tcounts = np.bincount(ttid[torder], minlength=n_terms)
        tptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(tcounts, out=tptr[1:])
        save_array(d / "tptr.npy", tptr)
        save_array(d / "tdocs.npy", tdoc[torder])

        doclen = np.frombuffer(self._doclen, dtype=np.int32)
        save_array(d / "doclen.npy", doclen)
        save_array(d / "mtime.npy", np.frombuffer(self._mtime, dtype=np.float64))
        save_array(d / "size.npy", np.frombuffer(self._size, dtype=np.int64))
        docid_keys = [name_bytes(docid) for docid in self._docids]
        docid_order = sorted(range(len(docid_keys)), key=docid_keys.__getitem__)
        save_array(d / "docid_order.npy", np.array(docid_order, dtype=np.int32))
        meta = {
            "n_docs": len(doclen),
            "n_terms": n_terms,
            "nnz": int(ptr[-1]),
            "total_len": int(doclen.sum(dtype=np.int64)),
        }
        write_json(d / "meta.json", meta)
        return meta
