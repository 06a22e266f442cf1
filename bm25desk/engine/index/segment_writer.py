"""Write analysed documents as one new segment: lexicon, postings, stored fields and arrays."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine import native
from bm25desk.engine.index.arrays import I32, I64, index_dtype, narrow, save_array
from bm25desk.engine.index.blobs import BlobWriter, name_bytes
from bm25desk.engine.index.layout import segment_meta, write_json
from bm25desk.engine.index.lexicon import write_lexicon, write_lexicon_bytes
from bm25desk.engine.index.postings_writer import write_postings
from bm25desk.engine.index.textstore import ZBlobWriter

__all__ = ["SegmentWriter", "TermIds"]

_seen: Any = native.load("bm25desk.engine.readers._seen")


class DictTermIds(dict[str, int]):
    """term → provisional id, assigning the next id to a new term (lets ``map`` run at C speed).

    The vocabulary without the compiled table (see :data:`TermIds`).
    """

    def __missing__(self, term: str) -> int:
        """Assign the next id to a new term."""
        value = self[term] = len(self)
        return value


if _seen is not None:

    class CompactTermIds(_seen.FirstSeen):  # type: ignore[misc]
        """term → provisional id in the compiled table: ~50 bytes a term instead of ~140.

        ``t[term]`` assigns the next id to a new term (at C speed); iteration gives the terms
        in id order, and ``t.key(i)`` the term of id ``i``.
        """

        __slots__ = ()

        def __init__(self) -> None:
            super().__init__(assign=True)

        def __iter__(self) -> Iterator[str]:
            return map(self.key, range(len(self)))


TermIds: Any = CompactTermIds if _seen is not None else DictTermIds
"""A build's vocabulary: term → provisional id, the next id for a new term.

One instance may serve several consecutive :class:`SegmentWriter` s of a build (the token → id
table built on it stays valid); each segment keeps only the terms it contains. A parallel build
has one per worker process: with a large vocabulary (millions of distinct terms) it was the
largest part of a worker's memory, hence the compact table.
"""


class SegmentWriter:
    """Accumulate analysed documents and write them as one segment.

    Postings are gathered as flat term-id buffers and turned into sorted (term, doc, tf) triples
    every :data:`FLUSH_TOKENS` tokens, so memory is ~12 bytes per posting plus the current buffer.
    Stored fields stream to disk as they arrive. Call :meth:`finish` once; :attr:`n_postings`
    lets the caller start a new segment when a memory budget is reached.
    """

    FLUSH_TOKENS = 1 << 18
    """Tokens buffered before they become a sorted chunk (~30 bytes each of temporaries).

    Measured on 100 k passages: 1 M tokens made each flush the peak of a one-process build
    (+28 MB); smaller chunks cost no time (their sorts stay in cache). A writer of large
    segments is given more (``flush_tokens``): with hundreds of small chunks in a segment of
    tens of millions of postings, the freed chunks fragmented the heap (peak +9 %).
    """
    PLACE_POSTINGS = 1 << 16
    """Postings placed at a time by :meth:`finish` (~40 bytes each of temporaries)."""

    def __init__(
        self,
        directory: Path,
        vocabulary: MutableMapping[str, int] | None = None,
        flush_tokens: int | None = None,
    ) -> None:
        directory.mkdir()  # not parents: a staging folder removed by a cancelled build stays gone
        self.path = directory
        self._ids: Any = vocabulary if vocabulary is not None else TermIds()
        self._flush_tokens = flush_tokens or self.FLUSH_TOKENS
        self._buf = array("i")  # provisional term ids, -1 for dropped tokens
        self._lens = array("i")  # entries of _buf per document in the current buffer
        self._chunks: list[tuple[I64, I32]] = []  # (key = tid << 32 | doc, tf)
        self._title_pairs = array("q")  # tid << 32 | doc
        self._extra_keys = array("q")  # reserved terms (fields, metadata): tid << 32 | doc
        self._extra_tfs = array("i")
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
        extra: Mapping[str, int] | None = None,
    ) -> None:
        """Add one analysed document (its terms, its title's terms and its stored fields).

        ``extra`` maps reserved terms (:mod:`~bm25desk.engine.index.reserved`) to their tfs.
        """
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
            extra={ids[t]: tf for t, tf in extra.items()} if extra else None,
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
        extra: Mapping[int, int] | None = None,
    ) -> None:
        """Add one document as ids of this writer's vocabulary (-1 = a dropped token, skipped).

        ``extra`` maps ids of reserved terms to their tfs: postings that do not count in the
        document's length.
        """
        doc = self._n_docs
        self._n_docs += 1
        self._buf.extend(term_ids)
        self._lens.append(len(term_ids))
        pairs = self._title_pairs
        for t in title_ids:
            if t >= 0:
                pairs.append((t << 32) | doc)
        if extra:
            for t, tf in extra.items():
                if tf > 0:
                    self._extra_keys.append((t << 32) | doc)
                    self._extra_tfs.append(tf)
                    self.n_postings += 1
        self._mtime.append(mtime)
        self._size.append(size)
        self._docids.append(docid)
        blobs = self._blobs
        blobs["docid"].add_text(docid)
        blobs["title"].add_text(title)
        blobs["loc"].add_text(location)
        blobs["text"].add_text(text)
        if len(self._buf) >= self._flush_tokens:
            self._flush()

    def _flush(self) -> None:
        if not self._lens:
            return
        tids = np.frombuffer(self._buf, dtype=np.int32)
        first = len(self._doclen)
        lens = np.frombuffer(self._lens, dtype=np.int32)
        docs = np.repeat(np.arange(first, first + len(lens), dtype=np.int32), lens)
        keep = tids >= 0
        if keep.all():
            self._doclen.frombytes(lens.tobytes())
        else:
            dropped = np.bincount(docs[~keep] - first, minlength=len(lens))
            self._doclen.frombytes((lens - dropped).astype(np.int32).tobytes())
            tids, docs = tids[keep], docs[keep]
        keys = tids.astype(np.int64)  # in place from here: one array of 8 bytes a token
        keys <<= 32
        keys |= docs
        del tids, docs, keep
        keys.sort()
        if keys.size:
            new = np.empty(keys.size, dtype=bool)
            new[0] = True
            np.not_equal(keys[1:], keys[:-1], out=new[1:])
            starts = np.flatnonzero(new)
            del new
            counts = np.diff(starts, append=keys.size).astype(np.int32)
            self._chunks.append((keys[starts], counts))
            self.n_postings += int(starts.size)
        self._buf = array("i")
        self._lens = array("i")

    def _write_lexicon(self, pairs: I64) -> tuple[I32, int]:
        """Write the lexicon of the terms this segment contains; return provisional → final ids.

        The vocabulary may be shared by several segments: only the terms used here are kept,
        sorted by UTF-8 bytes (terms that do not encode, with lone surrogates, by their bytes
        with "?" for those). The compiled vocabulary sorts and encodes them itself, with no str
        object per term (the terms as strs were the peak of a 100 k build's memory).
        """
        used = np.zeros(len(self._ids), dtype=bool)
        for keys, _ in self._chunks:
            used[keys >> 32] = True
        used[pairs >> 32] = True
        if isinstance(self._ids, dict):
            prov = _write_dict_lexicon(self.path, self._ids, used)
        else:
            data, lens, order = self._ids.sorted_utf8(np.flatnonzero(used))
            del used
            write_lexicon_bytes(self.path, data, np.frombuffer(lens, dtype=np.int64))
            del data, lens
            prov = np.frombuffer(order, dtype=np.int64)
        n_terms = len(prov)
        new_id = np.full(len(self._ids), -1, dtype=np.int32)
        new_id[prov] = np.arange(n_terms, dtype=np.int32)
        return new_id, n_terms

    def _place_postings(self, new_id: I32, n_terms: int) -> tuple[I64, I32, I32, I64]:
        """Return ``(ptr, docs, tfs, cf)`` of the segment in final term order, emptying the chunks.

        Each chunk is sorted by (provisional id, doc) and the chunks follow each other in doc
        order, so a term's postings are its runs in every chunk, in chunk order: each run is
        placed at its term's next free slot. No sort and no concatenation of the chunks: memory
        is the output (8 bytes a posting) and the chunks not yet placed (12), each freed once
        placed (a concatenation and a stable argsort needed ~32 bytes a posting).
        """
        counts = np.zeros(n_terms, dtype=np.int64)
        cf = np.zeros(n_terms, dtype=np.int64)
        for keys, tfs in self._chunks:
            if not keys.size:
                continue
            # A chunk is sorted by term, so each term is one run of it: work per run, not a
            # bincount over the whole vocabulary per chunk (a large segment has hundreds).
            tid = new_id[keys >> 32]
            starts = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]])
            run_tid = tid[starts]
            counts[run_tid] += np.diff(starts, append=tid.size)
            cf[run_tid] += np.add.reduceat(tfs, starts, dtype=np.int64)
            del tid, starts, run_tid
        ptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        del counts
        nnz = int(ptr[-1])
        docs = np.empty(nnz, dtype=np.int32)
        tfs_out = np.empty(nnz, dtype=np.int32)
        fill = ptr[:-1].copy()  # the next free slot of each term
        chunks, self._chunks = self._chunks, []
        chunks.reverse()  # popped from the end: placed in order, each freed once placed
        while chunks:
            keys, tfs = chunks.pop()
            # In pieces (a run cut in two is placed as two runs): small temporaries.
            for lo in range(0, keys.size, self.PLACE_POSTINGS):
                hi = lo + self.PLACE_POSTINGS
                _place(keys[lo:hi], tfs[lo:hi], new_id, fill, docs, tfs_out)
            del keys, tfs
        return ptr, docs, tfs_out, cf

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
        if self._extra_keys:
            # Reserved terms never occur in the body chunks: one more chunk, sorted by key, keeps
            # "docs ascend per term" when the chunks are placed in order.
            ekeys = np.frombuffer(self._extra_keys, dtype=np.int64)
            eorder = np.argsort(ekeys, kind="stable")
            etfs = np.frombuffer(self._extra_tfs, dtype=np.int32)[eorder]
            self._chunks.append((ekeys[eorder], etfs))
            self._extra_keys, self._extra_tfs = array("q"), array("i")
        pairs = np.unique(np.frombuffer(self._title_pairs, dtype=np.int64))
        new_id, n_terms = self._write_lexicon(pairs)
        ptr, doc, tfs, cf = self._place_postings(new_id, n_terms)
        doclen = np.frombuffer(self._doclen, dtype=np.int32)
        total_len = int(doclen.sum(dtype=np.int64))
        save_array(d / "ptr.npy", narrow(ptr))
        # By the occurrences (reserved terms are not in the lengths), as a merge chooses it.
        save_array(d / "cf.npy", cf.astype(index_dtype(int(cf.sum()))))
        write_postings(d, ptr, doc, tfs, doclen)
        del doc, tfs

        ttid = new_id[pairs >> 32].astype(np.int64)
        tdoc = (pairs & 0xFFFFFFFF).astype(np.int32)
        torder = np.argsort((ttid << 32) | tdoc, kind="stable")
        tcounts = np.bincount(ttid[torder], minlength=n_terms)
        tptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(tcounts, out=tptr[1:])
        save_array(d / "tptr.npy", narrow(tptr))
        save_array(d / "tdocs.npy", tdoc[torder])

        save_array(d / "doclen.npy", doclen)
        save_array(d / "mtime.npy", np.frombuffer(self._mtime, dtype=np.float64))
        save_array(d / "size.npy", np.frombuffer(self._size, dtype=np.int64))
        docid_keys = [name_bytes(docid) for docid in self._docids]
        docid_order = sorted(range(len(docid_keys)), key=docid_keys.__getitem__)
        save_array(d / "docid_order.npy", np.array(docid_order, dtype=np.int32))
        meta = segment_meta(len(doclen), n_terms, int(ptr[-1]), total_len)
        write_json(d / "meta.json", meta)
        return meta


def _write_dict_lexicon(path: Path, ids: dict[str, int], used: Any) -> I64:
    """Write the lexicon of the ``used`` terms of a dict vocabulary; return their ids, sorted.

    Sorted by UTF-8 bytes, which is code point order, so the strs are sorted as they are; terms
    that do not encode (lone surrogates, written as "?") are sorted by their bytes instead.
    """
    terms = list(itertools.compress(ids, used.tolist()))  # insertion order == id
    try:
        data = "".join(terms).encode("utf-8")
    except UnicodeEncodeError:
        terms.sort(key=lambda t: t.encode("utf-8", "replace"))
        data = b""
    else:
        terms.sort()
        data = "".join(terms).encode("utf-8")
    n_terms = len(terms)
    if data:
        lens = np.fromiter(map(len, terms), np.int64, n_terms)
        if len(data) != int(lens.sum()):  # not ASCII: count the bytes, a term at a time
            lens = np.fromiter((len(t.encode("utf-8")) for t in terms), np.int64, n_terms)
        write_lexicon_bytes(path, data, lens)
    else:
        write_lexicon(path, terms)
    return np.fromiter(map(ids.__getitem__, terms), dtype=np.int64, count=n_terms)


def _place(keys: I64, tfs: I32, new_id: I32, fill: I64, docs: I32, tfs_out: I32) -> None:
    """Place postings sorted by (provisional id, doc) at their terms' next free slots."""
    tid = new_id[keys >> 32]
    starts = np.flatnonzero(np.r_[True, tid[1:] != tid[:-1]])
    run_tid = tid[starts]
    run_len = np.diff(np.r_[starts, tid.size])
    del tid
    dest = np.repeat(fill[run_tid] - starts, run_len)
    dest += np.arange(dest.size, dtype=np.int64)
    fill[run_tid] += run_len
    docs[dest] = keys & 0xFFFFFFFF
    tfs_out[dest] = tfs
