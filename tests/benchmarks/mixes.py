"""Query mixes drawn deterministically from a prepared corpus: rare, frequent, mixed and long.

Pruning engines are fast or slow depending on the document frequency of the query terms, so one
query generator flatters whoever suits it. Each mix is made from the corpus itself (its exact
statistics in the oracle, its tokens in the pre-tokenised file), the same for every engine, and
cached like the corpus:

- ``default``: the size's own queries (the generator's realistic ones; SciFact's test claims).
- ``rare``: only terms in fewer than 0.1 % of the documents — 2–6 of one document's rarest words
  (filled from the rare vocabulary when a document has too few).
- ``frequent``: at least one term in 10 % of the documents or more — one or two of a document's
  frequent words with 1–4 of its other words.
- ``mixed``: a third ``rare``, a third ``frequent`` and the rest ``default``, shuffled.
- ``long``: 50–200 distinct terms drawn like ArguAna's argument queries, which are whole
  arguments: the words of a document in text order (function words included), continued with
  the following documents until the drawn length is reached.

Words are distinct within a query (engines disagree on what a repeated query word means).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from tests.benchmarks.engines import ref_tokens
from tests.benchmarks.verify import Oracle

MIXES = ("default", "rare", "mixed", "frequent", "long")
RARE = 0.001
"""A rare term is in fewer than this share of the documents."""
FREQUENT = 0.10
"""A frequent term is in at least this share of the documents."""
LONG = (50, 200)
"""Distinct terms of a long query (inclusive)."""
SHORT_LENGTHS = ([2, 3, 4, 5, 6], [0.24, 0.32, 0.22, 0.13, 0.09])


def make(
    mix: str, oracle: Oracle, pretok: Path, layout: str, n: int, seed: int, default: list[str]
) -> list[str]:
    """Return ``n`` queries of ``mix`` (``default``: the size's own queries, given)."""
    if mix not in MIXES:
        raise ValueError(f"unknown mix {mix!r}: use one of {', '.join(MIXES)}")
    if mix == "default":
        return default[:n]
    rng = np.random.default_rng([seed, 7, MIXES.index(mix)])
    if mix == "mixed":
        third = n // 3
        parts = [
            *make("rare", oracle, pretok, layout, third, seed, default),
            *make("frequent", oracle, pretok, layout, third, seed, default),
            *default[: n - 2 * third],
        ]
        return [parts[i] for i in rng.permutation(len(parts)).tolist()]
    targets = np.sort(rng.integers(0, oracle.n_docs, n)).tolist()
    follow = 400 if mix == "long" else 0  # a long query may run on into the next documents
    texts = _documents(pretok, layout, set(targets), follow, oracle.n_docs)
    df = oracle.df
    if mix == "long":
        return [_long(texts, t, oracle.n_docs, rng) for t in targets]
    rare_cut, freq_cut = RARE * oracle.n_docs, FREQUENT * oracle.n_docs
    rare_vocab = np.flatnonzero((df > 0) & (df < rare_cut))
    freq_vocab = np.flatnonzero(df >= freq_cut)
    out = []
    for t in targets:
        words = list(dict.fromkeys(texts.get(t, [])))
        ids = [oracle.vocab[w] for w in words if w in oracle.vocab]
        length = int(rng.choice(SHORT_LENGTHS[0], p=SHORT_LENGTHS[1]))
        if mix == "rare":
            own = [i for i in ids if df[i] < rare_cut]
            out.append(_words(oracle, _pick(own, length, rare_vocab, rng)))
        else:
            own_freq = [i for i in ids if df[i] >= freq_cut]
            n_freq = int(rng.integers(1, 3))
            chosen = _pick(own_freq, n_freq, freq_vocab, rng)
            others = [i for i in ids if i not in chosen]
            chosen += _pick(others, max(length - len(chosen), 1), np.array(ids), rng, chosen)
            out.append(_words(oracle, [chosen[i] for i in rng.permutation(len(chosen))]))
    return out


def _pick(
    own: list[int], k: int, pool: np.ndarray, rng: np.random.Generator, taken: list[int] = ()
) -> list[int]:
    """Return ``k`` distinct ids: from ``own`` first (random order), then from ``pool``."""
    chosen = [own[i] for i in rng.permutation(len(own))[:k].tolist()] if own else []
    seen = set(chosen) | set(taken)
    tries = 0
    while len(chosen) < k and pool.size and tries < 100 * k:
        tries += 1
        i = int(pool[rng.integers(0, pool.size)])
        if i not in seen:
            seen.add(i)
            chosen.append(i)
    return chosen


def _words(oracle: Oracle, ids: list[int]) -> str:
    return " ".join(oracle.terms[i] for i in ids)


def _long(texts: dict[int, list[str]], target: int, n_docs: int, rng: np.random.Generator) -> str:
    """The distinct words of document ``target`` and the next ones, up to a drawn length."""
    want = int(rng.integers(LONG[0], LONG[1] + 1))
    words: dict[str, None] = {}
    for d in range(target, target + 401):
        if len(words) >= want:
            break
        for w in texts.get(d % n_docs, []):
            words.setdefault(w)
            if len(words) == want:
                break
    return " ".join(words)


def _documents(
    pretok: Path, layout: str, wanted: set[int], follow: int, n_docs: int
) -> dict[int, list[str]]:
    """Return the tokens of the wanted documents (and of ``follow`` documents after each)."""
    keep = set(wanted)
    for t in wanted:
        keep.update((t + j) % n_docs for j in range(1, follow + 1))
    return {i: tokens for i, tokens in enumerate(_read(pretok, layout)) if i in keep}


def _read(pretok: Path, layout: str) -> Iterator[list[str]]:
    """Yield every document's tokens in order from the pre-tokenised file."""
    with open(pretok, encoding="utf-8", newline="\n") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if layout == "passages":
                yield parts[1].split() if len(parts) > 1 else []
            else:
                yield f"{parts[2]} {parts[3]}".split() if len(parts) == 4 else []


def describe(queries: list[str], oracle: Oracle) -> str:
    """Return what the queries are, measured on the corpus (the mix's promise, checked).

    Distinct terms per query (min–median–max) and the share of queries whose terms are all rare
    (< 0.1 % of documents) and with at least one frequent term (≥ 10 %).
    """
    if not queries:
        return "no queries"
    df, vocab = oracle.df, oracle.vocab
    rare_cut, freq_cut = RARE * oracle.n_docs, FREQUENT * oracle.n_docs
    lengths, all_rare, some_freq = [], 0, 0
    for q in queries:
        ids = [vocab[w] for w in dict.fromkeys(ref_tokens(q)) if w in vocab]
        lengths.append(len(ids))
        all_rare += bool(ids) and all(df[i] < rare_cut for i in ids)
        some_freq += any(df[i] >= freq_cut for i in ids)
    n = len(queries)
    return (
        f"{min(lengths)}–{int(np.median(lengths))}–{max(lengths)} terms; "
        f"all terms rare {100 * all_rare / n:.0f} %; a frequent term {100 * some_freq / n:.0f} %"
    )
