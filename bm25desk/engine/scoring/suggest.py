"""Did you mean: words of the index close to a word that is in no document, as people type them.

The index's vocabulary holds analysed terms — stems such as "fuzzi" or "quo" — which nobody would
type. Candidates are the terms within edit distance 2 (whoosh's Levenshtein automaton), closest
first and, at the same distance, the commonest first; each is shown as its most frequent surface
word in the index, read from the stored text of a bounded sample of the documents that contain
it, through the index's public API (postings and stored text), and cached.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from bm25desk.engine.index.reader import Index

SAMPLE_DOCS = 12
"""How many documents containing a term are read to find its usual surface word."""

SAMPLE_CHARS = 200_000
"""How much of each sampled document's text is analysed (a book need not be read in full)."""

MAX_DISTANCE = 2
"""The largest edit distance of a suggestion (insertions, deletions, substitutions)."""

MAX_CANDIDATES = 1000
"""How many vocabulary terms within that distance are ranked (closest, then commonest)."""


def edit_distance(a: str, b: str) -> int:
    """Return the Levenshtein distance between ``a`` and ``b`` (as whoosh's automaton counts)."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


@dataclass(frozen=True, slots=True)
class Suggestion:
    """One "did you mean" candidate: the word to show and put in the query, and its term."""

    word: str  # as the user would type it ("fuzzy")
    term: str  # the analysed term it stands for ("fuzzi")
    df: int  # documents containing it


class Suggester:
    """Suggests spellings from an index's vocabulary (thread-safe; loads the vocabulary once)."""

    MAX_CACHED = 10_000

    def __init__(self, index: Index) -> None:
        self.index = index
        self._lock = threading.Lock()
        self._corrector: Any = None
        self._empty = False
        self._surface: dict[str, str] = {}

    def suggestions(self, term: str, n: int = 3, *, typed: str | None = None) -> list[Suggestion]:
        """Return up to ``n`` candidates for the analysed ``term``, closest first.

        ``typed`` is the word as the user typed it: a suggestion follows its capitalisation
        ("Fuzzzy" → "Fuzzy"). An empty index has no suggestions.
        """
        corrector = self._load()
        if corrector is None or n < 1:
            return []
        # whoosh returns the candidates within the distance in no useful order (alphabetically
        # last when there are more than asked for): take them all, closest and commonest first.
        ranked = []
        for candidate in corrector.suggest(term, limit=MAX_CANDIDATES, maxdist=MAX_DISTANCE):
            stats = self.index.term_stats(candidate)
            if candidate != term and stats is not None:
                ranked.append((edit_distance(term, candidate), -stats.df, candidate))
        ranked.sort()
        return [
            Suggestion(_as_typed(self.surface(c), typed), c, -minus_df)
            for _, minus_df, c in ranked[:n]
        ]

    def surface(self, term: str) -> str:
        """Return the most frequent word of the index that analyses to ``term`` (or ``term``)."""
        with self._lock:
            got = self._surface.get(term)
        if got is not None:
            return got
        word = _usual_surface(self.index, term)
        with self._lock:
            if len(self._surface) >= self.MAX_CACHED:
                self._surface.clear()
            self._surface[term] = word
        return word

    def _load(self) -> Any:
        from whoosh.spelling import ListCorrector

        with self._lock:
            if self._corrector is None and not self._empty:
                vocabulary = sorted(self.index.vocabulary(min_df=1))
                # whoosh's corrector fails on an empty list (IndexError): an empty index has none.
                # Its skipper never looks at the list's first word: "" goes first (never offered).
                self._empty = not vocabulary
                self._corrector = ListCorrector(["", *vocabulary]) if vocabulary else None
            return self._corrector


def _usual_surface(index: Index, term: str) -> str:
    """Count the surface forms of ``term`` in a sample of its documents; return the usual one.

    Forms are grouped case-insensitively; the most frequent group wins (the first seen on a tie),
    shown in lower case when it ever occurs so (a sentence-initial "Fuzzy" is still "fuzzy"), else
    in its most frequent spelling ("NASA", "Einstein").
    """
    docnos, _ = index.postings(term)
    if docnos.size == 0:
        return term
    picks = np.unique(np.linspace(0, docnos.size - 1, min(SAMPLE_DOCS, docnos.size)).astype(int))
    forms: Counter[str] = Counter()
    for d in docnos[picks].tolist():
        text = index.text(d)[:SAMPLE_CHARS]
        forms.update(t.surface for t in index.analyzer.analyze(text) if t.term == term)
    if not forms:
        return term
    groups: Counter[str] = Counter()
    for form, count in forms.items():
        groups[form.casefold()] += count
    key = groups.most_common(1)[0][0]
    spellings = [(count, form) for form, count in forms.items() if form.casefold() == key]
    lower = [form for _, form in spellings if form == form.lower()]
    if lower:
        return lower[0]
    return max(spellings, key=lambda cf: cf[0])[1]


def _as_typed(word: str, typed: str | None) -> str:
    """Return ``word`` with the capitalisation of ``typed`` (all capitals, or a capital first)."""
    if not typed or word != word.lower():
        return word
    if len(typed) > 1 and typed.isupper():
        return word.upper()
    if typed[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
