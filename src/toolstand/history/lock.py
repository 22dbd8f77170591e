"""One writer per history: an exclusive lock held for as long as a command writes.

Two writers appending to one history interleave their runs under each other's run
header and double the attempts a report counts, without a word. So `run`, `--resume`,
`rejudge` and the TUI's live appends take this lock before they look at the file, and a
second writer is refused at once, told the pid of the one that holds it.

The lock is ``flock`` on a file beside the history, in the sidecar folder (``.index/``,
which keeps itself out of git), so it also covers the sidecar index that only the writer
saves, and it survives the history being renamed into place (``rejudge`` writes a temp
file first). It is taken beside the resolved file, so every spelling of the path (a
symlink, ``./``, ``..``) meets the same lock, and, when the history exists, on the
history's own inode too, so a hard link meets it as well. Only a regular file (or one
not yet made) is a history: a FIFO would hang the writer and a device would grow a
sidecar folder in /dev. The kernel drops it when its holder dies, however it dies: a killed run
never leaves a history locked. The lock file is never removed, since unlinking a lock
file lets a third process lock a fresh inode while the second still holds the old one;
its text is the holder's pid while held and empty after.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path

from toolstand.history.sidecar import FOLDER
from toolstand.util.problems import LoadError, Problem


class HistoryBusy(LoadError):
    """Another process is writing this history."""

    def __init__(self, history: Path, pid: str, *, other_name: bool = False) -> None:
        self.pid = pid
        holder = f"pid {pid}" if pid else "a process that has not yet written its pid"
        if other_name:
            holder = "under another name of the same file, a hard link"
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
    """Where the lock of ``history`` lives; the same file for every spelling of its path,
    symlinks followed."""
    p = Path(os.path.realpath(history))
    return p.parent / FOLDER / f"{p.name}.lock"


def not_a_history(history: Path) -> str | None:
    """Why ``history`` cannot be written as one (a folder, a FIFO, a device), or None
    for a regular file or a path where none exists yet."""
    try:
        mode = os.stat(history).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot use it: {os_error(exc)}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder; give the history a file name, e.g. runs/today.jsonl"
    kind = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    return f"is {kind}; a history is a regular file (or a new one)"


class HistoryLock:
    """An exclusive lock on one history, taken at once or refused (HistoryBusy):
    ``with HistoryLock(path): ...`` holds it for the block."""

    def __init__(self, history: Path) -> None:
        self.history = history
        self.path = lock_path(history)
        self._fd: int | None = None
        self._inode_fd: int | None = None

    def acquire(self) -> None:
        """Take the lock; HistoryBusy naming the holder's pid when another process has it,
        a LoadError naming the folder when the lock file cannot be made, or the history
        when it is no regular file."""
        problem = not_a_history(self.history)
        if problem is not None:
            raise LoadError([Problem(str(self.history), None, "$", problem)])
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
        self._fd = fd
        self._lock_inode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)

    def _lock_inode(self) -> None:
        """The history's own inode, where it exists: a hard link has another name and
        so another lock file beside it, but the same inode."""
        try:
            inode_fd = os.open(self.history, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            return  # a new file: no other name can reach it yet
        except OSError as exc:
            self.release()
            raise LoadError(
                [Problem(str(self.history), None, "$", f"cannot lock it: {os_error(exc)}")]
            ) from None
        try:
            fcntl.flock(inode_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(inode_fd)
            self.release()
            raise HistoryBusy(self.history, "", other_name=True) from None
        self._inode_fd = inode_fd

    def release(self) -> None:
        inode_fd, self._inode_fd = self._inode_fd, None
        if inode_fd is not None:
            os.close(inode_fd)
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
