"""The arrays of an index on disk: ``.npy`` files written without pickle, opened memory-mapped.

Every index file problem surfaces as :class:`IndexCorruptError` (the index must be rebuilt).
Offsets and counts (CSR pointers, block offsets, collection frequencies, record offsets) are
written by :func:`narrow` as uint32 when every value fits, int64 otherwise (format 4; format 3
wrote int64): readers take either (:data:`INDEX_DTYPES`).
"""

from __future__ import annotations

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


def load_array(path: Path, mmap: bool = True) -> npt.NDArray[Any]:
    """Open an ``.npy`` array memory-mapped (empty arrays are read normally: mmap needs bytes)."""
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
