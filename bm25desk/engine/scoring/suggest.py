"""Did you mean: words of the index close to a word that is in no document, as people type them.

The index's vocabulary holds analysed terms — stems such as "fuzzi" or "quo" — which nobody would
type. Candidates are found among the terms (whoosh's edit-distance corrector), and each is shown as
its most frequent surface word in the index: read from the stored text of a bounded sample of the
documents that contain it, through the index's public API (postings and stored text). Measured on
CISI: ~1 ms per suggested term the first time (a dozen short documents analysed), nothing after.
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
        out = []
        for candidate in corrector.suggest(term, limit=n, maxdist=2):
            stats = self.index.term_stats(candidate)
            if candidate == term or stats is None:
                continue
            word = _as_typed(self.surface(candidate), typed)
            out.append(Suggestion(word, candidate, stats.df))
        return out

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
                self._empty = not vocabulary
                self._corrector = ListCorrector(vocabulary) if vocabulary else None
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
