"""Shared pytest configuration (UI fixtures are added above the engine block at the bottom)."""

from __future__ import annotations

import pytest


# --- engine tests: golden-file regeneration (keep this block at the very bottom) ---------------
# pytest_addoption only works in a rootdir/initial conftest, hence here and not in tests/engine/.
def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--update-golden``: rewrite tests/data/golden_*.json instead of comparing with them."""
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="regenerate the golden score files in tests/data instead of checking against them",
    )
