"""One writer per history: an exclusive lock held for as long as a command writes.

Two writers appending to one history interleave their runs under each other's run
header and double the attempts a report counts, without a word. So `run`, `--resume`,
`rejudge` and the TUI's live appends take this lock before they look at the file, and a
second writer is refused at once, told the pid of the one that holds it.

The lock is ``flock`` on a file beside the history, in the sidecar folder (``.index/``,
which keeps itself out of git), so it also covers the sidecar index that only the writer
saves, and it survives the history being renamed into place (``rejudge`` writes a temp
file first). The kernel drops it when its holder dies, however it dies: a killed run
never leaves a history locked. The lock file is never removed, since unlinking a lock
file lets a third process lock a fresh inode while the second still holds the old one;
its text is the holder's pid while held and empty after.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path

from toolstand.history.sidecar import FOLDER
from toolstand.util.problems import LoadError, Problem


class HistoryBusy(LoadError):
    """Another process is writing this history."""

    def __init__(self, history: Path, pid: str) -> None:
        self.pid = pid
        holder = f"pid {pid}" if pid else "a process that has not yet written its pid"
        super().__init__(
            [
                Problem(
                    str(history),
                    None,
                    "$",
                    f"another toolstand ({holder}) is writing this history; wait for it to "
                    "finish, or write to another file",
                )
            ]
        )


def lock_path(history: Path) -> Path:
    """Where the lock of ``history`` lives; the same file for every spelling of its path
    (symlinks are not followed, so a history linked to a device locks beside the link)."""
    p = Path(os.path.abspath(history))
    return p.parent / FOLDER / f"{p.name}.lock"


class HistoryLock:
    """An exclusive lock on one history, taken at once or refused (HistoryBusy):
    ``with HistoryLock(path): ...`` holds it for the block."""

    def __init__(self, history: Path) -> None:
        self.history = history
        self.path = lock_path(history)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock; HistoryBusy naming the holder's pid when another process has it,
        a LoadError naming the folder when the lock file cannot be made."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.path.parent / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n")  # caches and locks, never history
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise LoadError(
                [Problem(str(self.history), None, "$", f"cannot lock it: {os_error(exc)}")]
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise HistoryBusy(self.history, pid) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the last descriptor drops the flock

    def __enter__(self) -> HistoryLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def os_error(exc: OSError) -> str:
    """An OSError in one line: its errno's name and text, e.g. 'ENOSPC: No space left'."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = exc.strerror or str(exc)
    return f"{name}: {text}" if name else text
