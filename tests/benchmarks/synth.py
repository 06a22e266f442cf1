"""Deterministic synthetic corpora with MS MARCO-like statistics, and realistic queries.

Two layouts, both streamed to TSV in bounded memory:

- **passages** (``id<TAB>text``): ~60 tokens a passage (log-normal lengths, 6–220);
- **documents** (``docid<TAB>url<TAB>title<TAB>body``): ~1,100 body tokens a document (log-normal,
  heavy right tail, 30–60,000), a 3–14 word title in Title Case and a url.

Text is made of pronounceable fake words (``brostel``, ``flaimen``...), a few real function words
at the top of the frequency list, some numbers and ~1% of words with an accented letter, so every
tokenizer sees ordinary ``\\w+`` words. Frequencies follow Zipf's law (s = 1) over a vocabulary of
500,000 terms; each document also has a handful of *topic* terms (mid-frequency) that it repeats,
which gives the burstiness of real text (tf > 1, df < cf) that pruning and BM25's tf saturation
react to. Sentences start with a capital and end with a full stop; there are commas.

Everything is vectorised with numpy: a document's tokens are sampled with an alias table and
turned into text by a row gather from a fixed-width table of the words' bytes and one boolean
compaction per chunk, so generation runs at 20–60 MB/s and uses a few hundred MB whatever the
size. Documents are generated in fixed chunks, each from its own seeded stream, so a smaller
corpus is a prefix of a larger one with the same seed, and :meth:`Generator.queries` can
recreate any document's topic terms without generating the corpus.

Run ``python -m tests.benchmarks.synth --mode documents --n 3200000 --out docs.tsv`` to write the
MS MARCO documents-sized corpus (~22 GB); it prints the generation speed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]

VOCAB_SIZE = 500_000
ZIPF_S = 1.0
TOPIC_MIN_RANK = 300  # topic (and most query) terms are drawn below the most frequent words
FREQUENT_RANKS = 400  # "frequent" query words come from the top of the list

FUNCTION_WORDS = (
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "for",
    "that",
    "on",
    "are",
    "with",
    "as",
    "it",
    "was",
    "by",
    "be",
    "or",
    "this",
    "from",
    "you",
    "at",
    "can",
    "your",
    "an",
    "which",
    "have",
    "not",
    "what",
    "how",
    "its",
    "they",
    "has",
    "also",
    "more",
    "one",
    "their",
    "will",
    "if",
    "but",
    "other",
    "all",
    "when",
    "used",
    "most",
    "there",
    "these",
    "than",
    "may",
    "some",
    "been",
    "who",
    "do",
    "does",
    "between",
    "about",
    "into",
    "after",
    "first",
    "new",
    "time",
    "where",
    "why",
    "people",
    "use",
    "two",
    "year",
    "make",
    "such",
    "each",
    "many",
    "any",
    "well",
    "only",
)

_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "ch",
    "cl",
    "cr",
    "dr",
    "fl",
    "fr",
    "gl",
    "gr",
    "pl",
    "pr",
    "sc",
    "sh",
    "sk",
    "sl",
    "sn",
    "sp",
    "st",
    "str",
    "th",
    "tr",
    "wh",
    "",
)
_NUCLEI = ("a", "e", "i", "o", "u", "ai", "ea", "ee", "ie", "oa", "oo", "ou", "y")
_CODAS = ["", "", "", "n", "r", "s", "t", "l", "m", "nd", "nt", "st", "ck", "ng", "rt", "x", "sh"]
_SIMPLE_ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "st",
    "tr",
    "ch",
    "sh",
    "",
)
_SIMPLE_CODAS = ["", "", "", "n", "r", "s", "t", "l", "m"]
_ACCENTS = {"a": "á", "e": "é", "i": "í", "o": "ö", "u": "ü"}


@dataclass(frozen=True)
class Mode:
    """Length and topic parameters of one layout."""

    name: str
    code: int  # part of every seed, so the two layouts are independent
    chunk: int  # documents per generation chunk (fixed: defines the streams)
    len_median: float
    len_sigma: float
    len_min: int
    len_max: int
    n_topics: int
    p_topic: float
    p_comma: float = 1 / 14
    p_stop: float = 1 / 16
    # query lengths in distinct words and their probabilities
    query_lengths: tuple[int, ...] = (2, 3, 4, 5, 6)
    query_p: tuple[float, ...] = (0.24, 0.32, 0.22, 0.13, 0.09)

    @property
    def layout(self) -> str:
        """Return the TSV layout written: ``passages`` (id, text) or ``documents`` (4 columns)."""
        return "passages" if self.name == "passages" else "documents"


PASSAGES = Mode("passages", 1, 20_000, 55.0, 0.42, 6, 220, 5, 0.12)
DOCUMENTS = Mode("documents", 2, 1_000, 650.0, 1.03, 30, 60_000, 10, 0.15)
# SciFact-sized scientific abstracts: a title and ~210 body tokens (SciFact: 5,183 documents,
# 225 tokens on average); queries are claims of 6–16 distinct words (SciFact's ~12).
ABSTRACTS = Mode(
    "abstracts", 3, 1_000, 190.0, 0.5, 20, 1_500, 8, 0.15,
    query_lengths=tuple(range(6, 17)),
    query_p=(0.04, 0.07, 0.1, 0.12, 0.13, 0.13, 0.12, 0.1, 0.08, 0.06, 0.05),
)  # fmt: skip
MODES = {m.name: m for m in (PASSAGES, DOCUMENTS, ABSTRACTS)}


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng([seed, *key])


# -- vocabulary -----------------------------------------------------------------------------------


def _syllables(rich: bool) -> npt.NDArray[np.object_]:
    if rich:
        sylls = {o + n + c for o in _ONSETS for n in _NUCLEI for c in _CODAS}
    else:
        sylls = {o + n + c for o in _SIMPLE_ONSETS for n in "aeiou" for c in _SIMPLE_CODAS}
    return np.array(sorted(sylls), dtype=object)


@lru_cache(maxsize=4)
def vocabulary(seed: int = 42, size: int = VOCAB_SIZE) -> tuple[str, ...]:
    """Return ``size`` distinct words by frequency rank (rank 0 is the most frequent).

    Function words first, then fake words whose length grows with rank (frequent words are
    short, as in real languages); ~2% are numbers and ~1% carry an accented letter.
    """
    rng = _rng(seed, 0)
    rich, simple = _syllables(True), _syllables(False)
    words: list[str] = list(dict.fromkeys(FUNCTION_WORDS))
    seen = set(words)
    numbers = iter(rng.permutation(np.r_[np.arange(0, 2_100), np.arange(2_100, 100_000, 7)]))
    # (rank limit, syllables, syllable set): frequent words are short
    bands = [(2_000, 1, rich), (250_000, 2, simple), (size, 3, simple)]
    for limit, n_syll, sylls in bands:
        limit = min(limit, size)
        while len(words) < limit:
            need = limit - len(words)
            m = need * 2 + 64
            cand = sylls[rng.integers(0, sylls.size, m)]
            for _ in range(n_syll - 1):
                cand = cand + sylls[rng.integers(0, sylls.size, m)]
            u = rng.random(m)
            accent = np.flatnonzero(u > 0.99).tolist()
            cand_l = cand.tolist()
            for i in accent:
                w = cand_l[i]
                j = next((k for k, ch in enumerate(w) if ch in _ACCENTS), -1)
                if j >= 0:
                    cand_l[i] = w[:j] + _ACCENTS[w[j]] + w[j + 1 :]
            if len(words) > 200:
                for i in np.flatnonzero(u < 0.02).tolist():
                    num = next(numbers, None)
                    if num is not None:
                        cand_l[i] = str(int(num))
            fresh = [w for w in dict.fromkeys(cand_l) if len(w) > 1 and w not in seen]
            fresh = fresh[:need]
            seen.update(fresh)
            words.extend(fresh)
    return tuple(words[:size])


class _Alias:
    """Walker/Vose alias table: O(1) vectorised sampling from a discrete distribution."""

    def __init__(self, weights: npt.NDArray[np.float64]) -> None:
        n = weights.size
        p = weights * (n / weights.sum())
        prob = np.ones(n)
        alias = np.arange(n, dtype=np.int64)
        small = [int(i) for i in np.flatnonzero(p < 1.0)]
        large = [int(i) for i in np.flatnonzero(p >= 1.0)]
        pl = p.tolist()
        while small and large:
            s, g = small.pop(), large.pop()
            prob[s] = pl[s]
            alias[s] = g
            pl[g] = pl[g] + pl[s] - 1.0
            (small if pl[g] < 1.0 else large).append(g)
        self.prob = prob
        self.alias = alias
        self.n = n

    def sample(self, rng: np.random.Generator, size: int) -> I64:
        u = rng.random(size) * self.n
        idx = u.astype(np.int64)
        np.minimum(idx, self.n - 1, out=idx)
        frac = u - idx
        return np.where(frac < self.prob[idx], idx, self.alias[idx])


@lru_cache(maxsize=4)
def _tables(size: int) -> tuple[_Alias, _Alias, _Alias]:
    ranks = np.arange(1, size + 1, dtype=np.float64)
    w = ranks**-ZIPF_S
    topic = w.copy()
    topic[:TOPIC_MIN_RANK] = 0.0
    freq = w.copy()
    freq[FREQUENT_RANKS:] = 0.0
    return _Alias(w), _Alias(topic), _Alias(freq)


# -- documents ------------------------------------------------------------------------------------


class Generator:
    """Streams a synthetic corpus chunk by chunk (see the module docstring).

    Parameters
    ----------
    mode
        ``passages`` or ``documents``.
    seed
        Everything (vocabulary, lengths, tokens, topics, queries) follows from it.
    vocab_size
        Number of distinct terms that may occur.
    """

    def __init__(self, mode: str = "passages", seed: int = 42, vocab_size: int = VOCAB_SIZE):
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
        self.mode = MODES[mode]
        self.seed = seed
        self.words = vocabulary(seed, vocab_size)
        self.vocab_size = vocab_size
        self._zipf, self._topic, self._frequent = _tables(vocab_size)
        self._table: tuple[npt.NDArray[np.uint8], I64] | None = None
        self._caps: list[str] | None = None

    # -- pieces

    def _word_table(self) -> tuple[npt.NDArray[np.uint8], I64]:
        """Return the words as fixed-width rows of UTF-8 bytes (2 spare columns), and lengths."""
        if self._table is None:
            encoded = [w.encode() for w in self.words]
            lens = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
            width = int(lens.max()) + 2
            table = np.zeros((len(encoded), width), dtype=np.uint8)
            table[np.arange(width) < lens[:, None]] = np.frombuffer(b"".join(encoded), np.uint8)
            self._table = (table, lens)
        return self._table

    # -- per-chunk structure (each from its own stream: prefix-stable)

    def _lengths(self, chunk: int) -> I64:
        m = self.mode
        z = _rng(self.seed, m.code, chunk, 1).standard_normal(m.chunk)
        n = np.exp(np.log(m.len_median) + m.len_sigma * z)
        return np.clip(np.rint(n), m.len_min, m.len_max).astype(np.int64)

    def topics(self, chunk: int) -> I64:
        """Return the topic terms (ranks) of every document of ``chunk``: shape (chunk, K)."""
        m = self.mode
        rng = _rng(self.seed, m.code, chunk, 2)
        return self._topic.sample(rng, m.chunk * m.n_topics).reshape(m.chunk, m.n_topics)

    def _tokens(self, chunk: int, lengths: I64) -> I64:
        m = self.mode
        total = int(lengths.sum())
        toks = self._zipf.sample(_rng(self.seed, m.code, chunk, 3), total)
        rng = _rng(self.seed, m.code, chunk, 4)
        u = rng.random(total)
        is_topic = u < m.p_topic
        docs = np.repeat(np.arange(lengths.size), lengths)
        which = (u[is_topic] / m.p_topic * m.n_topics).astype(np.int64)
        np.minimum(which, m.n_topics - 1, out=which)
        toks[is_topic] = self.topics(chunk)[docs[is_topic], which]
        return toks

    def _render(self, chunk: int, lengths: I64, toks: I64) -> tuple[bytes, I64]:
        """Return the bodies of the chunk's documents as one byte string, and their byte sizes.

        Each body ends with a full stop and a newline. Vectorised: a row gather from the piece
        table, then a boolean compaction that drops the padding.
        """
        m = self.mode
        total = toks.size
        u = _rng(self.seed, m.code, chunk, 5).random(total)
        suffix = np.where(u < m.p_comma, 1, np.where(u < m.p_comma + m.p_stop, 2, 0))
        ends = np.cumsum(lengths) - 1
        suffix[ends] = 3
        cap = np.empty(total, dtype=bool)
        cap[0] = True
        cap[1:] = suffix[:-1] >= 2  # after a full stop or a new document
        table, wlens = self._word_table()
        rows = table[toks]
        wl = wlens[toks]
        first = rows[:, 0]
        upper = cap & (first >= ord("a")) & (first <= ord("z"))
        first[upper] -= 32
        at = np.arange(total)
        rows[at, wl] = np.array([32, 44, 46, 46], dtype=np.uint8)[suffix]  # ' ' ',' '.' '.'
        rows[at, wl + 1] = np.array([0, 32, 32, 10], dtype=np.uint8)[suffix]  # -  ' ' ' ' '\n'
        lens = wl + (suffix > 0) + 1
        body = rows[np.arange(rows.shape[1]) < lens[:, None]]
        starts = np.r_[0, ends[:-1] + 1]
        return body.tobytes(), np.add.reduceat(lens, starts)

    def _prefixes(self, start: int, n: int, chunk: int) -> list[bytes]:
        if self.mode is PASSAGES:
            return [b"%d\t" % i for i in range(start, start + n)]
        rng = _rng(self.seed, self.mode.code, chunk, 6)
        words = self.words
        if self._caps is None:
            self._caps = [w[:1].upper() + w[1:] for w in words]
        caps = self._caps
        topics = self.topics(chunk)
        tlen = np.clip(rng.poisson(6.0, n) + 2, 3, 14)
        host = self._zipf.sample(rng, n) + 50
        path = self._topic.sample(rng, 2 * n)
        from_topic = rng.random(int(tlen.sum())) < 0.5
        t_words = self._zipf.sample(rng, int(tlen.sum()))
        pick = rng.integers(0, self.mode.n_topics, int(tlen.sum()))
        owner = np.repeat(np.arange(n), tlen)
        t_words = np.where(from_topic, topics[owner, pick], t_words).tolist()
        out = []
        pos = 0
        host_l = np.minimum(host, self.vocab_size - 1).tolist()
        path_l = path.tolist()
        for i in range(n):
            k = int(tlen[i])
            title = " ".join([caps[t] for t in t_words[pos : pos + k]])
            pos += k
            url = (
                f"http://www.{words[host_l[i]]}.com/{words[path_l[2 * i]]}/"
                f"{words[path_l[2 * i + 1]]}.html"
            )
            out.append(f"D{start + i}\t{url}\t{title}\t".encode())
        return out

    def chunks(self, n_docs: int) -> Iterator[bytes]:
        """Yield the TSV text of the first ``n_docs`` documents, one chunk of lines at a time."""
        m = self.mode
        for chunk in range((n_docs + m.chunk - 1) // m.chunk):
            start = chunk * m.chunk
            n = min(m.chunk, n_docs - start)
            lengths = self._lengths(chunk)
            toks = self._tokens(chunk, lengths)[: int(lengths[:n].sum())]
            lengths = lengths[:n]
            body, sizes = self._render(chunk, lengths, toks)
            prefixes = self._prefixes(start, n, chunk)
            parts: list[bytes] = []
            pos = 0
            for prefix, size in zip(prefixes, sizes.tolist(), strict=True):
                parts.append(prefix)
                parts.append(body[pos : pos + size])
                pos += size
            yield b"".join(parts)

    def write(self, path: Path, n_docs: int, progress: bool = False) -> dict[str, float]:
        """Write the first ``n_docs`` documents as TSV to ``path``; return size and speed."""
        started = time.perf_counter()
        size = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        with open(tmp, "wb", buffering=16 << 20) as fh:
            for i, data in enumerate(self.chunks(n_docs)):
                fh.write(data)
                size += len(data)
                if progress and i % 50 == 0:
                    el = time.perf_counter() - started
                    done = min((i + 1) * self.mode.chunk, n_docs)
                    print(
                        f"\r{done:,} docs, {size / 1e9:.2f} GB, {size / 1e6 / el:.0f} MB/s",
                        end="",
                        file=sys.stderr,
                    )
        tmp.replace(path)
        secs = time.perf_counter() - started
        if progress:
            print(file=sys.stderr)
        return {"docs": n_docs, "bytes": size, "seconds": secs, "mb_per_s": size / 1e6 / secs}

    # -- queries

    def queries(self, n: int, n_docs: int, seed: int | None = None) -> list[str]:
        """Return ``n`` realistic queries about the first ``n_docs`` documents.

        Each query is about one document: 2–6 distinct words (mean ~3.4), mostly that document's
        mid-frequency topic terms, sometimes a rarer term, and in about half of them one or two
        frequent words ("what", "is", ...), in random order.
        """
        rng = _rng(self.seed if seed is None else seed, self.mode.code, 99)
        target = np.sort(rng.integers(0, n_docs, n))
        m = self.mode
        lengths = rng.choice(list(m.query_lengths), size=n, p=list(m.query_p))
        n_freq = rng.choice([0, 1, 2], size=n, p=[0.45, 0.4, 0.15])
        out: list[str] = []
        topics_of: dict[int, I64] = {}
        for i in range(n):
            d = int(target[i])
            chunk = d // self.mode.chunk
            if chunk not in topics_of:
                topics_of = {chunk: self.topics(chunk)}
            topics = topics_of[chunk][d % self.mode.chunk]
            length = int(lengths[i])
            nf = min(int(n_freq[i]), length - 1)
            terms: list[int] = []
            for t in rng.permutation(topics).tolist():
                if len(terms) < length - nf and t not in terms:
                    terms.append(t)
            while len(terms) < length - nf:  # rarer, off-topic terms
                t = int(self._topic.sample(rng, 1)[0])
                if t not in terms:
                    terms.append(t)
            while len(terms) < length:
                t = int(self._frequent.sample(rng, 1)[0])
                if t not in terms:
                    terms.append(t)
            words = [self.words[t] for t in rng.permutation(np.array(terms)).tolist()]
            out.append(" ".join(words))
        return out


def write_queries(path: Path, queries: list[str]) -> None:
    """Write queries as ``qid<TAB>text`` lines."""
    path.write_text("".join(f"q{i}\t{q}\n" for i, q in enumerate(queries)), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Command line: write a corpus (and optionally queries) and print the speed."""
    ap = argparse.ArgumentParser(prog="python -m tests.benchmarks.synth", description=__doc__)
    ap.add_argument("--mode", choices=sorted(MODES), default="passages")
    ap.add_argument("--n", type=int, required=True, help="number of documents")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, required=True, help="TSV file to write")
    ap.add_argument("--queries", type=int, default=0, help="also write this many queries")
    args = ap.parse_args(argv)
    gen = Generator(args.mode, args.seed)
    info = gen.write(args.out, args.n, progress=True)
    print(
        f"{info['docs']:,} {args.mode} → {args.out}: {info['bytes'] / 1e9:.2f} GB in "
        f"{info['seconds']:.1f} s ({info['mb_per_s']:.0f} MB/s, "
        f"{info['docs'] / info['seconds']:,.0f} docs/s)"
    )
    if args.queries:
        qpath = args.out.with_suffix(".queries.tsv")
        write_queries(qpath, gen.queries(args.queries, args.n))
        print(f"{args.queries} queries → {qpath}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
