"""The `bm25desk` entry point: no arguments opens the desktop app, anything else is the CLI.

Kept apart from `cli` so that the CLI module itself never imports Qt (checked by import-linter).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Dispatch to the GUI (no arguments) or to the command line."""
    args = sys.argv[1:] if argv is None else argv
    gui_flags = {"--data-dir"}
    wants_gui = not args or (len(args) == 2 and args[0] in gui_flags)
    if wants_gui or args == ["--self-test"]:
        from bm25desk import app

        return app.main(args)
    from bm25desk import cli

    return cli.main(args)
