"""A live table dealt faster than its disk: the batch being written goes to the journal's writer
thread while the loop stages the next inputs. Nothing is announced before its batch is on disk,
batches reach the disk in their order, a failed write stops the table with nothing of it (or
what was staged after it) announced or written, and the loop never holds more than a handful of
inputs that are not on disk."""
from __future__ import annotations

import queue
import sqlite3
import threading
import time

import pytest

from controller.errors import TableStopped
from controller.journal import Journal, JournalError
from controller.service import batches
from controller.service.batches import HAND_OVER_S, MOST_AHEAD, Batches
from controller.service.writer import WRITTEN


def card(n: int) -> list[tuple[str, dict]]:
    return [("input", {"type": "card", "code": "QD", "device": "shoe", "n": n})]


class Loop:
    """The parts of the table's loop a batch meets: its inbox, what it announced, a stop."""

    def __init__(self, journal: Journal, *, live: bool = True):
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.announced: list[int] = []
        self.on_disk_when_announced: list[bool] = []
        self.journal = journal
        self.batches = Batches(journal, live=live, submit=self.inbox.put,
                               announce=self.announce, flush=lambda: None,
                               failed=self.failed, waiting=lambda: not self.inbox.empty())

    def announce(self, told: int) -> None:
        with sqlite3.connect(self.journal.path) as conn:      # what another reader sees
            on_disk = conn.execute("SELECT count(*) FROM records WHERE seq = ?",
                                   (told,)).fetchone()[0] == 1
        self.announced.append(told)
        self.on_disk_when_announced.append(on_disk)

    def failed(self, err: Exception):
        raise TableStopped(f"the journal cannot be written: {err}") from err

    def input(self, n: int) -> None:
        """One input staged, then what the loop does after staging it live (batch of one)."""
        seq = self.journal.stage(card(n), durable=True)[0]
        self.batches.pending.append(seq)
        if not self.batches.hand_over():
            self.batches.pending.pop()
            self.batches.commit()
            self.announce(seq)

    def drain(self) -> None:
        """The loop takes the writer's word from its inbox, as from any other part."""
        while True:
            try:
                item = self.inbox.get(timeout=5)
            except queue.Empty:
                return
            assert item is WRITTEN
            self.batches.written(wait=False)
            if not self.batches._writer.busy:
                return


@pytest.fixture
def journal(tmp_path):
    j = Journal(tmp_path / "j.db")
    yield j
    j.close()


def slow_disk(journal: Journal, gate: threading.Event | None = None) -> None:
    """Every write takes longer than a hand-over (once `gate` opens, when given)."""
    write = journal.write

    def slow(batch):
        if gate is not None:
            gate.wait(5)
        time.sleep(HAND_OVER_S)
        write(batch)
    journal.write = slow


def ahead_of_the_disk(loop: Loop) -> None:
    """The loop writes a card itself, slowly, while the dealer's next one comes."""
    loop.inbox.put("the dealer's next card")
    loop.input(0)
    assert loop.inbox.get_nowait() == "the dealer's next card"


def test_a_quick_disk_is_written_by_the_loop_itself_and_no_thread_is_started(journal,
                                                                             monkeypatch):
    monkeypatch.setattr(batches, "HAND_OVER_S", 60.0)   # every write quicker than a hand-over
    loop = Loop(journal)
    for n in range(5):
        loop.inbox.put("an input waiting")      # the dealer is quick, the disk quicker
        loop.input(n)
    assert loop.announced == [1, 2, 3, 4, 5] and all(loop.on_disk_when_announced)
    assert loop.batches._writer._thread is None


def test_a_slow_disk_at_a_tables_pace_is_written_by_the_loop_itself(journal):
    loop = Loop(journal)
    slow_disk(journal)
    for n in range(5):
        loop.input(n)                           # nothing comes while a card is written
    assert loop.announced == [1, 2, 3, 4, 5] and all(loop.on_disk_when_announced)
    assert loop.batches._writer._thread is None


def test_a_dealer_ahead_of_the_disk_sends_the_batch_to_the_writer_and_nothing_is_told_early(
        journal):
    loop = Loop(journal)
    gate = threading.Event()
    slow_disk(journal, gate)
    gate.set()
    ahead_of_the_disk(loop)
    assert loop.announced == [1]
    gate.clear()
    loop.input(1)                           # handed over: the loop takes the next input
    assert loop.batches._writer.busy and loop.announced == [1]
    for n in range(2, 6):                   # staged while seq 2 is being written
        loop.input(n)
    assert loop.announced == [1]            # nothing of them is told before it is on disk
    assert journal.staged == 4
    gate.set()
    loop.drain()
    assert loop.announced == [1, 2, 3, 4, 5, 6] and all(loop.on_disk_when_announced)
    loop.batches.commit()
    loop.batches.close()
    assert journal.verify().ok and journal.max_seq() == 6


def test_what_was_staged_during_a_write_goes_when_the_disk_catches_up(journal, monkeypatch):
    loop = Loop(journal)
    gate = threading.Event()
    slow_disk(journal, gate)
    gate.set()
    ahead_of_the_disk(loop)
    gate.clear()
    loop.input(1)                           # handed over
    loop.input(2)                           # the dealer's last card, staged meanwhile
    monkeypatch.setattr(batches, "HAND_OVER_S", 60.0)   # that write turns out a quick one
    gate.set()
    loop.drain()                            # nothing more comes: the last card is not left
    assert loop.announced == [1, 2, 3] and all(loop.on_disk_when_announced)
    assert journal.staged == 0 and loop.batches.pending == []
    loop.batches.close()


def test_the_loop_holds_at_most_a_handful_of_inputs_not_on_disk(journal):
    loop = Loop(journal)
    write = journal.write
    journal.write = lambda batch: (time.sleep(0.02), write(batch))   # a slow disk
    ahead_of_the_disk(loop)
    n_inputs = 3 * MOST_AHEAD
    for n in range(1, n_inputs):
        loop.input(n)
        while not loop.inbox.empty():
            assert loop.inbox.get_nowait() is WRITTEN
            loop.batches.written(wait=False)
        assert n + 1 - len(loop.announced) <= MOST_AHEAD
    assert len(loop.announced) < n_inputs       # the disk was behind all along
    loop.batches.commit()
    assert loop.announced == list(range(1, n_inputs + 1)) and all(loop.on_disk_when_announced)
    loop.batches.close()
    assert journal.verify().ok


def test_a_failed_write_stops_the_table_with_nothing_of_it_or_after_it_told_or_kept(journal):
    loop = Loop(journal)
    slow_disk(journal)
    ahead_of_the_disk(loop)
    gate = threading.Event()
    slow_disk(journal, gate)
    loop.input(1)
    assert loop.batches._writer.busy
    loop.input(2)                           # staged on the batch that will fail
    journal._live().execute("CREATE TRIGGER refuse BEFORE INSERT ON records "
                            "BEGIN SELECT RAISE(FAIL, 'disk I/O error'); END")
    gate.set()
    with pytest.raises(TableStopped, match="disk I/O error"):
        loop.drain()
    assert loop.announced == [1] and loop.batches.pending == []
    assert journal.staged == 0 and journal.last_seq == 1 and journal.max_seq() == 1
    loop.batches.close()


def test_a_journal_write_that_fails_drops_what_was_chained_on_it(tmp_path):
    with Journal(tmp_path / "j.db") as j:
        j.append_many(card(0), durable=True)
        first = j.take() if j.stage(card(1)) else None
        j.stage(card(2))                    # chained on the batch taken, not yet written
        j._live().execute("CREATE TRIGGER refuse BEFORE INSERT ON records "
                          "BEGIN SELECT RAISE(ABORT, 'no room'); END")
        with pytest.raises(JournalError, match="seq 2"):
            j.write(first)
        assert j.staged == 0 and j.last_seq == 1
        j._live().execute("DROP TRIGGER refuse")
        assert j.append_many(card(3), durable=True) == [2]   # numbered on what is on disk
        assert j.verify().ok and j.max_seq() == 2


def test_a_batch_is_never_written_before_the_one_taken_before_it(tmp_path):
    with Journal(tmp_path / "j.db") as j:
        j.stage(card(0))
        first = j.take()
        j.stage(card(1))
        second = j.take()
        with pytest.raises(JournalError, match="seq 2 would be written before seq 1"):
            j.write(second)
        j.write(first)
        j.write(second)
        assert j.verify().ok and j.max_seq() == 2
