"""The Terms tab (look inside the index): terms by df/cf, a term's postings, a document's terms."""
