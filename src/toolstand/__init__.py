"""toolstand: a terminal-first test stand for LLM tool calling."""

__version__ = "0.1.0"
