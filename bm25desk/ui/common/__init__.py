"""What every part of the UI shares: background jobs, colours, messages, settings, models."""
