"""Old import path kept for existing code: see ``bm25desk.engine.scoring.search``."""

from bm25desk.engine.scoring.search import *  # noqa: F403
