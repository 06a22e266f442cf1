"""bm25desk: explore document collections with the BM25 family of ranking functions."""

__version__ = "0.1.0"
