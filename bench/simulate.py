"""Whole shoes through the production loop: `tablectl simulate` hands a second with its journal
on tmpfs and on disk, and `tablectl run --pace 0` on the embedded simulator beside it.

Each measurement starts the command as a process of its own (the simulated devices behind their
URLs, the drivers, the one table loop, the durable journal, the `--json` lines on stdout) and
reads its output as a consumer would: the rate is the rounds printed between the first
`shoe_started` line and the last `shoe_ended` line, divided by the time between them (start-up,
the software digest and the journal's opening are shown apart), and the process's CPU time
(start-up included), steadier than the clock on a shared machine, and its voluntary context
switches a card ("waits": a thread that blocked and had to be woken, start-up included). The
places alternate run by
run, so each range is measured side by side with the others:

  simulate, tmpfs   the journal on a RAM file system (/dev/shm): the loop's own cost
  simulate, disk    the journal on the disk the checkout is on: what the fsyncs add
  run, tmpfs        `tablectl run --pace 0 --no-control` (real clock, reader threads): what the
                    real clock and the threads' hand-offs cost, beside simulate on tmpfs
  run, disk         the same on disk: the loop commits a card by itself, or hands the batch
                    to the journal's writer thread when the next card comes during an fsync
                    (simulate groups its inputs), beside simulate on disk

Beside `run`, before each round of runs, the two floors under what `run` adds a card at zero
pace over simulate, which has no threads and commits many inputs at once:
  a round trip      between two threads of one process with nothing else to do (a condition,
                    as the embedded shoe's port, and a queue, as the loop's inbox)
  a bare commit     of a card's record as the journal stores it (a row read back from the
                    first simulate's journal), alone in its transaction, in a SQLite file of
                    the journal's shape on the same tmpfs (WAL, synchronous=FULL)
At zero pace the dealer pulls the next card once told of the last, so at most one card is in
flight, and it reaches the loop from the shoe reader's thread: the loop, with nothing else to
do meanwhile, is woken for every card. So `run` takes at least simulate's time a card plus one
thread wake-up (half a round trip), whether the card is then committed alone (a bare commit
more) or joins the next card's batch; the bench prints that bound as a ratio beside the aim.

    python bench/simulate.py [--profile macau] [--shoes 10] [--runs 3] [--tmpfs /dev/shm]
                             [--disk DIR] [--no-run] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AIMS = {"tmpfs": 5000.0, "disk": 2000.0}     # hands a second
RUN_AIM = 1.5                                # run's time over simulate's on the same shoes


def fs_type(path: str) -> str:
    """The file system type of the mount holding `path` (from /proc/mounts)."""
    best, kind = "", "?"
    real = os.path.realpath(path)
    try:
        with open("/proc/mounts", encoding="ascii", errors="replace") as f:
            for line in f:
                parts = line.split()
                mount = parts[1]
                if (real == mount or real.startswith(mount.rstrip("/") + "/")) \
                        and len(mount) > len(best):
                    best, kind = mount, parts[2]
    except OSError:
        pass
    return kind


def one(command: str, profile: str, seed: int, shoes: int, folder: str) -> dict:
    journal = os.path.join(folder, f"{command}-{seed}.db")
    cmd = [sys.executable, "-m", "controller.cli", command, "--profile", profile,
           "--seed", str(seed), "--shoes", str(shoes), "--journal", journal, "--json"]
    if command == "run":
        cmd += ["--pace", "0", "--no-control", "--config", str(ROOT / "config" / "table.toml")]
    # the production settings: no test switch (such as the one that skips fsync) leaks in
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=ROOT)
    assert proc.stdout is not None
    first = last = None
    rounds = cards = 0
    for line in proc.stdout:
        if b'"event":"round_result"' in line:
            rounds += 1
        elif b'"event":"card"' in line:
            cards += 1
        elif b'"event":"shoe_started"' in line and first is None:
            first = time.perf_counter()
        elif b'"event":"shoe_ended"' in line:
            last = time.perf_counter()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    # the process's own CPU time (user + system): on a shared machine steadier than the clock
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    end = time.perf_counter()
    if code != 0 or first is None or last is None or not rounds:
        raise RuntimeError(f"{command} exited {code} after {rounds} rounds: {err.strip()[-400:]}")
    size = sum(os.path.getsize(journal + side) for side in ("", "-wal")
               if os.path.exists(journal + side))
    row = card_row(journal)
    for side in ("", "-wal", "-shm", ".devices.json", ".devices.json.shoe"):
        if os.path.exists(journal + side):
            os.remove(journal + side)
    dealing = last - first
    return {"rounds": rounds, "cards": cards, "dealing_s": round(dealing, 3),
            "startup_s": round(first - t0, 3), "total_s": round(end - t0, 3),
            "hands_per_s": round(rounds / dealing, 1), "journal_mb": round(size / 1e6, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            # the process's waits (a thread blocking for another, a sleep): each a wake-up
            "voluntary_switches": usage.ru_nvcsw, "card_row": row}


def card_row(journal: str) -> tuple | None:
    """One card read's record as the journal stored it (its input with the card event folded
    in), for the bare commit; None when the journal has none."""
    try:
        conn = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT seq, utc, mono, kind, data, hash FROM records WHERE "
                                "kind = 'input' AND data LIKE '%\"card\":{%' LIMIT 1 OFFSET 40"
                                ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def bare_commit(folder: str, row: tuple, commits: int = 1000) -> dict:
    """The floor under a card committed alone: `row` inserted again and again, renumbered, each
    INSERT its own transaction, in a fresh SQLite file in `folder` with the journal's records
    table (WAL, synchronous=FULL, as the journal writes a card). Median and 90th percentile in
    microseconds."""
    path = os.path.join(folder, "bare-commit.db")
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE records (seq INTEGER PRIMARY KEY, utc INTEGER NOT NULL,"
                     " mono INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,"
                     " hash BLOB NOT NULL)")
        sql = "INSERT INTO records (seq, utc, mono, kind, data, hash) VALUES (?, ?, ?, ?, ?, ?)"
        times = []
        for seq in range(1, commits + 1):
            params = (seq, *row[1:])
            start = time.perf_counter()
            conn.execute(sql, params)
            times.append(time.perf_counter() - start)
            sum(range(200))             # a little work between commits, as the loop has
    finally:
        conn.close()
        for side in ("", "-wal", "-shm"):
            if os.path.exists(path + side):
                os.remove(path + side)
    times.sort()
    return {"p50": round(times[len(times) // 2] * 1e6, 1),
            "p90": round(times[len(times) * 9 // 10] * 1e6, 1)}


def thread_round_trip(trips: int = 2000, work_us: float = 0.0) -> dict:
    """The floor under `run`'s extra time a card: one round trip between two threads of one
    Python process, as `run` makes one a card at zero pace (the loop wakes the shoe's reader
    through the port's condition, the reader wakes the loop through its inbox queue). With
    `work_us`, the loop's side is busy that long between trips (as `run`'s loop is with each
    card, simulate's time a card), the reader asleep meanwhile: on a virtual machine a thread
    woken on a processor gone idle costs more than one the other just left. Its median and
    90th percentile in microseconds."""
    import queue
    import threading
    cond, inbox = threading.Condition(), queue.Queue()  # type: ignore[var-annotated]
    wire: list[float | None] = []

    def reader() -> None:
        while True:
            with cond:
                while not wire:
                    cond.wait(0.5)
                sent = wire.pop()
            inbox.put(sent)
            if sent is None:
                return
    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    times = []
    for _ in range(trips):
        start = time.perf_counter()
        with cond:
            wire.append(start)
            cond.notify_all()
        inbox.get()
        end = time.perf_counter()
        times.append(end - start)
        sum(range(200))             # a little work between trips, as the loop has
        while work_us and (time.perf_counter() - end) * 1e6 < work_us:
            pass
    with cond:
        wire.append(None)
        cond.notify_all()
    thread.join(timeout=5)
    times.sort()
    return {"p50": round(times[len(times) // 2] * 1e6, 1),
            "p90": round(times[len(times) * 9 // 10] * 1e6, 1)}


def span(values: list[float], fmt: str = "{:,.0f}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}–{fmt.format(hi)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="macau")
    ap.add_argument("--shoes", type=int, default=10, help="shoes a run (default 10)")
    ap.add_argument("--runs", type=int, default=3, help="runs per place (default 3)")
    ap.add_argument("--tmpfs", default="/dev/shm", help="a RAM file system (default /dev/shm)")
    ap.add_argument("--disk", default=None, help="a folder on disk (default: beside the "
                    "checkout, under .bench/)")
    ap.add_argument("--no-run", action="store_true", help="leave out `tablectl run`")
    ap.add_argument("--json", action="store_true", help="also print one JSON line")
    args = ap.parse_args(argv)
    if args.shoes < 1 or args.runs < 1:
        print("simulate.py: give --shoes >= 1 and --runs >= 1", file=sys.stderr)
        return 2
    disk_root = args.disk or str(ROOT / ".bench")
    os.makedirs(disk_root, exist_ok=True)
    places = {"tmpfs": tempfile.mkdtemp(prefix="simulate-bench-", dir=args.tmpfs),
              "disk": tempfile.mkdtemp(prefix="simulate-bench-", dir=disk_root)}
    kinds = {name: fs_type(folder) for name, folder in places.items()}
    cases = [("simulate", "tmpfs"), ("simulate", "disk")] + \
        ([] if args.no_run else [("run", "tmpfs"), ("run", "disk")])
    results: dict[str, list[dict]] = {f"{c} {p}": [] for c, p in cases}
    trips: list[dict] = []
    busy_trips: list[dict] = []     # with simulate's time a card between trips
    bares: list[dict] = []
    row = None
    try:
        for k in range(args.runs):
            if not args.no_run:
                trips.append(thread_round_trip())
                if row is not None:
                    bares.append(bare_commit(places["tmpfs"], row))
            for command, place in cases:
                r = one(command, args.profile, k + 1, args.shoes, places[place])
                row = row or r.pop("card_row")
                r.pop("card_row", None)
                results[f"{command} {place}"].append(r)
            if not args.no_run:
                last = results["simulate tmpfs"][-1]
                busy_trips.append(thread_round_trip(
                    work_us=last["dealing_s"] / last["cards"] * 1e6))
        if not args.no_run and row is not None and len(bares) < args.runs:
            bares.append(bare_commit(places["tmpfs"], row))     # (the first round had no row)
    finally:
        for folder in places.values():
            shutil.rmtree(folder, ignore_errors=True)

    print(f"tablectl simulate/run --profile {args.profile} --shoes {args.shoes} --journal FILE "
          f"--json: {args.runs} run(s) each, alternating (tmpfs: {places['tmpfs'].rsplit('/', 1)[0]}"
          f" [{kinds['tmpfs']}], disk: {disk_root} [{kinds['disk']}])")
    print(f"{'':<15} {'hands/s':>15} {'µs a card':>13} {'dealing s':>13} {'start s':>11} "
          f"{'CPU s':>11} {'waits a card':>13} {'journal MB':>11}")
    summary: dict[str, dict] = {}
    for name, rs in results.items():
        rates = [r["hands_per_s"] for r in rs]
        per_card = [r["dealing_s"] / r["cards"] * 1e6 for r in rs]
        summary[name] = {"hands_per_s_min": min(rates), "hands_per_s_max": max(rates),
                         "us_per_card_min": round(min(per_card), 1),
                         "us_per_card_max": round(max(per_card), 1), "runs": rs}
        print(f"{name:<15} {span(rates):>15} {span(per_card):>13} "
              f"{span([r['dealing_s'] for r in rs], '{:.2f}'):>13} "
              f"{span([r['startup_s'] for r in rs], '{:.2f}'):>11} "
              f"{span([r['cpu_s'] for r in rs], '{:.2f}'):>11} "
              f"{span([r['voluntary_switches'] / r['cards'] for r in rs], '{:.2f}'):>13} "
              f"{span([r['journal_mb'] for r in rs], '{:.1f}'):>11}")
    met = {}
    for place, aim in AIMS.items():
        worst = summary[f"simulate {place}"]["hands_per_s_min"]
        met[place] = worst >= aim
        print(f"simulate on {place}: at least {worst:,.0f} hands/s; aim ≥ {aim:,.0f}: "
              f"{'met' if met[place] else 'NOT met'}")
    ratio: dict[str, dict | None] = {"disk": None, "tmpfs": None}
    if not args.no_run:
        for place in ("tmpfs", "disk"):
            # same seeds, same shoes, same place: run's dealing time over simulate's, run by run
            ratios = [r["dealing_s"] / s["dealing_s"] for r, s in
                      zip(results[f"run {place}"], results[f"simulate {place}"])]
            ratio[place] = {"min": round(min(ratios), 2), "max": round(max(ratios), 2)}
            key = "run" if place == "disk" else f"run_{place}"
            met[key] = max(ratios) <= RUN_AIM
            print(f"run / simulate ({place}, same shoes): {span(ratios, '{:.2f}')}×; aim ≤ "
                  f"{RUN_AIM}×: {'met' if met[key] else 'NOT met'}")
        # what run adds a card on tmpfs, beside the least two threads take to hand one over
        extra = [(r["dealing_s"] / r["cards"] - s["dealing_s"] / s["cards"]) * 1e6 for r, s in
                 zip(results["run tmpfs"], results["simulate tmpfs"])]
        floor = {"run_minus_simulate_us_per_card_tmpfs": {"min": round(min(extra), 1),
                                                           "max": round(max(extra), 1)},
                 "thread_round_trip_us_p50": {"min": min(t["p50"] for t in trips),
                                              "max": max(t["p50"] for t in trips)},
                 "busy_thread_round_trip_us_p50": {
                     "min": min(t["p50"] for t in busy_trips),
                     "max": max(t["p50"] for t in busy_trips)}}
        print(f"run's time a card over simulate's (tmpfs): {span(extra)} µs; one round trip "
              f"between two threads (p50, a run each): {span([t['p50'] for t in trips])} µs "
              f"with nothing else done, {span([t['p50'] for t in busy_trips])} µs with "
              f"simulate's time a card spent between trips")
        if bares:
            # the least run adds a card: the loop woken for it (half a busy round trip)
            bound = [(s["dealing_s"] / s["cards"] * 1e6 + t["p50"] / 2)
                     / (s["dealing_s"] / s["cards"] * 1e6)
                     for s, b, t in zip(results["simulate tmpfs"], bares, busy_trips)]
            floor.update({"bare_commit_us_p50_tmpfs": {"min": min(b["p50"] for b in bares),
                                                       "max": max(b["p50"] for b in bares)},
                          "run_over_simulate_bound_tmpfs": {"min": round(min(bound), 2),
                                                            "max": round(max(bound), 2)}})
            print(f"a card's record committed alone (tmpfs, p50, a run each): "
                  f"{span([b['p50'] for b in bares])} µs; run / simulate on tmpfs is at "
                  f"least {span(bound, '{:.2f}')}× (simulate's time a card, plus the loop's wake-up "
                  f"for each card from the reader's thread: half a busy round trip)")
    else:
        floor = {}
    if args.json:
        print(json.dumps({"bench": "simulate", "profile": args.profile, "shoes": args.shoes,
                          "runs": args.runs, "fs": kinds, "results": summary,
                          "run_over_simulate": ratio["disk"],
                          "run_over_simulate_tmpfs": ratio["tmpfs"],
                          "aims": {**AIMS, "run": RUN_AIM}, **floor,
                          "met": met}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
