"""Index management: the index list, the new-index dialog, build progress, folder watching."""
