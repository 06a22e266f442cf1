"""Scoring: the BM25 variants, query parsing, search with the top-k kernel, and explanations."""
