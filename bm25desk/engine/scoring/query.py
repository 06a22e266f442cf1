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
from typing import Any, Literal, NamedTuple

from bm25desk.engine.analysis.analyzer import SURFACE_MEMO, Analyzer

Role = Literal["optional", "required", "prohibited", "phrase", "title"]
ConstraintKind = Literal[
    "required", "prohibited", "phrase", "prohibited-phrase", "title", "title-prohibited"
]

_SYNTAX = re.compile(r'(?:^|[\s(])[+-]\S|"|\b(?:AND|OR|NOT)\b|(?:^|[\s(])title:|[()]')


class QueryToken(NamedTuple):
    """One word of the query as the user typed it, what it became, and its role.

    ``status`` is ``ok``, ``stop`` (stop-listed), ``short`` (below the minimum length) or, once a
    searcher has looked it up, ``unknown`` (in no document). Immutable; a named tuple rather than
    a frozen dataclass because a query's new words each make one: 0.2 µs against 0.46.
    """

    surface: str
    term: str | None
    status: str
    role: Role


@dataclass(frozen=True, slots=True)
class Constraint:
    """One ``+word``, ``-word``, phrase or ``title:`` part of a query, as typed and as analysed.

    ``words`` are the words as the user typed them and ``analysed`` what each became (None for a
    stop word or a word below the minimum length, which constrain nothing). A document satisfies
    ``required`` and ``title`` when it contains every analysed term (in its title for ``title``),
    ``phrase`` when the terms occur consecutively, and the prohibited kinds when it does not.
    """

    kind: ConstraintKind
    words: tuple[str, ...]
    analysed: tuple[str | None, ...]

    @property
    def terms(self) -> tuple[str, ...]:
        """Return the analysed terms that constrain (stop words left out)."""
        return tuple(t for t in self.analysed if t is not None)

    @property
    def prohibits(self) -> bool:
        """Return whether a document must *not* satisfy this (``-word``, ``-"a phrase"``...)."""
        return self.kind in ("prohibited", "prohibited-phrase", "title-prohibited")

    @property
    def label(self) -> str:
        """Return the constraint as it reads in query syntax (``+dog``, ``"a b"``, ``title:x``)."""
        text = " ".join(self.words)
        if self.kind in ("phrase", "prohibited-phrase") or len(self.words) > 1:
            text = f'"{text}"'
        if self.kind.startswith("title"):
            text = f"title:{text}"
        if self.prohibits:
            return f"-{text}"
        return f"+{text}" if self.kind == "required" else text


class ParsedQuery(NamedTuple):
    """A query reduced to scored terms and constraints.

    Immutable; a named tuple rather than a frozen dataclass because every search makes one, and
    a frozen dataclass of twelve fields costs ~1.2 µs to make (0.3 µs: 2 % of a rare-term query).
    """

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
    constraints: tuple[Constraint, ...] = ()  # the above, each as the user typed it

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
    """Return whether ``text`` uses any query syntax (else it is a plain bag of words).

    ``_SYNTAX.search(text)`` (the definition, which a test compares this with), its parts tried
    only when their characters are in the text: the regex tried every position of a long query
    (~85 µs for an argument of 800 characters), the ``in`` tests are a scan each.
    """
    if '"' in text or "(" in text or ")" in text:
        return True
    if ("+" in text or "-" in text) and _starts_word(_SIGN, text):
        return True
    if "title:" in text and _starts_word(_TITLE, text):
        return True
    if "AND" in text or "OR" in text or "NOT" in text:
        for m in _BOOLEAN.finditer(text):
            i = m.start()
            if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"):  # (\b before it)
                return True
    return False


_SIGN = re.compile(r"[+-]\S")
_TITLE = re.compile("title:")
_BOOLEAN = re.compile(r"(?:AND|OR|NOT)\b")


def _starts_word(pattern: re.Pattern[str], text: str) -> bool:
    """Return whether ``pattern`` matches at the start of ``text`` or after a space or "(".

    (A "(" has been ruled out by the caller: the text holds none.)
    """
    for m in pattern.finditer(text):
        i = m.start()
        if i == 0 or text[i - 1].isspace():
            return True
    return False


_TERM_TOKENS: dict[str, QueryToken] = {}
"""One shared token per already-analysed term (an evaluation run's queries repeat their terms)."""


def parse_terms(terms: list[str] | tuple[str, ...]) -> ParsedQuery:
    """Wrap already-analysed terms (reproducing experiments with their own tokens)."""
    memo = _TERM_TOKENS
    try:
        tokens = tuple([memo[t] for t in terms])
    except KeyError:  # a term not seen before
        made = []
        for t in terms:
            tok = memo.get(t)
            if tok is None:
                tok = QueryToken(t, t, "ok", "optional")
                if len(memo) < 200_000:  # bounded on pathological input
                    memo[t] = tok
            made.append(tok)
        tokens = tuple(made)
    counts: dict[str, int] = {}  # first-occurrence order (a dict counts faster than Counter)
    get = counts.get
    for t in terms:
        counts[t] = get(t, 0) + 1
    return ParsedQuery(" ".join(terms), tokens, tuple(counts.items()))


class _Collector:
    """Walks whoosh's query tree and sorts the analysed words into terms and constraints."""

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
        self.constraints: list[Constraint] = []

    def words(self, text: str, role: Role) -> list[str]:
        """Analyse ``text`` into tokens of ``role``; return its terms."""
        return [t for t in self._words(text, role)[1] if t is not None]

    def _words(self, text: str, role: Role) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
        toks = self.analyzer.analyze(text)
        self.tokens.extend(QueryToken(t.surface, t.term, t.status, role) for t in toks)
        return tuple(t.surface for t in toks), tuple(t.term for t in toks)

    def _constrain(self, kind: ConstraintKind, into: list[str], text: str, role: Role) -> list[str]:
        """Analyse ``text``, add its terms to ``into`` and record them as one constraint."""
        words, analysed = self._words(text, role)
        terms = [t for t in analysed if t is not None]
        if terms:
            into.extend(terms)
            self.constraints.append(Constraint(kind, words, analysed))
        return terms

    def walk(self, node: Any, mode: str) -> None:
        """Collect ``node`` (a whoosh query) under ``mode`` (optional, required or prohibited)."""
        from whoosh import query as wq

        if isinstance(node, wq.Term):
            self._term(str(node.text), node.fieldname == "title", mode)
        elif isinstance(node, wq.Phrase):
            self._phrase(" ".join(str(w) for w in node.words), node.fieldname == "title", mode)
        elif isinstance(node, wq.AndNot):
            self.walk(node.a, mode)
            self.walk(node.b, "prohibited")
        elif isinstance(node, wq.AndMaybe):
            self.walk(node.a, "prohibited" if mode == "prohibited" else "required")
            self.walk(node.b, mode)
        elif isinstance(node, wq.Not):
            self.walk(node.query, "prohibited")
        elif isinstance(node, wq.And):
            for child in node.children():
                self.walk(child, "prohibited" if mode == "prohibited" else "required")
        elif isinstance(node, wq.Or):
            for child in node.children():
                self.walk(child, "prohibited" if mode == "prohibited" else "optional")
        elif hasattr(node, "children"):
            for child in node.children():
                self.walk(child, mode)

    def _term(self, text: str, in_title: bool, mode: str) -> None:
        if mode == "prohibited":
            if in_title:
                self._constrain("title-prohibited", self.title_prohibited, text, "prohibited")
            else:
                self._constrain("prohibited", self.prohibited, text, "prohibited")
        elif in_title:
            self.scored.extend(self._constrain("title", self.title_required, text, "title"))
        elif mode == "required":
            self.scored.extend(self._constrain("required", self.required, text, "required"))
        else:
            self.scored.extend(self.words(text, "optional"))

    def _phrase(self, text: str, in_title: bool, mode: str) -> None:
        if mode == "prohibited":
            if in_title:
                self._constrain("title-prohibited", self.title_prohibited, text, "prohibited")
                return
            words, analysed = self._words(text, "prohibited")
            terms = tuple(t for t in analysed if t is not None)
            if terms:
                self.prohibited_phrases.append(terms)
                self.constraints.append(Constraint("prohibited-phrase", words, analysed))
            return
        if in_title:
            self.scored.extend(self._constrain("title", self.title_required, text, "title"))
            return
        words, analysed = self._words(text, "phrase")
        terms = tuple(t for t in analysed if t is not None)
        if not terms:
            return
        self.scored.extend(terms)
        if len(terms) == 1:
            self.required.extend(terms)
            self.constraints.append(Constraint("required", words, analysed))
        else:
            self.phrases.append(terms)
            self.constraints.append(Constraint("phrase", words, analysed))


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
        """A quoted phrase that stays one even of a single word.

        whoosh would make a quoted single word a plain (optional) Term, although it must occur,
        and "e-mail" analyses to the phrase (e, mail).
        """

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
    # Only the syntax has_syntax() knows is syntax, so that a query means the same with or
    # without other syntax in it: AND, OR and NOT (not whoosh's ANDNOT, ANDMAYBE, REQUIRE) and
    # title: (not "body:" or "word:", which are words).
    parser.replace_plugin(qparser.OperatorsPlugin(AndNot=None, AndMaybe=None, Require=None))
    # "title:" at the start of a word, or after a "+"/"-" that starts one (as has_syntax reads it).
    at_word = r"(?:(?<![^\s(])|(?<=(?<![^\s(])[+-]))"
    parser.replace_plugin(qparser.FieldsPlugin(expr=at_word + r"(?P<text>title):"))
    return parser


_PARSER: Any = None
_PARSER_LOCK = threading.Lock()  # whoosh parsers keep state while parsing

UNREADABLE = (
    "could not read the query's syntax (an unmatched bracket or quote, or an operator with "
    "nothing to apply to?); searched its words as plain words instead"
)
"""The warning of a query whoosh cannot parse (the words are still searched)."""


UNCLOSED_QUOTE = (
    'an unclosed quote (") was ignored: the words after it were searched one by one, not as a '
    "phrase"
)
"""The warning of a query with an odd number of quotes (whoosh's parser drops the last one)."""

UNMATCHED_BRACKET = "an unmatched bracket was ignored"
"""The warning of a query whose brackets do not pair (whoosh's parser drops the odd ones)."""


_QUOTE_OR_BRACKET = re.compile(r'["()]')


def syntax_warnings(text: str) -> tuple[str, ...]:
    """Return what whoosh's parser silently drops from ``text``: an unclosed quote, odd brackets.

    Quotes pair left to right, as the parser pairs them (a backslash escapes nothing there);
    brackets count outside the pairs, where a phrase's own brackets are its text (after an
    unclosed quote they are syntax again). The query is still searched as parsed.
    """
    total = text.count('"')
    quotes = depth = 0
    odd = False
    for ch in _QUOTE_OR_BRACKET.findall(text):  # (the marks alone: a long query has few)
        if ch == '"':
            quotes += 1
        elif quotes % 2 == 0 or quotes == total:
            if ch == "(":
                depth += 1
            elif depth:
                depth -= 1
            else:
                odd = True
    notes = []
    if total % 2:
        notes.append(UNCLOSED_QUOTE)
    if odd or depth:
        notes.append(UNMATCHED_BRACKET)
    return tuple(notes)


def _parser_errors() -> tuple[type[BaseException], ...]:
    """Return what whoosh's parser raises on input it cannot read.

    Its own :class:`~whoosh.qparser.QueryParserError`, and — from syntax nodes it has no query for
    (a lone ``+`` inside brackets) or an empty group — ``NotImplementedError`` and ``IndexError``
    (found by fuzzing it). Anything else is a bug and is not caught.
    """
    from whoosh.qparser import QueryParserError

    return (QueryParserError, NotImplementedError, IndexError)


def _tree(text: str, *, normalize: bool = True) -> Any:
    """Return whoosh's query tree for ``text`` (raises one of :func:`_parser_errors`)."""
    global _PARSER
    with _PARSER_LOCK:
        if _PARSER is None:
            _PARSER = _parser()
        return _PARSER.parse(text, normalize=normalize)


def _walk(text: str, tree: Any, analyzer: Analyzer) -> _Collector:
    """Collect the terms and constraints of ``text``'s normalised ``tree``."""
    from whoosh import query as wq

    collector = _Collector(analyzer)
    if tree is wq.NullQuery:
        # Normalising drops a query of only prohibitions ("-cat"): keep them, from the tree as
        # parsed, so that the searcher can say such a query has nothing to rank. It also drops a
        # whole query for an empty required part ('library +""', "+() library"): read as parsed,
        # the empty part asks for nothing and the rest stands, as in Lucene.
        collector.walk(_tree(text, normalize=False), "optional")
        return _as_typed(collector, text) if collector.scored else collector
    collector.walk(tree, "optional")
    if "+" in text and not collector.required:
        _restore_required(collector, text)
    return _as_typed(collector, text)


def _meaning(c: _Collector) -> tuple[Any, ...]:
    """Return what a collected query asks for, repetitions aside (scored terms as a set)."""
    return (
        frozenset(c.scored), c.required, c.prohibited, c.phrases, c.prohibited_phrases,
        c.title_required, c.title_prohibited, frozenset(c.constraints),
    )  # fmt: skip


def _as_typed(collector: _Collector, text: str) -> _Collector:
    """Return ``collector`` with every typed occurrence of its words (qtf and tokens).

    whoosh's normalising merges repeated words ("cat cat" becomes one term), which would lose
    qtf (each occurrence counts, as in a plain query) and the tokens as typed. They are taken
    from the tree as parsed when it asks for the same as the normalised one; where normalising
    changes more (whoosh's corner cases such as "cat AND cat"), the normalised reading stands.
    """
    typed = _Collector(collector.analyzer)
    typed.walk(_tree(text, normalize=False), "optional")
    if typed.scored == collector.scored and typed.tokens == collector.tokens:
        return collector
    if _meaning(typed) != _meaning(collector):
        return collector
    return typed


def _restore_required(collector: _Collector, text: str) -> None:
    """Take back the "+" that normalising drops from a lone required group ("+a -b").

    whoosh turns ``AndMaybe(+a, nothing)`` into the plain term ``a``. When the tree as parsed
    requires exactly the terms that are scored, they are required (and shown so).
    """
    typed = _Collector(collector.analyzer)
    typed.walk(_tree(text, normalize=False), "optional")
    required = set(typed.required)
    if not required or required != set(collector.scored):
        return
    collector.required = typed.required
    collector.constraints = [
        *(c for c in typed.constraints if c.kind == "required"),
        *collector.constraints,
    ]
    collector.tokens = [
        t._replace(role="required") if t.role == "optional" and t.term in required else t
        for t in collector.tokens
    ]


def _in_typed_order(text: str, constraints: list[Constraint]) -> tuple[Constraint, ...]:
    """Return the distinct constraints in the order they are typed (by their first word)."""
    folded = text.casefold()

    def position(c: Constraint) -> int:
        at = folded.find(c.words[0].casefold()) if c.words else -1
        return at if at >= 0 else len(text)

    return tuple(sorted(dict.fromkeys(constraints), key=position))


def parse_query(text: str, analyzer: Analyzer, *, syntax: bool = True) -> ParsedQuery:
    """Parse ``text`` into scored terms and constraints (``syntax=False``: bag of words only).

    Text without any syntax (:func:`has_syntax`) never reaches whoosh's parser: it takes
    :func:`parse_bag`, which gives what the parser gives for such text (a test compares the two
    on many random queries). Never raises on odd syntax: a query whoosh cannot read is searched
    as plain words, with a warning (:data:`UNREADABLE`) in ``warnings``; what the parser drops
    without a word (an unclosed quote, an unmatched bracket) is said in ``warnings`` too
    (:func:`syntax_warnings`).
    """
    if not (syntax and has_syntax(text)):
        return parse_bag(text, analyzer)
    try:
        tree = _tree(text)
    except _parser_errors():  # only the parsing: a bug in the walk below is not hidden
        return parse_bag(text, analyzer, (UNREADABLE,))
    return _parsed(text, _walk(text, tree, analyzer), syntax_warnings(text))


def parse_with_parser(text: str, analyzer: Analyzer) -> ParsedQuery:
    """Parse ``text`` with whoosh's parser even when it has no syntax (tests compare the paths).

    Raises
    ------
    Exception
        What whoosh's parser raises on text it cannot read (see :func:`_parser_errors`).
    """
    return _parsed(text, _walk(text, _tree(text), analyzer))


def _parsed(text: str, collector: _Collector, warnings: tuple[str, ...] = ()) -> ParsedQuery:
    """Return the :class:`ParsedQuery` of a query the parser's tree was collected from."""
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
        True,
        warnings,
        _in_typed_order(text, collector.constraints),
    )


def parse_bag(text: str, analyzer: Analyzer, warnings: tuple[str, ...] = ()) -> ParsedQuery:
    """Return ``text`` as a plain bag of words: every token optional and scored, no constraints.

    The fast path of :func:`parse_query` (no parser): each distinct surface word's token is made
    once per analyser and kept in its :attr:`~Analyzer.surface_memo`, so a word seen before
    costs one dictionary look-up; linear in the query's length.
    """
    got = analyzer.memo_bag(text, QueryToken)
    if not isinstance(got, list):  # every word seen before: its tokens and counts made in C
        tokens, scored = got
    else:
        memo = analyzer.surface_memo
        try:
            made = [memo[surface] for surface in got]
        except KeyError:  # a word not seen before
            made = _new_tokens(analyzer, got)
        counts: dict[str, int] = {}  # first-occurrence order (a dict counts faster than Counter)
        get = counts.get
        for tok in made:
            term = tok.term
            if term is not None:
                counts[term] = get(term, 0) + 1
        tokens, scored = tuple(made), tuple(counts.items())
    if warnings:
        return ParsedQuery(text, tokens, scored, warnings=warnings)
    return ParsedQuery(text, tokens, scored)


def _new_tokens(analyzer: Analyzer, raw: list[str]) -> list[QueryToken]:
    """Return the optional tokens of the surface words ``raw``, made and kept where new."""
    memo = analyzer.surface_memo
    out = []
    for surface in raw:
        tok = memo.get(surface)
        if tok is None:
            surface, term, status = analyzer.token_fate(surface)
            tok = QueryToken(surface, term, status, "optional")
            if len(memo) < SURFACE_MEMO:
                memo[surface] = tok
        out.append(tok)
    return out


def contains_phrase(terms: list[str], phrase: tuple[str, ...]) -> bool:
    """Return whether ``phrase`` occurs as consecutive terms in ``terms``."""
    n = len(phrase)
    first = phrase[0]
    return any(t == first and tuple(terms[i : i + n]) == phrase for i, t in enumerate(terms))
