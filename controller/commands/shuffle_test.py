"""`tablectl shuffle-test (--shuffler-url URL [--runs K] [--decks N] | --journal J
[--last-shoes N]) [--json]`: shuffle quality.

With --shuffler-url: drives the shuffler K times (shuffle, wait until ready, deliver) and tests
the delivered orders against the order the decks went in (new decks in factory order: spades,
hearts, diamonds, clubs, each ace to king), with the tests of controller.shuffle.stats: position
x card chi-square, adjacent pairs kept, top and bottom card positions, rising sequences and a
runs test. Needs a shuffler that reports the order it delivered (the simulator does).

With --journal: the same questions asked of the last N shoes the table dealt, in the order the
shoe read their cards (controller.shuffle.record), so a shuffler that does not report its order
can still be judged.

The p-values of a battery are adjusted together (Holm-Bonferroni): FAIL means adjusted p < 0.01,
so a perfect shuffler says FAIL in at most 1 % of sessions; FLAG adjusted p < 0.05; else PASS.
Exit status 0 without a FAIL, 1 with one, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, Callable

from controller.shoe.cards import ordered_shoe
from controller.errors import InputError
from controller.shuffle.stats import DEFAULT_RUNS


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "shuffle-test", help="statistical tests of a shuffler's output (PASS / FLAG / FAIL)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--shuffler-url", metavar="URL",
                        help="the shuffler, e.g. usb://VID:PID?sim=NAME, /dev/ttyUSB1, "
                        "socket://host:port")
    source.add_argument("--journal", metavar="J",
                        help="test the shoes recorded in this journal instead")
    parser.add_argument("--runs", type=int, metavar="K",
                        help=f"number of shuffles to test (default {DEFAULT_RUNS}; 10 or more; "
                        "hundreds for fine bins)")
    parser.add_argument("--last-shoes", type=int, metavar="N",
                        help="with --journal: the last N shoes recorded (default 10)")
    parser.add_argument("--decks", type=int,
                        help="decks per shuffle (default 1: every card distinct, the sharpest "
                        "tests)")
    parser.add_argument("--timeout-s", type=float, default=120.0,
                        help="longest wait for one shuffle to finish (default 120)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.set_defaults(func=run)


def driver_source(driver: Any, decks: int, timeout_s: float) -> Callable[[], tuple[list, list]]:
    """A source of (input order, delivered order) pairs from a ShufflerDriver."""
    factory = [c.code for c in ordered_shoe(decks)]

    def source() -> tuple[list, list]:
        from drivers.shuffler import ShuffleCountError
        driver.shuffle(decks)
        try:
            driver.wait_ready(timeout_s, decks=decks)
        except ShuffleCountError as err:
            raise InputError(count_hint(driver.url, err.count, decks)) from None
        order = driver.deliver()
        if order is None:
            raise InputError(f"the shuffler at {driver.url} does not report the order it "
                             "delivered; test real hardware from recorded shoe logs")
        return factory, order
    return source


def count_hint(url: str, counted: int, decks: int) -> str:
    """A shuffler holding other than the decks asked for: what to give instead."""
    line = f"the shuffler at {url} counted {counted} cards, not the {52 * decks} of --decks {decks}"
    if counted and counted % 52 == 0:
        return f"{line}: it holds {counted // 52} decks; give --decks {counted // 52}"
    return f"{line}: load it with whole new decks (52 cards each) and give --decks to match"


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.shuffle.stats import MIN_RUNS, run_shuffle_test
    from drivers.shuffler import open_shuffler
    from simulators.install import install

    if args.journal is not None:
        # what drives a shuffler means nothing for recorded shoes: said, not ignored
        extra = [f for f, v in (("--runs", args.runs), ("--decks", args.decks)) if v is not None]
        if extra:
            raise InputError(f"{' and '.join(extra)} {'go' if len(extra) > 1 else 'goes'} "
                             f"with --shuffler-url; with --journal give --last-shoes N")
        return run_journal(args)
    if args.last_shoes is not None:
        raise InputError("--last-shoes goes with --journal")
    args.runs = DEFAULT_RUNS if args.runs is None else args.runs
    args.decks = 1 if args.decks is None else args.decks
    if not (math.isfinite(args.timeout_s) and args.timeout_s > 0):
        raise InputError(f"--timeout-s {args.timeout_s}: give a number of seconds above 0")
    install()   # a simulated shuffler registered in this process answers usb://…?sim=NAME

    if not 1 <= args.decks <= 12:
        raise InputError(f"--decks {args.decks}: give 1 to 12 decks")
    if args.runs < MIN_RUNS:
        raise InputError(f"--runs {args.runs}: the tests need at least {MIN_RUNS} shuffles")
    driver = open_shuffler(args.shuffler_url)
    try:
        report = run_shuffle_test(driver_source(driver, args.decks, args.timeout_s), args.runs,
                                  progress=_progress(args.runs))
    finally:
        driver.close()
    if args.json:
        json.dump({"shuffler_url": args.shuffler_url, "decks": args.decks, **report.to_json()},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(report.to_text())
    return 1 if report.verdict == "FAIL" else 0


def run_journal(args: argparse.Namespace) -> int:
    import os
    from controller.shuffle.record import judge_journal
    if not os.path.isfile(args.journal):
        raise InputError(f"journal {args.journal}: no such file")
    last = 10 if args.last_shoes is None else args.last_shoes
    report = judge_journal(args.journal, last)
    if args.json:
        json.dump({"journal": args.journal, **report.to_json()}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(report.to_text())
    return 1 if report.verdict == "FAIL" else 0


def _progress(total: int) -> Callable[[int], None]:
    def show(done: int) -> None:
        sys.stderr.write(f"\rshuffling {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()
    return show
