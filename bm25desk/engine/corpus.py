"""Old import path kept for existing code: see ``bm25desk.engine.readers.corpus``."""

from bm25desk.engine.readers.corpus import *  # noqa: F403
from bm25desk.engine.readers.corpus import __all__ as __all__
