"""Document readers: folders, TSV, BEIR jsonl, SMART and TREC files as streams of documents."""
