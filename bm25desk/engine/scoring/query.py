"""Query parsing: plain words are a bag of words; a little syntax adds constraints.

Syntax (parsed with whoosh's query parser):

- ``+word`` or ``a AND b``: the word must occur in the document;
- ``-word`` or ``NOT word``: it must not;
- ``"a phrase"``: the words must occur consecutively (after analysis: stop words removed);
- ``title:word`` / ``title:"a phrase"``: the title must contain it.

Every word that is not prohibited is also scored by BM25 (in the body, which includes the title),
each occurrence adding to qtf. A query without any syntax characters never goes through the
parser: it is analysed as one text, so plain words behave exactly as a bag of words.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from bm25desk.engine.analysis.analyzer import Analyzer

Role = Literal["optional", "required", "prohibited", "phrase", "title"]

_SYNTAX = re.compile(r'(?:^|[\s(])[+-]\S|"|\b(?:AND|OR|NOT)\b|(?:^|[\s(])title:|[()]')


@dataclass(frozen=True, slots=True)
class QueryToken:
    """One word of the query as the user typed it, what it became, and its role.

    ``status`` is ``ok``, ``stop`` (stop-listed), ``short`` (below the minimum length) or, once a
    searcher has looked it up, ``unknown`` (in no document).
    """

    surface: str
    term: str | None
    status: str
    role: Role


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A query reduced to scored terms and constraints."""

    text: str
    tokens: tuple[QueryToken, ...]
    scored: tuple[tuple[str, int], ...]  # (term, qtf) in first-occurrence order
    required: tuple[str, ...] = ()
    prohibited: tuple[str, ...] = ()
    phrases: tuple[tuple[str, ...], ...] = ()
    prohibited_phrases: tuple[tuple[str, ...], ...] = ()
    title_required: tuple[str, ...] = ()
    title_prohibited: tuple[str, ...] = ()
    syntax: bool = False
    warnings: tuple[str, ...] = ()

    @property
    def terms(self) -> tuple[str, ...]:
        """Return the distinct scored terms in query order."""
        return tuple(t for t, _ in self.scored)

    @property
    def has_constraints(self) -> bool:
        """Return whether anything beyond plain scoring restricts the matches."""
        return bool(
            self.required
            or self.prohibited
            or self.phrases
            or self.prohibited_phrases
            or self.title_required
            or self.title_prohibited
        )


def has_syntax(text: str) -> bool:
    """Return whether ``text`` uses any query syntax (else it is a plain bag of words)."""
    return _SYNTAX.search(text) is not None


def parse_terms(terms: list[str] | tuple[str, ...]) -> ParsedQuery:
    """Wrap already-analysed terms (reproducing experiments with their own tokens)."""
    counts = Counter(terms)
    order = list(dict.fromkeys(terms))
    tokens = tuple(QueryToken(t, t, "ok", "optional") for t in terms)
    return ParsedQuery(" ".join(terms), tokens, tuple((t, counts[t]) for t in order))


class _Collector:
    def __init__(self, analyzer: Analyzer) -> None:
        self.analyzer = analyzer
        self.tokens: list[QueryToken] = []
        self.scored: list[str] = []
        self.required: list[str] = []
        self.prohibited: list[str] = []
        self.phrases: list[tuple[str, ...]] = []
        self.prohibited_phrases: list[tuple[str, ...]] = []
        self.title_required: list[str] = []
        self.title_prohibited: list[str] = []

    def words(self, text: str, role: Role) -> list[str]:
        out = []
        for tok in self.analyzer.analyze(text):
            self.tokens.append(QueryToken(tok.surface, tok.term, tok.status, role))
            if tok.term is not None:
                out.append(tok.term)
        return out

    def walk(self, node: Any, mode: str) -> None:
        from whoosh import query as wq

        prohibited = mode == "prohibited"
        if isinstance(node, wq.Term):
            in_title = node.fieldname == "title"
            role: Role = "prohibited" if prohibited else ("title" if in_title else mode)  # type: ignore[assignment]
            terms = self.words(str(node.text), role)
            if prohibited:
                (self.title_prohibited if in_title else self.prohibited).extend(terms)
                return
            self.scored.extend(terms)
            if in_title:
                self.title_required.extend(terms)
            elif mode == "required":
                self.required.extend(terms)
        elif isinstance(node, wq.Phrase):
            in_title = node.fieldname == "title"
            role = "prohibited" if prohibited else ("title" if in_title else "phrase")
            terms = self.words(" ".join(str(w) for w in node.words), role)
            if not terms:
                return
            if prohibited:
                if in_title:
                    self.title_prohibited.extend(terms)
                else:
                    self.prohibited_phrases.append(tuple(terms))
                return
            self.scored.extend(terms)
            if in_title:
                self.title_required.extend(terms)
            elif len(terms) == 1:
                self.required.extend(terms)
            else:
                self.phrases.append(tuple(terms))
        elif isinstance(node, wq.AndNot):
            self.walk(node.a, mode)
            self.walk(node.b, "prohibited")
        elif isinstance(node, wq.AndMaybe):
            self.walk(node.a, "prohibited" if prohibited else "required")
            self.walk(node.b, mode)
        elif isinstance(node, wq.Not):
            self.walk(node.query, "prohibited")
        elif isinstance(node, wq.And):
            for child in node.children():
                self.walk(child, "prohibited" if prohibited else "required")
        elif isinstance(node, wq.Or):
            for child in node.children():
                self.walk(child, "prohibited" if prohibited else "optional")
        elif hasattr(node, "children"):
            for child in node.children():
                self.walk(child, mode)


def _parser() -> Any:
    from whoosh import qparser
    from whoosh.analysis import SpaceSeparatedTokenizer
    from whoosh.fields import TEXT, Schema

    # The fields only split on spaces: our own Analyzer does the real analysis afterwards.
    schema = Schema(
        body=TEXT(analyzer=SpaceSeparatedTokenizer()),
        title=TEXT(analyzer=SpaceSeparatedTokenizer()),
    )
    from whoosh import query as wq

    class QuotedPhrase(wq.Phrase):  # type: ignore[misc]
        """Keep a quoted single word a phrase: whoosh would make it a plain (optional) Term,
        although it must occur, and "e-mail" analyses to the phrase (e, mail)."""

        def normalize(self) -> Any:
            return self if len(self.words) == 1 else super().normalize()

    parser = qparser.QueryParser("body", schema, group=qparser.OrGroup, phraseclass=QuotedPhrase)
    for plugin in (
        qparser.WildcardPlugin,
        qparser.RangePlugin,
        qparser.BoostPlugin,
        qparser.EveryPlugin,
        qparser.SingleQuotePlugin,
    ):
        parser.remove_plugin_class(plugin)
    # + and - only count at the start of a word ("e-mail" and "c++" are words).
    parser.add_plugin(qparser.PlusMinusPlugin(plusexpr=r"(?<![^\s(])\+", minusexpr=r"(?<![^\s(])-"))
    return parser


_PARSER: Any = None
_PARSER_LOCK = threading.Lock()  # whoosh parsers keep state while parsing


def parse_query(text: str, analyzer: Analyzer, *, syntax: bool = True) -> ParsedQuery:
    """Parse ``text`` into scored terms and constraints (``syntax=False``: bag of words only)."""
    global _PARSER
    collector = _Collector(analyzer)
    warnings: list[str] = []
    used_syntax = syntax and has_syntax(text)
    if used_syntax:
        try:
            with _PARSER_LOCK:
                if _PARSER is None:
                    _PARSER = _parser()
                tree = _PARSER.parse(text)
            collector.walk(tree, "optional")
        except Exception as exc:  # whoosh raises assorted errors on odd input
            warnings.append(f"query syntax not understood ({exc}); searching the words instead")
            collector = _Collector(analyzer)
            used_syntax = False
    if not used_syntax:
        collector.scored = collector.words(text, "optional")
    counts = Counter(collector.scored)
    order = list(dict.fromkeys(collector.scored))
    return ParsedQuery(
        text,
        tuple(collector.tokens),
        tuple((t, counts[t]) for t in order),
        tuple(dict.fromkeys(collector.required)),
        tuple(dict.fromkeys(collector.prohibited)),
        tuple(dict.fromkeys(collector.phrases)),
        tuple(dict.fromkeys(collector.prohibited_phrases)),
        tuple(dict.fromkeys(collector.title_required)),
        tuple(dict.fromkeys(collector.title_prohibited)),
        used_syntax,
        tuple(warnings),
    )


def contains_phrase(terms: list[str], phrase: tuple[str, ...]) -> bool:
    """Return whether ``phrase`` occurs as consecutive terms in ``terms``."""
    n = len(phrase)
    first = phrase[0]
    return any(t == first and tuple(terms[i : i + n]) == phrase for i, t in enumerate(terms))
