"""Shared fixtures of the reliability suite (its plain helpers are in ``store_versions.py``).

The suite attacks the store the way a hostile user and an unlucky machine do: kills at random
moments of every writer, readers racing writers, damaged files, full disks. Helpers build small
corpora in two versions (A and B), compute the answers a fresh build of each gives, and run
bm25desk in subprocesses with the repository on their path.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from store_versions import VERSION_A, VERSION_B, answers, as_json, write_version

from bm25desk.engine import IndexStore, build_index


@pytest.fixture(scope="session")
def expected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The answers of fresh builds of version A and version B."""
    root = tmp_path_factory.mktemp("expected")
    store = IndexStore(root / "indexes")
    out = {}
    for label, files in (("A", VERSION_A), ("B", VERSION_B)):
        folder = root / label
        write_version(folder, files)
        build_index(folder, name=label.lower(), store=store)
        with store.open(label.lower()) as index:
            out[label] = as_json(answers(index))
    return out


@pytest.fixture
def cli(capsys) -> Callable[..., tuple[int, str, str]]:
    """Return ``run(*argv) -> (exit code, stdout, stderr)`` running the CLI in-process."""
    from bm25desk import cli as cli_mod

    def run(*argv: str) -> tuple[int, str, str]:
        code = cli_mod.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run
