"""The correctness oracle: exact statistics of the corpus, and each engine's formula by brute force.

:class:`Oracle` tokenises the corpus with :func:`~tests.benchmarks.engines.ref_tokens` (the
tokens every engine is configured to produce) and keeps a plain CSR inverted index: document
frequencies, term frequencies and exact document lengths. For any query it computes the dense
score of every document under a given engine's own formula (:data:`FORMULAS`: bm25s omits
(k1+1), tantivy and whoosh quantise lengths to one byte, whoosh has its own idf, rank_bm25 floors
negative idf at ε·mean idf) in float64, and :func:`check` compares an engine's top-k with it:

1. as many hits as min(k, matching documents), all matching, all distinct;
2. each hit's score equals the oracle's score of that document (within the engine's precision);
3. the multiset of the hits' oracle scores equals the k best oracle scores (so any tie order at
   rank k is accepted, and nothing better was missed);
4. hits are in non-increasing score order.

Float32 engines (bm25s, tantivy) get a relative tolerance of 2e-5, float64 engines 1e-9.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.benchmarks.engines import ref_tokens

F64 = npt.NDArray[np.float64]
TOL = {"lucene": 1e-9, "bm25s": 2e-5, "tantivy": 2e-5, "whoosh": 1e-9, "okapi": 1e-9}


def _tantivy_norms() -> npt.NDArray[np.int64]:
    """tantivy's fieldnorm id → length table (Lucene's SmallFloat: 24 exact, 3-bit mantissa)."""
    out = np.zeros(256, dtype=np.int64)
    for b in range(256):
        if b < 24:
            out[b] = b
        else:
            x = b - 24
            bits, shift = x & 7, x >> 3
            out[b] = 24 + (bits if shift == 0 else (bits | 8) << (shift - 1))
    return out


TANTIVY_NORMS = _tantivy_norms()


def tantivy_length(dl: npt.NDArray[Any]) -> F64:
    ids = np.searchsorted(TANTIVY_NORMS, dl, side="right") - 1
    return TANTIVY_NORMS[ids].astype(np.float64)


def whoosh_length(dl: npt.NDArray[Any]) -> F64:
    from whoosh.util.numeric import byte_to_length, length_to_byte

    uniq, inv = np.unique(dl, return_inverse=True)
    dec = np.array([byte_to_length(length_to_byte(int(x))) for x in uniq], dtype=np.float64)
    return dec[inv]


class _Ids(dict[str, int]):
    def __missing__(self, term: str) -> int:
        value = self[term] = len(self)
        return value


class Oracle:
    """Exact statistics of a tokenised corpus (CSR by term) and brute-force scoring."""

    def __init__(
        self,
        ids: list[str],
        terms: list[str],
        ptr: npt.NDArray[np.int64],
        docs: npt.NDArray[np.int32],
        tfs: npt.NDArray[np.int32],
        doclen: npt.NDArray[np.int32],
    ) -> None:
        self.ids = ids
        self.terms = terms
        self.vocab = {t: i for i, t in enumerate(terms)}
        self.ptr, self.docs, self.tfs, self.doclen = ptr, docs, tfs, doclen
        self.n_docs = len(ids)
        self.total = int(doclen.sum(dtype=np.int64))
        self.avgdl = self.total / self.n_docs
        self.df = np.diff(ptr)
        self._len_cache: dict[str, F64] = {}

    # -- building

    @classmethod
    def build(cls, docs: Iterable[tuple[str, str, str]], pretok_out: Path, layout: str) -> Oracle:
        """Tokenise ``docs`` (``(docid, title, body)``), writing the pre-tokenised file too."""
        vocab = _Ids()
        ids: list[str] = []
        buf = array("i")
        lens = array("i")
        with open(pretok_out, "w", encoding="utf-8", newline="\n") as out:
            for docid, title, body in docs:
                if layout == "passages":
                    toks = ref_tokens(body)
                    out.write(f"{docid}\t{' '.join(toks)}\n")
                else:
                    tt, bt = ref_tokens(title), ref_tokens(body)
                    out.write(f"{docid}\t-\t{' '.join(tt)}\t{' '.join(bt)}\n")
                    toks = tt + bt
                ids.append(docid)
                buf.extend(map(vocab.__getitem__, toks))
                lens.append(len(toks))
        tids = np.frombuffer(buf, dtype=np.int32).astype(np.int64)
        lens_a = np.frombuffer(lens, dtype=np.int32).copy()
        doc = np.repeat(np.arange(len(ids), dtype=np.int64), lens_a)
        keys = np.sort((tids << 32) | doc)
        del tids, doc
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if keys.size else keys
        counts = np.diff(np.r_[starts, keys.size]).astype(np.int32)
        keys = keys[starts]
        term = keys >> 32
        n_terms = len(vocab)
        ptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=n_terms), out=ptr[1:])
        return cls(
            ids,
            list(vocab),
            ptr,
            (keys & 0xFFFFFFFF).astype(np.int32),
            counts,
            lens_a,
        )

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        for name in ("ptr", "docs", "tfs", "doclen"):
            np.save(directory / f"{name}.npy", getattr(self, name), allow_pickle=False)
        (directory / "ids.json").write_text(json.dumps(self.ids), encoding="utf-8")
        (directory / "terms.json").write_text(json.dumps(self.terms), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> Oracle:
        arrays = {
            n: np.load(directory / f"{n}.npy", allow_pickle=False)
            for n in ("ptr", "docs", "tfs", "doclen")
        }
        ids = json.loads((directory / "ids.json").read_text(encoding="utf-8"))
        terms = json.loads((directory / "terms.json").read_text(encoding="utf-8"))
        return cls(ids, terms, **arrays)

    # -- scoring

    def postings(self, term: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]] | None:
        t = self.vocab.get(term)
        if t is None:
            return None
        a, b = int(self.ptr[t]), int(self.ptr[t + 1])
        return self.docs[a:b], self.tfs[a:b]

    def _lengths(self, kind: str) -> F64:
        if kind not in self._len_cache:
            dl = self.doclen
            self._len_cache[kind] = {
                "exact": lambda: dl.astype(np.float64),
                "tantivy": lambda: tantivy_length(dl),
                "whoosh": lambda: whoosh_length(dl),
            }[kind]()
        return self._len_cache[kind]

    def _okapi_eps(self) -> float:
        if "okapi_eps" not in self._len_cache:
            df = self.df.astype(np.float64)
            idf = np.log(self.n_docs - df + 0.5) - np.log(df + 0.5)
            self._len_cache["okapi_eps"] = np.array(0.25 * idf.mean())
        return float(self._len_cache["okapi_eps"])

    def weight_fn(
        self, formula: str, k1: float, b: float
    ) -> Callable[[str, int, npt.NDArray[Any], npt.NDArray[Any]], F64]:
        """Return ``w(term, df, docs, tfs)`` → per-posting weights under ``formula``."""
        n = self.n_docs
        lengths = self._lengths({"tantivy": "tantivy", "whoosh": "whoosh"}.get(formula, "exact"))
        avgdl = self.avgdl

        def tf_part(docs: npt.NDArray[Any], tfs: npt.NDArray[Any], boost: float) -> F64:
            tf = tfs.astype(np.float64)
            return tf * boost / (tf + k1 * (1 - b + b * lengths[docs] / avgdl))

        def w(term: str, df: int, docs: npt.NDArray[Any], tfs: npt.NDArray[Any]) -> F64:
            if formula in ("lucene", "tantivy"):
                return math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf_part(docs, tfs, k1 + 1)
            if formula == "bm25s":
                return math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf_part(docs, tfs, 1.0)
            if formula == "whoosh":
                return (math.log(n / (df + 1)) + 1) * tf_part(docs, tfs, k1 + 1)
            if formula == "okapi":
                idf = math.log(n - df + 0.5) - math.log(df + 0.5)
                if idf < 0:
                    idf = self._okapi_eps()
                return idf * tf_part(docs, tfs, k1 + 1)
            raise ValueError(formula)

        return w

    def scores(
        self,
        terms: list[str],
        weight: Callable[[str, int, npt.NDArray[Any], npt.NDArray[Any]], F64],
    ) -> tuple[F64, npt.NDArray[np.bool_]]:
        """Return (dense scores, match mask) for distinct ``terms`` under ``weight``."""
        scores = np.zeros(self.n_docs, dtype=np.float64)
        match = np.zeros(self.n_docs, dtype=bool)
        for term in dict.fromkeys(terms):
            p = self.postings(term)
            if p is None:
                continue
            docs, tfs = p
            scores[docs] += weight(term, int(docs.size), docs, tfs)
            match[docs] = True
        return scores, match

    def variant_weight(self, variant: Any) -> Callable[..., F64]:
        """A bm25desk variant's own weights (its code) on the oracle's statistics."""
        from bm25desk.engine.index.stats import CollectionStats, TermStats

        if "_stats" not in self.__dict__:
            self._stats = CollectionStats(
                self.n_docs, self.avgdl, len(self.terms), lambda: self.df.astype(np.int64)
            )
        stats = self._stats
        dl = self._lengths("exact")

        def w(term: str, df: int, docs: npt.NDArray[Any], tfs: npt.NDArray[Any]) -> F64:
            cf = int(tfs.sum())

            def postings() -> tuple[F64, F64]:
                return tfs.astype(np.float64), dl[docs]

            tw = variant.weigh(TermStats(term, df, cf, postings), stats)
            part = tw.tf_part(tfs.astype(np.float64), dl[docs])
            return tw.idf * part  # type: ignore[no-any-return]

        return w


def check(
    scores: F64,
    match: npt.NDArray[np.bool_],
    hits: list[tuple[int, float]],
    k: int,
    tol: float,
) -> str:
    """Return "" when ``hits`` is a correct top-``k`` for ``scores`` (see the module docstring)."""
    n_match = int(match.sum())
    want = min(k, n_match)
    if len(hits) != want:
        return f"{len(hits)} hits, expected {want} ({n_match} matching documents)"
    docs = [d for d, _ in hits]
    if len(set(docs)) != len(docs):
        return "duplicate documents"
    if not hits:
        return ""
    d = np.array(docs, dtype=np.int64)
    if (d < 0).any() or (d >= scores.size).any():
        return "document number out of range"
    if not match[d].all():
        return f"non-matching document {int(d[~match[d]][0])} returned"
    got = np.array([s for _, s in hits], dtype=np.float64)
    ref = scores[d]
    bound = tol * np.maximum(1.0, np.abs(ref))
    bad = np.flatnonzero(np.abs(got - ref) > bound)
    if bad.size:
        i = int(bad[0])
        return f"score of doc {docs[i]} is {got[i]!r}, its formula gives {ref[i]!r}"
    cand = scores[match]
    if cand.size > want:
        cand = np.partition(cand, cand.size - want)[cand.size - want :]
    best = -np.sort(-cand)
    mine = -np.sort(-ref)
    off = np.flatnonzero(np.abs(best - mine) > tol * np.maximum(1.0, np.abs(best)))
    if off.size:
        i = int(off[0])
        return f"rank {i + 1}: best possible score {best[i]!r}, returned {mine[i]!r}"
    if (np.diff(got) > bound[1:] + bound[:-1]).any():
        return "hits not in score order"
    return ""
