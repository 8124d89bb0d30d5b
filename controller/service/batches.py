"""The loop's open batch: what the inputs staged in the journal announce, told only once their
transaction is committed.

On a virtual clock many inputs share a batch (nothing outside waits). Live, at a table's pace,
every input is committed before the next is taken. A dealer quicker than the table (a burst
from the shoe, a simulator at zero pace: inputs wait, or came while the last was committed)
has the batch kept open for the inputs that come, up to MOST_AHEAD of them, and committed once
the loop's inbox is empty: one transaction for the cards that came together. When the disk is
slow as well, the batch goes to the journal's writer thread (controller/service/writer.py) and
the inputs that come meanwhile are staged as the next batch, announced once it too is written.
"""
from __future__ import annotations

import time
from time import sleep as _yield
from typing import Any, Callable, NoReturn

from controller.journal import Journal, JournalError
from controller.service.announce import Announcement
from controller.service.writer import Writer

__all__ = ["Batches", "HAND_OVER_S", "MOST_AHEAD"]

#: a write at least this long (seconds) with inputs coming meanwhile: the next batches go to
#: the writer. A quicker disk (tmpfs) is written by the loop itself: handing a batch over costs
#: the wake-ups of two threads (tens of microseconds each on a virtual machine), more than such
#: a write. An SSD's fsync (0.2–0.6 ms) is worth it: `run --pace 0` on one deals half as much
#: again as with a 0.5 ms bar, which only a slow write passed
HAND_OVER_S = 0.0002
#: inputs staged live and not yet on disk, at most (kept open for the inputs waiting, or staged
#: while a batch is being written): what a power cut can take that was read but not yet on
#: disk stays a handful of cards however quick the dealer and slow the disk
MOST_AHEAD = 16


def _ahead(took: float, more: bool) -> bool:
    """Whether the dealer is ahead of the disk: a slow write, and inputs came meanwhile."""
    return took >= HAND_OVER_S and more


class Batches:
    def __init__(self, journal: Journal, *, live: bool, submit: Callable[[Any], None],
                 announce: Callable[[Announcement], None], flush: Callable[[], None],
                 failed: Callable[[Exception], NoReturn], waiting: Callable[[], bool]):
        self.journal = journal
        self.pending: list[Announcement] = []       # per input staged, what it announces
        self.urgent = False                         # the batch holds a request to a device
        self.kept = False       # live: the batch is kept open for the inputs waiting (`settle`)
        # live: inputs came while the loop last committed (a dealer quicker than the table)
        self.quick = False
        self.before_commit: list[Callable[[], None]] = []   # e.g. a simulated rig saving itself
        self.write_observers: list[Callable[[float], None]] = []   # a write's time, seconds
        self._announce, self._flush, self._failed = announce, flush, failed
        self._waiting = waiting                     # whether inputs wait in the loop's inbox
        self._writer = Writer(journal, submit) if live else None

    def commit(self) -> None:
        """Commit the open batch (one transaction), then announce its inputs in their order;
        a batch the writer has is finished first. A commit that fails stops the table with
        nothing of the batch announced."""
        if self._writer is not None and self._writer.busy:
            self.written(wait=True)
        if self.journal.staged:
            try:
                # what goes to disk with the batch (a simulated rig's devices beside the
                # journal): one that cannot be written stops the table as the batch would
                for hook in self.before_commit:
                    hook()
                started = time.perf_counter()
                self.journal.commit()
            except (JournalError, ValueError) as err:
                self.pending = []
                self._failed(err)
            took = time.perf_counter() - started
            for observe in self.write_observers:
                observe(took)
            if self._writer is not None:
                self.quick = self._waiting()
                self._writer.ahead = _ahead(took, self.quick)
        pending, self.pending, self.urgent, self.kept = self.pending, [], False, False
        for told in pending:
            self._announce(told)
        if pending:
            self._flush()

    def hand_over(self) -> bool:
        """Live, after an input is staged: whether the loop may take the next input before this
        batch is on disk. True while a batch is being written (this one follows it); and, with
        a dealer quicker than the table (inputs wait, or came during the last commit), while
        fewer than MOST_AHEAD inputs are open and none asks a device something: the batch is
        kept open for the inputs that come, and the loop `settle`s it once none waits. False:
        the loop commits it itself, now (at a table's pace, every input)."""
        writer = self._writer
        if writer is None:
            return False
        if writer.busy:
            if len(self.pending) + writer.held < MOST_AHEAD:
                return True
            # the disk far behind: the loop waits for it rather than hold more in memory only
            self.written(wait=True)
        if not self.urgent and len(self.pending) < MOST_AHEAD and (self.quick
                                                                   or self._waiting()):
            self.kept = True
            return True
        return self._to_writer()

    def settle(self) -> None:
        """The loop is about to wait for its next input: the batch kept open goes to disk now,
        unless an input waits after all (it joins the batch). To the writer when the dealer was
        ahead of a slow disk (the loop goes on meanwhile), else committed and announced here."""
        if not self.kept or self._waiting():
            return
        writer = self._writer
        if writer is not None and writer.ahead:
            # a slow disk: a quick dealer's next card, likely in a device reader's hands, is
            # worth giving it the interpreter for (two thread wake-ups, far less than the
            # write the card then shares). On a quick disk the write costs less than those
            # wake-ups: it is made at once, and lets go of the interpreter itself
            _yield(0)
            if self._waiting():
                return
        if not self._to_writer():
            self.commit()

    def _to_writer(self) -> bool:
        """The open batch to the writer's thread, when the last write was slow with inputs coming
        meanwhile; False (nothing done) otherwise."""
        writer = self._writer
        if writer is None or writer.busy or not writer.ahead:
            return False
        try:
            for hook in self.before_commit:
                hook()
        except (JournalError, ValueError) as err:
            self.pending = []
            self._failed(err)
        if not writer.hand(self.pending):
            return False
        self.pending, self.urgent, self.kept = [], False, False
        return True

    def written(self, *, wait: bool) -> None:
        """The writer's batch, once on disk (waited for when `wait`): announced in its order,
        or the table stops on its failure; what was staged meanwhile goes next."""
        writer = self._writer
        if writer is None or (done := writer.finish(wait=wait)) is None:
            return
        pending, took, error = done
        if error is not None:
            self.pending = []
            if not isinstance(error, (JournalError, ValueError)):
                raise error
            self._failed(error)
        for observe in self.write_observers:
            observe(took)
        for told in pending:
            self._announce(told)
        self._flush()
        writer.ahead = _ahead(took, bool(self.pending) or self._waiting())
        if self.pending and not wait and not self.hand_over():
            self.commit()       # the disk caught up: what was staged meanwhile goes now

    def close(self) -> None:
        """After the loop (its last batch committed): the writer's thread ends."""
        if self._writer is not None:
            self._writer.close()
