"""Text extraction from rich document files (PDF, DOCX, ODT, EPUB, e-mail) for folder indexing."""
