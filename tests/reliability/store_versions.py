"""The reliability suite's store helpers: corpora in two versions, answers, subprocess runs.

Plain functions and constants, imported by name (``from store_versions import ...``) by the
tests and by the scripts they run in fresh interpreters; ``conftest.py`` keeps the fixtures.
A module of its own rather than ``conftest``: another directory's ``conftest`` module can be the
one Python finds under that name when several test directories run in one pytest call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

from bm25desk.engine import Searcher

REPO = Path(__file__).resolve().parents[2]
QUERIES = ("apple red", "banana yellow sweet", "cherry pie wine", "w3 w7")

VERSION_A = {
    **{
        f"f{i:02d}.txt": f"File {i}\nw{i % 11} apple w{i % 7} red banana {'sweet ' * (i % 4)}\n"
        for i in range(40)
    },
    "sub/c.md": "# Cherry\n\ncherry pie and red wine\n",
}
VERSION_B = {
    **{k: v for k, v in VERSION_A.items() if not k.startswith("f0")},
    **{f"f{i:02d}.txt": f"Changed {i}\nw{i % 5} yellow banana cherry w3\n" for i in range(5, 15)},
    "new/n.txt": "New\nwine apple apple sweet\n",
}

Answers = dict[str, list[tuple[str, float]]]


def write_version(folder: Path, files: dict[str, str]) -> None:
    """Make ``folder`` hold exactly ``files`` (with distinct, fixed mtimes)."""
    folder.mkdir(parents=True, exist_ok=True)
    for p in sorted(folder.rglob("*"), reverse=True):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and rel not in files:
            p.unlink()
    for rel, text in sorted(files.items()):
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.exists() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")
        mtime = 1_600_000_000 + zlib.crc32(rel.encode()) % 100_000
        mtime += 0 if text == VERSION_A.get(rel) else 500_000  # stable unless the text changed
        os.utime(p, (mtime, mtime))


def answers(index) -> Answers:
    """Every match of every query as a sorted list of (docid, score): order-free, exact."""
    s = Searcher(index)
    out = {}
    for q in QUERIES:
        hits = s.search(q, k=1000).hits
        out[q] = sorted((h.docid, h.score) for h in hits)
    return out


def as_json(a: Answers) -> str:
    """Return a canonical text form of answers (for comparing across processes)."""
    return json.dumps({q: [[d, s] for d, s in v] for q, v in sorted(a.items())})


def run_python(code: str, *args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter with the repository importable."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "BM25DESK_NO_PROGRESS": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        timeout=timeout,
        text=True,
        **kw,
    )


def popen_python(code: str, *args: str, **kw) -> subprocess.Popen:
    """Start ``code`` in a fresh interpreter (its own session, so its workers can be killed)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "BM25DESK_NO_PROGRESS": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kw,
    )
