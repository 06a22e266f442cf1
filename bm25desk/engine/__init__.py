"""The Qt-free core of bm25desk: analysis, readers, indexes, variants, search and explanations.

Typical use::

    from bm25desk.engine import IndexStore, Searcher, build_index, get_variant

    build_index("CISI.ALL", name="cisi")
    searcher = Searcher(IndexStore().open("cisi"))
    result = searcher.search("library classification", get_variant("bm25l", k1=1.2))
    print(searcher.explain("library classification", result.hits[0].docid).as_text())
"""

from __future__ import annotations

from bm25desk.engine.analysis.analyzer import AnalysisError, Analyzer
from bm25desk.engine.index.assemble import assemble_index
from bm25desk.engine.index.build import BuildReport, build_index, update_index
from bm25desk.engine.index.edit import EditReport, add_documents, remove_documents
from bm25desk.engine.index.parts import PartInfo, RowDocuments, write_file_part, write_part
from bm25desk.engine.index.reader import DocRecord, Index
from bm25desk.engine.index.segment import IndexCorruptError
from bm25desk.engine.index.shards import GlobalStatistics
from bm25desk.engine.index.stats import CollectionStats
from bm25desk.engine.index.store import IndexInfo, IndexStore, StoreError
from bm25desk.engine.progress import Cancelled, CancelToken, ProgressFn
from bm25desk.engine.scoring.browse import (
    DocumentTerms,
    PostingsPage,
    TermPage,
    document_terms,
    iter_postings,
    list_terms,
    term_postings,
)
from bm25desk.engine.scoring.query import Constraint
from bm25desk.engine.scoring.search import (
    TIE_RULE,
    ConstraintCheck,
    Contribution,
    Explanation,
    Feedback,
    Hit,
    QueryAnalysis,
    QueryError,
    Searcher,
    SearchResult,
    Suggestion,
    TermExplanation,
)
from bm25desk.engine.scoring.variants import (
    Variant,
    VariantError,
    all_variants,
    get_variant,
    variant_classes,
)

__all__ = [
    "TIE_RULE",
    "AnalysisError",
    "Analyzer",
    "BuildReport",
    "CancelToken",
    "Cancelled",
    "CollectionStats",
    "Constraint",
    "ConstraintCheck",
    "Contribution",
    "DocRecord",
    "DocumentTerms",
    "EditReport",
    "Explanation",
    "Feedback",
    "GlobalStatistics",
    "Hit",
    "Index",
    "IndexCorruptError",
    "IndexInfo",
    "IndexStore",
    "PartInfo",
    "PostingsPage",
    "ProgressFn",
    "QueryAnalysis",
    "QueryError",
    "RowDocuments",
    "SearchResult",
    "Searcher",
    "StoreError",
    "Suggestion",
    "TermExplanation",
    "TermPage",
    "Variant",
    "VariantError",
    "add_documents",
    "all_variants",
    "assemble_index",
    "build_index",
    "document_terms",
    "get_variant",
    "iter_postings",
    "list_terms",
    "remove_documents",
    "term_postings",
    "update_index",
    "variant_classes",
    "write_file_part",
    "write_part",
]
