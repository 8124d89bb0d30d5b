"""The floor feed at scale, and what it costs the table, measured side by side in one run.

1. Floor: --tables simulated tables (each the production path of `tablectl simulate --feed`:
   the service's builder, the one loop on a virtual clock, the journal, the feed's thread reading it)
   in --workers processes, all at once, into one local Mosquitto started here on a free
   loopback port; one subscriber (in this process) takes every table's events topic. Figures:
   events/s through the broker (first event received to the last), and journal → subscriber
   latency p50/p99 (the event's journal time to its arrival; the tables deal flat out on
   virtual clocks, so this is the latency at saturation of the machine), and whether every
   public seq of every journal arrived (deduplicated by table and seq). The tables' journals
   skip the fsync here (the disk is not what this part measures) unless --fsync.
   Then catch-up: every table's feed cursor is put back to the start and the same tables are
   started again with nothing left to deal: each feed sends its whole journal at once, as after
   an outage of the broker; events/s of that store-and-forward, the tables idle.
   First of all, paced: the same tables for --paced-seconds of real time with their clocks
   kept to --speed times real time (the virtual dealer draws a card a second: at speed 1 each
   table deals about as fast as a real one), stopped cleanly (the feeds drain): events/s and
   journal → subscriber latency at a real floor's load (the first 10 s, all the tables
   starting at once, left out of the latency).
2. Table: bench/latency.py's production path of `tablectl run` (a Bee-Tek shoe on a pty at the
   card's wire pace, the one loop on the real clock, the journal fsynced per card) with the
   feed off and on (the same broker), alternately, --pairs times; the controller's added
   latency per card (decoded CardRead → the card's event published) p50/p99 for each, and
   the same without the journal's write (whose fsync varies with the disk, not the feed);
   with the feed on, journal → subscriber latency of a table dealing at a real pace.

    python bench/feed.py [--tables 200] [--workers 4] [--shoes 1] [--cards 200] [--pairs 4]
                         [--speed 1] [--paced-seconds 60] [--no-flat-out] [--fsync]
                         [--json]

Needs Debian's mosquitto. With --json the tables go to stderr and stdout gets one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from controller.feed.outbox import CURSOR  # noqa: E402
from controller.journal import Journal  # noqa: E402
from controller.service.recovery import NOTE_KINDS  # noqa: E402

PRIVATE_KINDS = NOTE_KINDS | {"input"}      # as the feed is given them: not public events


def _utc(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --------------------------------------------------------------------------- 1. the floor
def worker(url: str, where: str, first: int, count: int, shoes: int, speed: float = 0.0,
           seconds: float = 0.0, prefix: str = "T", pits: int = 0) -> int:
    """`count` tables ({prefix}{first}…) dealing at once, each as `tablectl simulate --feed`
    does; with `speed`, for `seconds` of real time at `speed` times the virtual dealer's pace;
    with `pits`, the tables spread over that many pits (a table's number modulo `pits`)."""
    from controller.commands import _simulation
    from controller.commands._simulation import run_simulation
    from controller.settings.config import FeedCfg
    from controller.errors import InputError
    from controller.feed.broker import broker_from
    from controller.logsetup import configure
    from controller.settings.profile import load_profile
    configure("ERROR")
    if speed:
        _pace(_simulation, speed, seconds)
    profile = load_profile("macau")
    broker = broker_from(FeedCfg(), url=url)
    errors: list[str] = []
    go = threading.Barrier(count)

    def table(k: int) -> None:
        name = f"{prefix}{k:03d}"
        feed: dict[str, Any] = {"broker": broker, "drain_timeout_s": 900.0, "retry_max_s": 1.0}
        if pits:
            feed["pit"] = str(k % pits)
        try:
            go.wait()
            run_simulation(profile, seed=k, shoes=shoes, journal_path=f"{where}/{name}.db",
                           name=name, feed=feed)
        except InputError as err:
            if not (speed and "stopped at" in str(err)):    # a paced table stopped mid-shoe
                errors.append(f"{name}: {err!r}")
        except Exception as err:       # reported, and the worker fails
            errors.append(f"{name}: {err!r}")
    threads = [threading.Thread(target=table, args=(k,)) for k in range(first, first + count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


def _pace(simulation: Any, speed: float, seconds: float) -> None:
    """The worker's simulated tables on clocks that keep to `speed` x real time, stopped
    cleanly (the feed drains) after `seconds`: the bench's own variants of the virtual clock
    and the assembly, put where `run_simulation` takes them from."""
    base_clock, base_build = simulation.VirtualClock, simulation.build

    class PacedClock(base_clock):           # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.origin = time.monotonic()

        def advance_to(self, t: float) -> None:
            wait = self.origin + t / speed - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            super().advance_to(t)

    def bounded(spec: Any) -> Any:
        runtime = base_build(spec)
        svc = runtime.service
        svc.call_later(seconds * speed, lambda: svc.stop("bench time is up"))
        return runtime

    simulation.VirtualClock, simulation.build = PacedClock, bounded


class Collector:
    """Every event message: (table, seq) first arrivals and their journal → arrival times."""

    def __init__(self, port: int):
        import paho.mqtt.client as mqtt
        self.seen: set[tuple[str, int]] = set()
        self.latency: list[float] = []
        self.journaled: list[float] = []       # each event's journal time (time.time())
        self.first = self.last = 0.0
        self.duplicates = 0
        self.lock = threading.Lock()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_message = self._message
        ready = threading.Event()
        self.client.on_subscribe = lambda *a: ready.set()
        self.client.on_connect = lambda c, *a: c.subscribe("tables/+/events", qos=1)
        self.client.max_queued_messages_set(0)
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        if not ready.wait(10):
            raise RuntimeError("the bench's subscriber could not subscribe")

    def _message(self, client: Any, userdata: Any, msg: Any) -> None:
        now = time.time()
        e = json.loads(msg.payload)
        key = (e["table"], e["seq"])
        with self.lock:
            if key in self.seen:
                self.duplicates += 1
                return
            self.seen.add(key)
            self.first = self.first or now
            self.last = now
            journaled = _utc(e["utc"])
            self.latency.append(now - journaled)
            self.journaled.append(journaled)

    def wait_for(self, n: int, timeout: float) -> None:
        end = time.monotonic() + timeout
        while len(self.seen) < n and time.monotonic() < end:
            time.sleep(0.1)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def _tables(broker: Any, tables: int, workers: int, shoes: int, where: str,
            fsync: bool, pace: tuple[float, float] = (0.0, 0.0)) -> tuple[Collector, float, bool]:
    """The tables in their worker processes, one subscriber taking what they publish."""
    collector = Collector(broker.port)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if not fsync:
        env["TABLECTL_STORAGE_FSYNC"] = "false"
    per = [tables // workers + (1 if i < tables % workers else 0) for i in range(workers)]
    procs, first = [], 1
    started = time.monotonic()
    for count in per:
        if count:
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--worker", broker.url, where, str(first), str(count),
                 str(shoes), *map(str, pace)], env=env))
            first += count
    failed = [p for p in procs if p.wait() != 0]
    return collector, time.monotonic() - started, bool(failed)


def _figures(collector: Collector, expected: set, seconds: float, failed: bool,
             where: str, tables: int, warm_up_s: float = 0.0) -> dict:
    collector.wait_for(len(expected), 30)
    collector.close()
    missing = len(expected - collector.seen)
    owed = 0                  # what the journals still owe the broker (nothing is dropped)
    for k in range(1, tables + 1):
        with Journal.open_readonly(f"{where}/T{k:03d}.db") as j:
            owed += j.count(j.cursor(CURSOR) or 0, PRIVATE_KINDS)
    lat = collector.latency
    if warm_up_s and collector.journaled:
        # 200 tables starting at once (journals opened, feeds connecting) is not the steady pace
        start = min(collector.journaled) + warm_up_s
        lat = [x for x, t in zip(collector.latency, collector.journaled) if t >= start]
    span = collector.last - collector.first
    return {"events": len(collector.seen), "duplicates": collector.duplicates,
            "missing": missing, "owed_in_journals": owed, "complete": not missing and not failed,
            "seconds": round(seconds, 2),
            "events_per_s": round(len(collector.seen) / span, 0) if span > 0 else None,
            "journal_to_subscriber_p50_ms": round(statistics.median(lat) * 1000, 2) if lat
            else None,
            "journal_to_subscriber_p99_ms": round((pct(lat, 0.99) or 0) * 1000, 2) if lat
            else None}


def _expected(where: str, tables: int) -> set[tuple[str, int]]:
    expected: set[tuple[str, int]] = set()
    for k in range(1, tables + 1):
        with Journal(f"{where}/T{k:03d}.db") as j:
            expected |= {(f"T{k:03d}", r.seq) for r in j.records() if r.kind not in PRIVATE_KINDS}
    return expected


def floor_run(broker: Any, tables: int, workers: int, shoes: int, where: str,
              fsync: bool, speed: float, paced_s: float, flat_out: bool = True) -> dict:
    paced = None
    if speed and paced_s:
        os.makedirs(f"{where}/paced")
        collector, seconds, failed = _tables(broker, tables, workers, shoes, f"{where}/paced",
                                             fsync, (speed, paced_s))
        paced = _figures(collector, _expected(f"{where}/paced", tables), seconds, failed,
                         f"{where}/paced", tables, warm_up_s=min(10.0, paced_s / 3))
    if not flat_out:
        return {"tables": tables, "workers": workers, "fsync": fsync, "speed": speed,
                "paced_seconds": paced_s, "paced": paced, "live": None, "catch_up": None,
                "complete": paced is None or paced["complete"]}
    collector, seconds, failed = _tables(broker, tables, workers, shoes, where, fsync)
    live = _figures(collector, _expected(where, tables), seconds, failed, where, tables)
    expected = _expected(where, tables)
    for k in range(1, tables + 1):                 # as if the broker had been away all along
        with Journal(f"{where}/T{k:03d}.db") as j:
            j.set_cursors({CURSOR: 0})
    collector, seconds, failed = _tables(broker, tables, workers, shoes, where, fsync)
    catch_up = _figures(collector, expected, seconds, failed, where, tables)
    # journal times are the first run's: their distance to now is the outage, not the feed
    catch_up["journal_to_subscriber_p50_ms"] = catch_up["journal_to_subscriber_p99_ms"] = None
    return {"tables": tables, "workers": workers, "shoes_per_table": shoes, "fsync": fsync,
            "speed": speed, "paced_seconds": paced_s, "paced": paced, "live": live,
            "catch_up": catch_up, "complete": live["complete"] and catch_up["complete"]
            and (paced is None or paced["complete"])}


# --------------------------------------------------------------------------- 2. the table
def table_runs(broker: Any, cards: int, pairs: int) -> dict:
    import latency
    from controller.settings.config import FeedCfg
    from controller.feed.broker import broker_from
    from controller.settings.profile import load_profile

    feed_broker = broker_from(FeedCfg(), url=broker.url)
    plain = latency.LiveTable
    feed_on = [False]

    class Table(plain):          # type: ignore[misc,valid-type]
        """bench/latency.py's table, with the floor feed started as `run --feed` does."""

        def __init__(self, *args: Any, **kw: Any) -> None:
            super().__init__(*args, **kw)
            if feed_on[0]:
                self.asm.start_feed(feed_broker, drain_timeout_s=10.0)

    profile = load_profile("macau")
    order = latency.shoe_order(profile.decks, min(cards, profile.cards))
    pace_s = latency.wire_ms("beetek", 9600) / 1000
    added: dict[str, list[float]] = {"off": [], "on": []}
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    runs: dict[str, list[float]] = {"off": [], "on": []}      # each run's added p99
    received: list[float] = []
    latency.LiveTable = Table
    try:
        for _ in range(pairs):
            for mode in ("off", "on"):
                feed_on[0] = mode == "on"
                rig = latency.Rig("pty", "beetek", order)
                collector = Collector(broker.port)   # each run's table starts at seq 1 again
                try:
                    res = latency.run_table(rig, pace_s, None)
                finally:
                    rig.close()
                    collector.close()
                received += collector.latency
                added[mode] += res.added
                runs[mode].append(round((pct(res.added, 0.99) or 0) * 1000, 2))
                cpu[mode] += [a - j for a, j in zip(res.added, res.journal)]
    finally:
        latency.LiveTable = plain
    out: dict[str, Any] = {"cards_per_run": len(order), "pairs": pairs,
                           "pace_ms": round(pace_s * 1000, 2)}
    for mode, values in added.items():
        out[f"added_p50_ms_feed_{mode}"] = round(statistics.median(values) * 1000, 3)
        out[f"added_p99_ms_feed_{mode}"] = round((pct(values, 0.99) or 0) * 1000, 3)
        out[f"no_journal_p50_ms_feed_{mode}"] = round(statistics.median(cpu[mode]) * 1000, 3)
        out[f"no_journal_p99_ms_feed_{mode}"] = round((pct(cpu[mode], 0.99) or 0) * 1000, 3)
        out[f"added_p99_ms_each_run_feed_{mode}"] = runs[mode]
    lat = received
    out["events_received"] = len(lat)
    out["journal_to_subscriber_p50_ms"] = round(statistics.median(lat) * 1000, 3) if lat else None
    out["journal_to_subscriber_p99_ms"] = round((pct(lat, 0.99) or 0) * 1000, 3) if lat else None
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        url, where, first, count, shoes = argv[1:6]
        speed, seconds = (float(x) for x in argv[6:8]) if len(argv) >= 8 else (0.0, 0.0)
        return worker(url, where, int(first), int(count), int(shoes), speed, seconds)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=200, help="simulated tables (default 200)")
    ap.add_argument("--workers", type=int, default=4, help="processes the tables run in")
    ap.add_argument("--shoes", type=int, default=1, help="shoes each table deals")
    ap.add_argument("--cards", type=int, default=200, help="cards per feed on/off table run")
    ap.add_argument("--pairs", type=int, default=4, help="feed off/on table runs, alternately")
    ap.add_argument("--speed", type=float, default=1.0, help="paced phase: the tables deal at "
                    "this many times the virtual dealer's pace of a card a second (0: no paced "
                    "phase)")
    ap.add_argument("--paced-seconds", type=float, default=60.0, help="paced phase: how long")
    ap.add_argument("--no-flat-out", action="store_true", help="leave out the flat-out and "
                    "catch-up phases")
    ap.add_argument("--fsync", action="store_true", help="the floor's tables fsync their "
                    "journals (as in production; the disk then limits the events/s)")
    ap.add_argument("--json", action="store_true", help="tables to stderr, one JSON line out")
    args = ap.parse_args(argv)
    if not 1 <= args.tables <= 1000 or args.workers < 1 or args.shoes < 1 or args.pairs < 0:
        print("feed: --tables 1..1000, --workers, --shoes >= 1, --pairs >= 0", file=sys.stderr)
        return 2
    from tests.broker import MOSQUITTO, Mosquitto
    if MOSQUITTO is None:
        print("feed: needs Mosquitto (apt-get install mosquitto)", file=sys.stderr)
        return 2
    out = sys.stderr if args.json else sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    with tempfile.TemporaryDirectory(prefix="feed-bench-") as where:
        broker = Mosquitto(Path(where) / "broker").start()
        try:
            say(f"floor: {args.tables} tables x {args.shoes} shoe(s), {args.workers} worker "
                f"processes, virtual clocks, journals {'fsynced' if args.fsync else 'not fsynced'}"
                f", into one Mosquitto on 127.0.0.1:{broker.port}")
            floor = floor_run(broker, args.tables, args.workers, args.shoes, where, args.fsync,
                              args.speed, args.paced_seconds, flat_out=not args.no_flat_out)
            say(f"  {'phase':9} {'events':>7} {'dups':>5} {'complete':>8} {'seconds':>8} "
                f"{'events/s':>9} {'p50 ms':>9} {'p99 ms':>9}   (journal -> subscriber)")
            for phase in ("paced", "live", "catch_up"):
                f = floor[phase]
                if f is None:
                    continue
                done = "yes" if f["complete"] else \
                    f"NO -{f['missing']} ({f['owed_in_journals']} owed in the journals)"
                p50, p99 = (f[f"journal_to_subscriber_{q}_ms"] for q in ("p50", "p99"))
                say(f"  {phase:9} {f['events']:>7} {f['duplicates']:>5} {done:>8} "
                    f"{f['seconds']:>8} {f['events_per_s'] or 0:>9.0f} "
                    f"{'-' if p50 is None else p50:>9} {'-' if p99 is None else p99:>9}")
            table = table_runs(broker, args.cards, args.pairs) if args.pairs else {}
        finally:
            broker.stop()
    if table:
        say(f"\ntable: bench/latency.py's `run` path, pty Bee-Tek at {table['pace_ms']} ms a "
            f"card, {table['cards_per_run']} cards x {table['pairs']} run(s) each, alternately")
        say(f"  {'feed':5} {'added p50 ms':>13} {'added p99 ms':>13} {'w/o journal p50':>16} "
            f"{'w/o journal p99':>16}   (decoded read -> event published)")
        for mode in ("off", "on"):
            say(f"  {mode:5} {table[f'added_p50_ms_feed_{mode}']:>13.3f} "
                f"{table[f'added_p99_ms_feed_{mode}']:>13.3f} "
                f"{table[f'no_journal_p50_ms_feed_{mode}']:>16.3f} "
                f"{table[f'no_journal_p99_ms_feed_{mode}']:>16.3f}   each run's p99: "
                f"{' '.join(f'{x:.2f}' for x in table[f'added_p99_ms_each_run_feed_{mode}'])}")
        say(f"  feed on: journal -> subscriber p50 {table['journal_to_subscriber_p50_ms']} ms, "
            f"p99 {table['journal_to_subscriber_p99_ms']} ms ({table['events_received']} "
            f"events)")
    if args.json:
        print(json.dumps({"floor": floor, "table": table}))
    return 0 if floor["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
