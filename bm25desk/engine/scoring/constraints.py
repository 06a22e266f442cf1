"""The query's constraints (``+word``, ``-word``, phrases, ``title:``): which documents pass them.

:func:`allowed_mask` gives the ranking a boolean mask over every document; :func:`check_document`
says, for one document, which constraint held and why (the explanation's constraint lines). Both
follow the same rules, so a document is explained as a match exactly when the ranking lets it
through. Phrases are found through the postings (every term present) and then verified in the
stored text, analysed like the documents were.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bm25desk.engine.index.arrays import I64
from bm25desk.engine.index.reader import Index
from bm25desk.engine.scoring.query import Constraint, ParsedQuery, contains_phrase


@dataclass(frozen=True, slots=True)
class ConstraintCheck:
    """Whether one document satisfied one constraint of the query.

    ``present[i]`` says whether the document contains ``constraint.terms[i]`` (in its title for
    the ``title`` kinds); ``reason`` says in one line why the constraint held or failed.
    """

    constraint: Constraint
    held: bool
    present: tuple[bool, ...]
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the explanation's ``constraints`` entries)."""
        c = self.constraint
        return {
            "kind": c.kind,
            "label": c.label,
            "words": list(c.words),
            "analysed": list(c.analysed),
            "held": self.held,
            "present": list(self.present),
            "reason": self.reason,
        }


def constraints_of(parsed: ParsedQuery) -> tuple[Constraint, ...]:
    """Return the query's constraints (rebuilt from its term lists if it was made by hand)."""
    if parsed.constraints or not parsed.has_constraints:
        return parsed.constraints

    def make(kind: Any, terms: tuple[str, ...]) -> Constraint:
        return Constraint(kind, terms, terms)

    return (
        *(make("required", (t,)) for t in parsed.required),
        *(make("prohibited", (t,)) for t in parsed.prohibited),
        *(make("phrase", p) for p in parsed.phrases),
        *(make("prohibited-phrase", p) for p in parsed.prohibited_phrases),
        *(make("title", (t,)) for t in parsed.title_required),
        *(make("title-prohibited", (t,)) for t in parsed.title_prohibited),
    )


# -- the ranking's mask ----------------------------------------------------------------------------


def allowed_mask(index: Index, parsed: ParsedQuery) -> Any:
    """Return the boolean mask (by docno) of the documents that satisfy every constraint."""
    n = index.n_slots
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
        ok &= _phrase_mask(index, phrase, ok)
    for phrase in parsed.prohibited_phrases:
        ok &= ~_phrase_mask(index, phrase, ok)
    return ok


def _phrase_mask(index: Index, phrase: tuple[str, ...], within: Any) -> Any:
    """Documents containing ``phrase``: all its terms (postings), then verified in the text."""
    n = within.size
    cand = within.copy()
    for term in set(phrase):
        m = np.zeros(n, dtype=bool)
        m[index.postings(term)[0]] = True
        cand &= m
    out = np.zeros(n, dtype=bool)
    terms_of = index.analyzer.terms
    for d in np.flatnonzero(cand).tolist():
        if contains_phrase(terms_of(index.text(d)), phrase):
            out[d] = True
    return out


# -- one document ------------------------------------------------------------------------------


def _contains(docnos: I64, docno: int) -> bool:
    i = int(np.searchsorted(docnos, docno))
    return i < docnos.size and int(docnos[i]) == docno


def check_document(index: Index, constraint: Constraint, docno: int) -> ConstraintCheck:
    """Return whether document ``docno`` satisfies ``constraint``, and why."""
    terms = constraint.terms
    in_title = constraint.kind.startswith("title")
    present = tuple(
        _contains(index.title_docnos(t) if in_title else index.postings(t)[0], docno) for t in terms
    )
    missing = [t for t, p in zip(terms, present, strict=True) if not p]
    found_terms = [t for t, p in zip(terms, present, strict=True) if p]
    where = "its title" if in_title else "this document"
    if constraint.kind in ("phrase", "prohibited-phrase"):
        found = not missing and contains_phrase(index.analyzer.terms(index.text(docno)), terms)
        if found:
            reason = f"the words occur together, in this order, in {where}"
        elif missing:
            reason = f"{_listing(missing)} not in {where}"
        else:
            reason = f"every word occurs in {where}, but not together in this order"
    elif constraint.prohibits:  # -word, -title:word: any of its terms excludes the document
        found = bool(found_terms)
        reason = f"{_listing(found_terms if found else terms)} {'' if found else 'not '}in {where}"
    else:  # +word, title:word: every term must be there
        found = not missing
        reason = f"{_listing(missing or terms)} {'not ' if missing else ''}in {where}"
    held = found != constraint.prohibits
    return ConstraintCheck(constraint, held, present, reason)


def _listing(terms: list[str] | tuple[str, ...]) -> str:
    quoted = [repr(t) for t in terms]
    verb = "is" if len(quoted) == 1 else "are"
    return f"{', '.join(quoted)} {verb}"
