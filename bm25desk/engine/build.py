"""Old import path kept for existing code: see ``bm25desk.engine.index.build``."""

from bm25desk.engine.index.build import *  # noqa: F403
