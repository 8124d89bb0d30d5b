"""How often the shuffle test cries wolf, and how often it catches a weak shuffler.

    python bench/shuffle_fpr.py [--sessions 500] [--runs 40] [--decks 1] [--seed 1] [--json]

A session is one whole battery, as `tablectl shuffle-test --runs RUNS --decks DECKS` runs it:
RUNS shuffles of new decks in factory order, every test, Holm–Bonferroni, one verdict. The
good shuffler is the simulated one (`simulators.shuffler.ShufflerModel`, Fisher–Yates); the weak
one is the same model with `weak=True` (one riffle). The false-alarm rate is the share of the
good shuffler's sessions that say FAIL (the battery promises at most 1 %), with its 95 %
Wilson interval; the detection rate is the share of the weak shuffler's sessions that say FAIL.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.shoe.cards import ordered_shoe  # noqa: E402
from controller.odds.simulation import wilson  # noqa: E402
from controller.shuffle.stats import DEFAULT_RUNS, FAIL_P, run_shuffle_test  # noqa: E402
from simulators.shuffler import ShufflerModel  # noqa: E402


def verdicts(sessions: int, runs: int, decks: int, seed: int, weak: bool) -> dict[str, int]:
    """How many of `sessions` batteries said PASS, FLAG and FAIL."""
    factory = [c.code for c in ordered_shoe(decks)]
    model = ShufflerModel(seed=seed, decks=decks, weak=weak)
    counts = {"PASS": 0, "FLAG": 0, "FAIL": 0}
    for i in range(sessions):
        report = run_shuffle_test(lambda: (factory, model.shuffled(factory)), runs,
                                  matching_seed=seed + i)
        counts[report.verdict] += 1
    return counts


def measure(sessions: int, runs: int, decks: int, seed: int,
            weak_sessions: int | None = None) -> dict:
    started = time.perf_counter()
    good = verdicts(sessions, runs, decks, seed, weak=False)
    weak_n = sessions if weak_sessions is None else weak_sessions
    weak = verdicts(weak_n, runs, decks, seed + 1, weak=True)
    low, high = wilson(good["FAIL"], sessions)
    return {"false_alarm_rate": good["FAIL"] / sessions,
            "detection_rate": weak["FAIL"] / weak_n if weak_n else None,
            "runs": sessions,
            "promised_false_alarm_rate": FAIL_P,
            "false_alarm_ci95": [low, high],
            "flag_rate": good["FLAG"] / sessions,
            "shuffles_per_run": runs, "decks": decks, "weak_runs": weak_n, "seed": seed,
            "good": good, "weak": weak,
            "seconds": round(time.perf_counter() - started, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=500,
                    help="whole-battery runs on each shuffler (default 500; at least 200)")
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS,
                    help=f"shuffles per battery (default {DEFAULT_RUNS}, the command's)")
    ap.add_argument("--decks", type=int, default=1, help="decks per shuffle (default 1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="one JSON object")
    args = ap.parse_args(argv)
    if args.sessions < 200:
        ap.error("--sessions: at least 200, so that 1 % is two sessions, not a guess")
    doc = measure(args.sessions, args.runs, args.decks, args.seed)
    if args.json:
        print(json.dumps(doc))
    else:
        lo, hi = doc["false_alarm_ci95"]
        print(f"{args.sessions} batteries of {args.runs} shuffles of {args.decks} deck(s) each "
              f"({doc['seconds']} s)")
        print(f"good shuffler: FAIL {doc['false_alarm_rate']:.2%} (95 % CI {lo:.2%}-{hi:.2%}; "
              f"promised at most {FAIL_P:.0%}), FLAG {doc['flag_rate']:.2%}")
        print(f"weak shuffler (one riffle): FAIL {doc['detection_rate']:.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
