"""Text analysis: tokens, case, stop words and stems, the same for documents and queries."""

from bm25desk.engine.analysis.analyzer import AnalysisError, Analyzer, Token, stoplist_for

__all__ = ["AnalysisError", "Analyzer", "Token", "stoplist_for"]
