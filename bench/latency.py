"""Shoe read latency and throughput: bare pyserial, the real driver, and the whole controller.

Three readers over the same transport, side by side in one run:
- bare: a pyserial read loop; latency to the read() that brought a read's last byte in.
- driver: the real shoe driver; latency to the decoded CardRead (its `t`).
- table: the production path of `tablectl run`, wired by the same code
  (controller.service.build): the shoe driver on the ShoeSource's reader
  thread → the service's queue → the one loop (`TableService`, real clock) → Table.apply →
  the journal (SQLite WAL, one transaction per input, fsynced for a card, in a temporary
  directory or --journal-dir) → the publishers (the `--json` feed, here into /dev/null, the
  console's memory) → the shoe's ack. Latency to the card's event reaching the last publisher.
  The bench only adds timestamps: a wrapper on the driver notes each CardRead's `t`, a
  `before_input` hook notes when the loop takes an input, wrappers on the journal's `stage` and
  `commit` time its write, and a last publisher notes the card's event.

A second table splits out the controller's own share for each table run ("added": from the
decoded CardRead to the card's event published, journal write included) into the queue
(decoded → the loop takes it; itself split into the reader's own work, from the bytes' arrival
to its put on the service's queue, and the hand-off from that put to the loop taking it), the
table (apply), the journal write and the publishing; next to it, in the same run and the same
directory, the floor under the journal's write: a bare SQLite commit (WAL, synchronous=FULL,
one autocommit INSERT statement) of the very rows the journal wrote for the card before (the
journal's row shape, as many rows of the same sizes), on a file of its own.

The bare commit is made where the journal's write is made: on the loop's thread, for every
other card, at the moment the journal's write of that card begins (after the table applied
it), just before it. Whatever runs first there finds the caches cold (the loop slept since the
last card, and the machine's other work ran meanwhile): a commit made at another moment or on
another thread is not the same floor. So the cards alternate: on one the journal writes
alone and gives every figure of the table (added, queue, apply, journal, publish), on the
next the bare commit goes first and gives the bare figure (that card's own figures are left
out: its write follows a warm SQLite, and the bare commit is in its latency). The same rows
are also committed by the shoe's writer thread halfway between two reads ("bare·idle", on a
file of its own): what the same commit costs away from the card's moment.

With --floor a third kind of card has, at that same moment, the least a chained record takes
in Python timed instead (the card's record encoded once by the C JSON encoder and hashed once):
the bare commit plus that is the best a journal write can be on the machine at hand.

Targets: added p99 <= 1 ms (journal write included); the journal write within 1.5x of the
bare commit at p50 and p99. Both are checked and said plainly in the output.

Latency starts when the last byte of a read is written (the shoe model's pull() returns, or
os.write() into a pty master returns). Two transports: the in-process shoesim:// handler and a
pty (writer thread on the master, the port opened on the slave path like a real /dev/tty*); a
pty carries bytes at once, so the wire time of a real line (a Bee-Tek card token is 18 bytes:
18.75 ms at 9600 baud, 8N1) comes on top of every figure here. Throughput: cards per second
with the shoe writing as fast as it can. The table's latency runs are paced at the card's wire
time (a real shoe cannot send faster), the others at --pace-ms. The bench's reads come faster
than a hand pulls cards, so the table runs use min_pull_interval_s = 0 (no read is taken for a
double draw); everything else is `tablectl run`'s defaults.

    python bench/latency.py [--cards 400] [--pace-ms 1] [--protocol beetek] [--transport pty]
                            [--journal-dir D] [--floor] [--json] [--cprofile FILE]

With --json the tables go to stderr and stdout gets one JSON line: the pty Bee-Tek table path
(or the first table path run) as added_p50_ms, added_p99_ms, journal_p50_ms, journal_p99_ms,
bare_sqlite_p50_ms, bare_sqlite_p99_ms, journal_vs_bare_p50, journal_vs_bare_p99, cards_per_s,
targets and whether they are met, and every table path under "runs" (with the bare·idle
commit's figures, and how many cards each side had).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import struct
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from controller.journal.chain import _fast_compact as _encode
from controller.shoe.cards import ordered_shoe
from controller.service.build import ControlSpec, DeviceSettings, TableSpec, build
from controller.service.clock import RealClock
from controller.service.parts import Hook
from controller.settings.config import ConsoleCfg, ShoeCfg
from controller.feed import JsonFeed
from controller.logsetup import configure
from controller.settings.profile import load_profile
from controller.service.cycle import ShoePlan
from drivers.events import CardRead
from drivers.shoe import PROTOCOLS, open_shoe
from drivers.transport import open_serial
from simulators import registry
from simulators.install import install
from simulators.shoe import ENCODERS, ShoeModel

try:
    from _sha256 import sha256 as _sha256   # CPython's own: the least code a SHA-256 runs
except ImportError:                         # pragma: no cover - other Pythons
    from hashlib import sha256 as _sha256

ADDED_TARGET_MS = 1.0       # the controller's added p99, journal write included
JOURNAL_VS_BARE = 1.5       # the journal write within this factor of a bare commit, p50 and p99
SEED = 1                    # the shoe order: any valid shoe will do, the same one every run
NO_PROGRESS_S = 10.0        # a reader that delivers nothing for this long has failed
PRIMARY = ("pty", "beetek")  # the path the JSON line's headline figures are for


def shoe_order(decks: int, n: int, seed: int = SEED) -> list[str]:
    """`n` card codes: shuffled `decks`-deck shoes one after another (valid for the table when
    `n` is at most one shoe)."""
    rng = random.Random(seed)
    cards: list[str] = []
    while len(cards) < n:
        shoe = [c.code for c in ordered_shoe(decks)]
        rng.shuffle(shoe)
        cards += shoe
    return cards[:n]


def wire_ms(protocol: str, baud: int) -> float:
    """The time one card's frame takes on a serial line at `baud` (8N1: 10 bits a byte)."""
    return len(ENCODERS[protocol]().card("TD", seq=1)) * 10 / baud * 1000


class Rig:
    """One transport carrying reads of `cards` in `protocol`: send(i) writes read i's last byte."""

    def __init__(self, transport: str, protocol: str, cards: Sequence[str]):
        self.transport = transport
        self.protocol, self.cards, self.n = protocol, list(cards), len(cards)
        enc = ENCODERS[protocol]()
        self.frames = [enc.card(c, seq=i % 65535 + 1) for i, c in enumerate(self.cards)]
        self.preamble = 0                    # bytes before the first read (framed power-on HELLO)
        self._closers: list[Callable[[], None]] = []
        if transport == "shoesim":
            name = f"bench-{uuid.uuid4().hex[:8]}"
            self.model = ShoeModel(self.cards, protocol=protocol, session=1)
            self.preamble = self.model.in_waiting
            registry.register(name, self.model)
            install()                        # shoesim:// reaches the model by its name
            self.url = f"shoesim://{name}"
            self.send = lambda i: self.model.pull()
            self._closers.append(lambda: registry.unregister(name))
        else:
            master, slave = os.openpty()
            self.url = os.ttyname(slave)
            self.send = lambda i: os.write(master, self.frames[i])
            self._closers += [lambda: os.close(master), lambda: os.close(slave)]
            # the driver writes to the shoe (framed: HELLO requests, one ACK a card): read them
            # off the master, as a shoe would, so the pty's buffer never fills
            threading.Thread(target=_drain, args=(master,), daemon=True).start()

    def close(self) -> None:
        for close in self._closers:
            close()


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except OSError:
        pass        # the rig closed the pty


@dataclass
class Result:
    rate: float                                          # cards per second
    latencies: list[float]                               # last byte → reader's result, seconds
    # table runs only, one entry a card, seconds:
    added: list[float] = field(default_factory=list)     # decoded CardRead → card event published
    queue: list[float] = field(default_factory=list)     # of which: decoded → the loop takes it
    reader: list[float] = field(default_factory=list)    #   of which: decoded → queued (reader)
    handoff: list[float] = field(default_factory=list)   #   and: queued → the loop takes it
    apply: list[float] = field(default_factory=list)     # taken → the journal write starts
    journal: list[float] = field(default_factory=list)   # the journal write (stage + commit)
    stage: list[float] = field(default_factory=list)     # of which: records encoded, chained
    commit: list[float] = field(default_factory=list)    # and their one transaction
    publish: list[float] = field(default_factory=list)   # journal written → the card's event out
    decided: int = 0                                     # cards whose event was published
    # a bare SQLite FULL commit of a card's rows where the journal writes, every other card
    bare: list[float] = field(default_factory=list)
    bare_idle: list[float] = field(default_factory=list)  # the same, halfway between reads
    # with --floor: the least Python a chained record takes, where the journal writes
    record: list[float] = field(default_factory=list)
    measured: int = 0                                    # cards the table's figures are of


def _writer(rig: Rig, pace_s: float, sent: list[float | None], ready: threading.Event,
            between: Callable[[], None] | None = None) -> threading.Thread:
    """The shoe: writes the reads `pace_s` apart; `between`, when given, runs halfway between
    two reads (the bare SQLite commit, interleaved with the table's writes)."""
    def write() -> None:
        ready.wait()
        for i in range(rig.n):
            rig.send(i)
            sent[i] = time.monotonic()
            if between is not None and pace_s:
                time.sleep(pace_s / 2)
                between()
                time.sleep(max(0.0, sent[i] + pace_s - time.monotonic()))
            elif pace_s:
                time.sleep(pace_s)
    thread = threading.Thread(target=write, daemon=True, name="shoe-writer")
    thread.start()
    return thread


def run(rig: Rig, reader: str, pace_s: float, journal_dir: str | None = None,
        **table_kw: Any) -> Result:
    """One pass of `rig.n` reads through `reader` (bare, driver or table)."""
    if reader == "table":
        return run_table(rig, pace_s, journal_dir, **table_kw)
    n = rig.n
    sent: list[float | None] = [None] * n
    if reader == "driver":
        driver = open_shoe(rig.url, rig.protocol, read_timeout_s=0.05)
        port = None
    else:
        driver, port = None, open_serial(rig.url, timeout=0.05)
    ready = threading.Event()
    thread = _writer(rig, pace_s, sent, ready)
    start = time.monotonic()
    ready.set()
    arrived: list[float] = []
    if driver is not None:
        while len(arrived) < n:
            event = driver.read_event(1.0)
            if isinstance(event, CardRead):
                arrived.append(event.t)
                if event.seq:
                    driver.ack(event.seq)
        driver.close()
    else:
        ends, total = [], rig.preamble
        for frame in rig.frames:
            total += len(frame)
            ends.append(total)
        received = 0
        while len(arrived) < n:
            data = port.read(port.in_waiting or 1)
            now = time.monotonic()
            received += len(data)
            while len(arrived) < n and ends[len(arrived)] <= received:
                arrived.append(now)
        port.close()
    end = time.monotonic()
    thread.join()
    return Result(n / (end - start), [a - s for a, s in zip(arrived, sent) if s is not None])


# --------------------------------------------------------------------------- the table path

class Stamps:
    """The bench's instruments on the production path: timestamps only (time.monotonic, the
    clock the driver stamps its reads with)."""

    def __init__(self, n: int):
        self.n = n
        self.decoded: list[float] = []        # reader thread: each CardRead's t
        self.queued: list[float] = []         # reader thread: each card read put on the queue
        self.taken_at = 0.0                   # loop thread: the input being processed
        # a card: (taken, start, end, of which staging, whether a bare commit went first)
        self.writes: list[tuple[float, float, float, float, bool]] = []
        self.published: list[tuple[float, str]] = []         # a card event: (time, code)
        self.shoe_started = threading.Event()
        self.all_decided = threading.Event()


class StampingDriver:
    """The real driver, noting when each CardRead it hands the ShoeSource was decoded."""

    def __init__(self, driver: Any, stamps: Stamps):
        self._driver, self._stamps = driver, stamps

    def read_event(self, timeout: float | None = None) -> Any:
        event = self._driver.read_event(timeout)
        if isinstance(event, CardRead):
            self._stamps.decoded.append(event.t)
        return event

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)


class LastPublisher:
    """The last of the service's publishers: when each card's event was published."""

    def __init__(self, stamps: Stamps):
        self.stamps = stamps

    def publish(self, event: dict) -> None:
        kind = event["event"]
        if kind == "card":
            s = self.stamps
            s.published.append((time.monotonic(), event["code"]))
            if len(s.published) >= s.n:
                s.all_decided.set()
        elif kind == "shoe_started":
            self.stamps.shoe_started.set()


def _time_journal(journal: Any, stamps: Stamps, bare: "BareCommits | None" = None) -> None:
    """Time the journal's writes of card inputs: the input and its events staged as the loop
    applies it (encoded, chained) plus the commit before anything is announced (one
    transaction). The write is stamped from the staging's start for the two's time. With
    `bare`, a card whose turn it is has the bare commit made first, at the same moment, and
    the rows of a card written alone are the bare commit's next rows."""
    stage, write = journal.stage, journal.write
    # card inputs staged and not yet written: (seq, taken, staging start, staging time, bare
    # first); at a quick pace several share a write (the journal's writer thread makes it)
    cards: list[tuple[int, float, float, float, bool]] = []

    def staged(items: Any, *, durable: bool = False, cursors: Any = None) -> list[int]:
        items = list(items)
        is_card = bool(items) and items[0][0] == "input" and items[0][1].get("type") == "card"
        crossed = is_card and bare is not None and bare.commit()
        start = time.monotonic()
        seqs = stage(items, durable=durable, cursors=cursors)
        if is_card:
            cards.append((seqs[0], stamps.taken_at, start, time.monotonic() - start, crossed))
        return seqs

    def timed(batch: Any) -> None:
        rows = batch.rows
        last = rows[-1][0] if rows else 0
        start = time.monotonic()
        try:
            write(batch)
        finally:
            took = time.monotonic() - start
            written = []
            while cards and cards[0][0] <= last:
                written.append(cards.pop(0))
            for _, taken, began, staging, crossed in written:
                stamps.writes.append((taken, began, began + staging + took, staging, crossed))
            if bare is not None and written and not written[-1][4]:
                # the rows of the newest card written (and the events it caused)
                bare.model = [row for row in rows if row[0] >= written[-1][0]]
    journal.stage, journal.write = staged, timed


def _time_queued(shoe: Any, stamps: Stamps) -> None:
    """Note when the shoe's reader thread puts each card read on the service's queue (its
    `submit`, as the builder gave it), the end of the reader's own work."""
    submit, queued = shoe.submit, stamps.queued

    def stamped(inp: Any) -> None:
        if isinstance(inp, CardRead):
            queued.append(time.monotonic())
        submit(inp)
    shoe.submit = stamped


def shoe_options(read_timeout_s: float | None = None) -> dict:
    """The shoe driver's options as `tablectl run` passes them, from the config's defaults."""
    c = ShoeCfg()
    return dict(read_timeout_s=c.read_timeout_s if read_timeout_s is None else read_timeout_s,
                dead_after_timeouts=c.dead_after_timeouts, baudrate=c.baudrate,
                reconnect_initial_s=c.reconnect_initial_s, reconnect_max_s=c.reconnect_max_s)


class LiveTable:
    """A table as `tablectl run` puts it together (the builder: journal, table, the one loop
    on the real clock, the publishers, the ShoeSource on `url`), plus the bench's stamps. The
    loop runs on its own thread; the ShoeCycle starts a hand-loaded shoe (no cut position, no
    shuffler), as `run` does for a real shoe without a shuffler."""

    def __init__(self, journal_path: str, url: str, protocol: str, stamps: Stamps, *,
                 profile_name: str = "macau", min_pull_interval_s: float = 0.0,
                 publishers: Sequence[Any] = (), cprofile: str | None = None,
                 bare: "BareCommits | None" = None):
        self.stamps, self.cprofile, self.bare = stamps, cprofile, bare
        self.sink = open(os.devnull, "w")
        self.journal_path, self.url, self.protocol = journal_path, url, protocol
        self.profile, self.min_pull_interval_s = load_profile(profile_name), min_pull_interval_s
        self.publishers = tuple(publishers)
        self.asm: Any = None
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.resumed: str | None = None

    @property
    def service(self) -> Any:
        return self.asm.service

    def _taken(self) -> None:
        self.stamps.taken_at = time.monotonic()

    def start(self, control: tuple[str, str] | None = None) -> "LiveTable":
        """Devices, wiring and a restart's resume as `tablectl run` does them; with `control`
        (socket path, users database), the control socket too."""
        stamps = self.stamps
        spec = TableSpec(
            self.profile, journal_path=self.journal_path,
            devices=DeviceSettings(shoe_url=self.url, protocol=self.protocol,
                                   shoe_options=shoe_options(),
                                   min_pull_interval_s=self.min_pull_interval_s,
                                   shoe_driver=lambda driver: StampingDriver(driver, stamps)),
            outlets=(JsonFeed(self.sink), *self.publishers),
            # told each event after every outward outlet (the feed, the console's memory)
            listeners=(LastPublisher(stamps),),
            hooks=(Hook("before_input", self._taken),),
            plan=lambda number: ShoePlan(None, shuffler=False), shoes=0, software=_software(),
            name="T1", clock=RealClock(), betting_seconds=0.0,
            control=ControlSpec(control[0], control[1], group=None,
                                reply_timeout_s=ConsoleCfg().reply_timeout_s)
            if control is not None else None)
        try:
            self.asm = build(spec)
        except BaseException:
            self.sink.close()
            raise
        _time_journal(self.asm.journal, stamps, self.bare)   # before the loop's first input
        _time_queued(self.asm.shoe, stamps)
        self.resumed = self.asm.started.said
        self.thread = threading.Thread(target=self._run, name="table-loop", daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            if self.cprofile:
                import cProfile
                prof = cProfile.Profile()
                try:
                    prof.runcall(self.asm.run)
                finally:
                    prof.dump_stats(self.cprofile)
            else:
                self.asm.run()
        except BaseException as err:       # reported by stop()
            self.error = err

    def wait_for_shoe(self, timeout: float = NO_PROGRESS_S) -> None:
        if not self.stamps.shoe_started.wait(timeout):
            raise RuntimeError(f"table: no shoe started within {timeout:g} s "
                               f"(table {self.service.table.state}: {self.service.table.prompt()})")

    def wait_decided(self, n: int) -> None:
        """Until `n` cards are decided; a RuntimeError after NO_PROGRESS_S without progress."""
        s = self.stamps
        seen, since = len(s.published), time.monotonic()
        while len(s.published) < n:
            s.all_decided.wait(0.05)
            if self.error is not None:
                raise RuntimeError(f"table: the loop stopped: {self.error!r}")
            if len(s.published) != seen:
                seen, since = len(s.published), time.monotonic()
            elif time.monotonic() - since > NO_PROGRESS_S:
                t = self.service.table
                raise RuntimeError(f"table: {seen} of {n} cards decided, then nothing for "
                                   f"{NO_PROGRESS_S:g} s (table {t.state}: {t.prompt()})")

    def stop(self) -> None:
        try:
            self.service.stop("bench done")
            if self.thread is not None:
                self.thread.join(timeout=10)
        finally:
            self.sink.close()
        if self.error is not None:
            raise RuntimeError(f"table: the loop stopped: {self.error!r}") from self.error


_SOFTWARE: list[str] = []


def _software() -> str:
    if not _SOFTWARE:
        from controller.release.software import release_digest
        _SOFTWARE.append(release_digest())
    return _SOFTWARE[0]


def run_table(rig: Rig, pace_s: float, journal_dir: str | None, profile_name: str = "macau",
              bare: bool = False, cprofile: str | None = None, floor: bool = False) -> Result:
    """The reads through the production path (see the module's doc); with `bare` and paced
    reads, the bare SQLite commits in the same directory: where the journal writes, every
    other card, and halfway between two reads."""
    profile = load_profile(profile_name)
    if rig.n > profile.cards:
        raise ValueError(f"the table takes at most one shoe ({profile.cards} cards), "
                         f"not {rig.n}")
    with tempfile.TemporaryDirectory(prefix="latency-", dir=journal_dir) as where:
        stamps = Stamps(rig.n)
        commits = BareCommits(where, floor) if bare and pace_s else None
        idle = BareCommits(where) if commits is not None else None
        table = LiveTable(os.path.join(where, "journal.db"), rig.url, rig.protocol, stamps,
                          profile_name=profile_name, cprofile=cprofile, bare=commits).start()
        sent: list[float | None] = [None] * rig.n
        last: list = [None]                 # the rows of the card written alone last

        def between() -> None:
            """Halfway between two reads, on the shoe's thread: the rows of the card written
            alone last are committed here (bare·idle) and made ready for the next card's."""
            if commits is not None and idle is not None:
                last[0] = commits.model or last[0]
                idle.model = last[0]
                idle.prepare()
                idle.commit()
                commits.prepare()
        try:
            table.wait_for_shoe()
            ready = threading.Event()
            writer = _writer(rig, pace_s, sent, ready, between if commits is not None else None)
            start = time.monotonic()
            ready.set()
            table.wait_decided(rig.n)
            end = time.monotonic()
            writer.join(timeout=5)
        finally:
            table.stop()
            for c in (commits, idle):
                if c is not None:
                    c.close()
        res = table_result(stamps, rig.cards, sent, rig.n / (end - start))
        if commits is not None and idle is not None:
            res.bare, res.bare_idle, res.record = commits.times, idle.times, commits.floor_times
        return res


def table_result(stamps: Stamps, cards: Sequence[str], sent: Sequence[float | None],
                 rate: float) -> Result:
    """Each card's figures from the stamps; a RuntimeError when a card was not decided as sent."""
    codes = [code for _, code in stamps.published]
    if codes != list(cards):
        first = next((i for i, (a, b) in enumerate(zip(codes, cards)) if a != b),
                     min(len(codes), len(cards)))
        got = codes[first] if first < len(codes) else "nothing"
        want = cards[first] if first < len(cards) else "nothing"
        raise RuntimeError(f"table: card {first} decided as {got}, sent {want}")
    n = len(cards)
    if len(stamps.decoded) < n or len(stamps.writes) < n:
        raise RuntimeError(f"table: {len(stamps.decoded)} reads decoded and {len(stamps.writes)} "
                           f"card inputs journaled for {n} cards")
    # the cards written alone: a bare commit before the journal's write is in the others'
    alone = [i for i, w in enumerate(stamps.writes[:n]) if not w[4]]
    published = [stamps.published[i][0] for i in alone]
    decoded = [stamps.decoded[i] for i in alone]
    writes = [stamps.writes[i] for i in alone]
    queued = [stamps.queued[i] for i in alone]
    return Result(
        rate, [p - s for p, s in zip(published, (sent[i] for i in alone)) if s is not None],
        added=[p - d for p, d in zip(published, decoded)],
        queue=[w[0] - d for w, d in zip(writes, decoded)],
        reader=[q - d for q, d in zip(queued, decoded)],
        handoff=[w[0] - q for w, q in zip(writes, queued)],
        apply=[w[1] - w[0] for w in writes],
        journal=[w[2] - w[1] for w in writes],
        stage=[w[3] for w in writes], commit=[w[2] - w[1] - w[3] for w in writes],
        publish=[p - w[2] for p, w in zip(published, writes)],
        decided=len(stamps.published), measured=len(alone))


class BareCommits:
    """The floor under the journal's write: the rows the journal wrote for a card (`model`)
    committed again, renumbered, on a fresh SQLite file in `directory` with the journal's
    records table (no index): WAL, synchronous=FULL, one autocommit INSERT statement as the
    journal's live write; each commit timed, nothing but the statement inside the timing.

    With `floor`, every other turn makes instead the least a chained record takes in Python,
    timed the same way: the first row's data encoded by the C JSON encoder (from the object it
    was read back into) and one SHA-256 over its bytes after a 32-byte hash and the head.

    `prepare` (off the timed path: the shoe's thread, between two reads) makes the statement
    and its parameters from `model`; `commit` makes that commit (or the floor's work), once,
    and says whether it did."""

    def __init__(self, directory: str, floor: bool = False):
        self.conn = sqlite3.connect(os.path.join(directory, f"bare-{uuid.uuid4().hex[:8]}.db"),
                                    isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute("CREATE TABLE records (seq INTEGER PRIMARY KEY, utc INTEGER NOT NULL,"
                          " mono INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,"
                          " hash BLOB NOT NULL)")
        self.model: list[tuple] | None = None    # the rows to write next (set by the loop)
        self.ready: tuple[str, tuple] | None = None
        self.work: tuple[dict, bytes] | None = None     # the floor's: the data, the head
        self.floor = floor
        self.turn = False                        # the floor's turn next (with `floor`)
        self.seq = 0
        self.times: list[float] = []
        self.floor_times: list[float] = []

    def prepare(self) -> None:
        rows, self.model = self.model, None
        if not rows or self.ready is not None:
            return
        params: list = []
        for row in rows:
            self.seq += 1
            params += (self.seq, *row[1:])
        sql = ("INSERT INTO records (seq, utc, mono, kind, data, hash) VALUES "
               + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(rows)))
        _, utc, mono, kind, data, digest = rows[0]
        text = data if data[:1] == "{" else '{"event":' + json.dumps(kind) + data
        self.work = (json.loads(text), bytes(digest if isinstance(digest, bytes) else 32)
                     + struct.pack(">qqqH", self.seq, utc if isinstance(utc, int) else 0,
                                   mono if isinstance(mono, int) else 0, len(kind))
                     + kind.encode())
        self.ready = (sql, tuple(params))

    def commit(self) -> bool:
        ready, work = self.ready, self.work
        if ready is None or work is None:
            return False
        if self.turn:
            start = time.monotonic()
            _sha256(work[1] + _encode(work[0]).encode("ascii")).digest()
            self.floor_times.append(time.monotonic() - start)
        else:
            start = time.monotonic()
            self.conn.execute(*ready)
            self.times.append(time.monotonic() - start)
        self.turn = self.floor and not self.turn
        self.ready = None
        return True

    def close(self) -> None:
        self.conn.close()


# --------------------------------------------------------------------------- figures

def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _Figure:
    """A figure for a format spec, "-" (as wide) when the run could not measure it."""

    def __init__(self, value: Any):
        self.value = value

    def __format__(self, spec: str) -> str:
        if self.value is None:
            width = "".join(c for c in spec.split(".")[0] if c.isdigit())
            return "-".rjust(int(width) if width else 1)
        return format(self.value, spec)


def spread_us(values: Sequence[float]) -> str:
    """p50, p99 and max in microseconds, as three columns."""
    if not values:
        return f"{'-':>8} {'-':>8} {'-':>8}"
    us = [x * 1e6 for x in values]
    return f"{statistics.median(us):8.0f} {percentile(us, 0.99):8.0f} {max(us):8.0f}"


def ms(values: Sequence[float], q: float | None) -> float | None:
    """A percentile (q) or the median (q None) in milliseconds, rounded; None without values."""
    if not values:
        return None
    value = statistics.median(values) if q is None else percentile(values, q)
    return round(value * 1000, 4)


def summary(where: str, res: Result, table_rate: float, pace_ms: float) -> dict:
    """One table path's figures for the JSON line."""
    out: dict[str, Any] = {"path": where, "cards": res.decided, "pace_ms": round(pace_ms, 3),
                           "cards_per_s": round(table_rate, 1), "cards_measured": res.measured,
                           "bare_commits": len(res.bare)}
    for name, values in (("added", res.added), ("queue", res.queue), ("reader", res.reader),
                         ("handoff", res.handoff), ("apply", res.apply),
                         ("journal", res.journal), ("journal_stage", res.stage),
                         ("journal_commit", res.commit), ("publish", res.publish),
                         ("bare_sqlite", res.bare), ("bare_idle_sqlite", res.bare_idle),
                         ("record_floor", res.record), ("total", res.latencies)):
        out[f"{name}_p50_ms"] = ms(values, None)
        out[f"{name}_p99_ms"] = ms(values, 0.99)
        out[f"{name}_max_ms"] = ms(values, 1.0)
    j, b = out["journal_p99_ms"], out["bare_sqlite_p99_ms"]
    out["journal_vs_bare_p99"] = round(j / b, 3) if j is not None and b else None
    j50, b50 = out["journal_p50_ms"], out["bare_sqlite_p50_ms"]
    out["journal_vs_bare_p50"] = round(j50 / b50, 3) if j50 is not None and b50 else None
    out["added_target_met"] = out["added_p99_ms"] is not None and \
        out["added_p99_ms"] <= ADDED_TARGET_MS
    out["journal_target_met"] = out["journal_vs_bare_p99"] is not None and \
        out["journal_vs_bare_p99"] <= JOURNAL_VS_BARE and \
        out["journal_vs_bare_p50"] is not None and out["journal_vs_bare_p50"] <= JOURNAL_VS_BARE
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=400,
                    help="reads per run (the table takes at most one shoe: 416 for macau)")
    ap.add_argument("--pace-ms", type=float, default=1.0,
                    help="gap between reads in the bare and driver latency runs (throughput "
                    "runs use none)")
    ap.add_argument("--table-pace-ms", type=float, default=None,
                    help="gap between reads in the table's latency runs (default: the card's "
                    "wire time at --baud)")
    ap.add_argument("--baud", type=int, default=9600, help="line speed for the wire time")
    ap.add_argument("--protocol", choices=sorted(PROTOCOLS), action="append")
    ap.add_argument("--transport", choices=("shoesim", "pty"), action="append")
    ap.add_argument("--journal-dir", help="where the table's journal and the bare SQLite file "
                    "go (default: the system temp directory; put it on the disk the real "
                    "journal uses)")
    ap.add_argument("--floor", action="store_true",
                    help="a third kind of card: where the journal writes, the least a chained "
                    "record takes in Python (one JSON encode, one SHA-256) is timed instead of "
                    "the bare commit (the cards then split three ways)")
    ap.add_argument("--json", action="store_true",
                    help="tables to stderr, one JSON line to stdout")
    ap.add_argument("--cprofile", metavar="FILE",
                    help="cProfile the table loop's thread of the pty Bee-Tek latency run (or "
                    "the first table run) into FILE (pstats); its figures then carry the "
                    "profiler's overhead")
    args = ap.parse_args(argv)
    if args.cards < 1:
        print("latency: --cards must be >= 1", file=sys.stderr)
        return 2
    if args.baud < 1 or (args.table_pace_ms is not None and args.table_pace_ms < 0) \
            or args.pace_ms < 0:
        print("latency: --baud must be >= 1 and the paces >= 0", file=sys.stderr)
        return 2
    if args.journal_dir and not os.path.isdir(args.journal_dir):
        print(f"latency: --journal-dir {args.journal_dir}: no such directory", file=sys.stderr)
        return 2
    out = sys.stderr if args.json else sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    profile = load_profile("macau")
    protocols = args.protocol or sorted(PROTOCOLS)
    transports = args.transport or ["shoesim", "pty"]
    table_cards = min(args.cards, profile.cards)
    primary = PRIMARY if PRIMARY[0] in transports and PRIMARY[1] in protocols \
        else (transports[0], protocols[0])
    say(f"{args.cards} reads a run ({table_cards} for the table: one {profile.decks}-deck "
        f"shoe); journal and bare SQLite in {args.journal_dir or tempfile.gettempdir()}")
    say("latency: last byte written → the reader's result (bare: read() returns, driver: "
        "CardRead, table: the card's event published by the service)")
    say(f"{'transport':9} {'protocol':8} {'reader':7} {'pace ms':>7} {'cards/s':>9} "
        f"{'p50 µs':>8} {'p99 µs':>8} {'max µs':>8}")
    shares: list[tuple[str, Result]] = []
    runs: list[dict] = []
    for transport in transports:
        for protocol in protocols:
            for reader in ("bare", "driver", "table"):
                cards = shoe_order(profile.decks, table_cards if reader == "table" else args.cards)
                if reader == "table":
                    pace_ms = wire_ms(protocol, args.baud) if args.table_pace_ms is None \
                        else args.table_pace_ms
                else:
                    pace_ms = args.pace_ms
                rig = Rig(transport, protocol, cards)
                try:
                    rate = run(rig, reader, 0.0, args.journal_dir).rate
                finally:
                    rig.close()
                kw: dict[str, Any] = {}
                if reader == "table":
                    kw["bare"], kw["floor"] = True, args.floor
                    if args.cprofile and (transport, protocol) == primary:
                        kw["cprofile"] = args.cprofile
                rig = Rig(transport, protocol, cards)
                try:
                    res = run(rig, reader, pace_ms / 1000, args.journal_dir, **kw)
                finally:
                    rig.close()
                say(f"{transport:9} {protocol:8} {reader:7} {pace_ms:7.2f} {rate:9.0f} "
                    f"{spread_us(res.latencies)}")
                if reader == "table":
                    where = f"{transport}/{protocol}"
                    shares.append((f"{transport:9} {protocol:8}", res))
                    runs.append(summary(where, res, rate, pace_ms))
    say("\nthe controller's added latency: decoded CardRead → the card's event published, and "
        "its parts:\nqueue (to the loop: the reader's own work, then the hand-off from its put "
        "to the loop),\napply (the table), journal (stage: the card's records encoded and "
        "chained,\n+ commit: their one transaction, fsynced), publish (the publishers before the "
        "card's event\nreaches the last), over the cards written alone; bare: a bare SQLite WAL "
        "synchronous=FULL commit\nof the same rows, same directory, on the loop's thread where "
        "the journal writes, on the other\ncards; bare·idle: the same commit on the shoe's "
        "thread halfway between two reads" + ("; floor\n(--floor): one JSON encode and one "
        "SHA-256 of a card's record there instead of the bare commit" if args.floor else ""))
    say(f"{'transport':9} {'protocol':8} {'part':9} {'p50 µs':>8} {'p99 µs':>8} {'max µs':>8}")
    for where, res in shares:
        for part, values in (("added", res.added), ("queue", res.queue),
                             ("·reader", res.reader), ("·handoff", res.handoff),
                             ("apply", res.apply), ("journal", res.journal),
                             ("·stage", res.stage), ("·commit", res.commit),
                             ("publish", res.publish),
                             ("bare", res.bare), ("bare·idle", res.bare_idle),
                             *((("floor", res.record),) if res.record else ())):
            say(f"{where} {part:9} {spread_us(values)}")
        say(f"{where} ({res.measured} cards written alone, {len(res.bare)} with the bare "
            f"commit first" + (f", {len(res.record)} with the floor's work first"
                               if res.record else "") + ")")
    wire = ", ".join(f"{p} {wire_ms(p, args.baud):.2f} ms" for p in protocols)
    say(f"\ntargets: added p99 <= {ADDED_TARGET_MS:g} ms, journal write included; journal "
        f"write <= {JOURNAL_VS_BARE:g} x the bare commit's, p50 and p99\n(one card on the wire at "
        f"{args.baud} baud: {wire})")
    for r in runs:
        added_ok = "met" if r["added_target_met"] else "NOT MET"
        journal_ok = "met" if r["journal_target_met"] else "NOT MET"
        # a figure the run could not measure (no card written alone, say) shows as "-"
        f = {k: _Figure(v) for k, v in r.items()}
        say(f"  {r['path']:15} added p99 {f['added_p99_ms']:7.3f} ms: {added_ok:7}  journal p99 "
            f"{f['journal_p99_ms']:7.3f} ms = {f['journal_vs_bare_p99']:5.2f} x bare "
            f"{f['bare_sqlite_p99_ms']:.3f} ms: {journal_ok} (p50: {f['journal_p50_ms']:.3f} ms "
            f"= {f['journal_vs_bare_p50']:.2f} x {f['bare_sqlite_p50_ms']:.3f} ms)")
        parts = sorted(((r[f"{part}_p50_ms"] or 0.0, part) for part in
                        ("queue", "apply", "journal", "publish")), reverse=True)
        say(f"  {'':15} the added p50 {f['added_p50_ms']:.3f} ms: " + ", ".join(
            f"{part} {value:.3f}" for value, part in parts) + f" ms; a bare commit alone "
            f"{f['bare_sqlite_p50_ms']:.3f} ms")
        if r["record_floor_p50_ms"] is not None and r["bare_sqlite_p50_ms"]:
            floor = (r["bare_sqlite_p50_ms"] + r["record_floor_p50_ms"]) / r["bare_sqlite_p50_ms"]
            say(f"  {'':15} the least a chained record takes in Python there: "
                f"{r['record_floor_p50_ms']:.3f} ms at p50, so a journal write is at best "
                f"{floor:.2f} x the bare commit at p50 on this machine")
        if not r["added_target_met"] and r["bare_sqlite_p99_ms"] is not None \
                and r["bare_sqlite_p99_ms"] > ADDED_TARGET_MS:
            say(f"  {'':15} (a bare fsynced commit alone takes {r['bare_sqlite_p99_ms']:.3f} ms "
                f"at p99 on this disk: the added target cannot be met here with a durable "
                f"write per card)")
    if args.json:
        head = next(r for r in runs if r["path"] == "/".join(primary)) if runs else {}
        line = {k: head.get(k) for k in (
            "path", "added_p50_ms", "added_p99_ms", "added_max_ms", "journal_p50_ms",
            "journal_p99_ms", "bare_sqlite_p50_ms", "bare_sqlite_p99_ms",
            "journal_vs_bare_p50", "journal_vs_bare_p99", "bare_idle_sqlite_p50_ms",
            "bare_idle_sqlite_p99_ms", "cards_measured", "bare_commits", "cards_per_s",
            "added_target_met", "journal_target_met")}
        line["targets"] = {"added_p99_ms": ADDED_TARGET_MS,
                           "journal_vs_bare_p50": JOURNAL_VS_BARE,
                           "journal_vs_bare_p99": JOURNAL_VS_BARE}
        line["runs"] = runs
        print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    configure("WARNING")        # the driver's info lines (shoe session …) would break the table
    sys.exit(main())
