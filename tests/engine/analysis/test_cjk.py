"""The cjk tokenizer: bigrams over Han/Kana/Hangul runs, words elsewhere, width folding; and the
one rule that matters most — building, querying and highlighting see the very same tokens."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis import cjk
from bm25desk.engine.analysis.analyzer import Analyzer
from bm25desk.engine.index.segment import TermIds

DATA = Path(__file__).resolve().parents[2] / "data" / "cjk"
CJK = Analyzer(tokenizer="cjk")


def corpus_texts() -> list[str]:
    texts = []
    for name in ("zh", "ja", "ko"):
        for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            texts.append(f"{rec['title']}\n{rec['text']}")
    return texts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Chinese: overlapping bigrams, punctuation ends a run
        ("學而時習之，不亦說乎", ["學而", "而時", "時習", "習之", "不亦", "亦說", "說乎"]),
        # Japanese: scripts mix inside a run (Lucene does the same), ー belongs to Katakana
        ("東京タワー", ["東京", "京タ", "タワ", "ワー"]),
        # Korean: spaces separate runs
        ("한국어 위키", ["한국", "국어", "위키"]),
        # a run of one character is that character (a unigram)
        ("日 and 月", ["日", "and", "月"]),
        # digits and Latin are words, as in the word tokenizer; lowercase applies to them
        ("2024年にPython", ["2024", "年に", "python"]),
        # 々 is an ideograph (iteration mark)
        ("人々", ["人々"]),
        # the Katakana middle dot separates words
        ("ジョン・スミス", ["ジョ", "ョン", "スミ", "ミス"]),
    ],
)
def test_tokens(text: str, expected: list[str]) -> None:
    assert CJK.terms(text) == expected


def test_width_folding_keeps_offsets() -> None:
    """Full-width ASCII becomes ASCII, half-width Katakana full-width (voiced marks composed),
    and the spans still point at the characters as written."""
    text = "ＮＨＫの３３３ｍ ﾃﾚﾋﾞ塔"
    terms = CJK.terms(text)
    assert terms == ["nhk", "の", "333m", "テレ", "レビ", "ビ塔"]
    spans = CJK.spans(text, set(terms))
    assert [t for _, _, t in spans] == terms
    for start, end, term in spans:
        written = unicodedata.normalize("NFKC", text[start:end]).lower()
        assert written == term
    # ﾋﾞ is two characters of the text and one of the term
    assert [(s, e) for s, e, t in spans if t == "レビ"] == [(10, 13)]


def test_decomposed_kana_are_composed() -> None:
    assert CJK.terms("か\u3099き") == ["がき"]
    assert CJK.terms("か\u3099") == ["が"]


def test_cjk_tokens_are_not_stemmed_but_words_are() -> None:
    analyzer = Analyzer.create(tokenizer="cjk", stemmer="porter", stopwords="en")
    assert analyzer.terms("東京で running the dogs") == ["東京", "京で", "run", "dog"]
    assert cjk.is_cjk("東京")
    assert cjk.is_cjk("한")
    assert not cjk.is_cjk("run")


def test_a_stop_list_applies_to_bigrams(tmp_path: Path) -> None:
    stop = tmp_path / "stop.txt"
    stop.write_text("我们\n的\n", encoding="utf-8")
    analyzer = Analyzer.create(tokenizer="cjk", stopwords=str(stop))
    assert analyzer.terms("我们 的 书") == ["书"]
    assert [t.status for t in analyzer.analyze("我们 的 书")] == ["stop", "stop", "ok"]


def test_min_length_drops_unigrams() -> None:
    analyzer = Analyzer(tokenizer="cjk", min_length=2)
    assert analyzer.terms("日 本日 a bc") == ["本日", "bc"]


def test_spec_round_trip_and_description() -> None:
    analyzer = Analyzer.create(tokenizer="cjk", stopwords="en")
    again = Analyzer.from_spec(json.loads(json.dumps(analyzer.spec())))
    assert again == analyzer
    text = analyzer.describe()
    assert text.startswith("CJK bigram tokenizer (Han, Kana, Hangul bigrams; words elsewhere)")


def _three_ways(analyzer: Analyzer, text: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """The terms of ``text`` as indexing (ids), querying (analyze) and highlighting (spans) see
    them, and as terms() gives them."""
    vocab = TermIds()
    ids = analyzer.id_tokenizer(vocab)(text).tolist()
    terms = list(vocab)
    built = [terms[i] for i in ids if i >= 0]
    queried = [t.term for t in analyzer.analyze(text) if t.term is not None]
    highlighted = [t for _, _, t in analyzer.spans(text, set(queried))]
    return built, queried, highlighted, analyzer.terms(text)


def test_build_query_and_highlight_tokens_agree_on_real_text() -> None:
    analyzer = Analyzer.create(tokenizer="cjk", stopwords="en", stemmer="porter")
    texts = corpus_texts()
    assert len(texts) == 24
    for text in texts:
        built, queried, highlighted, terms = _three_ways(analyzer, text)
        assert built == queried == highlighted == terms
        assert len(terms) > 10


# Han, Hiragana, Katakana (ー and ・), Hangul, half-width Katakana and voiced marks, full-width
# Latin, combining marks, Latin, digits, punctuation of both worlds, spaces.
ALPHABET = [
    *"中文學而日本東京ひらがなカタカナーン・한국어ｶﾞﾃﾞｯ\u3099\u309a",
    *"Ａｂ１aZé9_-,.。、「」 \n\u3000々𠀀",
]


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=ALPHABET, max_size=40))
def test_every_path_sees_the_same_tokens(text: str) -> None:
    for analyzer in (CJK, Analyzer.create(tokenizer="cjk", stemmer="porter", min_length=2)):
        built, queried, highlighted, terms = _three_ways(analyzer, text)
        assert built == queried == highlighted == terms
    # spans cover their characters: folded and composed, the text under a span is its token
    for start, end, token in cjk.spans(text):
        under = text[start:end].translate(cjk._WIDTH)
        assert unicodedata.normalize("NFC", under) == token or len(token) == 2
        assert 0 <= start < end <= len(text)
    assert [t for _, _, t in cjk.spans(text)] == cjk.tokens(text)
