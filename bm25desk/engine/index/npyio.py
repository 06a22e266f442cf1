"""Stream 1-d ``.npy`` files in ranges and pieces with plain reads and writes (no memory map)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from bm25desk.engine.index.arrays import IndexCorruptError, parse_header

__all__ = ["CHUNK", "NpyReader", "NpyWriter"]

CHUNK = 1 << 20
"""Elements per read when streaming per-term or per-document arrays."""


class NpyReader:
    """Range reads of a 1-d ``.npy`` file with plain file reads (no memory map)."""

    def __init__(self, path: Path, dtype: type[np.generic]) -> None:
        self.path = path
        try:
            self._fh: io.BufferedReader = open(path, "rb")  # noqa: SIM115 - closed in close()
        except FileNotFoundError as exc:
            raise IndexCorruptError(f"index file missing: {path.name}") from exc
        try:
            shape, fortran, dt = _read_header(self._fh)
            # An int64 offset or count array may be stored narrow (uint32): read widened.
            widen = np.dtype(dtype) == np.int64 and dt == np.uint32
            if len(shape) != 1 or fortran or (dt != np.dtype(dtype) and not widen):
                raise IndexCorruptError(f"index file damaged: {path.name} has the wrong type")
        except ValueError as exc:
            self._fh.close()
            raise IndexCorruptError(f"index file damaged: {path.name} ({exc})") from exc
        except BaseException:
            self._fh.close()
            raise
        self.dtype = np.dtype(dtype)
        self.file_dtype = np.dtype(dt)
        self.n = int(shape[0])
        self._start = self._fh.tell()

    def read(self, lo: int, hi: int) -> npt.NDArray[Any]:
        """Return elements ``[lo, hi)`` as a new array (of the dtype asked for)."""
        out = np.empty(hi - lo, dtype=self.file_dtype)
        if hi > lo:
            self._fh.seek(self._start + lo * self.file_dtype.itemsize)
            got = self._fh.readinto(out.data.cast("B"))
            if got != out.nbytes:
                raise IndexCorruptError(f"index file damaged: {self.path.name} is truncated")
        return out if self.file_dtype == self.dtype else out.astype(self.dtype)

    def chunks(self, lo: int = 0, hi: int | None = None) -> Iterator[npt.NDArray[Any]]:
        """Yield elements ``[lo, hi)`` in pieces of at most ``CHUNK``."""
        end = self.n if hi is None else hi
        for a in range(lo, end, CHUNK):
            yield self.read(a, min(a + CHUNK, end))

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


def _read_header(fh: io.BufferedReader) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    """Return ``(shape, fortran order, dtype)`` and leave ``fh`` at the data.

    ``np.save``'s plain 1-d headers are parsed directly (:func:`parse_header`); any other is
    left to numpy's parser (``ast.literal_eval``: ~50 µs a file).
    """
    got = parse_header(fh.peek(256)[:256])
    if got is not None:
        dtype, n, offset = got
        fh.seek(offset)
        return (n,), False, dtype
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    return np.lib.format.read_array_header_2_0(fh)


class NpyWriter:
    """Write a 1-d ``.npy`` of known length piece by piece (same bytes as ``np.save``)."""

    def __init__(self, path: Path, dtype: type[np.generic], n: int) -> None:
        self.path = path
        self.dtype = np.dtype(dtype)
        self.n = n
        self.count = 0
        self._fh: BinaryIO = open(path, "wb")  # noqa: SIM115 - closed in close()
        header = {
            "descr": np.lib.format.dtype_to_descr(self.dtype),
            "fortran_order": False,
            "shape": (n,),
        }
        # np.save picks format 1.0 whenever the header fits, which a 1-d header always does.
        np.lib.format.write_array_header_1_0(self._fh, header)

    def write(self, arr: npt.NDArray[Any]) -> None:
        """Append elements (converted to the file's dtype)."""
        data = np.ascontiguousarray(arr, dtype=self.dtype)
        self._fh.write(data.data)
        self.count += len(data)

    def close(self) -> None:
        """Close the file (an unfinished file is removed with the destination directory)."""
        self._fh.close()

    def finish(self) -> None:
        """Close the file, checking that exactly ``n`` elements were written."""
        self._fh.close()
        if self.count != self.n:
            raise RuntimeError(f"{self.path.name}: wrote {self.count} of {self.n} elements")
