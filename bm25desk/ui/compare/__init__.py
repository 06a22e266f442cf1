"""The Compare tab: two configurations side by side, and why documents moved."""
