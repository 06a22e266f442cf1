"""A stored index opened for reading: segments + deletions + collection statistics.

Documents are numbered globally by concatenating the segments in manifest order ("docno"); a
deleted document keeps its docno and is never returned. Statistics are exact over live documents:
``n_docs`` and ``avgdl`` come from the manifest (computed at commit from the deletion masks), and
document frequencies from the segment itself (one segment, no deletions) or from a merged
lexicon written at commit (several segments or deletions), so an updated index scores exactly as a
fresh build of the same documents would.
"""

from __future__ import annotations

import os
import weakref
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.analysis.analyzer import AnalysisError, Analyzer
from bm25desk.engine.index.arrays import (
    F64,
    I32,
    I64,
    IndexCorruptError,
    load_array,
    map_under,
    read_through,
)
from bm25desk.engine.index.integrity import LEXICON_FILES, Stamps, check_segment, verify_files
from bm25desk.engine.index.layout import optional_files, segment_files
from bm25desk.engine.index.lexicon import Lexicon
from bm25desk.engine.index.manifest import FORMAT as MANIFEST_FORMAT
from bm25desk.engine.index.manifest import (
    manifest_checksum,
    read_manifest_file,
    segment_entries,
    verify_manifest_checksum,
)
from bm25desk.engine.index.reserved import is_reserved, reserved_bounds
from bm25desk.engine.index.segment import Segment, map_in, plan_read_ahead
from bm25desk.engine.index.snapshot import ReaderLease
from bm25desk.engine.index.stats import CollectionStats, TermStats

FORMAT = MANIFEST_FORMAT
"""On-disk format version written; an index with a newer one is refused."""


@dataclass(frozen=True, slots=True)
class DocRecord:
    """A stored document's fields (the text is fetched separately: it may be large)."""

    docno: int
    docid: str
    title: str
    location: str
    length: int
    mtime: float
    size: int


class Index:
    """An index opened read-only: one generation, readable until :meth:`close`.

    Cheap to open: arrays are memory-mapped, nothing is scanned. The generation opened stays
    readable however the index is updated or rebuilt meanwhile (a lease in ``.readers/`` keeps
    writers from deleting its files; see :mod:`~bm25desk.engine.index.snapshot`); call
    :meth:`reopen_if_changed` to pick up a newer one. Every file is checked against the manifest's
    checksums and structure on open (see :mod:`~bm25desk.engine.index.integrity`) — read through
    only the first time this machine sees it: later opens check sizes, types and ends, which read
    a page per file, and per-term counts (df) are computed when asked for.

    Parameters
    ----------
    path
        The index directory (holding ``manifest.json``).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name
        self._lease = ReaderLease(path)
        self._finalizer = weakref.finalize(self, self._lease.release)
        try:
            self._open(path)
        except BaseException:
            self.close()
            raise

    def _open(self, path: Path) -> None:
        manifest = read_manifest_file(path / "manifest.json")
        self.manifest = manifest
        self.generation = _as_int(manifest.get("generation", 1), "generation")
        self._lease.hold(self.generation)
        try:
            self.analyzer = Analyzer.from_spec(manifest["analyzer"])
            stats = manifest["stats"]
            self.n_docs = _as_int(stats["n_docs"], "n_docs")
            self.total_len = _as_int(stats["total_len"], "total_len")
        except (KeyError, TypeError, ValueError, AnalysisError) as exc:
            raise IndexCorruptError(f"manifest.json is incomplete: {exc}") from exc
        self.avgdl = self.total_len / self.n_docs if self.n_docs else 0.0
        entries = segment_entries(manifest)
        self.segments: list[Segment] = []
        self.deleted: list[npt_bool | None] = []
        for seg_name, dele in entries:
            seg = Segment(path / seg_name)
            self.segments.append(seg)
            self.deleted.append(_deletion_mask(path, dele, seg) if dele else None)
        sizes = [s.n_docs for s in self.segments]
        self.bases: I64 = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.bases[1:])
        # The same bases as Python ints: per-document lookups bisect this list (a numpy call on a
        # scalar costs microseconds).
        self._base_list: list[int] = self.bases.tolist()
        self._open_lexicon(path, manifest.get("lexicon"))
        trusted = self._verify(path, manifest, entries)
        plan_read_ahead(self.segments)
        map_in(self._query_maps())
        self._tid_cache: dict[str, int] = {}
        n_terms = manifest["stats"].get("n_terms")
        if trusted and isinstance(n_terms, int) and not isinstance(n_terms, bool):
            # Checked against the arrays when this manifest was first opened here.
            self.__dict__["n_terms"] = n_terms
        self.stats = CollectionStats(self.n_docs, self.avgdl, self.n_terms, self._live_dfs)

    @cached_property
    def warnings(self) -> list[str]:
        """Return what the user should know about the index (analysis libraries' versions).

        Worked out when first asked for: it reads installed packages' metadata (~10 ms and a
        few imports, the first time in a process), which a search does not need.
        """
        return self.analyzer.version_warnings(self.manifest["analyzer"])

    def _open_lexicon(self, path: Path, lex: Any) -> None:
        """Open the merged lexicon, or use the single segment's own (its df: from ``ptr``)."""
        self._ptr: Any = None  # one segment: df[t] = ptr[t + 1] - ptr[t], differenced when asked
        self._ptr_ints: memoryview | None = None  # ptr read as Python ints (a new term's df)
        if lex:
            if not isinstance(lex, str) or "/" in lex or lex in (".", ".."):
                raise IndexCorruptError(f"manifest.json names a bad lexicon: {lex!r}")
            self._lexicon = Lexicon(path / lex)
            self._stored_df: I64 = load_array(path / lex / "df.npy")
            self._cf: I64 = load_array(path / lex / "cf.npy")
            n = len(self._lexicon)
            for arr in (self._stored_df, self._cf):
                if arr.dtype != np.int64 or arr.shape != (n,):
                    raise IndexCorruptError(f"lexicon {lex}: df/cf do not fit its terms")
        elif len(self.segments) == 1 and self.deleted[0] is None:
            seg = self.segments[0]
            self._lexicon = seg.lexicon
            self._ptr = seg.ptr
            self._ptr_ints = _int_view(seg.ptr)
            self._cf = seg.cf  # uint32 (format 4, while it fits) or int64: widened where used
        elif not self.segments:
            self._lexicon = None  # type: ignore[assignment]
            self._stored_df = np.zeros(0, dtype=np.int64)
            self._cf = np.zeros(0, dtype=np.int64)
        else:
            raise IndexCorruptError("manifest.json names several segments but no lexicon")

    def _query_maps(self) -> list[Any]:
        """Return the maps a query reads: a merged lexicon's, each segment's, postings last."""
        small = []
        if self._ptr is None and self._lexicon is not None:  # (a merged lexicon: its dfs too)
            small = [*self._lexicon.maps(), map_under(self._stored_df), map_under(self._cf)]
        postings = []
        for seg in self.segments:
            got, large = seg.query_maps()
            small += got
            postings += large
        return small + postings

    @cached_property
    def _df(self) -> I64:
        """Return every term's document frequency (differenced from ``ptr`` on first use)."""
        if self._ptr is None:
            return self._stored_df
        df: I64 = np.diff(self._ptr).astype(np.int64)
        return df

    def _term_df(self, tid: int) -> int:
        """Return one term's document frequency (without differencing the whole ``ptr``)."""
        ints = self._ptr_ints
        if ints is not None:  # ~0.1 µs, against ~0.4 for two numpy scalars (a new term's df)
            return ints[tid + 1] - ints[tid]
        ptr = self._ptr
        if ptr is None or "_df" in self.__dict__:
            return int(self._df[tid])
        return int(ptr[tid + 1]) - int(ptr[tid])

    def _verify(
        self, path: Path, manifest: dict[str, Any], entries: list[tuple[str, str | None]]
    ) -> bool:
        """Check checksums, structure and the manifest's statistics against the arrays.

        What was checked on this machine before and has not changed since (its stamps match)
        is not read through again: returns whether that is everything (then the manifest's
        statistics are the ones checked).
        """
        expected: list[str] = []
        for (seg_name, dele), seg in zip(entries, self.segments, strict=True):
            expected += [f"{seg_name}/{f}" for f in segment_files(seg.format)]
            expected += optional_files(path, seg_name, manifest)
            if dele:
                expected.append(dele)
        lex = manifest.get("lexicon")
        if lex:
            expected += [f"{lex}/{f}" for f in LEXICON_FILES]
            expected += optional_files(path, lex, manifest)
        stamps = Stamps(path)
        fresh = verify_files(path, manifest, expected, stamps=stamps)
        for (seg_name, _), seg in zip(entries, self.segments, strict=True):
            full = any(f.startswith(f"{seg_name}/") for f in fresh)
            check_segment(seg, seg.nnz, full)
        verify_manifest_checksum(manifest)
        # The statistics check is stamped on manifest.json with its content's checksum: an
        # unchanged manifest over unchanged files has been checked (format 1 manifests too).
        key = manifest_checksum(manifest)
        try:
            st = os.stat(path / "manifest.json")
        except OSError:
            st = None
        trusted = not fresh and st is not None and not stamps.fresh("manifest.json", st, key)
        if not trusted:
            check_statistics(self)
            if st is not None:
                stamps.stamp("manifest.json", st, key)
        listed = manifest.get("files")
        stamps.save({*expected, "manifest.json", *(listed if isinstance(listed, dict) else ())})
        return trusted

    def close(self) -> None:
        """Release this reader's hold on its generation (the arrays stay usable until freed)."""
        self._finalizer()

    def __enter__(self) -> Index:
        """Return the index itself."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the index."""
        self.close()

    def reopen_if_changed(self) -> Index | None:
        """Return a newly opened index if a newer generation was committed, else None.

        This index stays open (close it when done with it).
        """
        try:
            current = read_manifest_file(self.path / "manifest.json").get("generation", 1)
        except IndexCorruptError:
            return Index(self.path)  # raises the damage with its message
        return Index(self.path) if current != self.generation else None

    # -- statistics ------------------------------------------------------------------------------

    @cached_property
    def n_terms(self) -> int:
        """Return the vocabulary size (terms in at least one live document's body).

        Taken from the manifest when it has been checked against the arrays (reading them
        through costs milliseconds per 100,000 terms).
        """
        return self._count_terms()

    def _count_terms(self) -> int:
        """Return the vocabulary size counted from the arrays."""
        return int(self._vocab_mask.sum()) if self._lexicon is not None else 0

    @cached_property
    def reserved_ids(self) -> tuple[int, int]:
        """Return the lexicon id range ``[lo, hi)`` of the reserved (field, metadata) terms."""
        if self._lexicon is None:
            return 0, 0
        return reserved_bounds(self._lexicon.term_bytes, len(self._lexicon))

    @cached_property
    def _user_df(self) -> I64:
        """Return df with the reserved terms' entries 0: what statistics and browsing count."""
        lo, hi = self.reserved_ids
        if lo == hi:
            return self._df
        df = np.array(self._df, dtype=np.int64)
        df[lo:hi] = 0
        return df

    @cached_property
    def _vocab_mask(self) -> npt_bool:
        return np.asarray(self._user_df > 0)

    def _live_dfs(self) -> I64:
        """Return df for every vocabulary term (title-only and reserved terms excluded)."""
        return np.asarray(self._user_df[self._vocab_mask], dtype=np.int64)

    def reserved_table(self, prefix: str) -> tuple[I64, I64, I64]:
        """Return ``(term ids, df, cf)`` of the live reserved terms starting with ``prefix``.

        ``prefix`` is a :mod:`~bm25desk.engine.index.reserved` prefix (e.g. ``meta_prefix``):
        the values of one metadata key, the terms of one field.
        """
        if not is_reserved(prefix):
            raise ValueError(f"not a reserved prefix: {prefix!r}")
        return self._table(prefix, self._df)

    @property
    def fingerprint(self) -> str:
        """Return a content fingerprint of the collection (documents and lengths), for run cards."""
        return str(self.manifest.get("fingerprint", ""))

    @property
    def source(self) -> dict[str, Any]:
        """Return the manifest's description of the source."""
        return dict(self.manifest.get("source", {}))

    @cached_property
    def doclen(self) -> I32:
        """Return the length of every document by docno (deleted ones included)."""
        if len(self.segments) == 1:
            return self.segments[0].doclen
        if not self.segments:
            return np.zeros(0, dtype=np.int32)
        return np.concatenate([s.doclen for s in self.segments])

    @cached_property
    def live(self) -> npt_bool | None:
        """Return the live mask by docno, or None when nothing is deleted."""
        if all(d is None for d in self.deleted):
            return None
        return np.concatenate(
            [
                ~d if d is not None else np.ones(s.n_docs, bool)
                for s, d in zip(self.segments, self.deleted, strict=True)
            ]
        )

    @property
    def n_slots(self) -> int:
        """Return the size of the docno space (live and deleted documents)."""
        return self._base_list[-1]

    def live_lengths(self) -> I32:
        """Return the lengths of live documents (for histograms)."""
        live = self.live
        return self.doclen if live is None else self.doclen[live]

    def term_id(self, term: str) -> int:
        """Return the global term id of ``term`` (-1 when not in the vocabulary)."""
        cached = self._tid_cache.get(term)
        if cached is not None:
            return cached
        tid = self._look_up(term)
        if tid >= 0:
            self._prefetch(term, tid)
        return tid

    def look_up(self, terms: Iterable[str]) -> None:
        """Look ``terms`` up now, asking the kernel to read none of their postings ahead.

        For a batch of searches that reads every term's blocks right after (an evaluation
        run's thousands of new terms, one read-ahead request each otherwise): :meth:`term_id`
        then answers from memory. The new ones are found in one compiled call per 50,000
        (:meth:`Lexicon.find_many`), not several Python calls each: ~5 % of an evaluation run's
        CPU at k = 1000 (1,000 long queries, ~49,000 distinct terms).
        """
        cache = self._tid_cache
        new = [t for t in dict.fromkeys(terms) if t not in cache]
        if self._lexicon is None or len(new) < 2:
            for term in new:
                self._look_up(term)
            return
        df = self._term_df
        step = 50_000  # the look-up's memo and this cache stay bounded
        for a in range(0, len(new), step):
            chunk = new[a : a + step]
            if self._one_call_dfs(chunk) is not None:  # ids and dfs in one call
                continue
            ids = self._lexicon.find_many(chunk)  # one compiled call: _look_up's ids, no prefetch
            if len(cache) + len(chunk) > 100_000:
                cache.clear()
            for term, tid in zip(chunk, ids, strict=True):
                cache[term] = tid if tid >= 0 and df(tid) > 0 else -1

    def _look_up(self, term: str) -> int:
        """Return the global term id of ``term`` (-1: none) from the lexicon, and remember it."""
        tid = -1
        if self._lexicon is not None:
            tid = self._lexicon.find(term)
            tid = tid if tid >= 0 and self._term_df(tid) > 0 else -1
        if len(self._tid_cache) > 100_000:
            self._tid_cache.clear()
        self._tid_cache[term] = tid
        return tid

    def _prefetch(self, term: str, tid: int) -> None:
        """Have the kernel read a term's postings in the background (first look-up only).

        A query looks its terms up before it scores any: the blocks of its later terms are
        read while its first are decoded, each in one request of its exact size (blocks.bin is
        mapped without read-around: see :class:`~bm25desk.engine.index.segment.Segment`).
        """
        if len(self.segments) == 1 and self._ptr is not None:
            self.segments[0].prefetch(tid)  # the index's term ids are the segment's
            return
        for seg in self.segments:
            local = seg.lexicon.find(term)
            if local >= 0:
                seg.prefetch(local)

    def term_dfs(self, terms: list[str]) -> list[int]:
        """Return :meth:`term_df` of each of ``terms`` (distinct), the new ones looked up at once.

        A query's new terms: one compiled look-up of all of them in the lexicon
        (:meth:`Lexicon.find_many`) and one read-ahead request per term in one call
        (:meth:`Segment.prefetch_many`), instead of several Python calls per term; the same ids,
        dfs and read-ahead as :meth:`term_df` term by term. An index of one segment with a
        hash does it all in one call, dfs included (:meth:`Lexicon.dfs_many`).
        """
        fast = self._one_call_dfs(terms)
        if fast is not None:
            if fast[1]:
                self.segments[0].prefetch_many(fast[1])  # the index's ids are the segment's
            return fast[0]
        cache = self._tid_cache
        new = [t for t in terms if t not in cache]
        got = (
            self._look_up_many(new)
            if len(new) > 1 and len(self.segments) == 1 and self._ptr is not None
            else {}
        )
        df = self._term_df
        out = []
        for term in terms:
            d = got.get(term)
            if d is None:
                tid = cache.get(term)
                if tid is None:
                    tid = self.term_id(term)
                d = df(tid) if tid >= 0 else 0
            out.append(d)
        return out

    def _one_call_dfs(self, terms: list[str]) -> tuple[list[int], list[int]] | None:
        """Return :meth:`Lexicon.dfs_many` of ``terms`` into the term-id cache, or None.

        For an index of one segment without deletions (df off its ``ptr``) whose lexicon has a
        hash; the cache stays within 100,000 terms, as :meth:`_look_up` keeps it.
        """
        if len(self.segments) != 1 or self._ptr is None:
            return None
        cache = self._tid_cache
        if len(cache) + len(terms) > 100_000:
            cache.clear()
        return self._lexicon.dfs_many(terms, self._ptr, cache)

    def _look_up_many(self, terms: list[str]) -> dict[str, int]:
        """Look up and remember ``terms`` (new, distinct); return the df of each (0: none).

        Their blocks are asked for ahead (one read-ahead request per term, in one call).
        """
        ids = self._lexicon.find_many(terms)
        df = self._term_df
        cache = self._tid_cache
        if len(cache) + len(ids) > 100_000:
            cache.clear()
        found = []
        dfs = {}
        for term, tid in zip(terms, ids, strict=True):
            d = df(tid) if tid >= 0 else 0
            if d > 0:
                found.append(tid)
            else:
                tid = -1
            cache[term] = tid
            dfs[term] = d
        if found:
            self.segments[0].prefetch_many(found)  # the index's term ids are the segment's
        return dfs

    def term_df(self, term: str) -> int:
        """Return the number of live documents containing ``term`` (0 when none)."""
        tid = self.term_id(term)
        return self._term_df(tid) if tid >= 0 else 0

    def term_stats(self, term: str) -> TermStats | None:
        """Return df/cf and lazy postings of ``term``, or None when no live document contains it."""
        tid = self.term_id(term)
        if tid < 0:
            return None

        def postings() -> tuple[F64, F64]:
            docnos, tfs = self.postings(term)
            return tfs.astype(np.float64), self.doclen[docnos].astype(np.float64)

        return TermStats(term, self._term_df(tid), int(self._cf[tid]), postings)

    def postings(self, term: str) -> tuple[I64, I32]:
        """Return the live postings of ``term`` as (global docnos ascending, tfs)."""
        docs_parts: list[I64] = []
        tf_parts: list[I32] = []
        for seg, base, dele in zip(self.segments, self.bases, self.deleted, strict=False):
            tid = seg.lexicon.find(term)
            if tid < 0:
                continue
            d, t = seg.postings(tid)
            if dele is not None:
                keep = ~dele[d]
                d, t = d[keep], t[keep]
            docs_parts.append(d.astype(np.int64) + int(base))
            tf_parts.append(np.asarray(t))
        if not docs_parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
        if len(docs_parts) == 1:
            return docs_parts[0], tf_parts[0]
        return np.concatenate(docs_parts), np.concatenate(tf_parts)

    def title_docnos(self, term: str) -> I64:
        """Return the live docnos whose title contains ``term``."""
        parts: list[I64] = []
        for seg, base, dele in zip(self.segments, self.bases, self.deleted, strict=False):
            tid = seg.lexicon.find(term)
            if tid < 0:
                continue
            d = seg.title_postings(tid)
            if dele is not None:
                d = d[~dele[d]]
            parts.append(d.astype(np.int64) + int(base))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def top_terms(self, n: int = 50) -> list[tuple[str, int, int]]:
        """Return the ``n`` terms with the highest collection frequency as (term, df, cf)."""
        if self._lexicon is None or n <= 0:
            return []
        # Title-only and reserved terms rank last (-1) and are left out (cf widened: it may be
        # stored as uint32).
        cf = np.where(self._vocab_mask, np.asarray(self._cf, dtype=np.int64), -1)
        n = min(n, cf.size)
        top = np.argpartition(-cf, n - 1)[:n] if n < cf.size else np.arange(cf.size)
        top = top[np.lexsort((top, -cf[top]))]
        return [
            (self._lexicon.term(int(i)), int(self._df[i]), int(cf[i]))
            for i in top
            if self._vocab_mask[i]
        ]

    def vocabulary(self, min_df: int = 1) -> list[str]:
        """Return the vocabulary (terms with df ≥ ``min_df``): loads it, for suggestions."""
        if self._lexicon is None:
            return []
        terms = self._lexicon.terms()
        df = np.asarray(self._user_df)
        return [t for t, keep in zip(terms, (df >= max(min_df, 1)).tolist(), strict=True) if keep]

    def term_table(self, prefix: str = "") -> tuple[I64, I64, I64]:
        """Return ``(term ids, df, cf)`` of the vocabulary terms starting with ``prefix``.

        Ids ascend, which is the terms' order by UTF-8 bytes (:meth:`term_name` gives a term);
        title-only terms (df 0) are left out. Nothing is loaded but the two count arrays' slice.
        """
        return self._table(prefix, self._user_df)

    def _table(self, prefix: str, dfs: I64) -> tuple[I64, I64, I64]:
        if self._lexicon is None:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        lo, hi = 0, len(self._lexicon)
        if prefix:
            key = prefix.encode("utf-8", "replace")
            lo = self._lower_bound(key)
            hi = self._lower_bound(key + b"\xff")  # 0xff never occurs in UTF-8
        ids = np.arange(lo, hi, dtype=np.int64)
        df = np.asarray(dfs[lo:hi], dtype=np.int64)
        keep = df > 0
        return ids[keep], df[keep], np.asarray(self._cf[lo:hi], dtype=np.int64)[keep]

    def _lower_bound(self, key: bytes) -> int:
        """Return the first lexicon id whose term's bytes are not below ``key``."""
        lo, hi = 0, len(self._lexicon)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._lexicon.term_bytes(mid) < key:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def term_name(self, tid: int) -> str:
        """Return the term with global id ``tid`` (an id from :meth:`term_table`)."""
        return self._lexicon.term(tid)

    # -- documents -------------------------------------------------------------------------------

    def _locate(self, docno: int) -> tuple[Segment, int]:
        """Return the segment holding ``docno`` and its local number there."""
        bases = self._base_list
        if not 0 <= docno < bases[-1]:
            raise IndexError(f"document number {docno} out of range")
        s = bisect_right(bases, docno) - 1  # the last segment starting at or before docno
        return self.segments[s], docno - bases[s]

    def is_live(self, docno: int) -> bool:
        """Return whether ``docno`` is a live document."""
        if not 0 <= docno < self.n_slots:
            return False
        live = self.live
        return True if live is None else bool(live[docno])

    def doc(self, docno: int) -> DocRecord:
        """Return the stored fields of ``docno``."""
        seg, local = self._locate(docno)
        return DocRecord(
            docno,
            seg.docids.get(local),
            seg.titles.get(local),
            seg.locations.get(local),
            int(seg.doclen[local]),
            float(seg.mtime[local]),
            int(seg.size[local]),
        )

    def docid(self, docno: int) -> str:
        """Return the source's own id of ``docno``."""
        seg, local = self._locate(docno)
        return seg.docids.get(local)

    def text(self, docno: int) -> str:
        """Return the stored text of ``docno``."""
        seg, local = self._locate(docno)
        return seg.texts.get(local)

    def docno(self, docid: str) -> int | None:
        """Return the docno of the live document ``docid``, or None when there is none."""
        for s in range(len(self.segments) - 1, -1, -1):  # newest first: updates append
            local = self.segments[s].find_docid(docid)
            if local >= 0:
                dele = self.deleted[s]
                if dele is None or not dele[local]:
                    return self._base_list[s] + local
        return None

    def iter_live(self) -> Any:
        """Yield ``(docno, docid, mtime, size)`` for every live document (for updates)."""
        for seg, base, dele in zip(self.segments, self.bases, self.deleted, strict=False):
            read_through(seg.mtime, seg.size)
            seg.docids.read_through()
            mtime = np.asarray(seg.mtime)
            size = np.asarray(seg.size)
            for local in range(seg.n_docs):
                if dele is not None and dele[local]:
                    continue
                yield (
                    int(base) + local,
                    seg.docids.get(local),
                    float(mtime[local]),
                    int(size[local]),
                )


npt_bool = np.ndarray  # a boolean mask; an alias keeps signatures short


def _as_int(value: Any, what: str) -> int:
    """Return ``value`` when it is a non-negative integer, else raise IndexCorruptError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise IndexCorruptError(f"manifest.json has a bad {what}: {value!r}")
    return value


def _deletion_mask(path: Path, name: str, seg: Segment) -> npt_bool:
    """Load a segment's deletion mask, checking it fits the segment."""
    mask = load_array(path / name, mmap=False)
    if mask.dtype != np.bool_ or mask.shape != (seg.n_docs,):
        raise IndexCorruptError(f"deletion file {name} does not fit its segment")
    return mask


def check_statistics(index: Index) -> None:
    """Check the manifest's N, total length and vocabulary size against the arrays."""
    n_docs = 0
    total = 0
    for seg, dele in zip(index.segments, index.deleted, strict=True):
        lens = np.asarray(seg.doclen, dtype=np.int64)
        n_docs += seg.n_docs if dele is None else int((~dele).sum())
        total += int(lens.sum() if dele is None else lens[~dele].sum())
    if (n_docs, total) != (index.n_docs, index.total_len):
        raise IndexCorruptError("manifest.json's statistics do not match the documents")
    df, cf = np.asarray(index._df), np.asarray(index._cf)
    if df.size and (int(df.min()) < 0 or int(df.max()) > n_docs or bool((cf < df).any())):
        raise IndexCorruptError("the lexicon's document frequencies are out of range")
    n_terms = index.manifest.get("stats", {}).get("n_terms")
    if n_terms is not None and n_terms != index._count_terms():
        raise IndexCorruptError("manifest.json's vocabulary size does not match the lexicon")


def _int_view(arr: Any) -> memoryview | None:
    """Return a 1-D integer array as a memoryview whose items read as Python ints (None: not)."""
    a = np.asarray(arr)
    if a.ndim != 1 or not a.flags.c_contiguous or a.dtype not in (np.uint32, np.int64):
        return None
    try:
        view = memoryview(a)  # type: ignore[arg-type]  # numpy arrays are buffers
    except (TypeError, ValueError, BufferError):
        return None
    return view if view.format in ("I", "l", "q") else None
