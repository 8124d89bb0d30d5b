"""A live table dealt faster than it writes: inputs that wait share one transaction, and the batch
being written to a slow disk goes to the journal's writer thread while the loop stages the next
inputs. Nothing is announced before its batch is on disk, batches reach the disk in their order,
a failed write stops the table with nothing of it (or what was staged after it) announced or
written, and the loop never holds more than a handful of inputs that are not on disk."""
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
from controller.service.clock import RealClock
from controller.service.loop import TableService
from controller.service.parts import Hook, Listener, Tap
from controller.service.recovery import open_table
from controller.service.writer import WRITTEN
from controller.settings.profile import load_profile
from controller.table.inputs import Command


def card(n: int) -> list[tuple[str, dict]]:
    return [("input", {"type": "card", "code": "QD", "device": "shoe", "n": n})]


NEXT = "the dealer's next card"


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

    def input(self, n: int, *, urgent: bool = False, behind: bool = False) -> None:
        """One input staged, then what the loop does after staging it live (batch of one);
        `behind`: the dealer's next input is already waiting in the inbox (the loop takes it
        next)."""
        seq = self.journal.stage(card(n), durable=True)[0]
        self.batches.pending.append(seq)
        self.batches.urgent = self.batches.urgent or urgent
        if behind:
            self.inbox.put(NEXT)
        kept = self.batches.hand_over()
        if behind:
            assert self.inbox.get_nowait() is NEXT
        if not kept:
            self.batches.pending.pop()
            self.batches.commit()
            self.announce(seq)

    def idle(self) -> None:
        """What the loop does when it finds its inbox empty: the batch kept open goes."""
        self.batches.settle()

    def drain(self) -> None:
        """The loop takes the writer's word from its inbox, as from any other part."""
        while True:
            try:
                item = self.inbox.get(timeout=5)
            except queue.Empty:
                return
            assert item is WRITTEN
            self.batches.written(wait=False)
            if self.inbox.empty():
                self.idle()
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
    write = loop.journal.write

    def meanwhile(batch):
        write(batch)
        loop.inbox.put(NEXT)
    loop.journal.write = meanwhile
    loop.input(0)
    loop.journal.write = write
    assert loop.inbox.get_nowait() is NEXT
    assert loop.batches.quick and loop.batches._writer.ahead


def commits(journal: Journal) -> list[int]:
    """How many records each transaction of the journal wrote, in their order."""
    sizes: list[int] = []
    write = journal.write

    def counted(batch):
        sizes.append(len(batch[0]))
        write(batch)
    journal.write = counted
    return sizes


def test_inputs_that_wait_share_one_commit_on_a_quick_disk_and_nothing_is_told_before_it(
        journal, monkeypatch):
    monkeypatch.setattr(batches, "HAND_OVER_S", 60.0)   # every write quicker than a hand-over
    loop = Loop(journal)
    sizes = commits(journal)
    for n in range(5):
        loop.input(n, behind=True)          # the dealer is quick: the next card is waiting
    assert loop.announced == [] and journal.max_seq() == 0
    loop.idle()                             # none waits any more: one transaction for all
    assert sizes == [5]
    assert loop.announced == [1, 2, 3, 4, 5] and all(loop.on_disk_when_announced)
    assert loop.batches._writer._thread is None


def reader_holding_the_next_read(loop: Loop, monkeypatch) -> list[int]:
    """A device reader that hands in the dealer's next card as soon as the loop lets go of the
    interpreter: each time it does, the card is in the inbox. Counts those times."""
    yields: list[int] = []

    def let_go(seconds: float) -> None:
        yields.append(1)
        loop.inbox.put(NEXT)
    monkeypatch.setattr(batches, "_yield", let_go)
    return yields


def test_on_a_quick_disk_the_kept_batch_is_committed_without_waiting_for_a_reader(
        journal, monkeypatch):
    monkeypatch.setattr(batches, "HAND_OVER_S", 60.0)   # every write quicker than a hand-over
    loop = Loop(journal)
    yields = reader_holding_the_next_read(loop, monkeypatch)
    sizes = commits(journal)
    loop.input(0, behind=True)
    loop.input(1, behind=True)
    loop.idle()         # handing the interpreter over and back costs more than this write
    assert yields == [] and sizes == [2] and loop.announced == [1, 2]


def test_on_a_slow_disk_a_read_the_reader_holds_joins_the_kept_batch(journal, monkeypatch):
    loop = Loop(journal)
    slow_disk(journal)
    ahead_of_the_disk(loop)
    yields = reader_holding_the_next_read(loop, monkeypatch)
    loop.batches._writer.ahead = True       # the last write was slow with inputs coming
    loop.input(1, behind=True)
    loop.idle()             # the reader is given the interpreter: its card joins the batch
    assert yields == [1] and loop.batches.kept and loop.announced == [1]
    assert loop.inbox.get_nowait() is NEXT
    loop.batches.commit()
    assert loop.announced == [1, 2] and all(loop.on_disk_when_announced)
    loop.batches.close()


def test_a_table_dealt_at_its_pace_commits_every_input_before_the_next(journal):
    loop = Loop(journal)
    slow_disk(journal)
    sizes = commits(journal)
    for n in range(5):
        loop.input(n)                       # nothing comes while a card is written
        assert loop.announced == list(range(1, n + 2)) and not loop.batches.kept
    assert sizes == [1] * 5 and all(loop.on_disk_when_announced)
    assert loop.batches._writer._thread is None


def test_no_more_than_a_handful_of_waiting_inputs_are_kept_open(journal):
    loop = Loop(journal)
    sizes = commits(journal)
    for n in range(2 * MOST_AHEAD + 3):
        loop.input(n, behind=True)          # a burst: the loop never finds its inbox empty
    assert sizes == [MOST_AHEAD, MOST_AHEAD]
    assert len(loop.announced) == 2 * MOST_AHEAD and all(loop.on_disk_when_announced)
    loop.idle()
    assert sizes[-1] == 3 and len(loop.announced) == 2 * MOST_AHEAD + 3


def test_a_request_to_a_device_is_not_kept_waiting_for_the_inputs_behind_it(journal):
    loop = Loop(journal)
    sizes = commits(journal)
    loop.input(0, behind=True)
    loop.input(1, urgent=True, behind=True)     # asks the shuffler something: it hears it now
    assert sizes == [2] and loop.announced == [1, 2]
    assert not loop.batches.urgent and not loop.batches.kept


def test_a_dealer_ahead_of_the_disk_sends_the_batch_to_the_writer_and_nothing_is_told_early(
        journal):
    loop = Loop(journal)
    gate = threading.Event()
    slow_disk(journal, gate)
    gate.set()
    ahead_of_the_disk(loop)
    assert loop.announced == [1]
    gate.clear()
    loop.input(1)
    loop.idle()                             # handed over: the loop takes the next input
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
    loop.input(1)
    loop.idle()                             # handed over
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
        if n % 3 == 0:
            loop.idle()                     # now and then the inbox is empty
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
    loop.idle()
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


def test_the_live_loop_writes_a_burst_of_inputs_in_a_few_transactions_and_tells_none_early(
        tmp_path, monkeypatch):
    """The real loop on the real clock, inputs arriving faster than it takes them (all in its
    inbox before it starts), on a disk quicker than a hand-over: the loop itself writes them in
    shared transactions of at most MOST_AHEAD, and each is on disk when what it caused (here its
    refusal) is told."""
    monkeypatch.setattr(batches, "HAND_OVER_S", 60.0)   # the writer's thread takes none
    path = tmp_path / "j.db"
    told: list[bool] = []
    writes: list[float] = []
    n_inputs = 3 * MOST_AHEAD
    with Journal(path) as journal:
        table, _ = open_table(load_profile("classic"), journal)
        svc = TableService(table, journal, RealClock())
        svc.connect(Hook("journal_write", writes.append))
        first = journal.last_seq

        def on_disk(notice: dict) -> None:
            # the k-th refusal told: the k-th input of the burst is on disk (seqs in order)
            with sqlite3.connect(path) as conn:         # what another reader sees
                written = conn.execute("SELECT count(*) FROM records WHERE seq > ? AND kind = "
                                       "'input'", (first,)).fetchone()[0]
            told.append(written >= len(told) + 1)
        svc.connect(Listener(on_disk, frozenset({"refused"})), Tap.LISTENER)
        for n in range(n_inputs):           # a burst: each refused (no such command), kept
            svc.submit(Command(action=f"no_such_command_{n}", user="pit", role="supervisor"))
        done = threading.Event()
        svc.submit(done.set)                # once the burst is applied
        loop = threading.Thread(target=svc.run)
        loop.start()
        try:
            assert done.wait(10)
            assert svc._batches._writer._thread is None
        finally:
            svc.stop()
            loop.join(10)
        inputs = sum(1 for r in journal.records(kinds=["input"]) if r.seq > first)
    assert inputs == n_inputs
    assert n_inputs // MOST_AHEAD <= len(writes) < n_inputs // 2
    assert len(told) == n_inputs and all(told)
