"""The journal's writes on a thread of their own, for a live table dealt quickly.

A live table commits every input before it is announced. When the next input comes while one
is being written (a quick dealer: the next card is on the wire during the fsync), the loop need
not wait: it hands the batch it took to this writer and goes on applying and staging the inputs
that come meanwhile; they are written together, as the next batch, once this one is on disk.
Nothing is announced before its batch is written (the loop announces a batch when the writer
reports it through the inbox), and at most one batch is in flight, so batches reach the disk
in the order they were numbered. At a table's usual pace nothing comes during a write, and on a quick
disk a write is shorter than a hand-over: the loop writes on its own thread, as before, and a
card's latency holds no hand-over between threads.
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable

from controller.journal import Journal
from controller.journal.store import Batch

__all__ = ["WRITTEN", "Writer"]


class _Written:
    """The writer's word to the loop, through its inbox: the batch in flight is written."""

    def __repr__(self) -> str:
        return "WRITTEN"


WRITTEN = _Written()


class Writer:
    """One batch in flight at most, written by a daemon thread started at the first hand-over.

    `ahead` is the loop's to set: the last write was slow and inputs came while it was made
    (the dealer is ahead of the disk), so the next batch is handed over."""

    def __init__(self, journal: Journal, submit: Callable[[Any], None]):
        self._journal, self._submit = journal, submit
        self._jobs: queue.SimpleQueue[Batch | None] = queue.SimpleQueue()
        self._done = threading.Event()
        self._flight: list[Any] | None = None       # what to announce once it is written
        self._result: tuple[float, BaseException | None] = (0.0, None)
        self._thread: threading.Thread | None = None
        self.ahead = False

    @property
    def busy(self) -> bool:
        """A batch was handed over and not yet finished by the loop."""
        return self._flight is not None

    @property
    def held(self) -> int:
        """Inputs in the batch in flight."""
        return len(self._flight) if self._flight is not None else 0

    def hand(self, pending: list[Any]) -> bool:
        """Take what is staged and write it on the writer's thread; `pending` (the batch's
        announcements) comes back from `finish`. False when nothing was staged."""
        batch = self._journal.take()
        if batch is None:
            return False
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="journal-writer")
            self._thread.start()
        self._done.clear()
        self._flight = pending
        self._jobs.put(batch)
        return True

    def _run(self) -> None:
        while (batch := self._jobs.get()) is not None:
            started = time.perf_counter()
            error: BaseException | None = None
            try:
                self._journal.write(batch)
            except BaseException as err:        # the loop stops the table on it
                error = err
            self._result = (time.perf_counter() - started, error)
            self._done.set()
            self._submit(WRITTEN)

    def finish(self, *, wait: bool) -> tuple[list[Any], float, BaseException | None] | None:
        """The batch in flight once written (waited for when `wait`): its announcements, the
        write's time in seconds and its error; None when none is in flight, or it is still
        being written and `wait` is False."""
        if self._flight is None or not (self._done.is_set() or wait):
            return None
        self._done.wait()
        pending, self._flight = self._flight, None
        return pending, *self._result

    def close(self) -> None:
        """After the loop: the thread ends (whatever was in flight was finished by then)."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(timeout=5)
            self._thread = None
