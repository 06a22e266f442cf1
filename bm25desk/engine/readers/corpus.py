"""Old import path of the readers, kept for existing code: the public names of :mod:`.readers`."""

from bm25desk.engine.readers import *  # noqa: F403
from bm25desk.engine.readers import __all__ as __all__
