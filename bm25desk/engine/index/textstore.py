"""Stored text compressed with zstd in blocks of whole documents (segment format 3).

Documents are appended to a buffer that is compressed as one zstd frame whenever it holds
:data:`BLOCK_BYTES` (16 KB); a longer document makes a frame of its own. Reading a document
decompresses its frame (a few tens of microseconds) and keeps the last few frames, so the hits
of one result page cost a handful of decompressions. On the synthetic MS MARCO passages zstd
(level 3) stores the text in 51 % of its size, lz4 in 84 %; 16 KB frames compress 3 % less than
64 KB ones but decompress four times faster. Files, for a blob named ``text``::

    text.zst       the frames, back to back
    text.off.npy   int64, n + 1: each document's offset in the uncompressed text
    text.zoff.npy  int64, frames + 1: each frame's offset in text.zst
    text.zdoc.npy  int64, frames + 1: each frame's first document (the last entry is n)
"""

from __future__ import annotations

import hashlib
import itertools
import mmap
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np
import zstandard

from bm25desk.engine.index.arrays import (
    I64,
    RANDOM,
    WILLNEED,
    IndexCorruptError,
    advise,
    load_array,
    read_through,
    save_array,
)

BLOCK_BYTES = 16 << 10
"""Uncompressed bytes per frame (documents are never split)."""

LEVEL = 3
"""zstd's compression level (its default: ~300 MB/s on one core)."""

_CACHED = 8
"""Decompressed frames kept per blob."""

FILES = ("zst", "off.npy", "zoff.npy", "zdoc.npy")
"""The files of a compressed blob, as suffixes of its name."""


class ZBlobWriter:
    """Append documents to a compressed blob (see the module docstring)."""

    def __init__(self, directory: Path, name: str) -> None:
        self._dir = directory
        self._name = name
        self._fh: BinaryIO = open(directory / f"{name}.zst", "wb")  # noqa: SIM115 - closed in close()
        self._zstd = zstandard.ZstdCompressor(level=LEVEL)
        self._buf: list[bytes] = []
        self._buffered = 0
        self._offsets = array("q", [0])
        self._zoff = array("q", [0])
        self._zdoc = array("q", [0])
        self._pos = 0

    def add(self, data: bytes) -> None:
        """Append one document's bytes."""
        self._buf.append(data)
        self._buffered += len(data)
        self._pos += len(data)
        self._offsets.append(self._pos)
        if self._buffered >= BLOCK_BYTES:
            self._frame()

    def add_text(self, text: str) -> None:
        """Append one document's text (UTF-8, lone surrogates replaced)."""
        self.add(text.encode("utf-8", "replace"))

    def __len__(self) -> int:
        """Return the number of documents."""
        return len(self._offsets) - 1

    def _frame(self) -> None:
        if not self._buf:
            return
        frame = self._zstd.compress(b"".join(self._buf))
        self._fh.write(frame)
        self._zoff.append(self._zoff[-1] + len(frame))
        self._zdoc.append(len(self))
        self._buf = []
        self._buffered = 0

    def add_blob(self, src: ZBlob) -> None:
        """Append every document of ``src`` by copying its frames (a merge recompresses nothing).

        The documents buffered so far become a frame of their own first, so frames never mix
        the two.
        """
        self._frame()
        start = len(self)
        pos = self._pos
        src.copy_to(self._fh)
        self._offsets.frombytes((np.asarray(src.offsets[1:], dtype=np.int64) + pos).tobytes())
        self._pos = pos + int(src.offsets[-1])
        zbase = self._zoff[-1]
        self._zoff.frombytes((np.asarray(src.zoff[1:], dtype=np.int64) + zbase).tobytes())
        self._zdoc.frombytes((np.asarray(src.zdoc[1:], dtype=np.int64) + start).tobytes())

    def abort(self) -> None:
        """Close the file of a blob that will not be finished."""
        self._fh.close()

    def close(self) -> None:
        """Write the last frame and the offsets."""
        self._frame()
        self._fh.close()
        for suffix, values in (("off", self._offsets), ("zoff", self._zoff), ("zdoc", self._zdoc)):
            save_array(self._dir / f"{self._name}.{suffix}.npy", np.frombuffer(values, np.int64))


class ZBlob:
    """Read-only access to a compressed blob (thread-safe; recent frames are kept).

    Its maps are read a few entries (and a frame) per document shown: no read-around.
    """

    def __init__(self, directory: Path, name: str) -> None:
        self.name = name
        self.offsets: I64 = load_array(directory / f"{name}.off.npy", advice=RANDOM)
        self.zoff: I64 = load_array(directory / f"{name}.zoff.npy", advice=RANDOM)
        self.zdoc: I64 = load_array(directory / f"{name}.zdoc.npy", advice=RANDOM)
        path = self.path = directory / f"{name}.zst"
        try:
            self.size = path.stat().st_size
        except FileNotFoundError as exc:
            raise IndexCorruptError(f"index file missing: {path.name}") from exc
        self._data: mmap.mmap | bytes = b""
        if self.size:
            with open(path, "rb") as fh:
                self._data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            advise(self._data, RANDOM)
        self._lock = threading.Lock()
        self._frames: OrderedDict[int, bytes] = OrderedDict()

    def __len__(self) -> int:
        """Return the number of documents."""
        return len(self.offsets) - 1

    def frame(self, f: int) -> bytes:
        """Return frame ``f`` decompressed (checked against its recorded size)."""
        with self._lock:
            got = self._frames.get(f)
            if got is not None:
                self._frames.move_to_end(f)
                return got
        a, b = int(self.zoff[f]), int(self.zoff[f + 1])
        want = int(self.offsets[int(self.zdoc[f + 1])] - self.offsets[int(self.zdoc[f])])
        raw = self._data[a:b]
        try:
            data = zstandard.ZstdDecompressor().decompress(raw, max_output_size=max(want, 1))
        except zstandard.ZstdError as exc:
            raise IndexCorruptError(f"index file damaged: {self.name}.zst ({exc})") from exc
        if len(data) != want:
            raise IndexCorruptError(f"index file damaged: {self.name}.zst (a frame's size)")
        with self._lock:
            self._frames[f] = data
            while len(self._frames) > _CACHED:
                self._frames.popitem(last=False)
        return data

    def get_bytes(self, i: int) -> bytes:
        """Return document ``i``'s bytes."""
        f = int(np.searchsorted(self.zdoc, i, side="right")) - 1
        if not 0 <= i < len(self) or not 0 <= f < len(self.zdoc) - 1:
            raise IndexError(f"document {i} out of range")
        data = self.frame(f)
        start = int(self.offsets[int(self.zdoc[f])])
        return data[int(self.offsets[i]) - start : int(self.offsets[i + 1]) - start]

    def get(self, i: int) -> str:
        """Return document ``i``'s text."""
        return self.get_bytes(i).decode("utf-8", "replace")

    def raw(self) -> bytes:
        """Return the whole compressed file."""
        self.read_through()
        return bytes(self._data)

    def read_through(self) -> None:
        """Ask the kernel to read the blob whole: its maps are read per document otherwise."""
        read_through(self.offsets, self.zoff, self.zdoc)
        advise(self._data, WILLNEED)

    def copy_to(self, out: BinaryIO) -> None:
        """Write the whole compressed file to ``out``, a piece at a time.

        Read from the file, not the memory map: a merge of a 1 M-document build copied ~180 MB
        of text, which as one bytes object (and the mapped pages) was the peak of its memory.
        """
        with open(self.path, "rb") as fh:
            copied = 0
            while piece := fh.read(min(1 << 20, self.size - copied)):
                out.write(piece)
                copied += len(piece)
        if copied != self.size:
            raise IndexCorruptError(f"index file damaged: {self.path.name} (its size)")

    def digest(self) -> str:
        """Return the SHA-256 of the documents, each with its length, whatever the frames.

        Two blobs holding the same documents agree even when their frames were cut at
        different documents (a merge copies its sources' frames).
        """
        h = hashlib.sha256()
        for data in self.iter_bytes():
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        return h.hexdigest()

    def iter_bytes(self) -> Iterator[bytes]:
        """Yield every document's bytes in order (frame by frame, for merges)."""
        self.read_through()
        off = np.asarray(self.offsets)
        for f in range(len(self.zdoc) - 1):
            data = self.frame(f)
            d0, d1 = int(self.zdoc[f]), int(self.zdoc[f + 1])
            rel = (off[d0 : d1 + 1] - off[d0]).tolist()
            for a, b in itertools.pairwise(rel):
                yield data[a:b]
