"""The journal's files as its writer holds them: still the ones the folder names?

SQLite writes through the handles it opened, whatever happens to the names since: a journal
renamed over by an old copy, or its write-ahead log deleted, leaves the table committing into
files nobody will find again. Those commits are not on disk in any useful sense (a crash or a
power cut takes them, and everything since the last checkpoint with them), so the writer looks
after every commit (controller/journal/store.py) and stops the table on the first it finds.

The look is made on handles of its own (O_PATH: no data is read, and closing one never lets go
of the locks SQLite holds on the same file): a file whose last name went has no link left. A
platform without O_PATH compares the names' inodes instead.
"""
from __future__ import annotations

import os

_O_PATH = getattr(os, "O_PATH", 0)
_fstat = os.fstat


def ids(path: str) -> tuple[int | None, int | None, int | None, int | None]:
    """(inode, WAL's inode, device, WAL's device) of the journal's file and of its write-ahead
    log as the folder names them, None where one is missing; OSError when they cannot be
    looked at."""
    out: list[int | None] = [None, None, None, None]
    for i, name in enumerate((path, path + "-wal")):
        try:
            st = os.stat(name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        out[i], out[i + 2] = st.st_ino, st.st_dev
    return out[0], out[1], out[2], out[3]


class Held:
    """The journal's file and its WAL as they were when the writer opened them."""

    __slots__ = ("path", "_ids", "_fds")

    def __init__(self, path: str) -> None:
        self.path = path
        self._fds: list[int] = []
        self._ids = ids(path)               # OSError: the folder cannot be looked at
        self._hold()

    def _hold(self) -> None:
        if not _O_PATH:
            return
        for name in (self.path, self.path + "-wal")[len(self._fds):]:
            try:
                self._fds.append(os.open(name, _O_PATH | os.O_CLOEXEC))
            except OSError:
                return                      # the WAL, made by the first write: held then

    def gone(self) -> str | None:
        """None while both files are still where they were; else which is not ("journal" or
        "wal": deleted, or another file put in its place). OSError: they cannot be looked at."""
        fds = self._fds
        if len(fds) == 2:
            try:
                if _fstat(fds[0]).st_nlink and _fstat(fds[1]).st_nlink:
                    return None             # (the common case: two system calls)
            except OSError:
                pass
        now, was = ids(self.path), self._ids
        if now[0::2] != was[0::2]:
            return "journal"
        if was[1] is None and now[1] is not None:
            self._ids = now                 # the WAL the first write made
            self._hold()
            return None
        return "wal" if now != was else None

    def close(self) -> None:
        fds, self._fds = self._fds, []
        for fd in fds:
            os.close(fd)
