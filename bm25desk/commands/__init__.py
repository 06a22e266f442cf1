"""The command-line commands, by concern; ``bm25desk/cli.py`` parses, dispatches and maps errors.

:func:`add_commands` registers them on the CLI's parser; each sets ``handler``, which the CLI
calls as ``handler(args, open_searcher)``. Errors are the engine's, or :class:`BadInput` (exit 2).
"""

from __future__ import annotations

import argparse
from typing import Any

from bm25desk.commands.browse import add_browse_commands
from bm25desk.commands.common import BadInput
from bm25desk.commands.edit import add_edit_commands

__all__ = ["BadInput", "add_commands"]


def add_commands(
    sub: Any, common: argparse.ArgumentParser, ranking: argparse.ArgumentParser
) -> None:
    """Register ``add``, ``remove``, ``terms``, ``postings`` and ``doc-terms``."""
    add_edit_commands(sub, common)
    add_browse_commands(sub, common, ranking)
