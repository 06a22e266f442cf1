"""Block-compressed postings (segment format 3): encode and decode, compiled or in numpy.

A term's postings are cut into blocks of ``2**SHIFT`` (128) postings. Each block holds its docno
gaps and tfs bit-packed (as few bits as its largest value needs) and, in front of them, its
*frontier*: for each tf up to :data:`CAP`, the shortest document with that tf, kept when it is
shorter than every document of a larger tf. From the frontier the query side bounds every tf part
in the block for any ranking function that grows with tf and shrinks with length, whatever its
parameters, without decoding the block; the block's last docno is kept apart (``blk_last``) so
that skipping a block never reads it. Postings with tf above :data:`CAP` are listed apart
(``ovf``): their tf parts are computed exactly at query time. The byte layout is described in
``_blocks_src/blocks.h``; the compiled module ``_blocks`` and the numpy functions here write the
same bytes, and both check everything they decode (a damaged block raises
:class:`~bm25desk.engine.index.segment.IndexCorruptError`, never reads out of bounds).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from bm25desk.engine import native

_blocks: Any = native.load("bm25desk.engine.index._blocks")

SHIFT = 7
"""Postings per block = 2**SHIFT."""

CAP = 32
"""The largest tf in a block's frontier; larger tfs are "overflow" postings, listed apart."""

PAD = 8
"""Zero bytes after the last block of a stream (decoders read 8 bytes at a time)."""

HEADER = 3
ENTRY = 5
MAX_SHIFT = 8
MAX_CAP = 255

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


class BlockError(ValueError):
    """A block does not decode: its bytes or metadata are damaged."""


class Encoded(NamedTuple):
    """The blocks of the terms of a CSR: what a segment stores for its postings."""

    stream: U8  # the blocks, back to back (no padding)
    blk_last: I32  # last docno of each block
    blk_off: I64  # byte offset of each block in ``stream`` (n blocks + 1)
    bptr: I64  # first block of each term (n terms + 1)
    ovf: I64  # positions (in the CSR) of the postings with tf > cap, ascending


def compiled() -> bool:
    """Return whether the compiled codec is in use."""
    return _blocks is not None


def find(data: Any, offsets: Any, key: bytes, lo: int = 0, hi: int = -1) -> int:
    """Return the index of ``key`` among sorted records ``[lo, hi)`` of a blob, or -1.

    ``hi`` -1 means every record. Compiled only.
    """
    return int(_blocks.find(data, offsets, key, lo, hi))


def strictly_sorted(data: Any, offsets: Any) -> bool | None:
    """Return whether a blob's records ascend strictly (None without the compiled codec)."""
    return None if _blocks is None else bool(_blocks.strictly_sorted(data, offsets))


def encode(
    ptr: Any, docs: Any, tfs: Any, doclen: Any, cap: int = CAP, shift: int = SHIFT
) -> Encoded:
    """Encode every term's postings (``docs[ptr[t]:ptr[t+1]]`` ascending, tfs ≥ 1) into blocks.

    ``doclen`` gives each document's length (the frontiers). Raises ValueError for postings out
    of order or tfs below 1.
    """
    ptr = np.ascontiguousarray(ptr, dtype=np.int64)
    docs = np.ascontiguousarray(docs, dtype=np.int32)
    tfs = np.ascontiguousarray(tfs, dtype=np.int32)
    doclen = np.ascontiguousarray(doclen, dtype=np.int32)
    if _blocks is not None:
        s, last, off, bptr, ovf = _blocks.encode(ptr, docs, tfs, doclen, cap, shift)
        return Encoded(
            np.frombuffer(s, dtype=np.uint8),
            np.frombuffer(last, dtype=np.int32),
            np.frombuffer(off, dtype=np.int64),
            np.frombuffer(bptr, dtype=np.int64),
            np.frombuffer(ovf, dtype=np.int64),
        )
    return encode_numpy(ptr, docs, tfs, doclen, cap, shift)


def decode(
    stream: Any,
    blk_off: Any,
    blk_last: Any,
    bptr: Any,
    ptr: Any,
    n_docs: int,
    cap: int = CAP,
    shift: int = SHIFT,
    doclen: Any = None,
) -> tuple[I32, I32]:
    """Return the (docs, tfs) of the consecutive terms described by ``bptr`` and ``ptr``.

    ``bptr`` indexes ``blk_last`` and ``blk_off`` (whose offsets index ``stream``, which must
    hold :data:`PAD` bytes past the last block read). Given ``doclen``, every block is also
    re-encoded and compared byte for byte (the full check). Raises :class:`BlockError`.
    """
    ptr = np.ascontiguousarray(ptr, dtype=np.int64)
    bptr = np.ascontiguousarray(bptr, dtype=np.int64)
    if _blocks is not None:
        try:
            d, t = _blocks.decode(
                stream,
                np.ascontiguousarray(blk_off, dtype=np.int64),
                np.ascontiguousarray(blk_last, dtype=np.int32),
                bptr,
                ptr,
                n_docs,
                cap,
                shift,
                None if doclen is None else np.ascontiguousarray(doclen, dtype=np.int32),
            )
        except ValueError as exc:
            raise BlockError(str(exc)) from None
        return np.frombuffer(d, dtype=np.int32), np.frombuffer(t, dtype=np.int32)
    return decode_numpy(stream, blk_off, blk_last, bptr, ptr, n_docs, cap, shift, doclen)


# -- numpy ----------------------------------------------------------------------------------------


def _bit_length(values: Any) -> npt.NDArray[np.uint8]:
    """Return the bits needed by each value (0 for 0), for unsigned values below 2**32."""
    v = np.asarray(values, dtype=np.uint64)
    out = np.zeros(v.shape, dtype=np.uint8)
    for w in range(32, 0, -1):  # the highest set bit, from the top: 32 vectorised steps
        out[(out == 0) & (v >> np.uint64(w - 1) != 0)] = w
    return out


def _scatter_bits(stream: U8, bitpos: I64, values: Any) -> None:
    """OR ``values`` into ``stream`` at bit positions ``bitpos`` (fields never overlap)."""
    if bitpos.size == 0:
        return
    v = np.asarray(values, dtype=np.uint64) << (bitpos & 7).astype(np.uint64)
    base = bitpos >> 3
    for k in range(5):
        part = ((v >> np.uint64(8 * k)) & np.uint64(0xFF)).astype(np.uint8)
        nz = part != 0
        if nz.any():
            np.bitwise_or.at(stream, base[nz] + k, part[nz])


def _gather_bits(stream: U8, bitpos: I64, width: Any) -> npt.NDArray[np.uint64]:
    """Read values of ``width`` bits at bit positions ``bitpos`` (5 bytes from each)."""
    base = bitpos >> 3
    v = np.zeros(bitpos.size, dtype=np.uint64)
    for k in range(5):
        v |= stream[base + k].astype(np.uint64) << np.uint64(8 * k)
    v >>= (bitpos & 7).astype(np.uint64)
    mask = (np.uint64(1) << np.asarray(width, dtype=np.uint64)) - np.uint64(1)
    return np.asarray(v & mask, dtype=np.uint64)


class _Layout(NamedTuple):
    """Where every posting of a CSR goes: its block and place in it."""

    bptr: I64
    blk: I64  # block of each posting
    within: I64  # place of each posting in its block
    starts: I64  # first posting of each block
    per_block: I64  # postings per block
    first: npt.NDArray[np.bool_]  # whether each block is its term's first


def _layout(ptr: I64, shift: int) -> _Layout:
    size = 1 << shift
    counts = np.diff(ptr)
    n_blocks = (counts + size - 1) >> shift
    bptr = np.zeros(ptr.size, dtype=np.int64)
    np.cumsum(n_blocks, out=bptr[1:])
    term = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    local = np.arange(int(ptr[-1]), dtype=np.int64) - ptr[:-1][term]
    blk = bptr[:-1][term] + (local >> shift)
    within = local & (size - 1)
    starts = np.flatnonzero(within == 0)
    count = np.diff(np.r_[starts, local.size]).astype(np.int64)
    first = np.zeros(int(bptr[-1]), dtype=bool)
    first[bptr[:-1][n_blocks > 0]] = True
    return _Layout(bptr, blk, within, starts, count, first)


def encode_numpy(
    ptr: I64, docs: I32, tfs: I32, doclen: I32, cap: int = CAP, shift: int = SHIFT
) -> Encoded:
    """:func:`encode` in numpy (the same bytes as the compiled codec)."""
    if ptr.size < 1 or int(ptr[0]) != 0 or int(ptr[-1]) != docs.size or docs.size != tfs.size:
        raise ValueError("encode: ptr, docs and tfs do not agree")
    if ptr.size > 1 and bool((np.diff(ptr) < 0).any()):
        raise ValueError("encode: ptr must not decrease")
    lay = _layout(ptr, shift)
    nblk = int(lay.bptr[-1])
    d64 = docs.astype(np.int64)
    prev = np.empty_like(d64)
    prev[1:] = d64[:-1]
    prev[lay.within == 0] = -1
    prev[lay.starts[~lay.first]] = d64[lay.starts[~lay.first] - 1]
    gaps = d64 - prev - 1
    if docs.size and (bool((gaps < 0).any()) or int(docs.max()) >= doclen.size):
        raise ValueError("encode: docnos must ascend strictly within a term and be below n_docs")
    if tfs.size and int(tfs.min()) < 1:
        raise ValueError("encode: term frequencies must be positive")
    tf1 = tfs.astype(np.int64) - 1
    wd = _bit_length(np.maximum.reduceat(gaps, lay.starts)) if nblk else np.zeros(0, np.uint8)
    wt = _bit_length(np.maximum.reduceat(tf1, lay.starts)) if nblk else np.zeros(0, np.uint8)
    # The frontier: per (block, tf ≤ cap) the shortest document (lowest docno among equals),
    # tf descending, kept when strictly shorter than every kept entry of a larger tf.
    sel = np.flatnonzero(tfs <= cap)
    lens = doclen[docs[sel]].astype(np.int64)
    order = np.lexsort((sel, lens, -tfs[sel], lay.blk[sel]))
    sel, lens = sel[order], lens[order]
    eb, etf = lay.blk[sel], tfs[sel]
    head = np.r_[True, (eb[1:] != eb[:-1]) | (etf[1:] != etf[:-1])] if sel.size else sel > 0
    sel, lens, eb, etf = sel[head], lens[head], eb[head], etf[head]
    big = int(lens.max()) + 2 if lens.size else 1
    key = lens - eb * big
    running = np.minimum.accumulate(key) if key.size else key
    kept = key < np.r_[np.iinfo(np.int64).max, running[:-1]]
    eb, etf, edoc = eb[kept], etf[kept], docs[sel[kept]]
    nprof = np.bincount(eb, minlength=nblk).astype(np.int64)
    dbytes = (lay.per_block * wd + 7) >> 3
    tbytes = (lay.per_block * wt + 7) >> 3
    size = HEADER + ENTRY * nprof + dbytes + tbytes
    blk_off = np.zeros(nblk + 1, dtype=np.int64)
    np.cumsum(size, out=blk_off[1:])
    stream = np.zeros(int(blk_off[-1]) + PAD, dtype=np.uint8)
    start = blk_off[:-1]
    stream[start] = nprof
    stream[start + 1] = wd
    stream[start + 2] = wt
    rank = np.arange(eb.size, dtype=np.int64) - np.searchsorted(eb, eb)
    at = start[eb] + HEADER + ENTRY * rank
    stream[at] = etf
    for k in range(4):
        stream[at + 1 + k] = (edoc.astype(np.int64) >> (8 * k)) & 0xFF
    data = start + HEADER + ENTRY * nprof
    _scatter_bits(stream, data[lay.blk] * 8 + lay.within * wd[lay.blk], gaps)
    _scatter_bits(stream, (data + dbytes)[lay.blk] * 8 + lay.within * wt[lay.blk], tf1)
    ends = np.r_[lay.starts[1:], docs.size][:nblk] - 1
    return Encoded(
        stream[: int(blk_off[-1])],
        docs[ends].astype(np.int32),
        blk_off,
        lay.bptr,
        np.flatnonzero(tfs > cap).astype(np.int64),
    )


def decode_numpy(
    stream: Any,
    blk_off: Any,
    blk_last: Any,
    bptr: Any,
    ptr: Any,
    n_docs: int,
    cap: int = CAP,
    shift: int = SHIFT,
    doclen: Any = None,
) -> tuple[I32, I32]:
    """:func:`decode` in numpy (the same checks as the compiled codec)."""
    # Long on purpose: it follows the compiled decoder check by check (sizes, header, docno gaps,
    # tfs, frontier entries, the optional re-encoding), so the two can be read side by side.
    s = np.frombuffer(stream, dtype=np.uint8)
    off = np.asarray(blk_off, dtype=np.int64)
    last = np.asarray(blk_last, dtype=np.int32)
    ptr = np.asarray(ptr, dtype=np.int64)
    bptr = np.asarray(bptr, dtype=np.int64)
    if ptr.size < 1 or ptr.size != bptr.size or off.size != last.size + 1:
        raise BlockError("decode: the block arrays do not agree in size")
    counts = np.diff(ptr)
    if bool((counts < 0).any()):
        raise BlockError("decode: ptr is out of order")
    size = 1 << shift
    if counts.size and (
        bool((np.diff(bptr) != (counts + size - 1) >> shift).any())
        or int(bptr[0]) < 0
        or int(bptr[-1]) > last.size
    ):
        raise BlockError(
            f"block {int(bptr[0])}: the term's block count does not match its postings"
        )
    rel = np.r_[0, np.cumsum(counts)]
    lay = _layout(rel, shift)
    b0 = int(bptr[0]) if bptr.size else 0
    blocks = b0 + np.arange(int(lay.bptr[-1]), dtype=np.int64)
    total = int(rel[-1])
    if blocks.size == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)

    def fail(mask: Any, why: str) -> None:
        bad = np.flatnonzero(mask)
        if bad.size:
            raise BlockError(f"block {int(blocks[bad[0]])}: {why}")

    lo, hi = off[blocks], off[blocks + 1]
    fail((lo < 0) | (hi < lo) | (hi + PAD > s.size), "its size does not match its header")
    nprof = s[lo].astype(np.int64)
    wd = s[lo + 1].astype(np.int64)
    wt = s[lo + 2].astype(np.int64)
    fail((wd > 32) | (wt > 32) | (nprof > cap), "a bit width or frontier length is out of range")
    dbytes = (lay.per_block * wd + 7) >> 3
    tbytes = (lay.per_block * wt + 7) >> 3
    fail(HEADER + ENTRY * nprof + dbytes + tbytes != hi - lo, "its size does not match its header")
    prev = np.where(lay.first, -1, last[np.maximum(blocks - 1, 0)]).astype(np.int64)
    blast = last[blocks].astype(np.int64)
    fail(
        (prev < -1) | (blast <= prev) | (blast >= n_docs),
        "its docnos are out of order or out of range",
    )
    data = lo + HEADER + ENTRY * nprof
    gaps = _gather_bits(s, data[lay.blk] * 8 + lay.within * wd[lay.blk], wd[lay.blk])
    steps = gaps.astype(np.int64) + 1
    cum = np.cumsum(steps)
    before = np.r_[0, cum][lay.starts]  # the cumulative sum before each block
    docs = prev[lay.blk] + cum - before[lay.blk]
    ends = np.r_[lay.starts[1:], total] - 1
    fail((docs[ends] != blast) | (np.maximum.reduceat(docs, lay.starts) > blast),
         "its docnos are out of order or out of range")  # fmt: skip
    tf1 = _gather_bits(s, (data + dbytes)[lay.blk] * 8 + lay.within * wt[lay.blk], wt[lay.blk])
    fail(np.maximum.reduceat(tf1, lay.starts) >= 0x7FFFFFFF, "a term frequency is out of range")
    eblk = np.repeat(np.arange(blocks.size), nprof)
    erank = np.arange(eblk.size) - np.searchsorted(eblk, eblk)
    at = lo[eblk] + HEADER + ENTRY * erank
    etf = s[at].astype(np.int64)
    edoc = np.zeros(at.size, dtype=np.int64)
    for k in range(4):
        edoc |= s[at + 1 + k].astype(np.int64) << (8 * k)
    bad_entry = (etf < 1) | (etf > cap) | (edoc <= prev[eblk]) | (edoc > blast[eblk])
    fail(
        np.bincount(eblk[bad_entry], minlength=blocks.size) > 0,
        "its bound metadata is out of range",
    )
    out_docs, out_tfs = docs.astype(np.int32), (tf1 + 1).astype(np.int32)
    if doclen is not None:
        again = encode_numpy(rel, out_docs, out_tfs, np.asarray(doclen, np.int32), cap, shift)
        mine = s[int(off[b0]) : int(off[b0 + blocks.size])]
        same = np.array_equal(again.stream, mine) and np.array_equal(
            again.blk_off, off[b0 : b0 + blocks.size + 1] - off[b0]
        )
        if not same:
            raise BlockError(f"block {b0}: it differs from the block its postings encode to")
    return out_docs, out_tfs


class Frontiers(NamedTuple):
    """The frontier of every term of more than one block (the term's bound, for any function)."""

    terms: I32  # the terms, ascending
    off: I64  # their entries: data[off[i]:off[i + 1]], ENTRY bytes each
    data: U8  # (u8 tf, u32le docno) entries, tf descending


def term_frontiers(enc: Encoded, doclen: Any, cap: int = CAP) -> Frontiers:
    """Return the frontier of each term of ``enc`` with two blocks or more.

    It is the frontier of its blocks' frontier entries (a posting left out of its block's
    frontier is dominated there, so it is dominated in the term too): per tf the shortest
    document (lowest docno among equals), kept when shorter than every kept larger tf.
    """
    nb = np.diff(enc.bptr)
    multi = np.flatnonzero(nb > 1).astype(np.int32)
    counts = nb[multi]
    term = np.repeat(multi, counts)
    starts = np.repeat(enc.bptr[:-1][multi] - (np.cumsum(counts) - counts), counts)
    blk = starts + np.arange(int(counts.sum()), dtype=np.int64)
    s = np.asarray(enc.stream, dtype=np.uint8)
    lo = enc.blk_off[blk]
    nprof = s[lo].astype(np.int64) if blk.size else np.zeros(0, np.int64)
    eterm = np.repeat(term, nprof)
    eblk = np.repeat(np.arange(blk.size), nprof)
    rank = np.arange(eblk.size) - np.searchsorted(eblk, eblk)
    at = lo[eblk] + HEADER + ENTRY * rank
    etf = s[at].astype(np.int64)
    edoc = np.zeros(at.size, dtype=np.int64)
    for k in range(4):
        edoc |= s[at + 1 + k].astype(np.int64) << (8 * k)
    lens = np.asarray(doclen, dtype=np.int64)[edoc]
    order = np.lexsort((edoc, lens, -etf, eterm))
    eterm, etf, edoc, lens = eterm[order], etf[order], edoc[order], lens[order]
    if eterm.size:
        head = np.r_[True, (eterm[1:] != eterm[:-1]) | (etf[1:] != etf[:-1])]
        eterm, etf, edoc, lens = eterm[head], etf[head], edoc[head], lens[head]
        big = int(lens.max()) + 2
        key = lens - eterm.astype(np.int64) * big
        running = np.minimum.accumulate(key)
        kept = key < np.r_[np.iinfo(np.int64).max, running[:-1]]
        eterm, etf, edoc = eterm[kept], etf[kept], edoc[kept]
    count = np.searchsorted(eterm, multi, side="right") - np.searchsorted(eterm, multi)
    off = np.zeros(multi.size + 1, dtype=np.int64)
    np.cumsum(count * ENTRY, out=off[1:])
    data = np.zeros(int(off[-1]), dtype=np.uint8)
    data[0::ENTRY] = etf
    for k in range(4):
        data[1 + k :: ENTRY] = (edoc >> (8 * k)) & 0xFF
    return Frontiers(multi, off, data)
