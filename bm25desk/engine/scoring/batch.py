"""Many searches at once: evaluation runs through one kernel call per chunk of queries.

:meth:`~bm25desk.engine.scoring.search.Searcher.search_many` ranks the queries that the
exhaustive traversal suits (small collections, long queries, deep k: what an evaluation run at
k = 1000 asks) with :func:`search_waves`: a wave of queries at a time, their new terms are
weighed and looked up at once, and each chunk of a wave is one call into the kernel
(``_topk.batch``, ``_topk_src/batch.c``, see :func:`chunk_runner`) that ranks query after query
without the GIL, on a pool of threads, while the caller's thread prepares the next wave. A query
then costs no Python per term and no Python object per hit: its result's hits are views of the
chunk's arrays. The rankings are those of :meth:`Searcher.search` bit for bit (the same
traversal, the same sums in query order, the same tie rule); other queries go one by one
(:func:`run_chunked`).

With two threads on two cores the chunks' kernel calls overlap; results come back in the order
of the queries whatever the threads do.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np

from bm25desk.engine.index.arrays import F64, I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring import impacts, postings_cache, topk
from bm25desk.engine.scoring.hits import Hits
from bm25desk.engine.scoring.query import ParsedQuery
from bm25desk.engine.scoring.results import QueryAnalysis, SearchResult
from bm25desk.engine.scoring.variant import TermWeight, Variant

if TYPE_CHECKING:
    from bm25desk.engine.scoring.feedback import Feedback
    from bm25desk.engine.scoring.search import Searcher

T = TypeVar("T")
R = TypeVar("R")

CHUNK = 16
"""Queries per task of the one-by-one path: its cost (tens of µs) small beside its searches."""

KERNEL_CHUNK = 64
"""Queries per kernel call: the chunk's term table is checked once for all of them, and each
thread still gets several chunks of a run to balance (results of a chunk are views of its
arrays: k places per query)."""

WAVE = 128
"""Queries parsed, weighed and looked up per step of :func:`search_waves`: the kernel ranks one
wave on the pool's threads while the caller's thread prepares the next."""


class _CollectorHold:
    """How many batches hold the collector off, and whether it was on before the first."""

    lock = threading.Lock()
    held = 0
    was_on = False


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """Hold off Python's cyclic garbage collector while a batch runs (then as it was).

    A batch allocates several objects per query term and per query (tokens, results), nearly
    none of them in cycles; the collector's passes over everything alive (the analyser's and the
    searcher's memos hold hundreds of thousands of objects) took about 15 % of a run of long
    queries at k = 1000. Nested or concurrent batches share one hold: the collector comes back
    when the last of them ends, and only if it was on before the first (a batch ending while
    another ran turned it back on under the other).
    """
    hold = _CollectorHold
    with hold.lock:
        if hold.held == 0:
            hold.was_on = gc.isenabled()
            gc.disable()
        hold.held += 1
    try:
        yield
    finally:
        with hold.lock:
            hold.held -= 1
            if hold.held == 0 and hold.was_on:
                _age_young()
                gc.enable()


def _age_young() -> None:
    """Move every object tracked by the collector to its oldest generation, without a pass.

    A batch makes hundreds of thousands of objects with the collector off (a run of 1,000 long
    queries: ~290 k, its parsed queries and results), nearly all of them alive when it ends;
    the first allocation after it then set off a pass over all of them (~26 ms, 3-4 % of the
    run). Freezing and unfreezing moves them to the oldest generation without looking at them
    (two list splices): the next full pass looks at them, as at any old object. Not when
    something else froze objects (``gc.freeze``): those stay frozen.
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def default_threads() -> int:
    """Return the threads a batch uses when not told: one per core, at most 4."""
    return max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))


def run_chunked(
    fn: Callable[[T], R], items: Sequence[T], threads: int, chunk: int = CHUNK
) -> list[R]:
    """Return ``[fn(x) for x in items]``, computed by up to ``threads`` threads in chunks.

    An exception raised by ``fn`` propagates (after the running chunks finish).
    """
    if threads <= 1 or len(items) <= chunk:
        return [fn(x) for x in items]

    def run(lo: int) -> list[R]:
        return [fn(x) for x in items[lo : lo + chunk]]

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="bm25desk-search") as pool:
        parts = list(pool.map(run, range(0, len(items), chunk)))
    return [r for part in parts for r in part]


class Ranked(NamedTuple):
    """One query's top k from :func:`chunk_runner`: docnos, scores, matching documents."""

    docnos: I64
    scores: F64
    matches: int


class Queries(NamedTuple):
    """Queries as slots into a table of distinct terms (what :func:`chunk_runner` reads).

    Query ``i``'s terms, in query order, are ``slots[offsets[i]:offsets[i + 1]]`` (positions
    in ``terms``, distinct within a query) with their query term frequencies ``qtfs``.
    """

    terms: list[tuple[str, TermWeight]]
    slots: Any  # int32
    qtfs: Any  # float64
    offsets: Any  # int64, one more than the queries


def chunk_runner(
    index: Index, queries: Queries, k: int, allows: Sequence[Any] | None, threads: int
) -> tuple[Callable[[int], list[Ranked]], list[int]] | None:
    """Return what ranks the queries by the exhaustive traversal: run(lo), and the chunks' lo.

    ``run(lo)`` returns the top ``k`` of the chunk of queries from ``lo`` (one kernel call).

    The same documents and bit-identical scores as
    :func:`~bm25desk.engine.scoring.topk.exhaustive_top_k` for each query alone (hence as the
    dense float64 ranking): ``qw = qtf · idf`` as Python multiplies it, each term's tf parts from
    its variant's table, kept decoded (:mod:`.postings_cache`) for the next query that has the
    term. ``allows``: per query None or a boolean mask by docno. None when the kernel cannot
    take them (no compiled kernel, a table or weight it refuses): the caller ranks one by one.

    ``run`` raises :class:`IndexCorruptError` when a block of postings does not decode.
    """
    if not topk.HAVE_KERNEL:
        return None
    st = topk._state(index)
    rows = _entries(st, index, queries.terms)
    if rows is None:
        return None
    idf = np.array([w.idf for _, w in queries.terms], dtype=np.float64)
    qws = queries.qtfs * idf[queries.slots] if idf.size else np.zeros(0)
    if not np.isfinite(qws).all():
        return None
    segments = tuple((sg.dli, sg.deny, sg.base) for sg in st.segments)
    offsets = queries.offsets
    n = offsets.size - 1
    # With threads, at least two chunks each (an evaluation asks 64 queries at a time).
    per = KERNEL_CHUNK if threads <= 1 else max(1, min(KERNEL_CHUNK, -(-n // (2 * threads))))
    bounds = list(range(0, n, per))

    def run(lo: int) -> list[Ranked]:
        hi = min(lo + per, n)
        a, z = int(offsets[lo]), int(offsets[hi])
        used, local = np.unique(queries.slots[a:z], return_inverse=True)
        keep = used.tolist()
        lists = tuple(tuple([row[g] for g in keep]) for row in rows)
        try:
            d, s, sizes, matches, kk = topk._topk.batch(
                segments,
                lists,
                local.astype(np.int32),
                np.ascontiguousarray(qws[a:z]),
                np.ascontiguousarray(offsets[lo : hi + 1] - a),
                k,
                None if allows is None else tuple(allows[lo:hi]),
                split=threads <= 1,  # one thread of queries: a large one may use the others
            )
        except ValueError as exc:
            topk._raise_if_damaged(index, exc)
            raise
        docnos = np.frombuffer(d, dtype=np.int64).reshape(hi - lo, kk)
        scores = np.frombuffer(s, dtype=np.float64).reshape(hi - lo, kk)
        size = np.frombuffer(sizes, dtype=np.int64).tolist()
        found = np.frombuffer(matches, dtype=np.int64).tolist()
        return [
            Ranked(docnos[i, : size[i]], scores[i, : size[i]], found[i]) for i in range(hi - lo)
        ]

    return run, bounds


def _entries(st: Any, index: Index, terms: list[tuple[str, TermWeight]]) -> list[list[Any]] | None:
    """Return per segment, per term, its Parts (None: absent), or None (a table refused)."""
    return postings_cache.entries(st, index.doclen, [(t, 1, w) for t, w in terms])


def search_waves(
    searcher: Searcher,
    queries: Sequence[Any],
    syntax: bool,
    variant: Variant,
    k: int,
    feedback: Feedback | None,
    count: bool,
    threads: int,
) -> tuple[list[ParsedQuery], dict[int, SearchResult]]:
    """Parse ``queries``, and rank those the exhaustive traversal suits, a wave at a time.

    Returns every query parsed, and the results of those ranked here by position (each equal
    to :meth:`Searcher.search_parsed`'s without contributions); the others (see
    :func:`_plan`) are the caller's to search one by one. The queries go in waves of
    :data:`WAVE`: while the pool's threads rank one wave in the kernel (without the GIL), this
    thread parses the next, weighs its new terms and finds their Parts. Done one after the
    other, that preparation left a core idle for a third of a run of long queries at k = 1000.
    """
    started = time.perf_counter()
    parsed: list[ParsedQuery] = []
    waves: list[tuple[int, _Wave]] = []
    done: dict[int, SearchResult] = {}
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="bm25desk-search") as pool:
        try:
            lo, size = 0, max(1, WAVE // 4)  # a small first wave: the kernel starts sooner
            while lo < len(queries):
                wave = [searcher._as_parsed(q, syntax) for q in queries[lo : lo + size]]
                searcher._weigh_new(wave, variant, feedback)
                parsed.extend(wave)
                handed = _start(searcher, wave, variant, k, feedback, threads, pool)
                if handed is not None:
                    waves.append((lo, handed))
                lo, size = lo + size, WAVE
            # Each wave's results as it ends (the later ones still ranking meanwhile); a query's
            # time is its share of the wave's, from the end of the wave before.
            last = started
            for lo, w in waves:
                got = [r for f in w.futures for r in f.result()]
                now = time.perf_counter()
                seconds, last = (now - last) / len(w.chosen), now
                for i, r in zip(w.chosen, got, strict=True):
                    done[lo + i] = _result(
                        searcher, w.parsed[i], variant, r, k, count, feedback, seconds, w.gone
                    )
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return parsed, done


class _Wave(NamedTuple):
    """One wave's queries handed to the pool: which of them, their kernel calls."""

    parsed: Sequence[ParsedQuery]
    chosen: list[int]
    futures: list[Future[list[Ranked]]]
    gone: set[str]


def _start(
    searcher: Searcher,
    parsed: Sequence[ParsedQuery],
    variant: Variant,
    k: int,
    feedback: Feedback | None,
    threads: int,
    pool: ThreadPoolExecutor,
) -> _Wave | None:
    """Hand the queries of ``parsed`` the exhaustive traversal suits to ``pool``, chunk by chunk.

    None when there are none, or when the kernel cannot take them (:func:`chunk_runner`).
    """
    plan = _plan(searcher, parsed, variant, k, feedback)
    if plan is None:
        return None
    chosen, queries, allows, gone = plan
    got = chunk_runner(searcher.index, queries, k + 1, allows, threads)
    if got is None:
        return None
    run, bounds = got
    return _Wave(parsed, chosen, [pool.submit(run, lo) for lo in bounds], gone)


def _plan(
    searcher: Searcher,
    parsed: Sequence[ParsedQuery],
    variant: Variant,
    k: int,
    feedback: Feedback | None,
) -> tuple[list[int], Queries, list[Any] | None, set[str]] | None:
    """Return the queries of ``parsed`` the exhaustive traversal suits, as the kernel reads them.

    Those are the queries with something to search for whose ranking would take the exhaustive
    path one by one (:func:`~bm25desk.engine.scoring.impacts.prefer`, or the searcher's
    strategy): their positions, their terms as :class:`Queries`, their allow masks (None: no
    filters or constraints), and the terms in no document of the index. None when there are
    none.
    """
    index = searcher.index
    table = searcher._table(variant, feedback)
    slot_of: dict[str, int] = {}
    terms: list[tuple[str, TermWeight]] = []
    dfs: list[int] = []
    df_of = searcher._dfs.get
    slots: list[int] = []
    qtfs: list[int] = []
    offsets = [0]
    chosen: list[int] = []
    # Terms in no document of this index (the analysis marks them): with its own statistics,
    # those without a weighting; a shard's may weigh a term it does not hold.
    term_id = index.term_id
    own = searcher.statistics is index
    gone: set[str] = set()
    slot_get = slot_of.get
    for i, p in enumerate(parsed):
        scored = p.scored
        if not scored:
            continue  # a QueryError, one by one
        chosen.append(i)
        for term, qtf in scored:
            s = slot_get(term)
            if s is None:  # the term's first occurrence: its slot, or -1 (no weighting)
                w = table.get(term)  # (a dict read: the plan meets ~49 k distinct terms a run)
                if w is None and term not in table:  # emptied meanwhile by another search
                    w = searcher._weigh(table, term, variant, feedback)
                if w is None:
                    s = slot_of[term] = -1
                    if term_id(term) < 0:
                        gone.add(term)
                else:
                    s = slot_of[term] = len(terms)
                    terms.append((term, w))
                    dfs.append(df_of(term, 0))
                    if not own and term_id(term) < 0:
                        gone.add(term)
            if s >= 0:
                slots.append(s)
                qtfs.append(qtf)
        offsets.append(len(slots))
    slot_arr = np.array(slots, dtype=np.int32)
    qtf_arr = np.array(qtfs, dtype=np.float64)
    off_arr = np.array(offsets, dtype=np.int64)
    if searcher.strategy != "exhaustive":
        keep = _prefers(index, np.array(dfs, dtype=np.int64), slot_arr, off_arr, k + 1)
        if not keep.all():
            lengths = np.diff(off_arr)
            per_term = np.repeat(keep, lengths)
            slot_arr, qtf_arr = slot_arr[per_term], qtf_arr[per_term]
            off_arr = np.concatenate(([0], np.cumsum(lengths[keep]))).astype(np.int64)
            chosen = [i for i, kept in zip(chosen, keep.tolist(), strict=True) if kept]
    if not chosen:
        return None
    allows = None
    if searcher.filters is not None or any(parsed[i].has_constraints for i in chosen):
        # The filters' mask once for every query without constraints (the kernel only reads it).
        plain: list[Any] = []
        allows = []
        for i in chosen:
            p = parsed[i]
            if p.has_constraints:
                allows.append(searcher._allowed(p))
            else:
                if not plain:
                    plain.append(searcher._allowed(p))
                allows.append(plain[0])
    return chosen, Queries(terms, slot_arr, qtf_arr, off_arr), allows, gone


def _prefers(index: Index, dfs: I64, slots: Any, offsets: I64, k: int) -> Any:
    """Return, per query, whether the exhaustive path suits it (as :meth:`Searcher._rank` asks).

    A query without postings counts as suited: every path gives it no hits.
    """
    lengths = np.diff(offsets)
    postings = np.zeros(lengths.size, dtype=np.int64)
    nonempty = lengths > 0
    if slots.size:
        sums = np.add.reduceat(dfs[slots], offsets[:-1][nonempty])
        postings[nonempty] = sums
    return np.array(
        [p == 0 or impacts.prefer(index, p, k, True) for p in postings.tolist()], dtype=bool
    )


def _result(
    searcher: Searcher,
    parsed: ParsedQuery,
    variant: Variant,
    r: Ranked,
    k: int,
    count: bool,
    feedback: Feedback | None,
    seconds: float,
    gone: set[str],
) -> SearchResult:
    """Return the :class:`SearchResult` of one query ranked by :func:`chunk_runner`.

    ``gone``: the query's terms (and others) in no document of the index.
    """
    docnos, scores = r.docnos, r.scores
    next_score = float(scores[k]) if scores.size > k else None
    stats = searcher.statistics
    hits = Hits(searcher.index, docnos[:k], scores[:k], next_score, None, None, stats)
    return SearchResult(
        parsed.text,
        _analysis(searcher, parsed, gone),
        variant,
        hits,
        r.matches if count else -1,
        stats.stats.n_docs,
        stats.stats.avgdl,
        seconds,
        feedback,
    )


def _analysis(searcher: Searcher, parsed: ParsedQuery, gone: set[str]) -> QueryAnalysis:
    """Return :meth:`Searcher.analyze` of ``parsed``, its terms in no document being ``gone``.

    A query without syntax has no tokens but its scored terms and stop words (each token's term
    is scored): no look-up per token. One the parser read may hold other terms (prohibited
    ones...): the searcher looks them up.
    """
    if parsed.syntax:
        return searcher.analyze(parsed)
    from bm25desk.engine.scoring.search import analysis_of  # (search.py imports this module)

    missing = [t for t, _ in parsed.scored if t in gone] if gone else ()
    return analysis_of(parsed, missing)
