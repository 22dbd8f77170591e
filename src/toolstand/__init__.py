"""toolstand: a terminal-first test stand for LLM tool calling."""

import sys

__version__ = "0.1.0"

# httpx imports its own command-line client (click, rich, pygments: ~0.3 s and ~100
# modules) whenever click is installed, as it is beside import-linter or the mcp extra.
# toolstand never runs that client, so its import is refused before httpx first loads;
# httpx then keeps its stub `main`, and `toolstand run` starts as fast as without click.
if "httpx" not in sys.modules:
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None: import refused
