"""The journal's files as its writer holds them: still the ones the folder names?

SQLite writes through the handles it opened, whatever happens to the names since: a journal
renamed over by an old copy, or its write-ahead log deleted, leaves the table committing into
files nobody will find again. Those commits are not on disk in any useful sense (a crash or a
power cut takes them, and everything since the last checkpoint with them), so the writer looks
after every commit (controller/journal/store.py) and stops the table on the first it finds.

The look is made on handles of its own (O_PATH: no data is read, and closing one never lets go
of the locks SQLite holds on the same file): a file whose last name went has no link left. A
platform without O_PATH compares the names' inodes instead.

The same look tells a journal written in place by someone else (`cp backup.db journal.db`
truncates and rewrites the very file): in WAL mode only a checkpoint writes the journal's own
file, and the writer makes its checkpoints itself (store.py), `settle`ing after each, so a size
or a modification time it did not leave means another hand wrote there. Its pages are then a
mixture no commit can be trusted to land in.
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

    __slots__ = ("path", "_ids", "_fds", "_left")

    def __init__(self, path: str) -> None:
        self.path = path
        self._fds: list[int] = []
        self._ids = ids(path)               # OSError: the folder cannot be looked at
        self._hold()
        self._left = self._look()           # the journal's file as the writer left it

    def _look(self) -> tuple[int, int]:
        """(size, modification time in ns) of the journal's file now."""
        st = _fstat(self._fds[0]) if self._fds else os.stat(self.path)
        return st.st_size, st.st_mtime_ns

    def settle(self) -> None:
        """The writer wrote the journal's file itself (a checkpoint): as it is now is its own.
        OSError: it cannot be looked at."""
        self._left = self._look()

    def _hold(self) -> None:
        if not _O_PATH:
            return
        for name in (self.path, self.path + "-wal")[len(self._fds):]:
            try:
                self._fds.append(os.open(name, _O_PATH | os.O_CLOEXEC))
            except OSError:
                return                      # the WAL, made by the first write: held then

    def gone(self) -> str | None:
        """None while both files are still where they were, the journal's as the writer left
        it; else what is not: "journal" or "wal" (deleted, or another file put in its place),
        "written" (the journal's file written by another hand). OSError: they cannot be
        looked at."""
        fds = self._fds
        if len(fds) == 2:
            try:
                st = _fstat(fds[0])
                if st.st_nlink and _fstat(fds[1]).st_nlink:
                    # (the common case: two system calls)
                    return None if (st.st_size, st.st_mtime_ns) == self._left else "written"
            except OSError:
                pass
        now, was = ids(self.path), self._ids
        if now[0::2] != was[0::2]:
            return "journal"
        if was[1] is None and now[1] is not None:
            self._ids = now                 # the WAL the first write made
            self._hold()
        elif now != was:
            return "wal"
        return None if self._look() == self._left else "written"

    def close(self) -> None:
        fds, self._fds = self._fds, []
        for fd in fds:
            os.close(fd)
