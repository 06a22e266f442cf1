"""Old import path kept for existing code: see ``bm25desk.engine.scoring.variants``."""

from bm25desk.engine.scoring.variants import *  # noqa: F403
