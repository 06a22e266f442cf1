"""The Evaluation tab: queries and judgements, runs of variants, significance, sweeps."""
