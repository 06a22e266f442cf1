"""Text analysis: tokenise → lowercase → minimum length → stop list → stem.

One :class:`Analyzer` serves bulk indexing, queries and highlighting, so the three can never
disagree: :meth:`Analyzer.terms` (the fast path used when building), :meth:`Analyzer.analyze`
(queries, with the fate of every token) and :meth:`Analyzer.spans` (highlighting, with character
offsets) all run the same tokeniser and the same per-token mapping, memoised per distinct token.

The analyser is stored in the index manifest (:meth:`Analyzer.spec`) together with the nltk and
whoosh versions, and rebuilt from it for every query (:meth:`Analyzer.from_spec`). Stop lists come
from whoosh (14 languages) or a user file; stemmers from nltk. Nothing here downloads data.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import threading
from array import array
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from bm25desk.engine import native
from bm25desk.engine.analysis import cjk

_tokens: Any = native.load("bm25desk.engine.analysis._tokens")

HAVE_TOKENIZER = _tokens is not None
"""Whether the compiled bulk tokenizer is in use (else the same tokens come from Python)."""

TOKENIZERS: dict[str, str] = {
    "word": "Runs of word characters (letters, digits, underscore); punctuation separates words",
    "whitespace": "Split on whitespace only, keeping punctuation (for reproducing published runs)",
    "treebank": "nltk's Penn Treebank tokenizer (splits clitics and punctuation)",
    "cjk": "Chinese, Japanese, Korean: character bigrams over Han/Kana/Hangul, words elsewhere",
}
STEMMERS: dict[str, str] = {
    "none": "No stemming",
    "porter": "Porter (nltk, original algorithm)",
    "snowball": "Snowball for the chosen language (nltk)",
    "lancaster": "Lancaster / Paice-Husk (nltk; aggressive)",
}
# whoosh's stop lists are keyed by ISO 639-1 code; nltk's Snowball stemmers by English name.
LANGUAGES: dict[str, str] = {
    "da": "danish",
    "de": "german",
    "en": "english",
    "es": "spanish",
    "fi": "finnish",
    "fr": "french",
    "hu": "hungarian",
    "it": "italian",
    "nl": "dutch",
    "no": "norwegian",
    "pt": "portuguese",
    "ru": "russian",
    "sv": "swedish",
    "tr": "turkish",
    "ro": "romanian",
    "ar": "arabic",
}
SPEC_VERSION = 1

MemoBag = tuple[tuple[Any, ...], tuple[tuple[str, int], ...]]
"""What :meth:`Analyzer.memo_bag` gives when every word of a query is known: tokens and counts."""
SURFACE_MEMO = 200_000
"""The most surface tokens :attr:`Analyzer.surface_memo` keeps (bounded on pathological input)."""

TokenStatus = Literal["ok", "stop", "short"]


class AnalysisError(ValueError):
    """An analyser option is invalid (unknown tokenizer, language, unreadable stop-word file...)."""


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a text as analysed: where it is, what it became, and why if it was dropped."""

    surface: str
    start: int
    end: int
    term: str | None  # the indexed term, None when dropped
    status: TokenStatus


def stoplist_for(name: str) -> frozenset[str]:
    """Return the stop words named ``name``: ``none``, a whoosh language code, or a file path.

    A file holds one word per line; ``#`` starts a comment.
    """
    if name in ("", "none"):
        return frozenset()
    from whoosh.lang.stopwords import stoplists

    if name in stoplists:
        return frozenset(stoplists[name])
    path = Path(name).expanduser()
    if not path.is_file():
        known = ", ".join(sorted(stoplists))
        raise AnalysisError(
            f"unknown stop list {name!r}: use none, a language code ({known}) or a file of words"
        )
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise AnalysisError(f"cannot read stop-word file {path}: {exc.strerror}") from exc
    return frozenset(w for line in lines if (w := line.split("#", 1)[0].strip()))


def _make_stemmer(name: str, language: str) -> Callable[[str], str] | None:
    if name == "none":
        return None
    if name == "porter":
        PorterStemmer = _nltk_stemmer("porter").PorterStemmer

        porter = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)
        return lambda w: porter.stem(w, to_lowercase=False)
    if name == "lancaster":
        LancasterStemmer = _nltk_stemmer("lancaster").LancasterStemmer

        lancaster = LancasterStemmer()
        return lambda w: str(lancaster.stem(w))
    if name == "snowball":
        SnowballStemmer = _nltk("nltk.stem.snowball").SnowballStemmer

        lang = LANGUAGES.get(language, language)
        if lang not in SnowballStemmer.languages:
            raise AnalysisError(f"no Snowball stemmer for language {language!r}")
        snowball = SnowballStemmer(lang)
        return lambda w: str(snowball.stem(w))
    raise AnalysisError(f"unknown stemmer {name!r}: use one of {', '.join(STEMMERS)}")


_WORD = re.compile(r"\w+")
# `\S+` splits exactly where str.split() does (both use Unicode whitespace), and gives offsets.
_NONSPACE = re.compile(r"\S+")


@dataclass(frozen=True)
class Analyzer:
    r"""A text analyser: tokenizer, lowercasing, minimum length, stop list and stemmer.

    Parameters
    ----------
    tokenizer
        ``word`` (``\w+``), ``whitespace`` (``str.split()``, keeps punctuation), ``treebank``
        or ``cjk`` (bigrams over Han/Kana/Hangul runs, words elsewhere: :mod:`.cjk`).
    lowercase
        Lowercase tokens before the other steps.
    stopwords
        The stop words. A token is dropped when its lowercased form is one of them, whether or not
        ``lowercase`` is on (stop lists are lowercase; "The" is still a stop word).
    stoplist_name
        Where the stop words came from (``none``, a language code or a file name), for display.
    stemmer
        ``none``, ``porter``, ``snowball`` or ``lancaster``.
    language
        Language code for the Snowball stemmer.
    min_length
        Tokens shorter than this (in characters, before stemming) are dropped.
    """

    tokenizer: str = "word"
    lowercase: bool = True
    stopwords: frozenset[str] = frozenset()
    stoplist_name: str = "none"
    stemmer: str = "none"
    language: str = "en"
    min_length: int = 1
    _cache: dict[str, str] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    _fates: dict[str, tuple[str | None, TokenStatus]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    _stem: Callable[[str], str] | None = field(
        default=None, init=False, repr=False, compare=False, hash=False
    )
    _query_fates: dict[str, tuple[str, str | None, TokenStatus]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    surface_memo: dict[str, Any] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    """What a caller made of each surface token under this analyser (the query parser keeps
    its bag-of-words tokens here: one look-up per word of a query). Only a function of the
    surface and this analyser's options may be kept, at most :data:`SURFACE_MEMO` entries."""
    _bag_fates: dict[Any, tuple[Any, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )  # memo_bag's analysis options, per token class

    def __post_init__(self) -> None:
        """Validate options and build the stemmer once."""
        if self.tokenizer not in TOKENIZERS:
            raise AnalysisError(
                f"unknown tokenizer {self.tokenizer!r}: use one of {', '.join(TOKENIZERS)}"
            )
        if self.min_length < 1:
            raise AnalysisError("minimum token length must be at least 1")
        object.__setattr__(self, "_stem", _make_stemmer(self.stemmer, self.language))

    @classmethod
    def create(
        cls,
        *,
        tokenizer: str = "word",
        lowercase: bool = True,
        stopwords: str = "none",
        stemmer: str = "none",
        language: str = "en",
        min_length: int = 1,
    ) -> Analyzer:
        """Build an analyser from user-facing option values (stop list by name or file)."""
        words = stoplist_for(stopwords)
        name = (
            stopwords if stopwords in ("", "none") or len(stopwords) <= 3 else Path(stopwords).name
        )
        return cls(tokenizer, lowercase, words, name or "none", stemmer, language, min_length)

    # -- the one mapping every path shares -------------------------------------------------------

    def _map(self, token: str) -> str:
        """Map one raw token to its term, or "" when dropped (memoised: vocabulary-bound).

        No analysed term is ever empty (tokens are non-empty and an empty stem counts as too
        short), so "" can mark a dropped token and the bulk path can filter with ``filter(None)``.
        """
        cached = self._cache.get(token)
        if cached is not None:
            return cached
        term = self._fate(token)[0] or ""
        if len(self._cache) < 2_000_000:  # bound memory on pathological inputs
            self._cache[token] = term
        return term

    def _fate(self, token: str) -> tuple[str | None, TokenStatus]:
        word = token.lower() if self.lowercase else token
        if len(word) < self.min_length:
            return None, "short"
        if self.stopwords and (word if self.lowercase else word.lower()) in self.stopwords:
            return None, "stop"
        if self._stem is not None and not (self.tokenizer == "cjk" and cjk.is_cjk(word)):
            word = self._stem(word)
            if not word:
                return None, "short"
        return word, "ok"

    # -- tokenisers --------------------------------------------------------------------------------

    def _raw_tokens(self, text: str) -> list[str]:
        if self.tokenizer == "word":
            return _WORD.findall(text)
        if self.tokenizer == "whitespace":
            return text.split()
        if self.tokenizer == "cjk":
            return cjk.tokens(text)
        return list(_treebank().tokenize(text))

    def _raw_spans(self, text: str) -> Iterator[tuple[int, int, str]]:
        if self.tokenizer in ("word", "whitespace"):
            pattern = _WORD if self.tokenizer == "word" else _NONSPACE
            for m in pattern.finditer(text):
                yield m.start(), m.end(), m.group()
            return
        yield from cjk.spans(text) if self.tokenizer == "cjk" else _treebank_spans(text)

    # -- public ----------------------------------------------------------------------------------

    def terms(self, text: str) -> list[str]:
        """Return the indexed terms of ``text`` in order (the bulk-indexing fast path)."""
        tokens = self._raw_tokens(text)
        mapped = list(map(self._cache.get, tokens))  # C speed once the vocabulary is cached
        if None in mapped:
            mapped = [
                m if m is not None else self._map(t) for m, t in zip(mapped, tokens, strict=True)
            ]
        return list(filter(None, mapped))

    def raw_tokens(self, text: str) -> list[str]:
        """Return the tokens of ``text`` before any other step (see :class:`TokenIds`)."""
        return self._raw_tokens(text)

    def memo_bag(self, text: str, make: Callable[..., Any] | None = None) -> MemoBag | list[str]:
        """Return ``text``'s words as :attr:`surface_memo` holds them, with their terms' counts.

        When every raw token is in the memo (whose values are query tokens: tuples with the
        term, or None, second): (their tokens, ((term, count), ...) in first-occurrence order),
        made in one compiled pass over the text (~1.5× faster than ``re.findall`` and a loop in
        Python on a 126-word query). With ``make`` (the query token's class), a word not in the
        memo is analysed in that pass too, when this analyser has no stemmer (:meth:`_fate`'s
        steps) and its token ``make(surface, term, status, "optional")`` kept in the memo, as
        ``query._new_tokens`` does. Else, and without the compiled module or for the cjk and
        treebank tokenizers, the list :meth:`raw_tokens` gives.
        """
        if _tokens is None or self.tokenizer not in ("word", "whitespace"):
            return self._raw_tokens(text)
        mode = 0 if self.tokenizer == "word" else 1
        if make is None or self._stem is not None:
            return _tokens.bag(text, mode, self.surface_memo)  # type: ignore[no-any-return]
        fate = self._bag_fates.get(make)
        if fate is None:
            stop = self.stopwords or None
            fate = (self.lowercase, self.min_length, stop, SURFACE_MEMO, make, "optional")
            self._bag_fates[make] = fate
        return _tokens.bag(text, mode, self.surface_memo, fate)  # type: ignore[no-any-return]

    def token_ids(self, vocabulary: MutableMapping[str, int]) -> TokenIds:
        """Return a raw token → term id table over ``vocabulary`` (the bulk-indexing path)."""
        return TokenIds(self, vocabulary)

    def id_tokenizer(self, vocabulary: MutableMapping[str, int]) -> Callable[[str], array[int]]:
        """Return text → ids of its tokens' terms in ``vocabulary`` (-1: dropped), in order.

        The bulk-indexing path: ``len(ids) - ids.count(-1) == len(self.terms(text))`` and the
        kept ids are those terms'. The word and whitespace tokenizers run in the compiled
        ``_tokens`` module when it is there (one pass over the text, no str per known token:
        ~3× faster than ``re.findall`` + a dict); otherwise, and for treebank, in Python.
        """
        table = TokenIds(self, vocabulary)
        if _tokens is not None and self.tokenizer in ("word", "whitespace"):
            mode = 0 if self.tokenizer == "word" else 1
            ids = _tokens.TokenTable(table.lookup, mode, TokenIds.LIMIT).ids

            def compiled(text: str) -> array[int]:
                out = array("i")
                out.frombytes(ids(text))
                return out

            return compiled
        get, raw = table.__getitem__, self._raw_tokens
        return lambda text: array("i", map(get, raw(text)))

    def analyze(self, text: str) -> list[Token]:
        """Return every token of ``text`` with offsets, its term, and why it was dropped."""
        tokens = []
        fates = self._fates  # memoised: a stemmer costs ~10 µs a word, queries repeat words
        for start, end, surface in self._raw_spans(text):
            fate = fates.get(surface)
            if fate is None:
                fate = self._fate(surface)
                if len(fates) < 200_000:
                    fates[surface] = fate
            tokens.append(Token(surface, start, end, fate[0], fate[1]))
        return tokens

    def query_fates(self, text: str) -> list[tuple[str, str | None, TokenStatus]]:
        """Return ``(surface, term, status)`` of every token of ``text``, without offsets.

        The same tokens and fates as :meth:`analyze` (the query fast path needs no offsets). Each
        distinct surface's triple is made once and shared, so a query of words seen before
        allocates nothing per token.
        """
        tokens = self._raw_tokens(text)
        out = list(map(self._query_fates.get, tokens))
        if None in out:
            fate = self.token_fate
            out = [f if f is not None else fate(t) for f, t in zip(out, tokens, strict=True)]
        return out  # type: ignore[return-value]

    def token_fate(self, surface: str) -> tuple[str, str | None, TokenStatus]:
        """Return ``(surface, term, status)`` of one raw token (what :meth:`query_fates` gives)."""
        got = self._query_fates.get(surface)
        if got is None:
            got = (surface, *self._fate(surface))
            if len(self._query_fates) < SURFACE_MEMO:  # bounded on pathological input
                self._query_fates[surface] = got
        return got

    def spans(self, text: str, terms: set[str] | frozenset[str]) -> list[tuple[int, int, str]]:
        """Return ``(start, end, term)`` for each token of ``text`` whose term is in ``terms``."""
        out = []
        for start, end, surface in self._raw_spans(text):
            term = self._map(surface)
            if term and term in terms:
                out.append((start, end, term))
        return out

    def describe(self) -> str:
        """Return a one-line human description (for info panels and run cards)."""
        name = cjk.DESCRIPTION if self.tokenizer == "cjk" else f"{self.tokenizer} tokenizer"
        parts = [name, "lowercase" if self.lowercase else "case kept"]
        parts.append(
            f"stop words: {self.stoplist_name} ({len(self.stopwords)})"
            if self.stopwords
            else "no stop words"
        )
        stem = self.stemmer if self.stemmer != "snowball" else f"snowball-{self.language}"
        parts.append(f"stemmer: {stem}")
        if self.min_length > 1:
            parts.append(f"min length {self.min_length}")
        return ", ".join(parts)

    def spec(self) -> dict[str, Any]:
        """Return a JSON-ready description that :meth:`from_spec` turns back into this analyser."""
        import whoosh

        return {
            "version": SPEC_VERSION,
            "tokenizer": self.tokenizer,
            "lowercase": self.lowercase,
            "stoplist": self.stoplist_name,
            "stopwords": sorted(self.stopwords),
            "stemmer": self.stemmer,
            "language": self.language,
            "min_length": self.min_length,
            "nltk": _nltk_version(),
            "whoosh": whoosh.versionstring(),
        }

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Analyzer:
        """Rebuild an analyser saved with :meth:`spec` (the stop words travel with the spec)."""
        try:
            return cls(
                tokenizer=str(spec["tokenizer"]),
                lowercase=bool(spec["lowercase"]),
                stopwords=frozenset(str(w) for w in spec["stopwords"]),
                stoplist_name=str(spec.get("stoplist", "custom")),
                stemmer=str(spec["stemmer"]),
                language=str(spec.get("language", "en")),
                min_length=int(spec.get("min_length", 1)),
            )
        except (KeyError, TypeError) as exc:
            raise AnalysisError(f"analyser description is incomplete: {exc}") from exc

    def version_warnings(self, spec: dict[str, Any]) -> list[str]:
        """Return warnings when the saved nltk/whoosh versions differ from the installed ones."""
        now = self.spec()
        return [
            f"index analysed with {lib} {spec[lib]}, now {now[lib]}: stems may differ"
            for lib in ("nltk", "whoosh")
            if lib in spec and spec[lib] != now[lib]
        ]


_TREEBANK: Any = None


@functools.cache
def _nltk_version() -> str:
    """Return nltk's version without importing nltk (``import nltk`` pulls in scipy: ~1-3 s).

    Once per process: reading the package metadata takes ~10 ms, and every index open asks.
    """
    from importlib import metadata

    try:
        return metadata.version("nltk")
    except metadata.PackageNotFoundError:  # e.g. a frozen app without the package metadata
        import nltk

        return str(nltk.__version__)


def _treebank() -> Any:
    global _TREEBANK
    if _TREEBANK is None:
        TreebankWordTokenizer = _nltk("nltk.tokenize").TreebankWordTokenizer

        _TREEBANK = TreebankWordTokenizer()
    return _TREEBANK


def _treebank_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """Treebank tokens with offsets; the tokens are exactly those of ``tokenize``.

    Treebank rewrites quotes (" → `` and ''), so a token is located by searching for its surface
    form, or for a quote character when the token is a rewritten quote.
    """
    pos = 0
    for tok in _treebank().tokenize(text):
        probe = tok
        start = text.find(tok, pos)
        if tok in ("``", "''"):
            # A rewritten quote: its source is the nearest ", `` or '' (an opening '' becomes ``).
            found = [(i, q) for q in ('"', "``", "''") if (i := text.find(q, pos)) >= 0]
            start, probe = min(found) if found else (-1, tok)
        if start < 0:  # not locatable (should not happen): report it zero-width where we are
            yield pos, pos, tok
            continue
        end = start + len(probe)
        yield start, end, tok
        pos = end


_NLTK_LOCK = threading.Lock()


def _nltk(module: str) -> Any:
    """Import an nltk module without the optional scipy imports of nltk's package init.

    ``import nltk`` imports scipy.stats and scipy.sparse when scipy is installed (for collocation
    statistics and a parser we never use): ~3 s of a first search. While nltk is first imported,
    scipy is marked unavailable, which nltk handles (those features then say they need scipy);
    afterwards scipy imports normally again. Nothing changes when either is already imported.
    """
    with _NLTK_LOCK:
        if "nltk" in sys.modules or "scipy" in sys.modules:
            return importlib.import_module(module)
        sys.modules["scipy"] = None  # type: ignore[assignment]
        try:
            return importlib.import_module(module)
        finally:
            if sys.modules.get("scipy", 0) is None:
                del sys.modules["scipy"]


def _nltk_stemmer(name: str) -> Any:
    """Import nltk's ``nltk.stem.<name>`` (porter or lancaster) without nltk's package inits.

    Those two stemmers need three small modules of nltk (``redos``, ``termsec``,
    ``stem.api``), but ``import nltk`` and ``import nltk.stem`` import most of nltk (~0.2-0.3 s
    of every opening of a Porter index, the default analysis; ~40 ms this way). While nltk is
    not imported yet, empty packages stand in for ``nltk`` and ``nltk.stem`` during the import
    and are taken away after it: the stemmer's module stays, and a later ``import nltk`` runs
    nltk's own inits, which use that same module (the same class). Anything unexpected (a
    frozen app whose importer cannot find the module this way) falls back to :func:`_nltk`.
    """
    module = f"nltk.stem.{name}"
    with _NLTK_LOCK:
        if "nltk" not in sys.modules and module not in sys.modules:
            found = _without_package_inits(module)
            if found is not None:
                return found
    return _nltk(module)


def _without_package_inits(module: str) -> Any:
    """Import ``module`` (nltk.stem.*) with stand-ins for its packages; None when it fails."""
    import importlib.util
    import types

    try:
        spec = importlib.util.find_spec("nltk")
        roots = list(spec.submodule_search_locations or ()) if spec is not None else []
    except (ImportError, ValueError):
        roots = []
    if not roots:
        return None
    stand_ins = {"nltk": roots, "nltk.stem": [str(Path(r) / "stem") for r in roots]}
    for name, path in stand_ins.items():
        package = types.ModuleType(name)
        package.__path__ = path
        sys.modules[name] = package
    try:
        return importlib.import_module(module)
    except Exception:  # any failure: the plain import then says what is wrong
        sys.modules.pop(module, None)
        return None
    finally:
        for name in stand_ins:
            sys.modules.pop(name, None)


class TokenIds(dict[str, int]):
    """Raw token → id of its term in a vocabulary, or -1 when the analyser drops the token.

    Indexing looks every token up once here (``map(table.__getitem__, tokens)`` runs at C speed)
    instead of mapping token → term and then term → id: two dictionary look-ups per token were
    more than half of the build time. A new token goes through the analyser's own steps
    (:meth:`Analyzer._fate`), so a document's ids are exactly the ids of
    :meth:`Analyzer.terms`; ``vocabulary[term]`` must assign an id to a new term (a dict with
    ``__missing__``). The table stops memoising beyond :data:`LIMIT` tokens (bounded memory on
    pathological inputs; later new tokens are analysed each time).
    """

    LIMIT = 4_000_000

    def __init__(self, analyzer: Analyzer, vocabulary: MutableMapping[str, int]) -> None:
        super().__init__()
        self._fate = analyzer._fate
        self._vocabulary = vocabulary

    def lookup(self, token: str) -> int:
        """Return the id of ``token`` without remembering it (the compiled table's fallback)."""
        term = self._fate(token)[0]
        return -1 if term is None else self._vocabulary[term]

    def __missing__(self, token: str) -> int:
        """Look ``token`` up on a cache miss, and remember it while the cache has room."""
        value = self.lookup(token)
        if len(self) < self.LIMIT:
            self[token] = value
        return value
