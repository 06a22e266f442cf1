"""nltk's Porter and Lancaster stemmers imported without nltk's package inits (analyzer.py).

Opening an index analysed with Porter (the default analysis) imported most of nltk (~0.2-0.3 s);
the stemmer needs three small modules of it. Checked in fresh interpreters: the stems equal
those of nltk imported the usual way, nltk's package is not imported, a later ``import nltk``
works and gives the very same class, and a failure of the short way falls back to the usual
import.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from bm25desk.engine.analysis import analyzer as analyzer_module

WORDS = (
    "libraries running quickly generalizations relational conditional sensibilities "
    "hopefulness ponies caresses agreed plastered motoring sized hopping filing"
)


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return out.stdout.strip()


@pytest.mark.parametrize("stemmer", ["porter", "lancaster"])
def test_the_stemmer_comes_without_nltk_and_stems_alike(stemmer: str) -> None:
    got = _run(
        f"""
        import sys
        from bm25desk.engine.analysis.analyzer import Analyzer
        a = Analyzer(stemmer={stemmer!r}, lowercase=False)
        short = a.terms({WORDS!r})
        print("nltk" in sys.modules, "scipy" in sys.modules)
        module = sys.modules["nltk.stem.{stemmer}"]
        import nltk
        import nltk.stem
        full = [s for s in (
            nltk.stem.PorterStemmer(mode=nltk.stem.PorterStemmer.ORIGINAL_ALGORITHM).stem(
                w, to_lowercase=False
            )
            if {stemmer!r} == "porter" else nltk.stem.LancasterStemmer().stem(w)
            for w in {WORDS!r}.split()
        )]
        print(short == full, len(short))
        print(sys.modules["nltk.stem.{stemmer}"] is module)
        print(Analyzer(stemmer="snowball").terms("running"))
        """
    )
    assert got.splitlines() == ["False False", "True 16", "True", "['run']"]


def test_a_failed_short_way_falls_back_to_the_usual_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(analyzer_module, "_without_package_inits", lambda m: calls.append(m))
    stem = analyzer_module._make_stemmer("porter", "en")
    assert stem is not None
    assert stem("libraries") == "librari"
    assert calls in ([], ["nltk.stem.porter"])  # [] when nltk was imported before this test


def test_stand_ins_are_taken_away_when_the_import_fails() -> None:
    got = _run(
        """
        import sys
        from bm25desk.engine.analysis import analyzer
        print(analyzer._without_package_inits("nltk.stem.no_such_stemmer"))
        print("nltk" in sys.modules, "nltk.stem" in sys.modules)
        print(analyzer._make_stemmer("porter", "en")("libraries"))
        """
    )
    assert got.splitlines() == ["None", "False False", "librari"]
