"""The `bm25desk` entry point: no arguments opens the desktop app, anything else is the CLI.

Kept apart from `cli` so that the CLI module itself never imports Qt (checked by import-linter).
Before the app imports Qt, :func:`bm25desk.display.problem` checks that a window can be opened and
says what is missing if not (exit 2); Ctrl-C while the app starts ends it quietly (exit 130).
"""

from __future__ import annotations

import sys

EXIT_NO_DISPLAY = 2
EXIT_INTERRUPTED = 130


def main(argv: list[str] | None = None) -> int:
    """Dispatch to the GUI (no arguments) or to the command line; return the exit status."""
    args = sys.argv[1:] if argv is None else argv
    gui_flags = {"--data-dir"}
    wants_gui = not args or (len(args) == 2 and args[0] in gui_flags)
    try:
        if wants_gui or args == ["--self-test"]:
            return _desktop(args, self_test=not wants_gui)
        from bm25desk import cli

        return cli.main(args)
    except KeyboardInterrupt:  # during imports, before the CLI's own handler is in place
        print("bm25desk: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _desktop(args: list[str], *, self_test: bool) -> int:
    if not self_test:  # the self-test runs offscreen unless a platform is chosen
        from bm25desk import display

        why = display.problem()
        if why is not None:
            print(f"bm25desk: {why}", file=sys.stderr)
            return EXIT_NO_DISPLAY
    from bm25desk import app

    return app.main(args)
