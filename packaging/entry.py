"""PyInstaller entry point of the bundle: the ``bm25desk`` launcher.

No arguments open the desktop app; ``--self-test`` runs the self-test; anything else is the CLI
(see :mod:`bm25desk.launcher`).
"""

from __future__ import annotations

import multiprocessing

from bm25desk.launcher import main

if __name__ == "__main__":
    # A frozen app that (now or later) starts worker processes must let them bootstrap here.
    multiprocessing.freeze_support()
    raise SystemExit(main())
