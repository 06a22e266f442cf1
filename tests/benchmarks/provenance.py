"""Where a benchmark measurement comes from, and whether an earlier one may stand in for a new one.

Every measurement (each worker's JSON) carries a provenance record: the project commit, a hash of
the harness files (and the last commit that touched them), the versions of the engine's packages,
hashes of the corpus and the queries, the run's parameters, the machine, and the load average
before and after. An earlier measurement is reused only when the user asked for that engine
(``--reuse ENGINE``) and everything that could change its numbers is the same (:func:`mismatch`);
reused rows say so in the table, with their date and commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import time
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).resolve().parent

ENGINE_PACKAGES: dict[str, tuple[str, ...]] = {
    "bm25desk": ("bm25desk", "numpy"),
    "tantivy": ("tantivy",),
    "bm25s-numba": ("bm25s", "numba", "numpy", "scipy"),
    "bm25s-numpy": ("bm25s", "numpy", "scipy"),
    "whoosh": ("whoosh",),
    "rank_bm25": ("rank-bm25", "numpy"),
}
"""The installed packages whose versions an engine's numbers depend on."""

# What must be equal for a measurement to be reused (the load and the date may differ).
_COMPARED = ("engine_versions", "harness_sha256", "corpus_sha256", "queries_sha256", "params")
_MACHINE_COMPARED = ("cpu", "cores", "memory_gb")


def _git(*args: str, cwd: Path = ROOT) -> str:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def project_commit() -> str:
    """Return the commit measured, with ``+dirty`` when ``bm25desk/`` has uncommitted changes."""
    head = _git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = _git("status", "--porcelain", "--", "bm25desk", "setup.py", "pyproject.toml")
    return head + ("+dirty" if dirty else "")


def harness() -> dict[str, str]:
    """Return the harness's content hash (its .py files) and the last commit that touched them."""
    digest = hashlib.sha256()
    for path in sorted(HARNESS.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    commit = _git("log", "-1", "--format=%h", "--", str(HARNESS.relative_to(ROOT))) or "unknown"
    dirty = _git("status", "--porcelain", "--", str(HARNESS.relative_to(ROOT)))
    return {
        "harness_sha256": digest.hexdigest()[:16],
        "harness_commit": commit + ("+dirty" if dirty else ""),
    }


def file_sha256(path: Path, cache: Path | None = None) -> str:
    """Return the SHA-256 of a file (cached beside it by size and mtime: corpora are large)."""
    stat = path.stat()
    key = f"{stat.st_size}:{stat.st_mtime_ns}"
    if cache is not None and cache.exists():
        known = json.loads(cache.read_text(encoding="utf-8"))
        if known.get("key") == key:
            return str(known["sha256"])
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()[:16]
    if cache is not None:
        cache.write_text(json.dumps({"key": key, "sha256": value}), encoding="utf-8")
    return value


def engine_versions(name: str, commit: str) -> dict[str, str]:
    """Return the versions of ``name``'s packages (bm25desk's with the project commit)."""
    out = {}
    for dist in ENGINE_PACKAGES.get(name, ()):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    if name == "bm25desk":
        out["bm25desk"] += f"@{commit}"
    return out


def machine() -> dict[str, Any]:
    """Return what identifies the machine: CPU model, cores, memory, system and Python."""
    cpu = platform.processor() or "unknown CPU"
    memory_gb = 0.0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gb = round(int(line.split()[1]) / 1024**2, 1)
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": memory_gb,
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def load() -> list[float]:
    """Return the 1-, 5- and 15-minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def record(
    name: str, common: dict[str, Any], params: dict[str, Any], load_before: list[float]
) -> dict[str, Any]:
    """Return the provenance of one measurement of engine ``name`` taken just now."""
    return {
        **common,
        "engine": name,
        "engine_versions": engine_versions(name, common["project_commit"]),
        "params": params,
        "measured_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "load_before": load_before,
        "load_after": load(),
    }


def mismatch(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Return why an earlier measurement (``old`` provenance) cannot stand in for ``new``."""
    if not old:
        return ["it has no provenance record (measured by an older harness)"]
    why = []
    for key in _COMPARED:
        if old.get(key) != new.get(key):
            why.append(f"{key}: {old.get(key)!r} then, {new.get(key)!r} now")
    old_machine, new_machine = old.get("machine", {}), new.get("machine", {})
    for key in _MACHINE_COMPARED:
        if old_machine.get(key) != new_machine.get(key):
            why.append(
                f"machine {key}: {old_machine.get(key)!r} then, {new_machine.get(key)!r} now"
            )
    return why
