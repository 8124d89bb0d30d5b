"""Whole shoes through the production loop: `tablectl simulate` hands a second with its journal
on tmpfs and on disk, and `tablectl run --pace 0` on the embedded simulator beside it.

Each measurement starts the command as a process of its own (the simulated devices behind their
URLs, the drivers, the one table loop, the durable journal, the `--json` lines on stdout) and
reads its output as a consumer would: the rate is the rounds printed between the first
`shoe_started` line and the last `shoe_ended` line, divided by the time between them (start-up,
the software digest and the journal's opening are shown apart), and the process's CPU time
(start-up included), steadier than the clock on a shared machine. The places alternate run by
run, so each range is measured side by side with the others:

  simulate, tmpfs   the journal on a RAM file system (/dev/shm): the loop's own cost
  simulate, disk    the journal on the disk the checkout is on: what the fsyncs add
  run, tmpfs        `tablectl run --pace 0 --no-control` (real clock, reader threads): what the
                    real clock and the threads' hand-offs cost, beside simulate on tmpfs
  run, disk         the same on disk: a live table commits every card by itself (one fsync
                    a card, where simulate groups its inputs), beside simulate on disk

    python bench/simulate.py [--profile macau] [--shoes 10] [--runs 3] [--tmpfs /dev/shm]
                             [--disk DIR] [--no-run] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
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
    for side in ("", "-wal", "-shm", ".devices.json", ".devices.json.shoe"):
        if os.path.exists(journal + side):
            os.remove(journal + side)
    dealing = last - first
    return {"rounds": rounds, "cards": cards, "dealing_s": round(dealing, 3),
            "startup_s": round(first - t0, 3), "total_s": round(end - t0, 3),
            "hands_per_s": round(rounds / dealing, 1), "journal_mb": round(size / 1e6, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 3)}


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
    try:
        for k in range(args.runs):
            for command, place in cases:
                r = one(command, args.profile, k + 1, args.shoes, places[place])
                results[f"{command} {place}"].append(r)
    finally:
        for folder in places.values():
            shutil.rmtree(folder, ignore_errors=True)

    print(f"tablectl simulate/run --profile {args.profile} --shoes {args.shoes} --journal FILE "
          f"--json: {args.runs} run(s) each, alternating (tmpfs: {places['tmpfs'].rsplit('/', 1)[0]}"
          f" [{kinds['tmpfs']}], disk: {disk_root} [{kinds['disk']}])")
    print(f"{'':<15} {'hands/s':>15} {'µs a card':>13} {'dealing s':>13} {'start s':>11} "
          f"{'CPU s':>11} {'journal MB':>11}")
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
    if args.json:
        print(json.dumps({"bench": "simulate", "profile": args.profile, "shoes": args.shoes,
                          "runs": args.runs, "fs": kinds, "results": summary,
                          "run_over_simulate": ratio["disk"],
                          "run_over_simulate_tmpfs": ratio["tmpfs"],
                          "aims": {**AIMS, "run": RUN_AIM},
                          "met": met}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
