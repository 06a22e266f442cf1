"""Text extraction from document files (text, HTML, PDF, DOCX, ODT, EPUB, mail) for folder indexes.

The modules, from the bottom up: :mod:`.common` (the skip exception and text helpers),
:mod:`.decoding` (bytes to text), :mod:`.limits` (sizes, time, memory), :mod:`.archive` (ZIP
containers within those limits), :mod:`.workers` (worker processes), one module per format
(:mod:`.plain`, :mod:`.html_text`, :mod:`.pdf`, :mod:`.word`, :mod:`.odt`, :mod:`.epub`,
:mod:`.mail`) and :mod:`.registry` (extension → extractor). Nothing here imports the readers.
"""

from bm25desk.engine.extract.common import ExtractError, Extractor
from bm25desk.engine.extract.registry import EXTRACTORS, register, register_builtin

__all__ = ["EXTRACTORS", "ExtractError", "Extractor", "register", "register_builtin"]
