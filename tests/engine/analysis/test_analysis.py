"""Analysis: tokenizers, case, stop lists, stemmers, minimum length, the stored spec, and the
guarantee that the bulk-indexing path, query analysis and highlighting see the same tokens."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bm25desk.engine.analysis.analyzer import (
    LANGUAGES,
    STEMMERS,
    TOKENIZERS,
    AnalysisError,
    Analyzer,
    stoplist_for,
)

TEXT = "The quick-brown Fox's 2 e-mails (re: c++) weren't read, 'twice'."


def test_word_tokenizer_splits_on_non_word_characters() -> None:
    assert Analyzer().terms(TEXT) == [
        "the", "quick", "brown", "fox", "s", "2", "e", "mails", "re", "c", "weren", "t", "read",
        "twice",
    ]  # fmt: skip


def test_whitespace_tokenizer_keeps_punctuation_and_case() -> None:
    a = Analyzer(tokenizer="whitespace", lowercase=False)
    assert a.terms(TEXT) == TEXT.split()
    assert a.terms("a\u00a0b\u2003c\td\ne") == [
        "a",
        "b",
        "c",
        "d",
        "e",
    ]  # Unicode spaces, as str.split


def test_treebank_tokenizer_splits_clitics_and_rewrites_quotes() -> None:
    a = Analyzer(tokenizer="treebank")
    assert a.terms('They can\'t say "hi".') == ["they", "ca", "n't", "say", "``", "hi", "''", "."]
    spans = a.analyze('They can\'t say "hi".')
    assert [(t.surface, t.start, t.end) for t in spans][3:7] == [
        ("say", 11, 14),
        ("``", 15, 16),  # the rewritten quote points at the original '"'
        ("hi", 16, 18),
        ("''", 18, 19),
    ]


def test_lowercase_off_keeps_case_but_stop_words_still_match() -> None:
    a = Analyzer(lowercase=False, stopwords=frozenset({"the"}), stoplist_name="custom")
    assert a.terms("The the THE Cat cat") == ["Cat", "cat"]
    assert [t.status for t in a.analyze("The Cat")] == ["stop", "ok"]


def test_english_stop_list_from_whoosh() -> None:
    a = Analyzer.create(stopwords="en")
    assert a.terms("the cat and the hat are on a mat") == ["cat", "hat", "mat"]
    assert a.stoplist_name == "en"
    assert "the" in a.stopwords


@pytest.mark.parametrize("code", ["da", "de", "en", "es", "fi", "fr", "hu", "it", "nl", "no", "pt",
                                  "ru", "sv", "tr"])  # fmt: skip
def test_every_whoosh_stop_list_loads(code: str) -> None:
    words = stoplist_for(code)
    assert len(words) > 10
    assert code in LANGUAGES


def test_stop_list_from_a_file(tmp_path) -> None:
    f = tmp_path / "my-stops.txt"
    f.write_text("# my words\nfoo\n  bar  # trailing comment\n\nBaz\n", encoding="utf-8")
    assert stoplist_for(str(f)) == frozenset({"foo", "bar", "Baz"})
    a = Analyzer.create(stopwords=str(f))
    assert a.stoplist_name == "my-stops.txt"
    assert a.terms("foo bar qux") == ["qux"]


def test_stop_list_errors() -> None:
    assert stoplist_for("none") == frozenset()
    with pytest.raises(AnalysisError, match=r"unknown stop list 'xx'.*none, a language code"):
        stoplist_for("xx")
    with pytest.raises(AnalysisError, match="unknown stop list"):
        Analyzer.create(stopwords="/no/such/file.txt")


@pytest.mark.parametrize(
    ("stemmer", "language", "words", "stems"),
    [
        ("none", "en", "running runners", ["running", "runners"]),
        ("porter", "en", "running connected generously", ["run", "connect", "gener"]),
        ("snowball", "en", "running connected generously", ["run", "connect", "generous"]),
        ("snowball", "de", "Häuser laufen schnellere Kinder", ["haus", "lauf", "schnell", "kind"]),
        ("snowball", "french", "continuellement chanteuses", ["continuel", "chanteux"]),
        ("lancaster", "en", "running generously organization", ["run", "gen", "org"]),
    ],
)  # fmt: skip
def test_stemmers(stemmer: str, language: str, words: str, stems: list[str]) -> None:
    a = Analyzer(stemmer=stemmer, language=language)
    assert a.terms(words) == stems


def test_porter_is_nltk_original_not_whoosh() -> None:
    """whoosh's Porter and nltk's differ ("running" → "runn" vs "run"): nltk is used."""
    assert Analyzer(stemmer="porter").terms("running") == ["run"]
    assert "Porter (nltk" in STEMMERS["porter"]


def test_stemming_happens_after_the_stop_list_and_min_length() -> None:
    # Order: lowercase → minimum length → stop list → stem. "as" is too short (checked first);
    # "the" is a stop word; "ties" stems to "ti", kept: the length applies before stemming.
    a = Analyzer.create(stopwords="en", stemmer="porter", min_length=3)
    toks = a.analyze("as the ties")
    assert [(t.surface, t.term, t.status) for t in toks] == [
        ("as", None, "short"),
        ("the", None, "stop"),
        ("ties", "ti", "ok"),
    ]


def test_min_length() -> None:
    a = Analyzer(min_length=3)
    assert a.terms("a an ant ants") == ["ant", "ants"]
    with pytest.raises(AnalysisError, match="at least 1"):
        Analyzer(min_length=0)


def test_option_errors() -> None:
    with pytest.raises(AnalysisError, match="unknown tokenizer 'spaces'"):
        Analyzer(tokenizer="spaces")
    with pytest.raises(AnalysisError, match="unknown stemmer 'krovetz'"):
        Analyzer(stemmer="krovetz")
    with pytest.raises(AnalysisError, match="no Snowball stemmer for language 'xx'"):
        Analyzer(stemmer="snowball", language="xx")


@pytest.mark.parametrize(
    "analyzer",
    [
        Analyzer(),
        Analyzer(tokenizer="whitespace", lowercase=False),
        Analyzer.create(tokenizer="treebank", stopwords="en", stemmer="porter", min_length=2),
        Analyzer.create(stopwords="de", stemmer="snowball", language="de"),
        Analyzer(stemmer="lancaster", lowercase=False),
    ],
    ids=["default", "whitespace", "treebank-en-porter", "de-snowball", "lancaster-case"],
)
def test_spec_round_trip(analyzer: Analyzer) -> None:
    spec = analyzer.spec()
    import json

    spec = json.loads(json.dumps(spec))  # it is stored as JSON in the manifest
    again = Analyzer.from_spec(spec)
    assert again == analyzer
    assert again.describe() == analyzer.describe()
    assert again.terms(TEXT) == analyzer.terms(TEXT)
    assert again.version_warnings(spec) == []
    assert spec["version"] == 1


def test_spec_round_trip_keeps_a_file_stop_list_without_the_file(tmp_path) -> None:
    f = tmp_path / "stops.txt"
    f.write_text("alpha\nbeta\n", encoding="utf-8")
    spec = Analyzer.create(stopwords=str(f)).spec()
    f.unlink()
    again = Analyzer.from_spec(spec)
    assert again.stopwords == frozenset({"alpha", "beta"})
    assert again.terms("alpha gamma") == ["gamma"]


def test_spec_errors_and_version_warnings() -> None:
    spec = Analyzer().spec()
    del spec["tokenizer"]
    with pytest.raises(AnalysisError, match="incomplete"):
        Analyzer.from_spec(spec)
    old = {**Analyzer().spec(), "nltk": "0.0.1"}
    (warning,) = Analyzer().version_warnings(old)
    assert "nltk 0.0.1" in warning
    assert "stems may differ" in warning


def test_describe() -> None:
    a = Analyzer.create(stopwords="en", stemmer="snowball", language="en", min_length=2)
    assert a.describe() == (
        f"word tokenizer, lowercase, stop words: en ({len(a.stopwords)}), stemmer: snowball-en, "
        "min length 2"
    )
    assert Analyzer().describe() == "word tokenizer, lowercase, no stop words, stemmer: none"


def test_analyze_reports_offsets_and_fate() -> None:
    a = Analyzer.create(stopwords="en", min_length=2)
    text = "The X-ray of a cat"
    toks = a.analyze(text)
    assert [(t.surface, text[t.start : t.end], t.term, t.status) for t in toks] == [
        ("The", "The", None, "stop"),
        ("X", "X", None, "short"),
        ("ray", "ray", "ray", "ok"),
        ("of", "of", None, "stop"),
        ("a", "a", None, "short"),  # the length is checked before the stop list
        ("cat", "cat", "cat", "ok"),
    ]


def test_spans_for_highlighting() -> None:
    a = Analyzer(stemmer="porter")
    text = "Cats chase cat-like CATS."
    assert a.spans(text, {"cat"}) == [(0, 4, "cat"), (11, 14, "cat"), (20, 24, "cat")]
    assert a.spans(text, set()) == []


# -- the bulk path equals the query and highlighting paths ----------------------------------------

ANALYZERS = {
    "default": Analyzer(),
    "whitespace": Analyzer(tokenizer="whitespace", lowercase=False),
    "treebank": Analyzer(tokenizer="treebank"),
    "en-porter-min3": Analyzer.create(stopwords="en", stemmer="porter", min_length=3),
    "snowball-case": Analyzer.create(stemmer="snowball", lowercase=False),
    "lancaster": Analyzer(stemmer="lancaster"),
    "treebank-en-snowball": Analyzer.create(
        tokenizer="treebank", stopwords="en", stemmer="snowball"
    ),
}


def _stride(a: Analyzer, slow: int) -> int:
    """Every text for plain analysers; a sample where analyze() is slow (stemmers, treebank)."""
    if a.stemmer == "lancaster":
        return slow * 4
    return slow // 5 if a.stemmer == "none" and a.tokenizer != "treebank" else slow


def _three_paths_agree(a: Analyzer, text: str) -> None:
    bulk = a.terms(text)
    tokens = a.analyze(text)
    assert [t.term for t in tokens if t.term is not None] == bulk
    vocab = set(bulk)
    spans = a.spans(text, vocab)
    assert [term for _, _, term in spans] == bulk
    ok = [t for t in tokens if t.term is not None]
    assert [(s, e) for s, e, _ in spans] == [(t.start, t.end) for t in ok]
    for t in tokens:
        if a.tokenizer != "treebank" or t.surface not in ("``", "''"):
            assert text[t.start : t.end] == t.surface


@pytest.mark.parametrize("name", list(ANALYZERS))
def test_bulk_path_equals_query_and_highlight_paths_on_cisi(name: str, cisi_texts) -> None:
    a = ANALYZERS[name]
    # analyze() runs the stemmer per token (only terms() and spans() memoise): sample to stay fast.
    texts = cisi_texts[:: _stride(a, 15)]
    for text in texts:
        _three_paths_agree(a, text)


@pytest.mark.scifact
@pytest.mark.parametrize("name", list(ANALYZERS))
def test_bulk_path_equals_query_and_highlight_paths_on_scifact(name: str, scifact_texts) -> None:
    a = ANALYZERS[name]
    texts = scifact_texts[:: _stride(a, 10)]
    for text in texts:
        _three_paths_agree(a, text)


def test_cached_and_fresh_analysers_agree(cisi_texts) -> None:
    """The memo cache changes nothing: a warmed-up analyser equals a fresh one per text."""
    warm = Analyzer.create(stopwords="en", stemmer="porter")
    for text in cisi_texts[:200]:
        warm.terms(text)
    for text in cisi_texts[200:260]:
        assert warm.terms(text) == Analyzer.create(stopwords="en", stemmer="porter").terms(text)


_PIECES = st.sampled_from(
    [
        *list("aZé1_ \t\n.,;:!?()\"'`-&$%#@\xa0\u2003ß"),
        "can't",
        "gonna",
        "...",
        "--",
        "''",
        "``",
        "Mr.",
        "U.S.",
        "ΣΑΣ",
        "İstanbul",
        "ﬁ",
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(_PIECES, max_size=25).map("".join), name=st.sampled_from(list(ANALYZERS)))
def test_three_paths_agree_on_random_text(text: str, name: str) -> None:
    _three_paths_agree(ANALYZERS[name], text)


def test_tokenizer_and_stemmer_tables() -> None:
    assert set(TOKENIZERS) == {"word", "whitespace", "treebank", "cjk"}
    assert set(STEMMERS) == {"none", "porter", "snowball", "lancaster"}
