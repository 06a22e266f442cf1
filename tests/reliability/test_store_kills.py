"""SIGKILL at random moments of every writer operation leaves the old or the new state.

Each operation runs in a fresh process (in its own session, so a parallel build's workers die
with it) that is killed after a random delay within the operation's measured duration, or at a
random one of its atomic-replace calls (the commit points: segment metadata, the generation's
manifest copy, ``manifest.json``). Afterwards the index must be openable and answer exactly as a
fresh build of the old state or of the new state — and the next writer must succeed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pytest
from store_versions import VERSION_A, VERSION_B, answers, as_json, popen_python, write_version

from bm25desk.engine import IndexStore, build_index

pytestmark = pytest.mark.slow

OPERATION = r"""
import os, pathlib, random, signal, sys
from bm25desk.engine.index import ingest
from bm25desk.engine.index.build import build_index, update_index
from bm25desk.engine.index.store import IndexStore

root, op, folder_b, corpus, nth = sys.argv[1:6]
store = IndexStore(pathlib.Path(root))
if int(nth) >= 0:  # die at the nth atomic replace (a commit point)
    real, calls = os.replace, [0]
    def replace(src, dst):
        calls[0] += 1
        if calls[0] == int(nth):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst)
    os.replace = replace
print("ready", flush=True)
if op == "merge":  # tiny segments, merged in runs: the kill lands in merges
    ingest.SEGMENT_POSTINGS, ingest.MERGE_POSTINGS = 40, 200
if op in ("update", "merge"):
    update_index("victim", store=store)
elif op == "rebuild":
    build_index(folder_b, name="victim", store=store)
elif op == "build":
    build_index(folder_b, name="fresh", store=store)
elif op == "parallel":
    build_index(corpus, name="victim", store=store, workers=2, replace=True)
elif op == "delete":
    store.delete("victim")
print("done", flush=True)
"""


def _state(store: IndexStore, name: str) -> str | None:
    if name not in store.names():
        return None
    with store.open(name) as index:
        return as_json(answers(index))


def _corpus(path: Path, files: dict[str, str]) -> None:
    lines = [json.dumps({"_id": k, "title": "", "text": v}) for k, v in sorted(files.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def jsonl_states(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("jsonl")
    store = IndexStore(root / "indexes")
    out = {}
    for label, files in (("A", VERSION_A), ("B", VERSION_B)):
        _corpus(root / f"{label}.jsonl", files)
        build_index(root / f"{label}.jsonl", name=label.lower(), store=store)
        out[label] = _state(store, label.lower())
    return out


@pytest.mark.parametrize("op", ["build", "rebuild", "update", "merge", "parallel", "delete"])
def test_kills_leave_the_old_or_the_new_state(
    op: str, tmp_path: Path, expected: dict[str, str], jsonl_states: dict[str, str]
) -> None:
    rng = random.Random(f"kills-{op}")
    outcomes: dict[str, int] = {}
    duration = None
    runs = 8
    for run in range(runs):
        work = tmp_path / f"run{run}"
        store = IndexStore(work / "indexes")
        folder = work / "docs"
        write_version(folder, VERSION_A)
        corpus = work / "corpus.jsonl"
        if op == "parallel":
            _corpus(corpus, VERSION_A)
            build_index(corpus, name="victim", store=store)
            _corpus(corpus, VERSION_B)
            old, new = jsonl_states["A"], jsonl_states["B"]
        else:
            build_index(folder, name="victim", store=store)
            old, new = expected["A"], expected["B"]
        write_version(folder, VERSION_B)
        name = "fresh" if op == "build" else "victim"
        if op == "build":
            old = None
        elif op == "delete":
            new = None
        nth = rng.randint(1, 8) if run % 2 else -1  # odd runs: at a commit point
        proc = popen_python(OPERATION, str(store.root), op, str(folder), str(corpus), str(nth))
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
        started = time.monotonic()
        if nth < 0:
            time.sleep(rng.uniform(0, duration if duration else 1.0))
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
        if nth < 0 and "done" in out and duration is None:
            duration = time.monotonic() - started  # the first run that finished sets the window
        assert "Traceback" not in err, err
        state = _state(store, name)
        assert state in (old, new), f"run {run}: neither the old nor the new state"
        key = "finished" if "done" in out else ("old" if state == old else "new")
        outcomes[key] = outcomes.get(key, 0) + 1
        # The next writer succeeds and gives the new state.
        if op == "delete":
            if state is not None:
                store.delete("victim")
            assert store.names() == []
        elif op == "parallel":
            build_index(corpus, name="victim", store=store, workers=2, replace=True)
            assert _state(store, "victim") == jsonl_states["B"]
        else:
            build_index(folder, name=name, store=store)
            assert _state(store, name) == expected["B"]
        leftovers = [
            p.name for p in store.root.iterdir() if p.name.startswith((".tmp-", ".trash-"))
        ]
        assert leftovers == [], leftovers
    print(f"\n{op}: {outcomes}")
