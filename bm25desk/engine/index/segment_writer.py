"""Write analysed documents as one new segment: lexicon, postings, stored fields and arrays."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from bm25desk.engine.index.arrays import I32, I64, save_array
from bm25desk.engine.index.blobs import BlobWriter, name_bytes
from bm25desk.engine.index.layout import segment_meta, write_json
from bm25desk.engine.index.lexicon import sort_terms, write_lexicon
from bm25desk.engine.index.postings_writer import write_postings
from bm25desk.engine.index.textstore import ZBlobWriter

__all__ = ["SegmentWriter", "TermIds"]


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
        if self._extra_keys:
            # Reserved terms never occur in the body chunks: one more chunk, sorted by key,
            # keeps "docs ascend per term" for the stable sort below.
            ekeys = np.frombuffer(self._extra_keys, dtype=np.int64)
            eorder = np.argsort(ekeys, kind="stable")
            keys = np.concatenate([keys, ekeys[eorder]])
            tfs = np.concatenate([tfs, np.frombuffer(self._extra_tfs, dtype=np.int32)[eorder]])
            self._extra_keys, self._extra_tfs = array("q"), array("i")
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
