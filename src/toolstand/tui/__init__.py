"""The terminal UI (Textual). Nothing outside this package may import it."""
