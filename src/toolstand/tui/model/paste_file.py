"""Reading a file of a raw provider body for the TUI's "judge a pasted body" (no Textual).

The read is bounded: a body larger than any wire delivers (``/dev/zero``, a 10 GB log)
gets a one-line message naming the file and the limit, never the whole file in memory.
"""

from __future__ import annotations

from pathlib import Path

from toolstand.util.printable import visible

# the most a pasted body may hold: twice the transport's default response cap
PASTE_LIMIT_BYTES = 16 << 20


def read_paste_file(path: Path, limit: int = PASTE_LIMIT_BYTES) -> str:
    """The text of ``path`` (invalid UTF-8 replaced). Raises ValueError with a one-line
    message naming the file: unreadable, or more than ``limit`` bytes."""
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ValueError(f"file: cannot read {visible(str(path))}: {exc.strerror}") from exc
    if len(data) > limit:
        raise ValueError(f"file: {visible(str(path))} is larger than {limit} bytes; not loaded")
    return data.decode("utf-8", errors="replace")
