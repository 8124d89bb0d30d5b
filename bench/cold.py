"""Why a card's journal write costs ten times more at a table's pace than back to back.

The production journal (controller.journal.Journal, schema 5, durable) writes a card read, its
input and card event staged and committed as the loop does it, on one thread and nothing else
running in the process; beside it, on a file of its own, a bare SQLite commit of the same row
(WAL, synchronous=FULL). The rhythms alternate write by write, so each is measured beside the
others:

  back to back   one write after the other: everything the write touches is in the caches
  after a card   first thing after sleeping a card's wire time (a Bee-Tek frame at 9600 baud,
                 18.75 ms), as the live loop does between two cards
  after work     the same sleep, then 0.3 ms of unrelated busy work first: a core that had
                 to ramp up its clock or wake from a sleep state would be up to speed by then
  again          after the same pause, the same kind of write made a second time: what the
                 first one warmed

and, after a card, how much of each write's time its thread was on the CPU (its CPU clock: a
thread waiting for the interpreter lock or put off the CPU would show less than its wall time).

    python bench/cold.py [--writes 200] [--journal-dir D] [--json]

With --json the table goes to stderr and stdout gets one JSON line: per rhythm the journal
write's and the bare commit's p50 in µs and their ratio, and the on-CPU share.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time

from controller.journal import Journal

WIRE_S = 18 * 10 / 9600     # a Bee-Tek card frame on the wire at 9600 baud (18 bytes, 8N1)
BUSY_S = 0.0003             # the unrelated work before the write in "after work"
RHYTHMS = ("back to back", "after a card", "after work", "again")
CODES = [r + s for s in "SHDC" for r in "A23456789TJQK"]


def card(n: int) -> list[tuple[str, dict]]:
    """A card read's input and its card event, as the table's loop stages them."""
    code = CODES[n % len(CODES)]
    return [("input", {"type": "card", "code": code, "device": "shoe"}),
            ("card", {"event": "card", "shoe": 1, "round": n // 5 + 1, "n": n + 1,
                      "code": code, "slot": "player_third", "flags": []})]


class Bare:
    """The same rows on a file of their own: one autocommit INSERT, WAL, synchronous=FULL."""

    def __init__(self, path: str):
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute("CREATE TABLE records (seq INTEGER PRIMARY KEY, utc INTEGER NOT NULL,"
                          " mono INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,"
                          " hash BLOB NOT NULL)")

    def write(self, row: tuple) -> None:
        self.conn.execute("INSERT INTO records (seq, utc, mono, kind, data, hash) "
                          "VALUES (?, ?, ?, ?, ?, ?)", row)


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def measure(writes: int, where: str) -> dict:
    journal = Journal(os.path.join(where, "journal.db"), durable=True)
    bare = Bare(os.path.join(where, "bare.db"))
    clock, cpu = time.perf_counter_ns, time.thread_time_ns
    got: dict[str, dict[str, list[float]]] = {r: {"journal": [], "bare": []} for r in RHYTHMS}
    on_cpu: list[float] = []
    n = 0

    def journal_write() -> tuple[float, tuple]:
        nonlocal n
        items = card(n)
        n += 1
        start = clock()
        journal.stage(items, durable=True)
        rows = journal._staged          # what the commit writes (it starts a new list)
        journal.commit()
        return (clock() - start) / 1000, rows[0]

    bare_seq = iter(range(1, 1 << 62))

    def bare_write(row: tuple) -> float:
        renumbered = (next(bare_seq), *row[1:])
        start = clock()
        bare.write(renumbered)
        return (clock() - start) / 1000

    def write(kind: str, rhythm: str) -> None:
        if kind == "journal":
            got[rhythm]["journal"].append(journal_write()[0])
        else:
            got[rhythm]["bare"].append(bare_write(row))

    row = journal_write()[1]
    for kind in ("journal", "bare"):
        for _ in range(writes):
            write(kind, "back to back")
    for i in range(writes):
        # the journal and the bare commit in turn, each the first thing after its pause
        for kind in ("journal", "bare") if i % 2 else ("bare", "journal"):
            time.sleep(WIRE_S)
            write(kind, "after a card")
            time.sleep(WIRE_S)
            busy(BUSY_S)
            write(kind, "after work")
            time.sleep(WIRE_S)
            if kind == "journal":
                journal_write()
            else:
                bare_write(row)
            write(kind, "again")
        time.sleep(WIRE_S)
        wall, used = clock(), cpu()
        journal_write()
        on_cpu.append((cpu() - used) / max(1, clock() - wall))
    journal.close()
    bare.conn.close()
    out: dict = {"writes": writes, "rhythms": {}}
    for rhythm in RHYTHMS:
        j = statistics.median(got[rhythm]["journal"])
        b = statistics.median(got[rhythm]["bare"])
        out["rhythms"][rhythm] = {"journal_p50_us": round(j, 1), "bare_p50_us": round(b, 1),
                                  "journal_vs_bare": round(j / b, 2)}
    out["on_cpu_share_p50"] = round(statistics.median(on_cpu), 3)
    out["on_cpu_share_p10"] = round(sorted(on_cpu)[len(on_cpu) // 10], 3)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=200, help="writes a rhythm (default 200)")
    ap.add_argument("--journal-dir", help="where the journal and the bare file go (default: "
                    "the system temp directory)")
    ap.add_argument("--json", action="store_true", help="table to stderr, one JSON line to "
                    "stdout")
    args = ap.parse_args(argv)
    if args.writes < 2:
        print("cold: --writes must be >= 2", file=sys.stderr)
        return 2
    if args.journal_dir and not os.path.isdir(args.journal_dir):
        print(f"cold: --journal-dir {args.journal_dir}: no such directory", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="cold-", dir=args.journal_dir) as where:
        out = measure(args.writes, where)
    say = sys.stderr if args.json else sys.stdout
    print(f"a card read's journal write (stage + commit) and a bare commit of its row, p50 µs, "
          f"{args.writes} each a rhythm", file=say)
    print(f"{'rhythm':14} {'journal':>8} {'bare':>8} {'ratio':>6}", file=say)
    for rhythm, r in out["rhythms"].items():
        print(f"{rhythm:14} {r['journal_p50_us']:8.1f} {r['bare_p50_us']:8.1f} "
              f"{r['journal_vs_bare']:6.2f}", file=say)
    print(f"after a card, the write's thread on the CPU for {out['on_cpu_share_p50']:.0%} of "
          f"its time at p50 ({out['on_cpu_share_p10']:.0%} at p10)", file=say)
    if args.json:
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
