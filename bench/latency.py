"""Shoe read latency and throughput: bare pyserial, the real driver, and the whole controller.

Three readers over the same transport, side by side:
- bare: a pyserial read loop; latency to the read() that brought a read's last byte in.
- driver: the real shoe driver; latency to the decoded CardRead (its `t`).
- table: the application path of `tablectl run` — the driver on a reader thread, the input
  queue, `controller.app.Controller` (table machine, durable journal write on a temp file,
  publishers) — latency to the table's decision event for the card (the "card" event with its
  slot, published only after the journal write). A second table splits out the controller's
  own share ("added": from the decoded CardRead to that event, journal write included), the
  queue hand-off and the journal write in it, and says whether the added p99 stays under
  2 ms. The table deals one shoe of the profile's decks, so it takes at most that many cards.

Latency starts when the last byte of a read is written (the shoe model's pull() returns, or
os.write() into a pty master returns). Two transports: the in-process shoesim:// handler and a
pty (writer thread on the master, the port opened on the slave path like a real /dev/tty*); a
pty carries bytes at once, so the wire time of a real line (a Bee-Tek card token is 18 bytes:
18.75 ms at 9600 baud, 8N1) comes on top of every figure here. Throughput: cards per second
with the shoe writing as fast as it can. The table's latency runs are paced at the card's wire
time (a real shoe cannot send faster), the others at --pace-ms.

    python bench/latency.py [--cards 400] [--pace-ms 1] [--protocol beetek] [--journal-dir D]
"""
from __future__ import annotations

import argparse
import os
import queue
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from controller.app import Controller
from controller.cards import ordered_shoe
from controller.feed import JsonFeed
from controller.inputs import DrawTimer, command, from_device
from controller.journal import Journal
from controller.logsetup import configure
from controller.profile import load_profile
from controller.state_view import StateView
from drivers.events import CardRead
from drivers.shoe import PROTOCOLS, open_shoe
from drivers.transport import open_serial
from simulators import registry
from simulators.install import install
from simulators.shoe import ENCODERS, ShoeModel

BUDGET_MS = 2.0             # the controller's added p99, journal write included
SEED = 1                    # the shoe order: any valid shoe will do, the same one every run
NO_PROGRESS_S = 10.0        # a reader that delivers nothing for this long has failed


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
    ctl: list[float] = field(default_factory=list)       # table: decoded read → decision event
    queue: list[float] = field(default_factory=list)     # table: of which the queue hand-off
    journal: list[float] = field(default_factory=list)   # table: of which the journal write


def _writer(rig: Rig, pace_s: float, sent: list[float | None],
            ready: threading.Event) -> threading.Thread:
    def write() -> None:
        ready.wait()
        for i in range(rig.n):
            rig.send(i)
            sent[i] = time.monotonic()
            if pace_s:
                time.sleep(pace_s)
    thread = threading.Thread(target=write, daemon=True, name="shoe-writer")
    thread.start()
    return thread


def run(rig: Rig, reader: str, pace_s: float, journal_dir: str | None = None) -> Result:
    """One pass of `rig.n` reads through `reader` (bare, driver or table)."""
    if reader == "table":
        return run_table(rig, pace_s, journal_dir)
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


class TimedJournal(Journal):
    """The real journal, timing each write (one per input: the input and its events)."""

    def __init__(self, path: str):
        super().__init__(path)
        self.writes: list[float] = []

    def append_many(self, items: Any, *, durable: bool = False) -> list[int]:
        t0 = time.perf_counter()
        try:
            return super().append_many(items, durable=durable)
        finally:
            self.writes.append(time.perf_counter() - t0)


class DecisionRecorder:
    """The last publisher: when each card's decision event reached the publishers."""

    def __init__(self) -> None:
        self.decided: list[tuple[float, float, str]] = []    # (published, decoded, code)
        self.decoded_at = 0.0                                # the read being applied
        self.handoffs: list[float] = []                      # decoded → taken off the queue

    def publish(self, event: dict) -> None:
        if event["event"] == "card":
            self.decided.append((time.monotonic(), self.decoded_at, event["code"]))


def run_table(rig: Rig, pace_s: float, journal_dir: str | None,
              profile_name: str = "macau") -> Result:
    """The reads through the application as `tablectl run` wires it (controller/runtime.py):
    the shoe driver on a reader thread puts inputs on a queue; this thread, the only one that
    touches the table, submits them to the Controller, which applies, journals (durably),
    publishes, then acknowledges the read to the shoe."""
    profile = load_profile(profile_name)
    if rig.n > profile.cards:
        raise ValueError(f"the table takes at most one shoe ({profile.cards} cards), "
                         f"not {rig.n}")
    with tempfile.TemporaryDirectory(prefix="latency-", dir=journal_dir) as where:
        journal = TimedJournal(os.path.join(where, "journal.db"))
        sink = open(os.devnull, "w")
        try:
            ctl, _ = Controller.open(profile, journal)
            recorder = DecisionRecorder()
            # the runtime's publishers (the state the console reads, the --json feed), then ours
            ctl.publishers.extend([StateView(), JsonFeed(sink), recorder])
            ctl.submit(command("new_shoe", cut_position=None, demo_rounds=0))
            journal.writes.clear()
            return _table_pass(rig, pace_s, ctl, recorder, journal)
        finally:
            journal.close()
            sink.close()


def _table_pass(rig: Rig, pace_s: float, ctl: Controller, recorder: DecisionRecorder,
                journal: TimedJournal) -> Result:
    n = rig.n
    sent: list[float | None] = [None] * n
    driver = open_shoe(rig.url, rig.protocol, read_timeout_s=0.05)
    ctl.ack = driver.ack
    inputs: queue.Queue = queue.Queue()
    stop = threading.Event()
    # a hand pulls cards ≥ 150 ms apart; the bench sends faster, and its reads must not be
    # taken for cards drawn together (that would add an irregularity to every card)
    timer = DrawTimer(0.0)

    def read_loop() -> None:         # runtime.TableRuntime._read_loop
        while not stop.is_set():
            event = driver.read_event(timeout=0.2)
            if event is not None:
                inp = timer.annotate(from_device(event), event)
                if inp is not None:
                    inputs.put((inp, getattr(event, "t", 0.0)))

    reader = threading.Thread(target=read_loop, daemon=True, name="shoe-reader")
    reader.start()
    ready = threading.Event()
    writer = _writer(rig, pace_s, sent, ready)
    start = time.monotonic()
    ready.set()
    try:
        while len(recorder.decided) < n:
            try:
                inp, decoded = inputs.get(timeout=NO_PROGRESS_S)
            except queue.Empty:
                raise RuntimeError(f"table: {len(recorder.decided)} of {n} cards decided, then "
                                   f"nothing for {NO_PROGRESS_S:g} s (table {ctl.table.state})")
            recorder.decoded_at = decoded
            recorder.handoffs.append(time.monotonic() - decoded)
            ctl.submit(inp)
        end = time.monotonic()
    finally:
        stop.set()
        reader.join(timeout=5)
        ctl.ack = None
        driver.close()
        writer.join(timeout=5)
    codes = [code for _, _, code in recorder.decided]
    if codes != rig.cards:
        first = next(i for i, (a, b) in enumerate(zip(codes, rig.cards)) if a != b)
        raise RuntimeError(f"table: card {first} decided as {codes[first]}, sent "
                           f"{rig.cards[first]}")
    latencies = [pub - s for (pub, _, _), s in zip(recorder.decided, sent) if s is not None]
    ctl_share = [pub - dec for pub, dec, _ in recorder.decided]
    return Result(n / (end - start), latencies, ctl_share, list(recorder.handoffs),
                  list(journal.writes))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def spread_us(values: list[float]) -> str:
    """p50, p99 and max in microseconds, as three columns."""
    us = [x * 1e6 for x in values]
    return f"{statistics.median(us):8.0f} {percentile(us, 0.99):8.0f} {max(us):8.0f}"


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
    ap.add_argument("--journal-dir", help="where the table's journal goes (default: the system "
                    "temp directory; put it on the disk the real journal uses)")
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
    profile = load_profile("macau")
    protocols = args.protocol or sorted(PROTOCOLS)
    transports = args.transport or ["shoesim", "pty"]
    table_cards = min(args.cards, profile.cards)
    print(f"{args.cards} reads a run ({table_cards} for the table: one {profile.decks}-deck "
          f"shoe); journal in {args.journal_dir or tempfile.gettempdir()}")
    print("latency: last byte written → the reader's result (bare: read() returns, driver: "
          "CardRead, table: the card's decision event)")
    print(f"{'transport':9} {'protocol':8} {'reader':7} {'pace ms':>7} {'cards/s':>9} "
          f"{'p50 µs':>8} {'p99 µs':>8} {'max µs':>8}")
    shares: list[tuple[str, Result]] = []
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
                rig = Rig(transport, protocol, cards)
                try:
                    res = run(rig, reader, pace_ms / 1000, args.journal_dir)
                finally:
                    rig.close()
                print(f"{transport:9} {protocol:8} {reader:7} {pace_ms:7.2f} {rate:9.0f} "
                      f"{spread_us(res.latencies)}", flush=True)
                if res.ctl:
                    shares.append((f"{transport:9} {protocol:8}", res))
    print("\nthe controller's added latency: decoded CardRead → decision event, of which the "
          "queue hand-off\nto the table thread and the journal write (the rest: table machine "
          "and publishers)")
    print(f"{'transport':9} {'protocol':8} {'part':7} {'p50 µs':>8} {'p99 µs':>8} {'max µs':>8}")
    for where, res in shares:
        for part, values in (("added", res.ctl), ("queue", res.queue), ("journal", res.journal)):
            print(f"{where} {part:7} {spread_us(values)}")
    wire = ", ".join(f"{p} {wire_ms(p, args.baud):.2f} ms" for p in protocols)
    print(f"\nbudget: added p99 < {BUDGET_MS:g} ms, journal write included (one card on the "
          f"wire at {args.baud} baud: {wire})")
    for where, res in shares:
        p99_ms = percentile(res.ctl, 0.99) * 1000
        print(f"  {where} added p99 {p99_ms:6.3f} ms: "
              f"{'within budget' if p99_ms < BUDGET_MS else 'OVER BUDGET'}")
    return 0


if __name__ == "__main__":
    configure("WARNING")        # the driver's info lines (shoe session …) would break the table
    sys.exit(main())
