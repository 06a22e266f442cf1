"""The Statistics tab: collection numbers, length histogram, term tables."""
