"""The floor store at scale: --tables simulated tables into one Mosquitto and one PostgreSQL.

The tables are the production path of `tablectl simulate --feed` (the service's builder, the one loop
on a virtual clock, the journal, the feed's thread sending every record), in --workers
processes; the store is `tablectl floor-store`'s own `FloorStore` (MQTT 5 persistent session,
QoS 1, one transaction per batch, acknowledged after the commit), in this process, into a
PostgreSQL started here (Debian's binaries, a temporary folder, fsync on as in production).

1. live: the tables for --paced-seconds of real time at a real table's pace (the virtual
   dealer draws a card a second): records/s into the store and journal → committed-in-store
   latency p50/p99 (a record's journal time to the commit that stored it; the first 10 s, all
   the tables starting at once, left out).
2. flat out: the tables deal --shoes shoe(s) each as fast as they can: records/s committed and
   the latency at the machine's saturation.
3. catch-up: the store stopped (its session kept by the broker) while the tables deal for
   --outage-s at a real pace (default 60 s), then started again: the rate at which it stores
   what waited (records/s from its start to the last of them committed).
4. the database's size per 10,000 rounds (the floor schema's tables and indexes, and the whole
   database, over the rounds stored, scaled).

Every phase also checks that every record of every journal is in the store, once.

    python bench/floor_store.py [--tables 200] [--workers 4] [--paced-seconds 60]
                                [--outage-s 60] [--shoes 1] [--json]

Needs Debian's mosquitto and postgresql, and psycopg. With --json the tables go to stderr and
stdout gets one JSON line.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from feed import pct  # noqa: E402
from feed import worker as feed_worker  # noqa: E402

from controller.journal import Journal  # noqa: E402


def worker(url: str, where: str, prefix: str, first: int, count: int, shoes: int,
           speed: float, seconds: float) -> int:
    """`count` tables ({prefix}{k}) dealing at once, as `tablectl simulate --feed` does, over
    ten pits."""
    return feed_worker(url, where, first, count, shoes, speed, seconds, prefix=prefix, pits=10)


def tables(broker: Any, n: int, workers: int, where: str, prefix: str, shoes: int,
           speed: float = 0.0, seconds: float = 0.0) -> bool:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TABLECTL_STORAGE_FSYNC="false")
    per = [n // workers + (1 if i < n % workers else 0) for i in range(workers)]
    procs, first = [], 1
    for count in per:
        if count:
            procs.append(subprocess.Popen(
                [sys.executable, __file__, "--worker", broker.url, where, prefix, str(first),
                 str(count), str(shoes), str(speed), str(seconds)], env=env))
            first += count
    return all(p.wait() == 0 for p in procs)


class Commits:
    """What the store committed: each record's journal → commit latency, and when."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: list[tuple[float, float]] = []        # (journal time, latency)
        self.stored = 0
        self.first = self.last = 0.0

    def __call__(self, written: Any, committed: float) -> None:
        with self.lock:
            if written.stored:
                self.first = self.first or committed
                self.last = committed
            self.stored += len(written.stored)
            for r in written.stored:
                t = r.at.timestamp()
                self.latency.append((t, committed - t))

    def reset(self) -> None:
        with self.lock:
            self.latency, self.stored, self.first, self.last = [], 0, 0.0, 0.0


class Store:
    """The production FloorStore on a thread of this process."""

    def __init__(self, broker: Any, db_url: str, commits: Commits):
        from controller.settings.config import FeedCfg
        from controller.feed.broker import broker_from
        from controller.floor.store.db import database
        self.args = (broker_from(FeedCfg(), url=broker.url), database(db_url))
        self.commits = commits
        self.store: Any = None
        self.thread: threading.Thread | None = None

    def start(self) -> "Store":
        from controller.floor.store.service import FloorStore
        self.store = FloorStore(*self.args, name="bench", on_commit=self.commits)
        self.thread = threading.Thread(target=self.store.run, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.store.stop()
        assert self.thread is not None
        self.thread.join(60)


def journals(where: str, prefix: str, n: int) -> dict[str, int]:
    out = {}
    for k in range(1, n + 1):
        name = f"{prefix}{k:03d}"
        with Journal.open_readonly(f"{where}/{name}.db") as j:
            out[name] = j.last_seq
    return out


def in_store(pg: Any, db: str, prefix: str) -> dict[str, int]:
    return {name: n for name, n in pg.sql(
        "SELECT t.name, count(*) FROM floor.records r JOIN floor.tables t ON t.id = r.table_id "
        f"WHERE t.name LIKE '{prefix}%' GROUP BY t.name", db)}


def wait_complete(pg: Any, db: str, prefix: str, expected: dict[str, int],
                  timeout: float = 600.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if in_store(pg, db, prefix) == expected:
            return True
        time.sleep(0.25)
    return False


def figures(commits: Commits, complete: bool, warm_up_s: float = 0.0) -> dict:
    with commits.lock:
        lat = list(commits.latency)
        span = commits.last - commits.first
        stored = commits.stored
    if warm_up_s and lat:
        start = min(t for t, _ in lat) + warm_up_s
        lat = [x for x in lat if x[0] >= start]
    values = [x for _, x in lat]
    return {"records": stored, "complete": complete,
            "records_per_s": round(stored / span) if span > 0 else None,
            "journal_to_store_p50_ms": round(statistics.median(values) * 1000, 1)
            if values else None,
            "journal_to_store_p99_ms": round((pct(values, 0.99) or 0) * 1000, 1)
            if values else None}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        url, where, prefix, first, count, shoes, speed, seconds = argv[1:9]
        return worker(url, where, prefix, int(first), int(count), int(shoes), float(speed),
                      float(seconds))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=200, help="simulated tables (default 200)")
    ap.add_argument("--workers", type=int, default=4, help="processes the tables run in")
    ap.add_argument("--paced-seconds", type=float, default=60.0,
                    help="live phase: how long the tables deal at a real pace (default 60)")
    ap.add_argument("--outage-s", type=float, default=60.0,
                    help="catch-up phase: how long the store is away (default 60)")
    ap.add_argument("--shoes", type=int, default=1, help="flat-out phase: shoes a table deals")
    ap.add_argument("--json", action="store_true", help="tables to stderr, one JSON line out")
    args = ap.parse_args(argv)
    if not 1 <= args.tables <= 1000 or args.workers < 1 or args.shoes < 1 or \
            args.paced_seconds < 0 or args.outage_s < 0:
        print("floor_store: --tables 1..1000, --workers and --shoes >= 1, seconds >= 0",
              file=sys.stderr)
        return 2
    from tests.broker import MOSQUITTO, Mosquitto
    from tests.pg import Postgres, bindir
    if MOSQUITTO is None or bindir() is None:
        print("floor_store: needs Mosquitto and PostgreSQL (apt-get install mosquitto "
              "postgresql)", file=sys.stderr)
        return 2
    from controller.logsetup import configure
    configure("WARNING")
    out = sys.stderr if args.json else sys.stdout

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    result: dict[str, Any] = {"tables": args.tables, "workers": args.workers}
    with tempfile.TemporaryDirectory(prefix="floor-store-bench-") as where:
        broker = Mosquitto(Path(where) / "broker").start()
        pg = Postgres(fsync=True).start()
        try:
            url = pg.new_database()
            db = url.rsplit("/", 1)[1]
            commits = Commits()
            store = Store(broker, url, commits).start()
            say(f"{args.tables} tables in {args.workers} processes -> Mosquitto "
                f"127.0.0.1:{broker.port} -> floor store -> PostgreSQL (fsync on)")
            if args.paced_seconds:
                ok = tables(broker, args.tables, args.workers, where, "L", 1, 1.0,
                            args.paced_seconds)
                done = ok and wait_complete(pg, db, "L", journals(where, "L", args.tables))
                result["live"] = figures(commits, done, min(10.0, args.paced_seconds / 3))
            commits.reset()
            ok = tables(broker, args.tables, args.workers, where, "F", args.shoes)
            done = ok and wait_complete(pg, db, "F", journals(where, "F", args.tables))
            result["flat_out"] = figures(commits, done)
            # the store away while the tables deal at a real pace
            store.stop()
            ok = tables(broker, args.tables, args.workers, where, "C", 1, 1.0, args.outage_s)
            expected = journals(where, "C", args.tables)
            commits.reset()
            started = time.time()
            store = Store(broker, url, commits).start()
            done = ok and wait_complete(pg, db, "C", expected)
            backlog = sum(expected.values())
            took = (commits.last or time.time()) - started
            result["catch_up"] = {"outage_s": args.outage_s, "records_waiting": backlog,
                                  "complete": done, "seconds": round(took, 2),
                                  "records_per_s": round(backlog / took) if took > 0 else None}
            store.stop()
            rounds = pg.sql("SELECT count(*) FROM floor.records WHERE kind = 'round_result'",
                            db)[0][0]
            records = pg.sql("SELECT count(*) FROM floor.records", db)[0][0]
            schema_bytes = pg.sql("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                                  "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE "
                                  "n.nspname = 'floor' AND c.relkind = 'r'", db)[0][0]
            db_bytes = pg.sql("SELECT pg_database_size(current_database())", db)[0][0]
            result["size"] = {"rounds": rounds, "records": records,
                              "records_per_round": round(records / rounds, 1) if rounds else None,
                              "mb_per_10k_rounds": round(int(schema_bytes) / rounds * 1e4 / 2**20,
                                                         1) if rounds else None,
                              "database_mb_per_10k_rounds": round(
                                  int(db_bytes) / rounds * 1e4 / 2**20, 1) if rounds else None}
        finally:
            pg.close()
            broker.stop()
    say(f"  {'phase':9} {'records':>8} {'complete':>8} {'records/s':>10} {'p50 ms':>9} "
        f"{'p99 ms':>9}   (journal -> committed in the store)")
    for phase in ("live", "flat_out"):
        f = result.get(phase)
        if f:
            say(f"  {phase:9} {f['records']:>8} {'yes' if f['complete'] else 'NO':>8} "
                f"{f['records_per_s'] or 0:>10} {f['journal_to_store_p50_ms'] or '-':>9} "
                f"{f['journal_to_store_p99_ms'] or '-':>9}")
    c = result["catch_up"]
    say(f"  catch-up after {c['outage_s']:g} s away: {c['records_waiting']} records in "
        f"{c['seconds']} s = {c['records_per_s']} records/s, complete: "
        f"{'yes' if c['complete'] else 'NO'}")
    s = result["size"]
    say(f"  size: {s['records']} records, {s['rounds']} rounds ({s['records_per_round']} records "
        f"a round): {s['mb_per_10k_rounds']} MB per 10,000 rounds in the floor schema "
        f"({s['database_mb_per_10k_rounds']} MB with the whole database)")
    if args.json:
        print(json.dumps(result))
    complete = all(result[p]["complete"] for p in ("live", "flat_out", "catch_up")
                   if p in result)
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
