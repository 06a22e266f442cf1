"""Document readers: folders, TSV, BEIR jsonl, SMART, TREC and Glasgow files as document streams.

The modules, from the bottom up: :mod:`.document` (Document, Skip, ReadReport, errors),
:mod:`.source` (opening files: gzip, byte ranges, bounded lines), :mod:`.records` (the checks
every record passes), one module per corpus format (:mod:`.msmarco`, :mod:`.tsv`, :mod:`.beir`,
:mod:`.smart`, :mod:`.trec`, :mod:`.npl`, :mod:`.lisa`, :mod:`.time_magazine`), :mod:`.detect`
(format detection), :mod:`.scan` and :mod:`.folder`
(folders; the text of each file comes from :mod:`bm25desk.engine.extract`), :mod:`.summary` (a
folder's preview) and :mod:`.api` (:func:`read_corpus`). :mod:`.corpus` is the old single-module
path, kept as re-exports.
"""

from bm25desk.engine.extract.common import ExtractError, Extractor
from bm25desk.engine.extract.decoding import decode_text, read_text
from bm25desk.engine.extract.registry import EXTRACTORS
from bm25desk.engine.readers.api import (
    COLUMN_FORMATS,
    FOLDER_FORMATS,
    FORMATS,
    RANGE_FORMATS,
    read_corpus,
    split_ranges,
)
from bm25desk.engine.readers.detect import detect_format
from bm25desk.engine.readers.document import (
    ColumnMap,
    CorpusError,
    Document,
    ExtraColumns,
    FileStat,
    Note,
    ReadReport,
    Skip,
)
from bm25desk.engine.readers.folder import MAX_FILE_SIZE, read_folder
from bm25desk.engine.readers.scan import JUNK_DIRS, scan_folder
from bm25desk.engine.readers.summary import FolderSummary, folder_summary
from bm25desk.engine.readers.tsv import guess_columns, preview_rows, read_tsv_header

__all__ = [
    "COLUMN_FORMATS",
    "EXTRACTORS",
    "FOLDER_FORMATS",
    "FORMATS",
    "JUNK_DIRS",
    "MAX_FILE_SIZE",
    "RANGE_FORMATS",
    "ColumnMap",
    "CorpusError",
    "Document",
    "ExtraColumns",
    "ExtractError",
    "Extractor",
    "FileStat",
    "FolderSummary",
    "Note",
    "ReadReport",
    "Skip",
    "decode_text",
    "detect_format",
    "folder_summary",
    "guess_columns",
    "preview_rows",
    "read_corpus",
    "read_folder",
    "read_text",
    "read_tsv_header",
    "scan_folder",
    "split_ranges",
]
