"""One source segment of a merge: its size, first merged docno, term map and open readers."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np

from bm25desk.engine.index import blocks
from bm25desk.engine.index.arrays import I32, IndexCorruptError
from bm25desk.engine.index.layout import read_meta
from bm25desk.engine.index.npyio import NpyReader
from bm25desk.engine.progress import CancelToken

__all__ = ["MAX_I32", "MergeSource", "check_cancel"]

MAX_I32 = np.iinfo(np.int32).max


class MergeSource:
    """One source segment being merged: its size, first merged docno and open readers."""

    def __init__(self, directory: Path, doc_offset: int) -> None:
        self.path = directory
        meta = read_meta(directory)
        self.n_docs = meta["n_docs"]
        self.total_len = meta["total_len"]
        self.format = meta["format"]
        self.shift = meta.get("shift", blocks.SHIFT)
        self.cap = meta.get("cap", blocks.CAP)
        self.doc_offset = doc_offset
        self.map: I32 = np.zeros(0, dtype=np.int32)  # local term id → merged term id
        self._readers: list[NpyReader | BinaryIO] = []

    def reader(self, name: str, dtype: type[np.generic]) -> NpyReader:
        """Open ``<name>.npy`` for range reads (closed by :meth:`close`)."""
        r = NpyReader(self.path / f"{name}.npy", dtype)
        self._readers.append(r)
        return r

    def raw(self, name: str) -> BinaryIO:
        """Open a file for reading (closed by :meth:`close`)."""
        try:
            fh: BinaryIO = open(self.path / name, "rb")  # noqa: SIM115 - closed in close()
        except FileNotFoundError as exc:
            raise IndexCorruptError(f"index file missing: {name}") from exc
        self._readers.append(fh)
        return fh

    def close(self) -> None:
        """Close every reader opened by :meth:`reader` or :meth:`raw`."""
        for r in self._readers:
            r.close()
        self._readers = []


def check_cancel(cancel: CancelToken | None) -> None:
    """Raise when the merge was cancelled (no token: never)."""
    if cancel is not None:
        cancel.check()
