"""A segment's vocabulary on disk: terms sorted by UTF-8 bytes, found through a hash or an index."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bm25desk.engine.index import blocks, termhash
from bm25desk.engine.index.arrays import I64, IndexCorruptError, map_under, narrow, save_array
from bm25desk.engine.index.blobs import Blob

__all__ = ["Lexicon", "sort_terms", "write_lexicon", "write_lexicon_bytes"]


class Lexicon:
    """A sorted vocabulary on disk: term ↔ id through its hash, or by binary search.

    A look-up reads the lexicon's hash (``terms.hash.npy``, :mod:`~bm25desk.engine.index.termhash`:
    one slot, then the record it names, compared with the key); a lexicon written without one
    (before it existed) bisects its terms index (every :attr:`STRIDE`-th term, in memory) and
    then searches one stride of the file — the same ids. The answer is remembered
    (:attr:`REMEMBERED`).

    A damaged hash (caught by the index's checksums and checks: see
    :mod:`~bm25desk.engine.index.termhash`) can only make a term be missed (-1), never give
    another term's id; one whose size does not fit the lexicon is refused here.
    """

    STRIDE = 128
    """Terms per entry of the terms index (:meth:`terms_index`)."""

    REMEMBERED = 1 << 16
    """Look-ups remembered (term → id); all are forgotten when this many are."""

    def __init__(self, directory: Path, name: str = "terms") -> None:
        self._blob = Blob(directory, name)
        # What a look-up reads, at hand (a term's first look-up is on the query path).
        self._n = len(self._blob)
        self._data = self._blob.data()
        # A memoryview: the compiled look-up takes its buffer in fewer instructions than numpy's.
        self._offsets = memoryview(self._blob.offsets)  # type: ignore[arg-type]  # (a buffer)
        self._found: dict[str, int] = {}
        self._index: list[bytes] | None = None
        self._table = termhash.open_table(directory, self._n, name)
        # The slots as the look-up takes them (a memoryview, like the offsets).
        self._slots: memoryview | None = None
        if self._table is not None:
            self._slots = memoryview(self._table)  # type: ignore[arg-type]  # (a buffer)

    def __len__(self) -> int:
        """Return the number of records."""
        return len(self._blob)

    def maps(self) -> list[Any]:
        """Return the maps a look-up reads: the terms' bytes, their offsets and the hash."""
        got = [self._data, map_under(self._blob.offsets)]
        return got if self._table is None else [*got, map_under(self._table)]

    @property
    def offsets(self) -> I64:
        """Return the offsets of the terms in ``terms.bin`` (n + 1 of them)."""
        return self._blob.offsets

    @property
    def memo(self) -> dict[str, int]:
        """Return the terms looked up so far -> their ids (-1: absent), as :meth:`find` keeps them.

        For compiled callers that read a query's ids themselves (``_topk.ranked_terms``, the
        exhaustive path's ``fresh`` terms): the same dict, never copied; only :meth:`find` and
        :meth:`find_many` write it.
        """
        return self._found

    @property
    def hash_table(self) -> termhash.U32 | None:
        """Return the lexicon's hash (uint32 slots, mapped), or None when it was written without."""
        return self._table

    def check_hash(self) -> bool:
        """Return whether the lexicon's hash (if any) is the one its terms give (reads them all)."""
        if self._table is None:
            return True
        self._blob.read_through()
        return termhash.check_table(self._table, self._data, self._offsets)

    def term_bytes(self, i: int) -> bytes:
        """Return the UTF-8 bytes of the term with id ``i``."""
        return self._blob.get_bytes(i)

    def term(self, i: int) -> str:
        """Return the term with id ``i``."""
        return self._blob.get(i)

    def find(self, term: str) -> int:
        """Return the id of ``term``, or -1 when it is not in the vocabulary.

        Remembered per term (bounded): the index's look-up of a query term and its segment's
        are one search when the index has one segment.
        """
        got = self._found.get(term)
        if got is None:
            got = self._search(term)
            if len(self._found) >= self.REMEMBERED:
                self._found.clear()
            self._found[term] = got
        return got

    def find_many(self, terms: list[str]) -> list[int]:
        """Return :meth:`find` of each of ``terms`` (remembered alike), in one compiled call.

        A query's new terms: the encoding and the look-up of each (its hash's slots and the
        record named, or the terms index's bisection and the stride's binary search) run in C,
        one call instead of several per term: the very search :meth:`_search` does.
        """
        find = blocks._blocks  # read per call: the compiled codec can be switched off (tests)
        if find is None or len(terms) < 2:
            return [self.find(t) for t in terms]
        ids: list[int]
        try:
            if self._slots is not None:
                ids = find.hash_find(self._data, self._offsets, self._slots, terms)
            else:
                index = self._index if self._index is not None else self.terms_index()
                ids = find.find_many(self._data, self._offsets, index, self.STRIDE, terms)
        except ValueError as exc:
            raise IndexCorruptError(f"index file damaged: terms ({exc})") from None
        found = self._found
        if len(found) + len(ids) > self.REMEMBERED:
            found.clear()
        found.update(zip(terms, ids, strict=True))
        return ids

    def dfs_many(
        self, terms: list[str], ptr: Any, cache: dict[str, int]
    ) -> tuple[list[int], list[int]] | None:
        """Return each term's df from ``ptr`` and the ids of those new to ``cache``, in one call.

        For an index of this one segment (df: ``ptr[i + 1] - ptr[i]``): a term ``cache`` lacks
        is found as :meth:`find` finds it (remembered alike) and kept in ``cache`` (its id, or
        -1 when in no document); the second list holds the new ones' ids with df > 0. None
        without the compiled look-up or the hash (the caller goes term by term).
        """
        find = blocks._blocks
        if find is None or self._slots is None:
            return None
        found = self._found
        if len(found) > self.REMEMBERED:  # (bounded by that and one call's new terms)
            found.clear()
        try:
            got: tuple[list[int], list[int]] = find.hash_dfs(
                self._data, self._offsets, self._slots, ptr, terms, found, cache
            )
        except ValueError as exc:
            raise IndexCorruptError(f"index file damaged: terms ({exc})") from None
        return got

    def _search(self, term: str) -> int:
        """Return the id of ``term`` through the hash, or by binary search (-1 when absent).

        With a hash: one slot (nearly always), then the record it names. Without: the terms
        index gives the stride the term is in; only that stride's records are searched (one or
        two pages of a cold lexicon).
        """
        find = blocks._blocks  # read per call: the compiled codec can be switched off (tests)
        if self._slots is not None:
            if find is not None:  # a slot, the record's offsets, its bytes: ~3 memory reads
                try:
                    return find.hash_find(self._data, self._offsets, self._slots, term)  # type: ignore[no-any-return]
                except ValueError as exc:
                    raise IndexCorruptError(f"index file damaged: terms ({exc})") from None
            key = term.encode("utf-8", "replace")
            slots = self._slots.cast("B").cast("I")
            return termhash.find(slots, self._n, self._blob.get_bytes, key)
        key = term.encode("utf-8", "replace")
        index = self._index if self._index is not None else self.terms_index()
        lo = bisect_right(index, key) - 1  # the last sampled key ≤ key
        if lo < 0:
            return -1  # before the first term
        stride = self.STRIDE
        lo *= stride
        hi = lo + stride
        if hi > self._n:
            hi = self._n
        if find is not None:  # a binary search in C: ~0.5 µs instead of ~10
            try:
                return find.find(self._data, self._offsets, key, lo, hi)  # type: ignore[no-any-return]
            except ValueError as exc:
                raise IndexCorruptError(f"index file damaged: terms ({exc})") from None
        get = self._blob.get_bytes
        while lo < hi:
            mid = (lo + hi) // 2
            probe = get(mid)
            if probe < key:
                lo = mid + 1
            elif probe > key:
                hi = mid
            else:
                return mid
        return -1

    def terms_index(self) -> list[bytes]:
        """Return every :attr:`STRIDE`-th term's bytes (the terms index; read on first use).

        Lucene's terms index: a look-up bisects this list in memory and then searches one
        stride of the lexicon on disk, instead of ~log2(n) probes spread over the whole file.

        Raises
        ------
        IndexCorruptError
            When the sampled terms' offsets do not fit the file (a damaged lexicon).
        """
        got = self._index
        if got is None:
            got = self._index = self._read_index()
        return got

    def _read_index(self) -> list[bytes]:
        n = len(self._blob)
        off = self._blob.offsets
        starts = off[0 : n : self.STRIDE].astype(np.int64)
        ends = off[1 : n + 1 : self.STRIDE].astype(np.int64)
        data = self._blob.data()
        if starts.size and not (
            int(starts.min()) >= 0 and bool((ends >= starts).all()) and int(ends.max()) <= len(data)
        ):
            raise IndexCorruptError("index file damaged: terms (offsets out of order)")
        # Not checked for order here (that reads every key: ``bm25desk check`` does): a lexicon
        # out of order hides some terms (-1), as the plain binary search did, never a wrong id.
        return [data[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]

    def strictly_sorted(self) -> bool | None:
        """Return whether the terms ascend strictly (None: no compiled check; compare in Python)."""
        return blocks.strictly_sorted(self._blob.data(), self._blob.offsets)

    def terms(self) -> list[str]:
        """Return the whole vocabulary (for merges and suggestions; loads it)."""
        data = self._blob.raw()
        off = self._blob.offsets.tolist()
        return [data[off[i] : off[i + 1]].decode("utf-8", "replace") for i in range(len(off) - 1)]


def write_lexicon(directory: Path, terms: Iterable[str], name: str = "terms") -> None:
    """Write terms (already sorted by UTF-8 bytes) as a :class:`Lexicon`."""
    encoded = [t.encode("utf-8", "replace") for t in terms]
    lens = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    write_lexicon_bytes(directory, b"".join(encoded), lens, name)


def write_lexicon_bytes(directory: Path, data: bytes, lens: I64, name: str = "terms") -> None:
    """Write sorted terms given as their UTF-8 bytes back to back and each one's length.

    With their hash (``terms.hash.npy``: :mod:`~bm25desk.engine.index.termhash`).
    """
    with open(directory / f"{name}.bin", "wb") as fh:
        fh.write(data)
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    save_array(directory / f"{name}.off.npy", narrow(offsets))
    termhash.write_table(directory, data, offsets, name)


def sort_terms(terms: Sequence[str]) -> I64:
    """Return the permutation that sorts ``terms`` by their UTF-8 bytes (the lexicon order)."""
    keys = [t.encode("utf-8", "replace") for t in terms]
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
