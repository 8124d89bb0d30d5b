"""A deadline on the floor store's talks with its database, kept by the store itself.

The server cancels a statement that runs too long (`statement_timeout`, set on every
connection), but a server that does not answer at all (its process frozen, a link that lost
its packets without a reset, a host that hangs) cancels nothing, and libpq waits on the socket
for ever: the store wedged without a word and did not stop on SIGTERM. This watch ends such a
wait by shutting the connection's socket down (the wait then fails as a lost connection, the
store drops it and tries again later, acknowledging nothing it did not commit): when the talk
has lasted a little past the server's own timeout (up to 5 s), or at once when the store is stopping.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

__all__ = ["Deadline"]

#: how often the watch looks (a stop is seen within this; a deadline a little late at worst)
LOOK_S = 0.1


class Deadline:
    def __init__(self, timeout_s: float, stopping: threading.Event):
        # the server's own cancel comes first when it can: its error says more
        self.timeout_s, self.grace_s = timeout_s, min(5.0, timeout_s)
        self._stopping = stopping
        self._lock = threading.Lock()       # the socket is shut only while the talk lasts
        self._fd: int | None = None
        self._ends = 0.0
        self.fired: str | None = None       # "timeout" or "stopping": why the last talk ended
        self._thread: threading.Thread | None = None

    @contextmanager
    def talk(self, conn: Any) -> Iterator[None]:
        """Around one exchange with the database on `conn` (a transaction, a query)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, daemon=True,
                                            name="db-deadline")
            self._thread.start()
        with self._lock:
            self._fd, self.fired = conn.fileno(), None
            self._ends = time.monotonic() + self.timeout_s + self.grace_s
        try:
            yield
        finally:
            with self._lock:
                self._fd = None

    def _watch(self) -> None:
        while True:
            stopping = self._stopping.wait(LOOK_S)
            with self._lock:
                if self._fd is None:
                    continue
                if stopping:
                    self._cut("stopping")
                elif time.monotonic() >= self._ends:
                    self._cut("timeout")

    def _cut(self, why: str) -> None:
        """Shut the socket down under the waiting libpq (its own descriptor stays its own to
        close); a descriptor already gone is left alone."""
        assert self._fd is not None
        try:
            dup = os.dup(self._fd)
        except OSError:
            return
        self.fired = why
        sock = socket.socket(fileno=dup)
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:             # (the peer closed it meanwhile: the wait ends anyway)
            pass
        finally:
            sock.close()
        self._fd = None
