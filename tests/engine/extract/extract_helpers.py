"""Helpers of the extractor tests: the mixed-format fixture folder, one extraction, re-zipping."""

from __future__ import annotations

import zipfile
from pathlib import Path

from bm25desk.engine.extract.registry import register_builtin

MIXED = Path(__file__).resolve().parents[2] / "data" / "formats" / "mixed"


def extract(rel: str) -> tuple[str, str]:
    path = MIXED / rel
    return register_builtin()[path.suffix](path)


def rezip(src: Path, dst: Path, *, drop: str = "", add: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            if info.filename != drop:
                zout.writestr(info, zin.read(info))
        for name, data in (add or {}).items():
            zout.writestr(name, data)
    return dst
