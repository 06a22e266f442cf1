"""The arrays of an index on disk: ``.npy`` files written without pickle, opened memory-mapped.

Every index file problem surfaces as :class:`IndexCorruptError` (the index must be rebuilt).
Offsets and counts (CSR pointers, block offsets, collection frequencies, record offsets) are
written by :func:`narrow` as uint32 when every value fits, int64 otherwise (format 4; format 3
wrote int64): readers take either (:data:`INDEX_DTYPES`).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


U32_MAX = (1 << 32) - 1

INDEX_DTYPES = (np.dtype(np.uint32), np.dtype(np.int64))
"""The dtypes an offset or count array may have on disk (see :func:`narrow`)."""


def index_dtype(largest: int) -> type[np.generic]:
    """Return the dtype of an offset or count array whose values are in ``[0, largest]``."""
    return np.uint32 if 0 <= largest <= U32_MAX else np.int64


def narrow(arr: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Return an array of non-negative offsets or counts as uint32 when they fit, else int64.

    Half the bytes for the per-term and per-block arrays of every segment below 4 G postings
    (or bytes) — all of them but the largest merged segments of the largest collections.
    """
    a = np.asarray(arr)
    fits = a.size == 0 or (int(a.min()) >= 0 and int(a.max()) <= U32_MAX)
    return a.astype(np.uint32 if fits else np.int64, copy=False)


def is_index_array(arr: Any) -> bool:
    """Return whether ``arr`` has one of the dtypes of offset and count arrays."""
    return getattr(arr, "dtype", None) in INDEX_DTYPES


class IndexCorruptError(RuntimeError):
    """An index file is missing, truncated or inconsistent: the index must be rebuilt."""


def save_array(path: Path, arr: npt.NDArray[Any]) -> None:
    """Write ``arr`` as ``.npy`` without pickle."""
    with open(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)


_MAGIC = b"\x93NUMPY"

_HEADER = re.compile(
    rb"\{'descr': '([<>|][biuf][1248])', 'fortran_order': False, 'shape': \((\d+),\), \} *\n"
)
"""The header ``np.save`` writes for a 1-d array of a plain number type (format 1.0 or 2.0)."""

RANDOM: int | None = getattr(mmap, "MADV_RANDOM", None)
"""Advice for a map read a few entries at a time, at random (no read-around: one page a fault)."""

WILLNEED: int | None = getattr(mmap, "MADV_WILLNEED", None)
"""Advice for a map the first queries read through: the kernel reads it in the background."""

_SMALL = 256
"""Files up to this size (a header and a few values) are read rather than mapped."""


def parse_header(head: bytes) -> tuple[np.dtype[Any], int, int] | None:
    """Return ``(dtype, length, data offset)`` of a plain 1-d ``.npy`` header, else None.

    A strict match of what ``np.save`` writes (numpy's own parser runs ``ast.literal_eval``,
    ~50 µs a file); anything else — other versions, shapes, object or structured types — is
    left to numpy (None), which reads or refuses it as before.
    """
    if head[:6] != _MAGIC or len(head) < 10:
        return None
    if head[6:8] == b"\x01\x00":
        start, size = 10, int.from_bytes(head[8:10], "little")
    elif head[6:8] == b"\x02\x00" and len(head) >= 12:
        start, size = 12, int.from_bytes(head[8:12], "little")
    else:
        return None
    m = _HEADER.fullmatch(head, start, start + size)
    if m is None:
        return None
    return np.dtype(m.group(1).decode("ascii")), int(m.group(2)), start + size


def load_array(path: Path, mmap: bool = True, advice: int | None = None) -> npt.NDArray[Any]:
    """Open an ``.npy`` array memory-mapped (tiny ones are read: nothing is gained by a map).

    Only the header is read (with a plain read: a fault on the map would have the kernel read
    around it, megabytes of an array no query may need) and parsed (see :func:`parse_header`);
    the data is not touched, so opening costs the same for any size. ``advice`` is an
    ``madvise`` hint for the map (e.g. ``MADV_RANDOM``), where the platform has it.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SMALL)
            header = parse_header(head)
            if header is None:
                data = None
            else:
                size = os.fstat(fh.fileno()).st_size
                dtype, n, offset = header
                if offset + n * dtype.itemsize > size:
                    raise IndexCorruptError(f"index file damaged: {path.name} is truncated")
                data = _read_or_map(fh, head, size, mmap)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index file missing: {path.name}") from exc
    except (OSError, ValueError) as exc:
        raise IndexCorruptError(f"index file damaged: {path.name} ({exc})") from exc
    if header is None or data is None:
        return _load_numpy(path, mmap)
    if isinstance(data, _Map):
        advise(data, advice)
    return np.frombuffer(data, dtype=dtype, count=n, offset=offset)


class _Map(mmap.mmap):
    """A read-only map (a subclass only to tell it from bytes)."""


def _read_or_map(fh: Any, head: bytes, size: int, use_map: bool) -> bytes | bytearray | mmap.mmap:
    """Return the file's bytes: mapped read-only, or read (writable when not asked to map)."""
    if not use_map:
        return bytearray(head + fh.read())
    if size <= _SMALL:
        return head
    return _Map(fh.fileno(), 0, access=mmap.ACCESS_READ)


def advise(data: Any, advice: int | None) -> None:
    """Give the kernel a hint about how a map will be read (best effort; None: no hint).

    Why it matters on a cold cache: a fault on a plain map makes the kernel read the device's
    read-ahead window around it (8 MB on this machine's disk), so a query that needs one entry
    of a per-document array reads megabytes; and a read-through array faulted in page by page
    waits on each fault instead of streaming.
    """
    if advice is None or not isinstance(data, mmap.mmap):
        return
    if advice == WILLNEED:
        advise_range(data, advice, 0, len(data))
        return
    with contextlib.suppress(AttributeError, OSError, ValueError):  # a platform without it
        data.madvise(advice)


def read_through(*arrays: Any) -> None:
    """Ask the kernel to read the maps under ``arrays`` whole, in the background.

    For the paths that read an array mapped without read-around (:data:`RANDOM`) from end to
    end — checks, updates, merges — so that they stream it instead of faulting a page at a time.
    """
    for arr in arrays:
        advise(map_under(arr), WILLNEED)


def map_under(arr: Any) -> Any:
    """Return the map under an array :func:`load_array` opened (else whatever owns its data)."""
    base = arr
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return base


_WILLNEED_STEP = 128 << 10
"""Bytes per ``MADV_WILLNEED`` call: Linux reads at most the device's read-ahead window (or its
largest request) per call and silently drops the rest, and 128 KB is the smallest default."""


def advise_range(data: mmap.mmap, advice: int, start: int, length: int) -> None:
    """Give the kernel a hint about a page-aligned range of a map (best effort).

    ``MADV_WILLNEED`` is given in steps of :data:`_WILLNEED_STEP`, so that all of a long range
    is read (a microsecond a step).
    """
    step = _WILLNEED_STEP if advice == WILLNEED else max(length, 1)
    end = min(start + length, len(data))
    with contextlib.suppress(AttributeError, OSError, ValueError):  # a platform without it
        for a in range(start, end, step):
            data.madvise(advice, a, min(step, end - a))


def _load_numpy(path: Path, mmap: bool) -> npt.NDArray[Any]:
    """Load an ``.npy`` numpy's way (headers :func:`parse_header` leaves to it)."""
    try:
        if mmap and path.stat().st_size > 256:
            # A plain ndarray view of the memmap: indexing a np.memmap subclass is ~20× slower.
            arr: npt.NDArray[Any] = np.asarray(np.load(path, mmap_mode="r", allow_pickle=False))
        else:
            arr = np.load(path, allow_pickle=False)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index file missing: {path.name}") from exc
    except Exception as exc:  # numpy's header parser raises ValueError, TokenError, SyntaxError...
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise IndexCorruptError(f"index file damaged: {path.name} ({reason})") from exc
    if not isinstance(arr, np.ndarray) or arr.ndim != 1:  # every index array is 1-d
        raise IndexCorruptError(f"index file damaged: {path.name} has the wrong shape")
    return arr
