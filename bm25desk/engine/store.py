"""Old import path kept for existing code: see ``bm25desk.engine.index.store``."""

from bm25desk.engine.index.store import *  # noqa: F403
