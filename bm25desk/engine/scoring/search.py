"""Search and explain: rank an index under any variant, and say why, term by term.

Scoring is float64 throughout. For each distinct query term (in query order) the searcher takes
the term's live postings and adds ``qtf · idf · tf_part(tf, L)`` to each posting's document; the
explanation of a document runs the same :class:`~bm25desk.engine.scoring.variants.TermWeight` on
the same numbers in the same order, so its parts sum to the score bit for bit.

Ranking: score descending; **ties are broken by internal document order** (the order documents
were indexed: file order for corpus files, sorted path order for folders, then later updates).
The same rule applies in the CLI, the app and evaluation runs.

A document is a match when it contains at least one scored term and satisfies the query's
constraints (``+``/``-``, phrases, ``title:``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bm25desk.engine.index.reader import Index
from bm25desk.engine.index.segment import F64, I64
from bm25desk.engine.scoring import topk
from bm25desk.engine.scoring.query import (
    ParsedQuery,
    QueryToken,
    contains_phrase,
    parse_query,
    parse_terms,
)
from bm25desk.engine.scoring.variants import (
    Lucene,
    TermWeight,
    Variant,
    _g,
    rsj_text,
    rsj_weight,
)


class QueryError(ValueError):
    """The query cannot be searched (nothing left after analysis, only prohibitions...)."""


@dataclass(frozen=True, slots=True)
class Feedback:
    """Relevance information: documents the user marked relevant (docnos).

    With feedback, every variant's idf is replaced by the Robertson/Sparck Jones weight.
    """

    relevant: frozenset[int]


@dataclass(frozen=True, slots=True)
class Contribution:
    """One query term's part of one document's score: ``weight = qtf · idf · tf_part``."""

    term: str
    qtf: int
    tf: int
    df: int
    idf: float
    tf_part: float
    weight: float


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked document with its per-term contributions (in query-term order)."""

    rank: int
    docno: int
    docid: str
    score: float
    title: str
    location: str
    length: int
    contributions: tuple[Contribution, ...]


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    """The query as the searcher understood it: tokens with status and role, terms, constraints."""

    parsed: ParsedQuery
    tokens: tuple[QueryToken, ...]  # with status "unknown" for terms in no document
    unknown: tuple[str, ...]
    stopped: tuple[str, ...]

    @property
    def terms(self) -> tuple[str, ...]:
        """Return the distinct scored terms."""
        return self.parsed.terms


@dataclass(frozen=True, slots=True)
class SearchResult:
    """A ranking: the top hits, how many documents matched, and the query as analysed."""

    query: str
    analysis: QueryAnalysis
    variant: Variant
    hits: tuple[Hit, ...]
    n_matches: int
    n_docs: int
    avgdl: float
    seconds: float
    feedback: Feedback | None = None


@dataclass(frozen=True, slots=True)
class TermExplanation:
    """A ledger row: one query term against one document, with formulas and numbers."""

    surface: str
    term: str | None
    status: str  # matched | unmatched | unknown | stop | short | prohibited
    qtf: int
    tf: int
    df: int
    cf: int
    idf: float
    idf_text: str
    tf_part: float
    tf_text: str
    weight: float
    share: float  # weight / score (0 when the score is 0)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a document scored what it did under one variant: the score ledger."""

    docno: int
    docid: str
    title: str
    score: float
    variant: Variant
    length: int
    avgdl: float
    n_docs: int
    terms: tuple[TermExplanation, ...]
    matches: bool  # contains a scored term and satisfies the constraints
    reason: str  # why it does not match, if it does not
    rank: int | None = None

    @property
    def parts_sum(self) -> float:
        """Return the sum of the term weights, in the order the score adds them."""
        total = 0.0
        for t in self.terms:
            if t.status == "matched":
                total += t.weight
        return total

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the CLI's ``explain --json`` shape)."""
        return {
            "docid": self.docid,
            "docno": self.docno,
            "title": self.title,
            "score": self.score,
            "rank": self.rank,
            "matches": self.matches,
            "reason": self.reason,
            "length": self.length,
            "avgdl": self.avgdl,
            "documents": self.n_docs,
            "variant": variant_dict(self.variant),
            "contributions": [
                {
                    "term": t.term,
                    "surface": t.surface,
                    "status": t.status,
                    "qtf": t.qtf,
                    "tf": t.tf,
                    "df": t.df,
                    "cf": t.cf,
                    "idf": t.idf,
                    "idf_formula": t.idf_text,
                    "tf_part": t.tf_part,
                    "tf_formula": t.tf_text,
                    "weight": t.weight,
                    "share": t.share,
                    "notes": list(t.notes),
                }
                for t in self.terms
            ],
        }

    def as_json(self) -> str:
        """Return :meth:`as_dict` as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)

    def as_text(self) -> str:
        """Return a Lucene-style indented tree (``score = sum of: …``)."""
        v = self.variant
        lines = [
            f"{_g(self.score)} = score of {self.docid!r} under {v!r}, sum of:"
            + ("" if self.matches else f"   [not a match: {self.reason}]")
        ]
        for t in self.terms:
            if t.status == "matched":
                lines.append(
                    f"  {_g(t.weight)} = weight of {t.term!r} ({t.share:.1%}), "
                    f"qtf · idf · tf part = {t.qtf} · {_g(t.idf)} · {_g(t.tf_part)}"
                )
                lines.append(f"    {_g(t.idf)} = idf = {t.idf_text}   (df {t.df}, N {self.n_docs})")
                lines.append(
                    f"    {_g(t.tf_part)} = tf part = {t.tf_text}   "
                    f"(tf {t.tf}, L {self.length}, Lavg {_g(self.avgdl)})"
                )
                lines.extend(f"    note: {n}" for n in t.notes)
            else:
                lines.append(f"  0 = {_status_text(t)}")
        lines.append(f"  check: parts sum to {_g(self.parts_sum)} (score {_g(self.score)})")
        return "\n".join(lines)

    def as_markdown(self) -> str:
        """Return the ledger as a Markdown table."""
        head = (
            f"**{self.docid}** — score {_g(self.score)} under `{self.variant!r}` "
            f"(L = {self.length}, Lavg = {_g(self.avgdl)}, N = {self.n_docs})\n\n"
            "| term | status | qtf | tf | df | idf | tf part | weight | share |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
        )
        rows = [
            f"| {t.surface} → {t.term or '—'} | {t.status} | {t.qtf} | {t.tf} | {t.df} | "
            f"{_g(t.idf)} | {_g(t.tf_part)} | {_g(t.weight)} | {t.share:.1%} |"
            for t in self.terms
        ]
        return head + "\n".join(rows) + f"\n\nSum of parts: {_g(self.parts_sum)}\n"


def _status_text(t: TermExplanation) -> str:
    return {
        "unmatched": f"{t.term!r} does not occur in this document (df {t.df})",
        "unknown": f"{t.surface!r} → {t.term!r} occurs in no document",
        "stop": f"{t.surface!r} is a stop word (not scored)",
        "short": f"{t.surface!r} is shorter than the minimum length (not scored)",
        "prohibited": f"{t.surface!r} is prohibited (-), not scored",
    }.get(t.status, t.status)


def variant_dict(v: Variant) -> dict[str, Any]:
    """Return ``{"key", **parameters}`` (the JSON shape of a variant)."""
    return {"key": v.key, **v.values()}


class Searcher:
    """Ranks an :class:`Index` under any variant and explains any document.

    Thread-safe for concurrent searches (caches are guarded); cheap to create.
    """

    CACHE_SIZE = 4096

    def __init__(self, index: Index) -> None:
        self.index = index
        self._weights: OrderedDict[tuple[Any, ...], TermWeight | None] = OrderedDict()
        self._lock = threading.Lock()
        self._corrector: Any = None

    # -- analysis --------------------------------------------------------------------------------

    def parse(self, query: str, *, syntax: bool = True) -> ParsedQuery:
        """Parse and analyse ``query`` with the index's analyser."""
        return parse_query(query, self.index.analyzer, syntax=syntax)

    def analyze(self, query: str | ParsedQuery, *, syntax: bool = True) -> QueryAnalysis:
        """Return the query's tokens with their status (stop-listed, unknown...) and role."""
        parsed = query if isinstance(query, ParsedQuery) else self.parse(query, syntax=syntax)
        tokens = []
        unknown: list[str] = []
        for tok in parsed.tokens:
            if tok.term is not None and self.index.term_id(tok.term) < 0:
                tok = dataclasses.replace(tok, status="unknown")
                unknown.append(tok.term)  # type: ignore[arg-type]
            tokens.append(tok)
        stopped = [t.surface for t in parsed.tokens if t.status == "stop"]
        return QueryAnalysis(
            parsed, tuple(tokens), tuple(dict.fromkeys(unknown)), tuple(dict.fromkeys(stopped))
        )

    def suggest(self, term: str, n: int = 3) -> list[str]:
        """Return up to ``n`` vocabulary terms close to ``term`` ("did you mean").

        Uses whoosh's :class:`~whoosh.spelling.ListCorrector` over the vocabulary (loaded once).
        """
        from whoosh.spelling import ListCorrector

        with self._lock:
            if self._corrector is None:
                self._corrector = ListCorrector(sorted(self.index.vocabulary(min_df=1)))
            corrector = self._corrector
        return [s for s in corrector.suggest(term, limit=n, maxdist=2) if s != term]

    # -- weights ---------------------------------------------------------------------------------

    def weight(
        self, term: str, variant: Variant, feedback: Feedback | None = None
    ) -> TermWeight | None:
        """Return the term's weighting under ``variant`` (None when it is in no document)."""
        key = (term, variant, feedback)
        with self._lock:
            if key in self._weights:
                self._weights.move_to_end(key)
                return self._weights[key]
        stats = self.index.term_stats(term)
        w = None if stats is None else variant.weigh(stats, self.index.stats)
        if w is not None and feedback is not None:
            w = self._rsj(term, w, stats.df, feedback)  # type: ignore[union-attr]
        with self._lock:
            self._weights[key] = w
            if len(self._weights) > self.CACHE_SIZE:
                self._weights.popitem(last=False)
        return w

    def _rsj(self, term: str, w: TermWeight, df: int, feedback: Feedback) -> TermWeight:
        rel = np.array(
            sorted(d for d in feedback.relevant if self.index.is_live(d)), dtype=np.int64
        )
        docnos, _ = self.index.postings(term)
        r = int(np.isin(rel, docnos, assume_unique=True).sum()) if rel.size else 0
        n, big_r = self.index.n_docs, int(rel.size)
        value = rsj_weight(r, big_r, df, n)
        text = f"RSJ (R = {big_r} marked relevant, r = {r} contain it): {rsj_text(r, big_r, df, n)}"
        return dataclasses.replace(w, idf=value, idf_text=text)

    # -- ranking ---------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        variant: Variant | None = None,
        k: int = 10,
        *,
        feedback: Feedback | None = None,
        syntax: bool = True,
        contributions: bool = True,
        count: bool = True,
    ) -> SearchResult:
        """Rank the index for ``query`` and return the top ``k`` hits with contributions.

        ``contributions=False`` returns ids, scores and lengths only — no per-term breakdown,
        title or location (evaluation runs at k = 1000 need nothing more). ``count=False``
        leaves the matching documents uncounted (``n_matches`` is -1): the ranking never visits
        most of them, and counting them costs a pass over every query term's postings.

        Raises
        ------
        QueryError
            When nothing is left to search for after analysis.
        """
        return self.search_parsed(
            self.parse(query, syntax=syntax),
            variant,
            k,
            feedback=feedback,
            contributions=contributions,
            count=count,
        )

    def search_terms(
        self,
        terms: Sequence[str],
        variant: Variant | None = None,
        k: int = 10,
        *,
        feedback: Feedback | None = None,
        contributions: bool = True,
        count: bool = True,
    ) -> SearchResult:
        """Rank for already-analysed terms (used as they are: no analyser, no syntax)."""
        return self.search_parsed(
            parse_terms(list(terms)),
            variant,
            k,
            feedback=feedback,
            contributions=contributions,
            count=count,
        )

    def search_parsed(
        self,
        parsed: ParsedQuery,
        variant: Variant | None = None,
        k: int = 10,
        *,
        feedback: Feedback | None = None,
        contributions: bool = True,
        count: bool = True,
    ) -> SearchResult:
        """Rank for a :class:`ParsedQuery` (see :meth:`search`).

        The top k come from :func:`bm25desk.engine.scoring.topk.top_k` (a compiled kernel with
        dynamic pruning, or the dense numpy path without it): the same documents, with bit-identical
        scores, as :meth:`scores` ranked by score descending, docno ascending.
        """
        started = time.perf_counter()
        variant = variant or Lucene()
        if k < 1:
            raise QueryError("k must be at least 1")
        analysis = self.analyze(parsed)
        if not parsed.scored:
            raise QueryError(_empty_reason(parsed))
        terms = self._weighted(parsed, variant, feedback)
        n = self.index.n_slots
        allowed = self._constraints(parsed, n) if parsed.has_constraints else None
        top = topk.top_k(self.index, terms, k, allowed)
        n_matches = topk.count_matches(self.index, terms, allowed) if count else -1
        docnos, scores = top.docnos.tolist(), top.scores.tolist()
        if contributions:
            hits = self._hits(terms, docnos, scores, top.tfs.tolist(), top.parts.tolist())
        else:  # ids and scores only: what a run file needs, ~10× cheaper at k = 1000
            docid, doclen = self.index.docid, self.index.doclen
            hits = tuple(
                Hit(i + 1, d, docid(d), s, "", "", int(doclen[d]), ())
                for i, (d, s) in enumerate(zip(docnos, scores, strict=True))
            )
        return SearchResult(
            parsed.text,
            analysis,
            variant,
            hits,
            n_matches,
            self.index.n_docs,
            self.index.avgdl,
            time.perf_counter() - started,
            feedback,
        )

    def _weighted(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None
    ) -> list[tuple[str, int, TermWeight]]:
        """Return (term, qtf, weighting) of the scored terms in query order, unknown ones out."""
        out = []
        for term, qtf in parsed.scored:
            w = self.weight(term, variant, feedback)
            if w is not None:
                out.append((term, qtf, w))
        return out

    def _hits(
        self,
        terms: list[tuple[str, int, TermWeight]],
        docnos: list[int],
        scores: list[float],
        tfs: list[list[int]],
        parts: list[list[float]],
    ) -> tuple[Hit, ...]:
        """Return hits with contributions from the ranking's own per-term tf parts."""
        dfs = []
        for term, _, _ in terms:
            stats = self.index.term_stats(term)
            dfs.append(stats.df if stats is not None else 0)
        hits = []
        for i, (docno, score) in enumerate(zip(docnos, scores, strict=True)):
            row_tf, row_part = tfs[i], parts[i]
            contribs = tuple(
                Contribution(
                    term, qtf, row_tf[t], dfs[t], w.idf, row_part[t], (qtf * w.idf) * row_part[t]
                )
                for t, (term, qtf, w) in enumerate(terms)
                if row_tf[t] > 0
            )
            rec = self.index.doc(docno)
            hits.append(
                Hit(i + 1, docno, rec.docid, score, rec.title, rec.location, rec.length, contribs)
            )
        return tuple(hits)

    def scores(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None = None
    ) -> tuple[F64, Any]:
        """Return (score by docno, match mask by docno): the dense view behind a ranking."""
        scores, ok, _ = self._score(parsed, variant, feedback)
        return scores, ok

    def _score(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None
    ) -> tuple[F64, Any, list[tuple[str, int, TermWeight, I64, Any, F64]]]:
        index = self.index
        n = index.n_slots
        scores = np.zeros(n, dtype=np.float64)
        matched = np.zeros(n, dtype=bool)
        doclen = index.doclen
        parts: list[tuple[str, int, TermWeight, I64, Any, F64]] = []
        for term, qtf in parsed.scored:
            w = self.weight(term, variant, feedback)
            if w is None:
                continue
            docnos, tfs = index.postings(term)
            tf_part = w.tf_part(tfs.astype(np.float64), doclen[docnos].astype(np.float64))
            scores[docnos] += (qtf * w.idf) * tf_part
            matched[docnos] = True
            parts.append((term, qtf, w, docnos, tfs, tf_part))
        if parsed.has_constraints:
            matched &= self._constraints(parsed, n)
        return scores, matched, parts

    def _constraints(self, parsed: ParsedQuery, n: int) -> Any:
        index = self.index
        ok = np.ones(n, dtype=bool)

        def mask(docnos: I64) -> Any:
            m = np.zeros(n, dtype=bool)
            m[docnos] = True
            return m

        for term in parsed.required:
            ok &= mask(index.postings(term)[0])
        for term in parsed.prohibited:
            ok &= ~mask(index.postings(term)[0])
        for term in parsed.title_required:
            ok &= mask(index.title_docnos(term))
        for term in parsed.title_prohibited:
            ok &= ~mask(index.title_docnos(term))
        for phrase in parsed.phrases:
            ok &= self._phrase_mask(phrase, n, ok)
        for phrase in parsed.prohibited_phrases:
            ok &= ~self._phrase_mask(phrase, n, ok)
        return ok

    def _phrase_mask(self, phrase: tuple[str, ...], n: int, within: Any) -> Any:
        """Documents containing ``phrase``: all its terms (postings), then verified in the text."""
        cand = within.copy()
        for term in set(phrase):
            m = np.zeros(n, dtype=bool)
            m[self.index.postings(term)[0]] = True
            cand &= m
        out = np.zeros(n, dtype=bool)
        terms_of = self.index.analyzer.terms
        for d in np.flatnonzero(cand).tolist():
            if contains_phrase(terms_of(self.index.text(d)), phrase):
                out[d] = True
        return out

    def _hit(
        self,
        rank: int,
        docno: int,
        score: float,
        parts: list[tuple[str, int, TermWeight, I64, Any, F64]],
    ) -> Hit:
        rec = self.index.doc(docno)
        contribs = []
        for term, qtf, w, docnos, tfs, tf_part in parts:
            i = int(np.searchsorted(docnos, docno))
            if i < docnos.size and docnos[i] == docno:
                part = float(tf_part[i])
                contribs.append(
                    Contribution(
                        term, qtf, int(tfs[i]), int(docnos.size), w.idf, part, (qtf * w.idf) * part
                    )
                )
        return Hit(
            rank, docno, rec.docid, score, rec.title, rec.location, rec.length, tuple(contribs)
        )

    # -- explanation -----------------------------------------------------------------------------

    def explain(
        self,
        query: str | ParsedQuery,
        docid: str,
        variant: Variant | None = None,
        *,
        feedback: Feedback | None = None,
        syntax: bool = True,
        with_rank: bool = False,
    ) -> Explanation:
        """Explain the score of document ``docid`` (any document, matching or not).

        Raises
        ------
        KeyError
            When no live document has that id.
        """
        docno = self.index.docno(docid)
        if docno is None:
            raise KeyError(f"no document with id {docid!r} in index {self.index.name!r}")
        parsed = query if isinstance(query, ParsedQuery) else self.parse(query, syntax=syntax)
        return self.explain_docno(parsed, docno, variant, feedback=feedback, with_rank=with_rank)

    def explain_docno(
        self,
        parsed: ParsedQuery,
        docno: int,
        variant: Variant | None = None,
        *,
        feedback: Feedback | None = None,
        with_rank: bool = False,
    ) -> Explanation:
        """Explain the score of ``docno`` for a parsed query (see :meth:`explain`)."""
        variant = variant or Lucene()
        index = self.index
        rec = index.doc(docno)
        dl = float(rec.length)
        rows: list[TermExplanation] = []
        score = 0.0
        qtfs = dict(parsed.scored)
        seen: set[str] = set()
        for tok in parsed.tokens:
            if tok.term is None:
                rows.append(_row(tok.surface, None, tok.status, qtf=0))
                continue
            if tok.role == "prohibited" or tok.term in seen:
                if tok.role == "prohibited":
                    rows.append(_row(tok.surface, tok.term, "prohibited", qtf=0))
                continue
            seen.add(tok.term)
            rows.append(
                self._term_row(
                    tok.surface, tok.term, qtfs.get(tok.term, 1), docno, dl, variant, feedback
                )
            )
        # Sum in the scoring order (distinct terms in query order) so the ledger adds up exactly.
        by_term = {r.term: r for r in rows if r.status == "matched"}
        for term, _ in parsed.scored:
            if term in by_term:
                score += by_term[term].weight
        rows = [
            dataclasses.replace(r, share=(r.weight / score if score else 0.0))
            if r.status == "matched"
            else r
            for r in rows
        ]
        matches, reason = self._matches(parsed, docno, bool(by_term))
        rank = self._rank_of(parsed, variant, feedback, docno) if with_rank and matches else None
        return Explanation(
            docno,
            rec.docid,
            rec.title,
            score,
            variant,
            rec.length,
            index.avgdl,
            index.n_docs,
            tuple(rows),
            matches,
            reason,
            rank,
        )

    def _term_row(
        self,
        surface: str,
        term: str,
        qtf: int,
        docno: int,
        dl: float,
        variant: Variant,
        feedback: Feedback | None,
    ) -> TermExplanation:
        w = self.weight(term, variant, feedback)
        if w is None:
            return _row(surface, term, "unknown", qtf=qtf)
        stats = self.index.term_stats(term)
        assert stats is not None
        docnos, tfs = self.index.postings(term)
        i = int(np.searchsorted(docnos, docno))
        tf = int(tfs[i]) if i < docnos.size and docnos[i] == docno else 0
        if tf == 0:
            return _row(
                surface,
                term,
                "unmatched",
                qtf=qtf,
                df=stats.df,
                cf=stats.cf,
                idf=w.idf,
                idf_text=w.idf_text,
                notes=w.notes,
            )
        part = float(w.tf_part(np.array([float(tf)]), np.array([dl]))[0])
        return TermExplanation(
            surface,
            term,
            "matched",
            qtf,
            tf,
            stats.df,
            stats.cf,
            w.idf,
            w.idf_text,
            part,
            w.tf_text(float(tf), dl),
            (qtf * w.idf) * part,
            0.0,
            w.notes,
        )

    def _matches(self, parsed: ParsedQuery, docno: int, any_term: bool) -> tuple[bool, str]:
        if not any_term:
            return False, "contains none of the query terms"
        if not parsed.has_constraints:
            return True, ""
        ok = self._constraints(parsed, self.index.n_slots)
        if ok[docno]:
            return True, ""
        return False, "fails the query's constraints (+, -, phrase or title:)"

    def _rank_of(
        self, parsed: ParsedQuery, variant: Variant, feedback: Feedback | None, docno: int
    ) -> int:
        scores, ok, _ = self._score(parsed, variant, feedback)
        s = scores[docno]
        better = ok & ((scores > s) | ((scores == s) & (np.arange(scores.size) < docno)))
        return int(better.sum()) + 1


def _row(
    surface: str,
    term: str | None,
    status: str,
    *,
    qtf: int,
    df: int = 0,
    cf: int = 0,
    idf: float = 0.0,
    idf_text: str = "",
    notes: tuple[str, ...] = (),
) -> TermExplanation:
    return TermExplanation(
        surface, term, status, qtf, 0, df, cf, idf, idf_text, 0.0, "", 0.0, 0.0, notes
    )


def _empty_reason(parsed: ParsedQuery) -> str:
    if not parsed.tokens:
        return "the query is empty"
    stopped = [t.surface for t in parsed.tokens if t.status == "stop"]
    if stopped and all(t.term is None for t in parsed.tokens):
        return f"nothing to search for: {', '.join(stopped)} are stop words"
    if all(t.role == "prohibited" for t in parsed.tokens):
        return "nothing to search for: the query only excludes words"
    return "nothing to search for after analysis"


def _top_k(scores: F64, cand: I64, k: int) -> I64:
    """Return the top-``k`` candidates by score desc, ties by docno asc (exact, stable)."""
    if cand.size == 0:
        return cand
    sc = scores[cand]
    if cand.size > k:
        kth = np.partition(sc, cand.size - k)[cand.size - k]
        keep = sc >= kth
        cand, sc = cand[keep], sc[keep]
    order = np.lexsort((cand, -sc))[:k]
    return np.asarray(cand[order], dtype=np.int64)


def is_finite(x: float) -> bool:
    """Return whether ``x`` is a finite float (scores of degenerate collections may not be)."""
    return math.isfinite(x)
