"""The arrays of an index on disk: ``.npy`` files written without pickle, opened memory-mapped.

Every index file problem surfaces as :class:`IndexCorruptError` (the index must be rebuilt).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


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
