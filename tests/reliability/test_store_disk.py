"""Disk full (ENOSPC) and a file-size limit (EFBIG) while building or updating: one line, exit 4,
the previous index intact and no temporary files left."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from store_versions import REPO, VERSION_A, VERSION_B, answers, as_json, write_version

from bm25desk.engine import IndexStore, build_index

pytestmark = pytest.mark.slow


def _cli(*argv: str, preexec=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "BM25DESK_NO_PROGRESS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "bm25desk.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=preexec,
    )


def _big_folder(folder: Path) -> None:
    write_version(folder, VERSION_B)
    for i in range(30):
        (folder / f"big{i}.txt").write_text(
            "Big\n" + " ".join(f"word{j}x{i}" for j in range(4000)), encoding="utf-8"
        )


def _assert_refused(proc: subprocess.CompletedProcess, store: IndexStore, before: str) -> None:
    assert proc.returncode == 4, proc.stderr
    assert proc.stderr.startswith("bm25desk: error: could not write index 'victim'")
    assert proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr
    with store.open("victim") as index:
        assert as_json(answers(index)) == before
    assert [p.name for p in store.root.iterdir() if p.name.startswith(".tmp-")] == []


@pytest.mark.parametrize("op", ["rebuild", "update"])
def test_file_size_limit(op: str, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write_version(folder, VERSION_A)
    data = tmp_path / "data"
    store = IndexStore(data / "indexes")
    build_index(folder, name="victim", store=store)
    with store.open("victim") as index:
        before = as_json(answers(index))
    _big_folder(folder)
    argv = ["index", str(folder), "--name", "victim"] if op == "rebuild" else ["update", "victim"]

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    proc = _cli(*argv, "--data-dir", str(data), preexec=limit)
    _assert_refused(proc, store, before)
    assert "file too large" in proc.stderr


def test_disk_full(tmp_path: Path) -> None:
    """ENOSPC from a small tmpfs (needs root with CAP_SYS_ADMIN, as in CI's container)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("ENOSPC: cannot mount a small tmpfs here (needs root with CAP_SYS_ADMIN)")
    try:
        folder = tmp_path / "docs"
        write_version(folder, VERSION_A)
        data = mnt / "data"
        store = IndexStore(data / "indexes")
        build_index(folder, name="victim", store=store)
        with store.open("victim") as index:
            before = as_json(answers(index))
        _big_folder(folder)
        proc = _cli("index", str(folder), "--name", "victim", "--data-dir", str(data))
        _assert_refused(proc, store, before)
        assert "No space left on device" in proc.stderr
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
