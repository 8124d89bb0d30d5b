"""Restart time and the journal's proof, on a journal `tablectl simulate` wrote and through the
code a restart runs (controller/journal/proof.py, controller/service/recovery.py).

First `tablectl simulate --profile PROFILE --seed SEED --shoes SHOES --journal FILE
--anchor-key KEY` writes the journal as a table does (every card, burn, round, snapshot and
anchor; each shoe's end snapshotted and signed), then a second one is killed (`--fault
crash@TAIL`) TAIL inputs into the next shoe, so a restart has a shoe in play and a tail to
replay; or an existing journal given with --journal (and its --key) is used as it is.

A year of one table (500,000 rounds, ~7 M records) would take hours to deal through
simulate, so `--filler N` first appends N records through the journal's own append API
(Journal.stage/commit, "note" records of a round's size, which a restart does not replay but
every chain check covers), then simulate deals on it as above: its first start proves the
whole chain once (the full check) and signs a checkpoint, and the restart measured is the
one after the crash, as a table's after a year. Then, each run on a fresh connection, side
by side:
  restart:      what `tablectl run` does before its table starts: check_at_start (with the
                key also the last anchor, its signature and head; the latest snapshot and the
                records after it, and the rest when it is at most the configured number) and open_table from that snapshot, replaying the
                inputs after it against the events the journal holds for them;
  full replay:  open_table without a snapshot: every input from seq 1 (what snapshots save);
  rest check:   the older records the start left: checked before the first card, or while
                the table deals when the journal's seal vouches for them (its file as its
                writer left it: controller/journal/seal.py);
  run:          `tablectl run` started on the journal itself, to its first line and its
                first card, then killed (so every run restarts from a crash);
  full check:   Journal.verify(): every record's chain link and every snapshot (what
                `tablectl verify-journal` does), as records a second;
  process:      `tablectl simulate` started again on a copy of the journal: the whole restart
                as a process (start-up, the software digest, the whole chain checked at start,
                the replay) to the first event it prints.
The restart and the full replay must reach the same table (its snapshot compared). The full
check's rate (records per second of wall time, and of the process's CPU time: the machine's
other load left out) is projected to a journal of --project rounds (a table's long life).

    python bench/recovery.py [--profile macau] [--shoes 25] [--seed 1] [--runs 3] [--tail 300]
                             [--journal FILE --key FILE] [--filler N] [--no-replay] [--keep]
                             [--project 500000] [--json]
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

from controller.journal import Journal
from controller.journal.anchor import AnchorKey, load_key, make_key
from controller.journal.proof import BUDGET, check_at_start, check_rest
from controller.settings.profile import load_profile
from controller.service.recovery import open_table

ROOT = Path(__file__).resolve().parents[1]
SIDES = ("", "-wal", ".devices.json", ".devices.json.shoe")
RESTART_AIM_S = 1.0
CHECK_AIM = 200_000         # records a second


def tablectl(*args: str) -> list[str]:
    return [sys.executable, "-m", "controller.cli", *args]


def _env() -> dict:
    # the production settings: no test switch (such as the one that skips fsync) leaks in
    return {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}


FILLER_EVERY = 20_000       # records a transaction when filling


def fill(path: str, records: int) -> None:
    """`records` note records of a round's size through the journal's append API."""
    data = {"event": "note", "text": "x" * 40, "shoe": 1, "round": 1, "n": 0}
    with Journal(path, durable=False) as j:
        done = 0
        while done < records:
            n = min(FILLER_EVERY, records - done)
            j.stage([("note", dict(data, n=done + i)) for i in range(n)])
            j.commit()
            done += n


def write_journal(path: str, profile: str, seed: int, shoes: int, tail: int,
                  key: str) -> float:
    """The journal as `tablectl simulate` writes it: `shoes` shoes, then the controller killed
    (kill -9) `tail` inputs into the next one, so that a restart has a shoe in play and those
    inputs to replay after its snapshot; seconds it took."""
    t0 = time.perf_counter()
    base = ("simulate", "--profile", profile, "--seed", str(seed), "--journal", path, "--json",
            "--anchor-key", key)
    for more, code in ((("--shoes", str(shoes)), (0,)),
                       (("--shoes", str(shoes + 1), "--fault", f"crash@{tail}"), (-9, 137))):
        done = subprocess.run(tablectl(*base, *more), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)
        if done.returncode not in code:
            raise RuntimeError(f"simulate exited {done.returncode}: "
                               f"{done.stderr.strip()[-400:]}")
    return time.perf_counter() - t0


def restart(path: str, profile_name: str, key: AnchorKey | None) -> dict:
    """check_at_start + open_table, as the table's assembly does them; then the rest. On a
    read-only connection, reading what the writer's reads: a writer's close would merge the
    write-ahead log into the journal's file, and the next run would find its seal void."""
    profile = load_profile(profile_name)
    t0 = time.perf_counter()
    with Journal.open_readonly(path) as j:
        check = check_at_start(j, key, budget=BUDGET)
        table, rec = open_table(profile, j, snapshot=check.snapshot, auto_open=True,
                                betting_seconds=0.0)
        restart_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        check_rest(j, check, key)
        rest_s = time.perf_counter() - t1
        return {"restart_s": restart_s, "rest_s": rest_s, "replayed": rec.inputs_replayed,
                "start_records": j.last_seq - check.checked_after, "pending": check.pending,
                "vouched": check.vouched, "state": table.snapshot()}


def full_replay(path: str, profile_name: str) -> dict:
    profile = load_profile(profile_name)
    t0 = time.perf_counter()
    with Journal.open_readonly(path) as j:
        table, rec = open_table(profile, j, snapshot=None, auto_open=True, betting_seconds=0.0)
        return {"replay_s": time.perf_counter() - t0, "replayed": rec.inputs_replayed,
                "state": table.snapshot()}


def full_check(path: str) -> dict:
    t0, c0 = time.perf_counter(), time.process_time()
    with Journal.open_readonly(path) as j:
        result = j.verify()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"check_s": seconds, "rate": result.records_checked / seconds,
            "cpu_rate": result.records_checked / max(cpu, 1e-9), "ok": result.ok,
            "records": result.records_checked, "result": str(result)}


def process_restart(path: str, scratch: str, profile: str, seed: int, shoes: int,
                    key: str) -> float:
    """`tablectl simulate` started again on a copy of the journal (and its devices' state):
    seconds to its first line (the first event it announces, the shoe resumed)."""
    copy = os.path.join(scratch, "restart.db")
    for side in SIDES:
        if os.path.exists(path + side):
            shutil.copyfile(path + side, copy + side)
    t0 = time.perf_counter()
    proc = subprocess.Popen(tablectl("simulate", "--profile", profile, "--seed", str(seed),
                                     "--shoes", str(shoes + 1), "--journal", copy, "--json",
                                     "--anchor-key", key),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                            cwd=ROOT)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    seconds = time.perf_counter() - t0
    proc.kill()
    err = proc.communicate()[1].decode(errors="replace")
    if not first:
        raise RuntimeError(f"the restart printed nothing: {err.strip()[-400:]}")
    for side in (*SIDES, "-shm", ".lock"):
        if os.path.exists(copy + side):
            os.remove(copy + side)
    return seconds


def run_restart(path: str, key: str) -> dict:
    """`tablectl run` started on the journal itself (the simulated devices beside it), as the
    table PC restarts it: seconds to its first line (the resume said) and to its first card
    event; then killed (kill -9), as the writer was, so that the next run restarts from a
    crash too (its seal still the one the crash left: nothing was checkpointed meanwhile)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(tablectl("run", "--journal", path, "--no-control", "--pace", "0",
                                     "--json", "--anchor-key", key),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                            cwd=ROOT)
    assert proc.stdout is not None
    first = card = None
    try:
        for line in proc.stdout:
            now = time.perf_counter() - t0
            first = now if first is None else first
            if b'"event":"card"' in line.replace(b" ", b""):
                card = now
                break
    finally:
        proc.kill()
        err = proc.communicate()[1].decode(errors="replace")
    if card is None or first is None:
        raise RuntimeError(f"the restarted run dealt no card: {err.strip()[-400:]}")
    said = err.splitlines()[0] if err else ""
    return {"first_s": first, "card_s": card,
            "meanwhile": "checked while the table deals" in said}


def span(values: list[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}–{fmt.format(hi)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="macau")
    ap.add_argument("--shoes", type=int, default=25, help="shoes simulate deals (default 25)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3, help="runs of each measurement")
    ap.add_argument("--tail", type=int, default=300,
                    help="inputs into the last shoe when the writer is killed (default 300)")
    ap.add_argument("--journal", help="journal file: used as it is when it exists, else "
                    "written there (default: a temporary folder)")
    ap.add_argument("--key", help="the anchor key of an existing --journal (default: a new "
                    "key, which the journal written is signed with)")
    ap.add_argument("--filler", type=int, default=0, help="records appended before simulate "
                    "deals (a year of one table: ~7,000,000)")
    ap.add_argument("--no-replay", action="store_true",
                    help="leave out the full replay (minutes on a year's journal)")
    ap.add_argument("--keep", action="store_true", help="keep the written journal")
    ap.add_argument("--project", type=int, default=500_000,
                    help="rounds of the journal whose full check time is projected")
    ap.add_argument("--json", action="store_true", help="also one JSON line on stdout")
    args = ap.parse_args(argv)
    if args.shoes < 1 or args.runs < 1:
        print("recovery.py: give --shoes >= 1 and --runs >= 1", file=sys.stderr)
        return 2
    scratch = tempfile.mkdtemp(prefix="recovery-bench-")
    path = args.journal or os.path.join(scratch, "journal.db")
    try:
        write_s = None
        key_path = args.key or os.path.join(scratch, "anchor.key")
        if not args.key:
            make_key(key_path)
        key = load_key(key_path)
        if not os.path.exists(path):
            t0 = time.perf_counter()
            if args.filler:
                fill(path, args.filler)
            write_s = write_journal(path, args.profile, args.seed, args.shoes, args.tail,
                                    key_path) + time.perf_counter() - t0
        with Journal.open_readonly(path) as j:
            records = j.last_seq
            rounds = sum(1 for _ in j.records(kinds=["round_result"]))
        size_mb = sum(os.path.getsize(path + s) for s in ("", "-wal")
                      if os.path.exists(path + s)) / 1e6
        said = f"written by tablectl simulate in {write_s:.1f} s" if write_s else "given"
        print(f"journal {path}: {rounds:,} rounds, {records:,} records, {size_mb:.1f} MB, "
              f"{said}")
        runs: list[dict] = []
        for _ in range(args.runs):
            t = run_restart(path, key_path)
            r = restart(path, args.profile, key)
            f = {"replay_s": 0.0, "replayed": 0, "state": r["state"]} \
                if args.no_replay else full_replay(path, args.profile)
            c = full_check(path)
            p = process_restart(path, scratch, args.profile, args.seed, args.shoes, key_path)
            if r["state"] != f["state"]:
                print("MISMATCH: the restart from the snapshot and the full replay disagree",
                      file=sys.stderr)
                return 1
            runs.append({"restart_s": r["restart_s"], "replayed": r["replayed"],
                         "start_records": r["start_records"], "rest_s": r["rest_s"],
                         "replay_s": f["replay_s"], "replay_inputs": f["replayed"],
                         "check_s": c["check_s"], "check_rate": c["rate"],
                         "check_cpu_rate": c["cpu_rate"], "ok": c["ok"],
                         "process_s": p, "result": c["result"], "run_first_s": t["first_s"],
                         "run_card_s": t["card_s"], "sealed": t["meanwhile"],
                         "vouched": r["vouched"]})
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        elif not args.journal:
            print(f"kept {path}", file=sys.stderr)

    def col(key: str) -> list[float]:
        return [r[key] for r in runs]

    print(f"{'':44}{'seconds':>16}{'inputs replayed':>17}")
    print(f"{'restart (start check + snapshot + tail)':44}{span(col('restart_s'), '{:.3f}'):>16}"
          f"{runs[0]['replayed']:>17,}")
    print(f"{'full replay (no snapshot)':44}{span(col('replay_s'), '{:.2f}'):>16}"
          f"{runs[0]['replay_inputs']:>17,}")
    sealed = all(r["sealed"] for r in runs)
    print(f"{'rest check':44}{span(col('rest_s'), '{:.2f}'):>16}  "
          + ("(while the table deals: the seal vouches for it)" if sealed else
             "(before the first card: no seal vouches for it)"))
    print(f"{'process: run resumes, to its first line':44}"
          f"{span(col('run_first_s'), '{:.2f}'):>16}")
    print(f"{'process: run resumes, to its first card':44}"
          f"{span(col('run_card_s'), '{:.2f}'):>16}")
    print(f"{'process: simulate resumes, to its first line':44}"
          f"{span(col('process_s'), '{:.2f}'):>16}")
    rates, cpu_rates = col("check_rate"), col("check_cpu_rate")
    per_round = (records - args.filler) / max(rounds, 1)     # the filler is not rounds
    projected = [args.project * per_round / rate for rate in rates]
    print(f"full check (verify-journal): {span(rates, '{:,.0f}')} records/s "
          f"({span(cpu_rates, '{:,.0f}')} a CPU second; aim ≥ {CHECK_AIM:,}: "
          f"{'met' if min(cpu_rates) >= CHECK_AIM else 'NOT met'}); "
          f"a {args.project:,}-round journal (~{args.project * per_round / 1e6:.1f} M records) "
          f"would take {span(projected, '{:,.0f}')} s in full")
    print(f"restart: {span(col('restart_s'), '{:.3f}')} s in process; `run` to its first "
          f"card {span(col('run_card_s'), '{:.2f}')} s with its start-up; aim ≤ "
          f"{RESTART_AIM_S} s: "
          f"{'met' if max(col('run_card_s')) <= RESTART_AIM_S else 'NOT met'} at this size; "
          f"{runs[0]['result']}")
    ok = all(r["ok"] for r in runs)
    if args.json:
        print(json.dumps({
            "bench": "recovery", "profile": args.profile, "rounds": rounds,
            "records": records, "journal_mb": round(size_mb, 2), "runs": args.runs,
            "restart_s": [round(v, 4) for v in col("restart_s")],
            "inputs_replayed": runs[0]["replayed"],
            "start_check_records": runs[0]["start_records"],
            "rest_check_s": [round(v, 3) for v in col("rest_s")],
            "rest_checked_while_dealing": sealed,
            "run_first_line_s": [round(v, 3) for v in col("run_first_s")],
            "run_first_card_s": [round(v, 3) for v in col("run_card_s")],
            "full_replay_s": None if args.no_replay else [round(v, 3) for v in col("replay_s")],
            "process_restart_s": [round(v, 3) for v in col("process_s")],
            "full_check_records_per_s": round(min(rates)),
            "full_check_records_per_s_max": round(max(rates)),
            "full_check_records_per_cpu_s": round(min(cpu_rates)),
            "full_check_records_per_cpu_s_max": round(max(cpu_rates)),
            "filler_records": args.filler,
            "projected_rounds": args.project,
            "projected_full_check_s": round(max(projected), 1),
            "aims": {"restart_s": RESTART_AIM_S, "check_records_per_s": CHECK_AIM},
            "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
