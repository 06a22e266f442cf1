"""The CJK tokenizer: overlapping character bigrams over Han, Kana and Hangul runs, words elsewhere.

Chinese and Japanese are written without spaces between words, and Korean words carry particles;
without a dictionary, the robust choice for ranking is the one Lucene's ``CJKAnalyzer`` makes:
index every pair of adjacent characters. ``東京大学`` becomes ``東京 京大 大学``; a query for
``大学`` then matches, and a query for the whole word matches its three bigrams in a row.

Rules (each one Lucene's ``CJKBigramFilter`` rule unless said otherwise):

- A *run* is a maximal sequence of characters from Han (CJK ideographs and their extensions,
  ``々 〆 〇``), Hiragana, Katakana (with ``ー``) and Hangul. Scripts mix inside a run
  (``東京タワー`` → ``東京 京タ タワ ワー``), as Lucene does.
- A run of two or more characters gives its overlapping bigrams; **a run of one character gives
  that character alone** (a unigram), so a lone ``日`` between Latin words or punctuation is still
  searchable. Unigrams are not emitted beside bigrams (Lucene's ``outputUnigrams=false``): a
  one-character query therefore matches only documents where that character stands alone, which
  is Lucene's behaviour too; longer queries match through their bigrams.
- Everything else is split into words exactly as the ``word`` tokenizer does (runs of word
  characters), so Latin, digits, Cyrillic ... in CJK text behave as usual (``2024年`` → ``2024``,
  ``年``).
- Width is folded first, as Lucene's ``CJKWidthFilter`` does: full-width ASCII (``ＡＢＣ１２３``)
  becomes ASCII and half-width Katakana becomes full-width (``ｶﾞｲﾄﾞ`` → ``ガイド``). A Kana followed
  by a combining (half-width or decomposed) voiced mark counts as one character, composed.
  Folding keeps every character at its offset, so highlights land on the text as written.

Lowercasing, the minimum length and the stop list then apply to every token as for the other
tokenizers (a stop list may hold bigrams such as ``我们``); stemming applies to the non-CJK words
only (:func:`is_cjk`).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator
from operator import add

__all__ = ["DESCRIPTION", "is_cjk", "spans", "tokens"]

DESCRIPTION = "CJK bigram tokenizer (Han, Kana, Hangul bigrams; words elsewhere)"
"""How :meth:`~bm25desk.engine.analysis.analyzer.Analyzer.describe` names this tokenizer."""

_HAN = (
    "\u2e80-\u2fdf"  # CJK radicals supplement, Kangxi radicals
    "\u3005-\u3007"  # 々 (iteration mark), 〆, 〇
    "\u3021-\u3029\u3038-\u303b"  # Hangzhou numerals, more iteration marks
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # extension A, unified, compatibility
    "\U00020000-\U000323af"  # extensions B-H and the compatibility supplement
)
_KANA = (
    "\u3041-\u309f"  # Hiragana, with the combining voiced marks U+3099/U+309A
    "\u30a1-\u30fa\u30fc-\u30ff"  # Katakana with ー (not the ・ separator, U+30FB)
    "\u31f0-\u31ff"  # Katakana phonetic extensions (Ainu)
    "\uff66-\uff9f"  # half-width Katakana (folded before tokenising; kept for safety)
    "\U0001b000-\U0001b16f"  # Kana supplement and extensions
)
_HANGUL = "\u1100-\u11ff\u3131-\u318e\ua960-\ua97f\uac00-\ud7a3\ud7b0-\ud7ff\uffa0-\uffdc"
_CJK_CLASS = _HAN + _KANA + _HANGUL

# A CJK run, or a word: \w minus the CJK characters (the word tokenizer's rule elsewhere).
_TOKEN = re.compile(f"[{_CJK_CLASS}]+|[^\\W{_CJK_CLASS}]+")
_CJK_START = re.compile(f"[{_CJK_CLASS}]")
_COMBINING = re.compile("[\u3099\u309a]")
_UNIT = re.compile(".[\u3099\u309a]*", re.DOTALL)


def _width_table() -> dict[int, str]:
    """Return the folding table: full-width ASCII → ASCII, half-width Katakana → full-width.

    One character to one character (the half-width voiced marks become the combining ones), so
    offsets in the folded text are offsets in the original.
    """
    table = {code: chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)}
    for code in range(0xFF61, 0xFFA0):
        folded = unicodedata.normalize("NFKC", chr(code))
        if len(folded) == 1:
            table[code] = folded
    table[0xFF9E] = "\u3099"  # ﾞ → combining dakuten (NFKC gives the spacing ゛ U+309B)
    table[0xFF9F] = "\u309a"  # ﾟ → combining handakuten
    return table


_WIDTH = _width_table()


def is_cjk(token: str) -> bool:
    """Return whether ``token`` is a CJK unigram or bigram (not to be stemmed)."""
    return _CJK_START.match(token) is not None


def _units(run: str) -> list[tuple[int, int, str]]:
    """Return ``(start, end, character)`` per character of ``run``, voiced marks composed."""
    return [
        (m.start(), m.end(), unicodedata.normalize("NFC", m.group())) for m in _UNIT.finditer(run)
    ]


def tokens(text: str) -> list[str]:
    """Return the tokens of ``text`` in order (the bulk-indexing path)."""
    out: list[str] = []
    for tok in _TOKEN.findall(text.translate(_WIDTH)):
        if not _CJK_START.match(tok) or len(tok) == 1:
            out.append(tok)
        elif _COMBINING.search(tok) is None:
            out.extend(map(add, tok, tok[1:]))  # the bigrams, at C speed
        else:
            chars = [c for _, _, c in _units(tok)]
            out.extend(map(add, chars, chars[1:]) if len(chars) > 1 else chars)
    return out


def spans(text: str) -> Iterator[tuple[int, int, str]]:
    """Yield ``(start, end, token)`` for each token of ``text``: the same tokens as :func:`tokens`.

    A bigram spans its two characters, so consecutive bigrams overlap by one character.
    """
    for m in _TOKEN.finditer(text.translate(_WIDTH)):
        tok, start = m.group(), m.start()
        if not _CJK_START.match(tok) or len(tok) == 1:
            yield start, m.end(), tok
            continue
        units = _units(tok)
        if len(units) == 1:
            yield start, m.end(), units[0][2]
            continue
        for (a, _, first), (_, b, second) in itertools.pairwise(units):
            yield start + a, start + b, first + second
