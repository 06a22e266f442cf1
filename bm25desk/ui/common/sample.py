"""The bundled sample collection (CISI) the app offers on first start."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SAMPLE_NAME = "cisi-sample"
SAMPLE_QUERY = "information retrieval evaluation"
SAMPLE_DESCRIPTION = (
    "CISI: 1,460 library and information science abstracts (Glasgow test collection)"
)


def sample_path() -> Path:
    """Return the path of the bundled CISI collection (package data)."""
    ref = resources.files("bm25desk").joinpath("data/sample/CISI.ALL")
    return Path(str(ref))
