"""The on-disk index: segments, merging, the store of indexes, building, updating and reading."""

from bm25desk.engine.index.reader import DocRecord, Index
from bm25desk.engine.index.segment import IndexCorruptError

__all__ = ["DocRecord", "Index", "IndexCorruptError"]
