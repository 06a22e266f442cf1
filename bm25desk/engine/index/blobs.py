"""Stored byte records on disk: docids, titles, locations and terms as a blob plus its offsets."""

from __future__ import annotations

import mmap
from array import array
from pathlib import Path
from typing import BinaryIO

import numpy as np

from bm25desk.engine.index.arrays import (
    I64,
    INDEX_DTYPES,
    WILLNEED,
    IndexCorruptError,
    advise,
    load_array,
    narrow,
    read_through,
    save_array,
)

__all__ = ["Blob", "BlobWriter", "map_file", "name_bytes"]


def name_bytes(name: str) -> bytes:
    """Return the UTF-8 of a docid or path, keeping non-UTF-8 file name bytes (surrogateescape)."""
    try:
        return name.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # lone surrogates that are not escaped bytes
        return name.encode("utf-8", "replace")


class BlobWriter:
    """Append byte strings to ``<name>.bin`` and record offsets in ``<name>.off.npy``.

    ``names``: the strings are docids or paths, kept byte for byte (:func:`name_bytes`).
    """

    def __init__(self, directory: Path, name: str, names: bool = False) -> None:
        self._dir = directory
        self._name = name
        self._names = names
        self._fh: BinaryIO = open(directory / f"{name}.bin", "wb")  # noqa: SIM115 - closed in close()
        self._offsets = array("q", [0])
        self._pos = 0

    def add(self, data: bytes) -> None:
        """Append one record."""
        self._fh.write(data)
        self._pos += len(data)
        self._offsets.append(self._pos)

    def add_text(self, text: str) -> None:
        """Append one string (UTF-8; lone surrogates replaced, or kept as bytes for names)."""
        self.add(name_bytes(text) if self._names else text.encode("utf-8", "replace"))

    def __len__(self) -> int:
        """Return the number of records."""
        return len(self._offsets) - 1

    def abort(self) -> None:
        """Close the file of a blob that will not be finished."""
        self._fh.close()

    def close(self) -> None:
        """Flush the blob and write the offsets."""
        self._fh.close()
        save_array(
            self._dir / f"{self._name}.off.npy",
            narrow(np.frombuffer(self._offsets, dtype=np.int64)),
        )


class Blob:
    """Read-only access to a blob written by :class:`BlobWriter` (memory-mapped).

    ``advice``: the ``madvise`` hint for both maps (:func:`~bm25desk.engine.index.arrays.advise`).
    """

    def __init__(
        self, directory: Path, name: str, names: bool = False, advice: int | None = None
    ) -> None:
        self._errors = "surrogateescape" if names else "replace"
        self.offsets: I64 = load_array(directory / f"{name}.off.npy", advice=advice)
        if self.offsets.dtype not in INDEX_DTYPES:
            raise IndexCorruptError(f"index file damaged: {name}.off.npy has the wrong type")
        path = directory / f"{name}.bin"
        if not path.exists():
            raise IndexCorruptError(f"index file missing: {path.name}")
        size = path.stat().st_size
        if self.offsets.ndim != 1 or len(self.offsets) == 0 or int(self.offsets[-1]) != size:
            raise IndexCorruptError(f"index file damaged: {path.name} has the wrong size")
        # mmap + memoryview: slicing and indexing them costs ~0.1 µs, numpy memmaps ~3 µs.
        self._data: mmap.mmap | bytes = b""
        if size:
            with open(path, "rb") as fh:
                self._data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            advise(self._data, advice)
        # uint32 (format 4, while the blob is under 4 GB) or int64 offsets, read as they are.
        raw = np.ascontiguousarray(self.offsets).data.cast("B")
        self._off = raw.cast("I") if self.offsets.dtype == np.uint32 else raw.cast("q")

    def __len__(self) -> int:
        """Return the number of records."""
        return len(self.offsets) - 1

    def get_bytes(self, i: int) -> bytes:
        """Return record ``i`` as bytes."""
        off = self._off
        assert off is not None
        return self._data[off[i] : off[i + 1]]

    def data(self) -> mmap.mmap | bytes:
        """Return the whole blob as a buffer (no copy)."""
        return self._data

    def raw(self) -> bytes:
        """Return the whole blob (all records concatenated)."""
        self.read_through()
        return bytes(self._data)

    def read_through(self) -> None:
        """Ask the kernel to read the blob and its offsets whole (see :func:`read_through`)."""
        read_through(self.offsets)
        advise(self._data, WILLNEED)

    def get(self, i: int) -> str:
        """Return record ``i`` as text."""
        return self.get_bytes(i).decode("utf-8", self._errors)


def map_file(path: Path, advice: int | None = None) -> mmap.mmap | bytes:
    """Map a file read-only (an empty file reads as b""), with an ``madvise`` hint."""
    try:
        size = path.stat().st_size
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index file missing: {path.name}") from exc
    if not size:
        return b""
    with open(path, "rb") as fh:
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    advise(data, advice)
    return data
