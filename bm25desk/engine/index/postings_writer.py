"""Write a segment's postings as compressed blocks, a run of terms at a time (format 3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import I32, I64, narrow, save_array

__all__ = ["PostingsWriter", "write_postings"]

_NARROW = ("bptr", "blk_off")


class PostingsWriter:
    """Append encoded postings, a run of terms at a time, to a segment's block files.

    The segment writer writes all its terms at once; a merge writes them in runs (offsets and
    block numbers of each run continue those of the previous ones).
    """

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        names = ("blk_last", "blk_off", "bptr", "ovf", "ovf_doc", "ovf_tf", "tfront_term")
        self._parts: dict[str, list[npt.NDArray[Any]]] = {n: [] for n in names}
        self._parts["tfront_off"] = []
        self._fh: BinaryIO = open(directory / "blocks.bin", "wb")  # noqa: SIM115 - closed in finish()
        self._front: BinaryIO = open(directory / "tfront.bin", "wb")  # noqa: SIM115 - the same
        self._bytes = self._blocks = self._postings = self._terms = self._front_bytes = 0

    def add(self, ptr: I64, docs: I32, tfs: I32, doclen: I32) -> None:
        """Encode and append the terms of a CSR run (``ptr`` from 0; docnos of the segment)."""
        enc = blocks.encode(ptr, docs, tfs, doclen, blocks.CAP, blocks.SHIFT)
        front = blocks.term_frontiers(enc, doclen, blocks.CAP)
        self._fh.write(enc.stream.tobytes())
        self._front.write(front.data.tobytes())
        p = self._parts
        p["blk_last"].append(enc.blk_last)
        p["blk_off"].append(enc.blk_off[:-1] + self._bytes)
        p["bptr"].append(enc.bptr[:-1] + self._blocks)
        p["ovf"].append(enc.ovf + self._postings)
        p["ovf_doc"].append(docs[enc.ovf])
        p["ovf_tf"].append(tfs[enc.ovf])
        p["tfront_term"].append(front.terms + np.int32(self._terms))
        p["tfront_off"].append(front.off[:-1] + self._front_bytes)
        self._bytes += int(enc.blk_off[-1])
        self._blocks += int(enc.bptr[-1])
        self._postings += int(ptr[-1])
        self._terms += len(ptr) - 1
        self._front_bytes += int(front.off[-1])

    def abort(self) -> None:
        """Close the files (after a failure)."""
        self._fh.close()
        self._front.close()

    def finish(self) -> None:
        """Pad the blocks, close the files and write the block arrays."""
        self._fh.write(bytes(blocks.PAD))
        self.abort()
        p = self._parts
        p["blk_off"].append(np.array([self._bytes], dtype=np.int64))
        p["bptr"].append(np.array([self._blocks], dtype=np.int64))
        p["tfront_off"].append(np.array([self._front_bytes], dtype=np.int64))
        dtypes = {"blk_last": np.int32, "ovf_doc": np.int32, "ovf_tf": np.int32}
        dtypes["tfront_term"] = np.int32
        for name, parts in p.items():
            dt = dtypes.get(name, np.int64)
            arr = np.concatenate(parts).astype(dt) if parts else np.zeros(0, dtype=dt)
            # Block pointers and offsets: uint32 while they fit (format 4).
            save_array(self._dir / f"{name}.npy", narrow(arr) if name in _NARROW else arr)


def write_postings(directory: Path, ptr: I64, docs: I32, tfs: I32, doclen: I32) -> None:
    """Write a whole segment's postings as blocks (see :class:`PostingsWriter`)."""
    out = PostingsWriter(directory)
    try:
        out.add(ptr, docs, tfs, doclen)
        out.finish()
    except BaseException:
        out.abort()
        raise
