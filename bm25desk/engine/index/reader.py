"""A stored index opened for reading: segments + deletions + collection statistics.

Documents are numbered globally by concatenating the segments in manifest order ("docno"); a
deleted document keeps its docno and is never returned. Statistics are exact over live documents:
``n_docs`` and ``avgdl`` come from the manifest (computed at commit from the deletion masks), and
document frequencies from the segment itself (one segment, no deletions) or from a merged
lexicon written at commit (several segments or deletions), so an updated index scores exactly as a
fresh build of the same documents would.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.analysis.analyzer import AnalysisError, Analyzer
from bm25desk.engine.index.segment import (
    F64,
    I32,
    I64,
    IndexCorruptError,
    Lexicon,
    Segment,
    load_array,
    read_json,
)
from bm25desk.engine.index.stats import CollectionStats, TermStats

FORMAT = 1
"""On-disk format version; an index with a newer one is refused."""


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
    """An index opened read-only. Cheap to open: arrays are memory-mapped, nothing is scanned.

    Parameters
    ----------
    path
        The index directory (holding ``manifest.json``).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name
        manifest = read_json(path / "manifest.json")
        fmt = manifest.get("format")
        if not isinstance(fmt, int):
            raise IndexCorruptError("manifest.json has no format version")
        if fmt > FORMAT:
            raise IndexCorruptError(
                f"index format {fmt} is newer than this bm25desk understands ({FORMAT}): "
                "upgrade bm25desk or rebuild the index"
            )
        self.manifest = manifest
        try:
            self.analyzer = Analyzer.from_spec(manifest["analyzer"])
            stats = manifest["stats"]
            self.n_docs = int(stats["n_docs"])
            self.total_len = int(stats["total_len"])
            seg_entries = manifest["segments"]
        except (KeyError, TypeError, ValueError, AnalysisError) as exc:
            raise IndexCorruptError(f"manifest.json is incomplete: {exc}") from exc
        self.avgdl = self.total_len / self.n_docs if self.n_docs else 0.0
        self.segments: list[Segment] = []
        self.deleted: list[npt_bool | None] = []
        if not isinstance(seg_entries, list):
            raise IndexCorruptError("manifest.json: 'segments' is not a list")
        for entry in seg_entries:
            try:
                seg_name, dele = str(entry["name"]), entry.get("deleted")
            except (KeyError, TypeError, AttributeError) as exc:
                raise IndexCorruptError(
                    f"manifest.json has a bad segment entry: {entry!r}"
                ) from exc
            seg = Segment(path / seg_name)
            self.segments.append(seg)
            if dele:
                mask = load_array(path / dele, mmap=False).astype(bool)
                if mask.shape != (seg.n_docs,):
                    raise IndexCorruptError(f"deletion file {dele} does not fit its segment")
                self.deleted.append(mask)
            else:
                self.deleted.append(None)
        sizes = [s.n_docs for s in self.segments]
        self.bases: I64 = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self.bases[1:])
        # The same bases as Python ints: per-document lookups bisect this list (a numpy call on a
        # scalar costs microseconds).
        self._base_list: list[int] = self.bases.tolist()
        lex = manifest.get("lexicon")
        if lex:
            self._lexicon = Lexicon(path / lex)
            self._df: I64 = load_array(path / lex / "df.npy")
            self._cf: I64 = load_array(path / lex / "cf.npy")
        elif len(self.segments) == 1 and self.deleted[0] is None:
            seg = self.segments[0]
            self._lexicon = seg.lexicon
            self._df = np.diff(seg.ptr)
            self._cf = seg.cf
        elif not self.segments:
            self._lexicon = None  # type: ignore[assignment]
            self._df = np.zeros(0, dtype=np.int64)
            self._cf = np.zeros(0, dtype=np.int64)
        else:
            raise IndexCorruptError("manifest.json names several segments but no lexicon")
        self._tid_cache: dict[str, int] = {}
        self.stats = CollectionStats(self.n_docs, self.avgdl, self.n_terms, self._live_dfs)
        self.warnings = self.analyzer.version_warnings(manifest["analyzer"])

    # -- statistics ------------------------------------------------------------------------------

    @property
    def n_terms(self) -> int:
        """Return the vocabulary size (terms in at least one live document's body)."""
        return int(self._vocab_mask.sum()) if self._lexicon is not None else 0

    @cached_property
    def _vocab_mask(self) -> npt_bool:
        return np.asarray(self._df > 0)

    def _live_dfs(self) -> I64:
        """Return df for every vocabulary term (title-only terms, with df 0, excluded)."""
        return np.asarray(self._df[self._df > 0], dtype=np.int64)

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
        tid = -1
        if self._lexicon is not None:
            tid = self._lexicon.find(term)
            tid = tid if tid >= 0 and self._df[tid] > 0 else -1
        if len(self._tid_cache) > 100_000:
            self._tid_cache.clear()
        self._tid_cache[term] = tid
        return tid

    def term_stats(self, term: str) -> TermStats | None:
        """Return df/cf and lazy postings of ``term``, or None when no live document contains it."""
        tid = self.term_id(term)
        if tid < 0:
            return None

        def postings() -> tuple[F64, F64]:
            docnos, tfs = self.postings(term)
            return tfs.astype(np.float64), self.doclen[docnos].astype(np.float64)

        return TermStats(term, int(self._df[tid]), int(self._cf[tid]), postings)

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
        cf = np.asarray(self._cf)
        n = min(n, cf.size)
        top = np.argpartition(-cf, n - 1)[:n] if n < cf.size else np.arange(cf.size)
        top = top[np.lexsort((top, -cf[top]))]
        return [
            (self._lexicon.term(int(i)), int(self._df[i]), int(cf[i]))
            for i in top
            if self._df[i] > 0
        ]

    def vocabulary(self, min_df: int = 1) -> list[str]:
        """Return the vocabulary (terms with df ≥ ``min_df``): loads it, for suggestions."""
        if self._lexicon is None:
            return []
        terms = self._lexicon.terms()
        df = np.asarray(self._df)
        return [t for t, keep in zip(terms, (df >= max(min_df, 1)).tolist(), strict=True) if keep]

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
