"""One writer per journal: an exclusive lock on `JOURNAL.lock`, held for the writer's life.

SQLite lets two processes append to one file one after the other, and both would build a chain
on a head the other has moved. So a writer takes `fcntl.flock(LOCK_EX)` on the lock file beside
the journal before it reads or prints anything, writes its pid into it, and keeps it until it
exits (the kernel lets go when the process dies, however it dies: no stale lock). A second
writer is refused at once, in one line naming the holder's pid. Readers (recall, backup,
verify-journal, the feed's own connection) never take it: WAL readers and the writer do not
block each other.

Within one process the lock is shared and counted (`hold` twice, `release` twice): the
commands open the journal more than once while they run.
"""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from controller.errors import InputError
from controller.journal.schema import SIDE_FILES, JournalError
from controller.settings.paths import NotAFile, refuse_special

SUFFIX = ".lock"
MODE = 0o640


class JournalBusy(InputError):
    """Another process writes this journal: one line naming its pid."""


@dataclass
class WriterLock:
    path: str           # the lock file
    journal: str
    fd: int
    refs: int = 0


_held: dict[str, WriterLock] = {}
_mutex = threading.Lock()


def lock_path(journal: str) -> str:
    return f"{journal}{SUFFIX}"


def holder(journal: str) -> int | None:
    """The pid written in the journal's lock file, if any (whether it still holds it or not)."""
    try:
        with open(lock_path(journal), "rb") as fh:
            text = fh.read(32).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def hold(journal: str) -> WriterLock:
    """Take (or share, in this process) the journal's writer lock; JournalBusy when another
    process holds it."""
    path = lock_path(journal)
    key = os.path.realpath(path)
    with _mutex:
        lock = _held.get(key)
        if lock is None:
            lock = _take(journal, path)
            _held[key] = lock
        lock.refs += 1
        return lock


def _take(journal: str, path: str) -> WriterLock:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise JournalBusy(f"journal {journal}: its lock file {path} exists and is not a regular "
                          "file; remove it or give another --journal")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, MODE)
    except OSError as err:
        raise JournalBusy(f"journal {journal}: cannot open its lock file {path} "
                          f"({err.strerror}); check the folder's permissions") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise JournalBusy(f"journal {journal}: cannot lock {path} ({err.strerror})") from None
        pid = holder(journal)
        who = f"pid {pid}" if pid else "another process (pid not written yet)"
        raise JournalBusy(f"journal {journal} is in use by {who}: one table writes a journal; "
                          "stop that one first, or give another --journal") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return WriterLock(path, journal, fd)


def release(lock: WriterLock) -> None:
    """One use fewer; the last lets go of the lock (the file stays: removing it would race)."""
    with _mutex:
        lock.refs -= 1
        if lock.refs > 0:
            return
        _held.pop(os.path.realpath(lock.path), None)
        try:
            os.close(lock.fd)
        except OSError:
            pass


def claim(path: str) -> WriterLock:
    """What a writer does before anything is opened or created: the journal's path (and its
    WAL and shared-memory files) must be files or nothing yet, and no other process may be
    writing it. JournalError in one line otherwise; release the lock it returns."""
    try:
        for side in SIDE_FILES:
            refuse_special(path + side, "journal")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        return hold(path)
    except (NotAFile, JournalBusy) as err:
        raise JournalError(str(err)) from None
    except OSError as err:
        raise JournalError(f"journal {path}: cannot be opened: {err.strerror or err}") from None


@contextmanager
def claimed(path: str) -> Iterator[WriterLock]:
    """The journal's writer lock for the length of a `with` (see claim)."""
    lock = claim(path)
    try:
        yield lock
    finally:
        release(lock)
