"""Files written whole or not at all, to the file a path names.

Every file toolstand writes over (a case file saved from the TUI, a report's CSV or
JUnit output) is written to a temporary file beside its target and renamed over it at
the end, so a crash or a full disk leaves the old file or the new one, never half of
each. The target is the resolved path: a symlinked file gets the new content at the end
of its link, and the link stays a link.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def resolved(path: str | os.PathLike[str]) -> Path:
    """The file ``path`` names, links followed (the path itself when it does not exist)."""
    return Path(os.path.realpath(path))


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file: the same device and inode where both exist (a
    hard link, a symlink, ``./x`` and ``x``), else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return resolved(a) == resolved(b)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], *, fsync: bool = False) -> Iterator[BinaryIO]:
    """A handle on a temporary file that replaces the file ``path`` names when the block
    ends without an error, and is removed when it raises. An existing file keeps its
    permission bits; a new one gets the umask's. Raises OSError when the folder cannot
    be written."""
    target = resolved(path)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    # O_EXCL: never another's file; 0o666 less the umask, like a file open() creates
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
