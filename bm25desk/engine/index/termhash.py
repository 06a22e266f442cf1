"""The lexicon's hash (``terms.hash.npy``): a term's id in ~3 memory reads, none of them shared.

A lexicon (``terms.bin``/``terms.off.npy``, sorted by UTF-8 bytes) is searched by bisecting its
terms index and then one stride of records: ~16 reads of lines and pages a fresh process has not
touched, and the terms index itself reads every 128th term of the lexicon on first use. Its hash
is an open-addressing table written beside it, so that a look-up reads one slot of the table
(a term id), that record's two offsets and its bytes — the bytes compared with the key.

**Layout.** For a lexicon of ``n`` terms (``n`` < :data:`MAX_TERMS`): a 1-d uint32 ``.npy`` of
``m`` = ``n + n // 2 + 1`` home slots (load 2/3) followed by the few slots the last homes' runs
overflow into (at most ``n``). A key's hash ``h`` is FNV-1a (64 bits) over its UTF-8 bytes,
then MurmurHash3's 64-bit finaliser; its home slot is ``((h >> 32) * m) >> 32``. A slot holds 0
(empty) or ``(check << idbits) | (id + 1)``, where ``idbits`` = ``n.bit_length()`` and ``check``
is the low ``32 - idbits`` bits of ``h`` (so that a look-up compares the bytes of the term it is
after, nearly never of another: 13 check bits at 400 k terms, 8 at 10 M). The terms are placed
in order of home slot, ties in id order: each takes the first slot at or after its home and after
the previous one's — linear probing without wrap-around, laid out by a stable sort and a running
maximum, so that the compiled writer and numpy's write the same bytes.

**Look-up.** From the key's home slot to the first empty slot (or the table's end): a slot whose
check bits match names a candidate id; the id is used only if it is within the lexicon and its
record's bytes are the key's. So a damaged table can never give a wrong id, nor read out of
bounds (a table whose size does not fit the lexicon is refused when opened): the worst it can do
is *miss* — answer -1 for a term that is there, so that a search leaves that term out. Its file
is covered like every other: the manifest's checksums list it (an open verifies it the first time
this machine sees it, and ``bm25desk check`` every time), and the full structural check builds
the table again from the lexicon and compares (:func:`check_table`).

Lexicons written before the hash (any format up to 4 as written until then) have no such file
and are searched through their terms index, as before: the same ids either way. A lexicon of
:data:`MAX_TERMS` terms or more gets no hash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import I64, IndexCorruptError, load_array, save_array

__all__ = [
    "MAX_TERMS",
    "build_table",
    "build_table_numpy",
    "check_table",
    "find",
    "hash_path",
    "home_slots",
    "open_table",
    "term_hash",
    "write_table",
]

U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]

MAX_TERMS = 1 << 30
"""Lexicons of this many terms or more get no hash (ids and slot numbers fit in 32 bits)."""

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MIX1 = 0xFF51AFD7ED558CCD
_MIX2 = 0xC4CEB9FE1A85EC53
_M64 = (1 << 64) - 1

_TAIL = 16
"""Keys hashed byte by byte in Python once fewer than this many are still being hashed (numpy's
per-byte-position steps would cost ~µs each for the few longest terms)."""


def hash_path(directory: Path, name: str = "terms") -> Path:
    """Return the path of a lexicon's hash (``terms.hash.npy``)."""
    return directory / f"{name}.hash.npy"


def home_slots(n: int) -> int:
    """Return the number of home slots of the hash of ``n`` terms (load 2/3)."""
    return n + n // 2 + 1


def term_hash(key: bytes) -> int:
    """Return the 64-bit hash of ``key``: FNV-1a, then MurmurHash3's finaliser (``fmix64``)."""
    h = _FNV_OFFSET
    for b in key:
        h = ((h ^ b) * _FNV_PRIME) & _M64
    return _fmix(h)


def _fmix(h: int) -> int:
    h ^= h >> 33
    h = (h * _MIX1) & _M64
    h ^= h >> 33
    h = (h * _MIX2) & _M64
    return h ^ (h >> 33)


def _hashes(data: Any, offsets: I64) -> U64:
    """Return :func:`term_hash` of every record of a blob, vectorised over byte positions."""
    n = len(offsets) - 1
    buf = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(0, dtype=np.uint8)
    starts = offsets[:-1]
    lens = np.diff(offsets)
    order = np.argsort(-lens, kind="stable")  # longest first: the keys still hashed are a prefix
    by_len = lens[order]
    at = starts[order]
    h = np.full(n, _FNV_OFFSET, dtype=np.uint64)
    prime = np.uint64(_FNV_PRIME)
    neg = -by_len
    j = 0
    while True:
        k = int(np.searchsorted(neg, -j, side="left"))  # keys longer than j bytes
        if k < _TAIL:
            break
        h[:k] ^= buf[at[:k] + j]
        h[:k] *= prime
        j += 1
    for i in range(k):  # the few longest keys' remaining bytes
        v = int(h[i])
        for b in bytes(buf[int(at[i]) + j : int(at[i]) + int(by_len[i])]):
            v = ((v ^ b) * _FNV_PRIME) & _M64
        h[i] = v
    h ^= h >> np.uint64(33)
    h *= np.uint64(_MIX1)
    h ^= h >> np.uint64(33)
    h *= np.uint64(_MIX2)
    h ^= h >> np.uint64(33)
    out = np.empty(n, dtype=np.uint64)
    out[order] = h
    return out


def _check_offsets(offsets: I64, size: int) -> None:
    if offsets.size == 0 or int(offsets[0]) < 0 or int(offsets[-1]) > size:
        raise ValueError("terms_hash: offsets do not fit the data")
    if offsets.size > 1 and bool((offsets[1:] < offsets[:-1]).any()):
        raise ValueError("terms_hash: offsets out of order")


def build_table_numpy(data: Any, offsets: Any) -> U32:
    """Return the hash table of a blob's records (``data``, ``offsets``: n + 1), in numpy.

    The very bytes the compiled ``terms_hash`` gives (see the module's layout).
    """
    off = np.asarray(offsets, dtype=np.int64)
    _check_offsets(off, len(data))
    n = off.size - 1
    if n >= MAX_TERMS:
        raise OverflowError("terms_hash: too many terms for a hash")
    m = home_slots(n)
    idbits = n.bit_length()
    h = _hashes(data, off)
    home = ((h >> np.uint64(32)) * np.uint64(m)) >> np.uint64(32)
    check = h & np.uint64((1 << (32 - idbits)) - 1)
    slot = (check << np.uint64(idbits)) | np.arange(1, n + 1, dtype=np.uint64)
    order = np.argsort(home, kind="stable")
    k = np.arange(n, dtype=np.int64)
    pos = np.maximum.accumulate(home[order].astype(np.int64) - k) + k if n else k
    table = np.zeros(max(m, int(pos[-1]) + 1 if n else 0), dtype=np.uint32)
    table[pos] = slot[order].astype(np.uint32)
    return table


def build_table(data: Any, offsets: Any) -> U32:
    """Return the hash table of a blob's records (compiled when the codec is there)."""
    fast = blocks._blocks  # read per call: the compiled codec can be switched off (tests)
    if fast is None:
        return build_table_numpy(data, offsets)
    return np.frombuffer(fast.terms_hash(data, offsets), dtype=np.uint32)


def write_table(directory: Path, data: Any, offsets: Any, name: str = "terms") -> None:
    """Write the hash of the lexicon ``data``/``offsets`` (none for :data:`MAX_TERMS` terms)."""
    if len(offsets) - 1 >= MAX_TERMS:
        return
    save_array(hash_path(directory, name), build_table(data, offsets))


def open_table(directory: Path, n: int, name: str = "terms") -> U32 | None:
    """Open a lexicon's hash memory-mapped (None when it has none: written before the hash).

    Raises
    ------
    IndexCorruptError
        When it is not a uint32 array of the size the hash of ``n`` terms has.
    """
    path = hash_path(directory, name)
    try:
        table = load_array(path)
    except IndexCorruptError:
        if not path.exists():
            return None
        raise
    m = home_slots(n)
    if table.dtype != np.uint32 or not m <= len(table) <= m + n or n >= MAX_TERMS:
        raise IndexCorruptError(f"index file damaged: {path.name} has the wrong type or size")
    return table


def find(table: Any, n: int, get_bytes: Any, key: bytes) -> int:
    """Return the id of ``key`` through ``table`` (-1: absent), in Python.

    ``table``: the slots as Python ints when indexed (a memoryview cast to "I");
    ``get_bytes(i)``: record ``i``'s bytes. The compiled ``hash_find`` does the same.
    """
    h = term_hash(key)
    idbits = n.bit_length()
    check = h & ((1 << (32 - idbits)) - 1)
    mask = (1 << idbits) - 1
    for s in range(((h >> 32) * home_slots(n)) >> 32, len(table)):
        v: int = table[s]
        if v == 0:
            return -1
        i = (v & mask) - 1
        if v >> idbits == check and 0 <= i < n and get_bytes(i) == key:
            return i
    return -1


def check_table(table: Any, data: Any, offsets: Any) -> bool:
    """Return whether ``table`` is the hash of the blob ``data``/``offsets`` (the full check)."""
    try:
        want = build_table(data, offsets)
    except (ValueError, OverflowError):
        return False
    return bool(np.array_equal(np.asarray(table), want))
