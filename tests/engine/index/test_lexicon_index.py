"""The lexicon's terms index: every term found, every absent key missed, damage reported.

The terms index searches the lexicons written without a hash (before ``terms.hash.npy``): the
tests remove the hash the writer now writes (test_terms_hash.py tests the hash), but for one that
looks up through both.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import IndexCorruptError, save_array
from bm25desk.engine.index.lexicon import Lexicon, sort_terms, write_lexicon

# Multi-byte UTF-8, prefixes of one another, and keys around the stride boundaries.
WORDS = [f"w{i:04d}" for i in range(0, 400, 3)] + ["a", "ab", "abc", "é", "éa", "zz", "日本"]

CODECS = ["compiled", "python"] if blocks.compiled() else ["python"]


def _lexicon(
    tmp_path: Path,
    terms: list[str],
    stride: int,
    codec: str,
    mp: pytest.MonkeyPatch,
    hashed: bool = False,
):
    order = sort_terms(terms)
    write_lexicon(tmp_path, [terms[i] for i in order])
    if not hashed:
        (tmp_path / "terms.hash.npy").unlink()  # as written before the hash
    mp.setattr(Lexicon, "STRIDE", stride)
    if codec == "python":
        mp.setattr(blocks, "_blocks", None)
    return Lexicon(tmp_path), [terms[i] for i in order]


def _absent(sorted_terms: list[str]) -> list[str]:
    """Keys before, between and after every term (none of them a term)."""
    out = ["", "\x00", "A"]
    for t in sorted_terms:
        out += [t + "\x00", t + "0", t[:-1] + chr(ord(t[-1]) + 1) + "x", t[:-1]]
    out += ["\U0010ffff", "zzz"]
    have = set(sorted_terms)
    return [k for k in out if k not in have]


@pytest.mark.parametrize("hashed", [False, True], ids=["index", "hash"])
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("stride", [1, 2, 4, 7, 64, 128])
@pytest.mark.parametrize("size", [0, 1, 2, 63, 64, 65, 127, 128, 129, len(WORDS)])
def test_every_term_is_found_and_every_other_key_is_not(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    codec: str,
    stride: int,
    size: int,
    hashed: bool,
) -> None:
    lex, terms = _lexicon(tmp_path, WORDS[:size], stride, codec, monkeypatch, hashed)
    assert (lex.hash_table is not None) == hashed
    for i, t in enumerate(terms):  # the first, the last, every stride's first and last
        assert lex.find(t) == i, t
    for key in _absent(terms):
        assert lex.find(key) == -1, key
    # Remembered look-ups give the same answers.
    assert [lex.find(t) for t in terms] == list(range(len(terms)))
    assert len(lex.terms_index()) == -(-size // stride)


def test_a_many_term_lexicon_is_searched_through_its_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terms = [f"t{i}" for i in range(5000)]
    lex, ordered = _lexicon(tmp_path, terms, 64, CODECS[0], monkeypatch)
    assert lex.terms_index()[1] == ordered[64].encode()
    assert [lex.find(t) for t in ordered[::37]] == list(range(0, 5000, 37))
    assert lex.find("t5000") == lex.find("t") == lex.find("u") == -1


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("where", ["sampled", "searched"])
def test_damaged_offsets_are_reported_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec: str, where: str
) -> None:
    n = 3 * Lexicon.STRIDE
    write_lexicon(tmp_path, [f"t{i:04d}" for i in range(n)])
    (tmp_path / "terms.hash.npy").unlink()  # as written before the hash
    offsets = np.load(tmp_path / "terms.off.npy")
    # A sampled key's offset past the end (read with the terms index), or one a binary search
    # of the first stride probes; the file's size still fits (the blob's own check passes).
    bad = Lexicon.STRIDE if where == "sampled" else Lexicon.STRIDE // 2
    offsets[bad] = offsets[-1] + 10
    save_array(tmp_path / "terms.off.npy", offsets)
    if codec == "python":
        monkeypatch.setattr(blocks, "_blocks", None)
    if where == "searched" and codec == "python":
        # Without the codec a record is read as Python slices it: wrong bytes, never a crash.
        assert Lexicon(tmp_path).find(f"t{bad + 1:04d}") in (-1, bad + 1)
        return
    with pytest.raises(IndexCorruptError, match="terms"):
        Lexicon(tmp_path).find(f"t{bad // 2 + 1:04d}")


@pytest.mark.skipif(not blocks.compiled(), reason="the C kernel is not loaded (a range check)")
def test_a_range_outside_the_records_is_refused(tmp_path: Path) -> None:
    write_lexicon(tmp_path, ["a", "b", "c"])
    (tmp_path / "terms.hash.npy").unlink()
    lex = Lexicon(tmp_path)
    data, offsets = lex._blob.data(), lex._blob.offsets
    assert blocks.find(data, offsets, b"b", 1, 2) == 1
    assert blocks.find(data, offsets, b"b", 2, 3) == -1  # outside the range searched
    for lo, hi in ((2, 1), (-1, 2), (0, 4)):
        with pytest.raises(ValueError, match="range"):
            blocks.find(data, offsets, b"b", lo, hi)
