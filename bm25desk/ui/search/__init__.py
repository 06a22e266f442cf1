"""The Search tab: query box, results, preview, score ledger and live plots."""
