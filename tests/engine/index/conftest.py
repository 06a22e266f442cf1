"""Fixtures shared by the index tests."""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from pathlib import Path

import pytest

PATTERN = bytes(range(256))
"""The bytes :func:`mapped` repeats."""


@pytest.fixture
def mapped(tmp_path: Path) -> Iterator[mmap.mmap]:
    """A 64-page file of :data:`PATTERN` repeated, just written (so in the page cache), mapped."""
    path = tmp_path / "blocks.bin"
    path.write_bytes(PATTERN * (64 * mmap.PAGESIZE // len(PATTERN)))
    with path.open("rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    yield m
    m.close()
