"""Memory over a long run: `tablectl simulate`'s resident size after a few shoes and after many.

Starts `tablectl simulate --profile PROFILE --seed S --shoes MANY --json` (the production path:
the simulated devices behind their URLs, the drivers, the one loop, the journal) as a process
of its own, reads its output as a consumer would, and reads the process's resident set size
(VmRSS, /proc) the moment the FEW-th and the MANY-th `shoe_ended` come out. Flat memory is a
ratio near 1: the aim is at most 1.10. With `--journal` the run journals to a file (the shoes of
a day kept on disk); without, to a scratch journal of its own. `--table run` measures
`tablectl run --pace 0` on the embedded simulator instead (real time: about a second a shoe).

    python bench/memory.py [--few 30] [--many 300] [--runs 1] [--profile macau] [--journal]
                           [--table simulate|run] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AIM = 1.10


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    """The process's resident set now (VmRSS), or its peak so far (VmHWM), in kB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for process {pid}")


def one_run(profile: str, seed: int, few: int, many: int, journal: str | None,
            table: str = "simulate", scratch: str = "") -> dict:
    cmd = [sys.executable, "-m", "controller.cli", table, "--profile", profile,
           "--seed", str(seed), "--shoes", str(many), "--json"]
    if table == "run":
        cmd += ["--pace", "0", "--no-control", "--config", str(ROOT / "config" / "table.toml"),
                "--journal", journal or os.path.join(scratch, f"run-{seed}.db")]
    elif journal:
        cmd += ["--journal", journal]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=ROOT)
    assert proc.stdout is not None
    ended, at, peak = 0, {}, 0
    for line in proc.stdout:
        if b'"event":"shoe_ended"' in line:
            ended += 1
            if ended in (few, many):
                at[ended] = rss_kb(proc.pid)
            if ended == many:
                peak = rss_kb(proc.pid, "VmHWM")
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.wait() != 0 or len(at) < 2:
        raise RuntimeError(f"simulate stopped after {ended} shoes: {err.strip()[-500:]}")
    seconds = time.perf_counter() - t0
    return {"seed": seed, "hwm_mb": round(peak / 1024, 1), "rss_few_mb": round(at[few] / 1024, 1),
            "rss_many_mb": round(at[many] / 1024, 1), "ratio": round(at[many] / at[few], 3),
            "seconds": round(seconds, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--few", type=int, default=30, help="shoes at the first reading")
    ap.add_argument("--many", type=int, default=300, help="shoes at the second reading")
    ap.add_argument("--runs", type=int, default=1, help="runs, each with its own seed")
    ap.add_argument("--profile", default="macau")
    ap.add_argument("--journal", action="store_true", help="journal each run to a file")
    ap.add_argument("--table", choices=("simulate", "run"), default="simulate",
                    help="the command measured (default simulate)")
    ap.add_argument("--json", action="store_true", help="also print one JSON line")
    args = ap.parse_args(argv)
    if not (0 < args.few < args.many) or args.runs < 1:
        print("memory.py: give 0 < --few < --many and --runs >= 1", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="memory-bench-") as tmp:
        for k in range(args.runs):
            journal = os.path.join(tmp, f"run{k}.db") if args.journal else None
            results.append(one_run(args.profile, k + 1, args.few, args.many, journal,
                                   args.table, tmp))
    ratios = [r["ratio"] for r in results]
    print(f"tablectl {args.table} --profile {args.profile}"
          f"{' --pace 0' if args.table == 'run' else ''}"
          f"{' --journal FILE' if args.journal or args.table == 'run' else ''}: "
          f"resident memory (VmRSS)")
    print(f"{'seed':>5} {f'after {args.few} shoes':>16} {f'after {args.many} shoes':>17} "
          f"{'ratio':>7} {'peak (VmHWM)':>13} {'seconds':>8}")
    for r in results:
        print(f"{r['seed']:>5} {r['rss_few_mb']:>13.1f} MB {r['rss_many_mb']:>14.1f} MB "
              f"{r['ratio']:>7.3f} {r['hwm_mb']:>10.1f} MB {r['seconds']:>8.1f}")
    worst = max(ratios)
    print(f"ratio {min(ratios):.3f}–{worst:.3f} over {len(ratios)} run(s); aim ≤ {AIM:.2f}: "
          f"{'met' if worst <= AIM else 'NOT met'}")
    if args.json:
        print(json.dumps({"bench": "memory", "table": args.table, "profile": args.profile,
                          "few": args.few,
                          "many": args.many, "journal": args.journal, "runs": results,
                          "ratio_min": min(ratios), "ratio_max": worst, "aim": AIM,
                          "hwm_mb_max": max(r["hwm_mb"] for r in results),
                          "met": worst <= AIM}))
    return 0 if worst <= AIM else 1


if __name__ == "__main__":
    sys.exit(main())
