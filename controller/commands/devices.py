"""`tablectl devices`: a simulated table's hardware and its dealer, in a process of their own.

    tablectl devices --shoe-file F --dealer-display http://127.0.0.1:8080
    shoe: /dev/pts/5 (beetek)
    shuffler: /dev/pts/6

then, in another terminal, `tablectl run --http 127.0.0.1:8080 --shoe-url /dev/pts/5
--shuffler-url /dev/pts/6 …`. The rig deals like a table: the shoe holds no cards until the
dealer loads what the shuffler delivered (with --shoe-file the shuffler delivers that order),
and the dealer follows the table's dealer's display (the page of `run --http`, its event
stream): a card only when the display asks for one, at --pace-ms at the quickest, nothing while
the table shuffles, holds or counts, the rest of each shoe counted back. `--blind` is a dealer
who ignores the display: a card every --pace-ms while a controller has the shoe open (0: one
per Enter), and the shuffler refilled with new decks after each delivery (a test bench, and
chaos tests). `--tcp` gives socket:// URLs instead of ptys. Ctrl-C stops.
"""
from __future__ import annotations

from typing import Any
import argparse
import math
import sys

from controller.errors import InputError
from drivers.shoe import PROTOCOLS

DEFAULT_DISPLAY = "http://127.0.0.1:8080"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "devices", help="a simulated shoe, shuffler and dealer for a table in another process",
        description=__doc__.split("\n\n")[0],
        epilog="Shuffler faults (jam, door_open, count_mismatch) count shuffles from 0: jam@0 "
               "jams the first shuffle; the others count cards in the first shoe's draw order.")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--shoe-file", metavar="F",
                     help="the first shoe: one card code per line in draw order, "
                          "CUT for the cut card")
    src.add_argument("--seed", type=int, metavar="N",
                     help="seed a reproducible first shoe and shuffler "
                          "(tests only; never for play)")
    p.add_argument("--profile", default="macau", metavar="NAME",
                   help="table profile for the decks and cut-card position (default macau)")
    p.add_argument("--shoe-protocol", choices=tuple(PROTOCOLS), default="beetek")
    p.add_argument("--tcp", action="store_true",
                   help="socket://127.0.0.1:PORT URLs instead of ptys")
    p.add_argument("--fault", action="append", default=[], metavar="KIND@N",
                   help="inject a fault (repeatable), e.g. misread@12, double_draw@40, jam@0")
    dealer = p.add_mutually_exclusive_group()
    dealer.add_argument("--dealer-display", metavar="URL", default=DEFAULT_DISPLAY,
                        help="the table's web display the dealer follows, as `tablectl run "
                        f"--http` serves it (default {DEFAULT_DISPLAY})")
    dealer.add_argument("--blind", action="store_true",
                        help="a dealer who ignores the table: a card every --pace-ms whatever "
                        "it asks, and a shuffler refilled with new decks after each delivery")
    p.add_argument("--pace-ms", type=int, default=500, metavar="MS",
                   help="the dealer's pace: the least time between two cards (default 500); "
                   "with --blind the time between two cards, 0 = press Enter for each")
    p.add_argument("--weak-shuffler", action="store_true",
                   help="the shuffler does one riffle instead of a full shuffle (to show "
                   "that `tablectl shuffle-test` catches a bad shuffler; never for play)")
    p.add_argument("--shuffle-seconds", type=float, default=2.0, metavar="S",
                   help="how long one shuffle takes on the simulated shuffler (default 2)")
    p.add_argument("--json", action="store_true", help="print the devices' URLs as one JSON "
                   "object ({\"shoe\": {\"url\", \"protocol\"}, \"shuffler\": {\"url\"}})")
    p.set_defaults(func=run)


def _first_shoe(args: argparse.Namespace, decks: int, cut_from_end: int | None) -> Any:
    if not args.shoe_file:
        return None, None
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.shoe.shoefile import check_against_decks, read_shoe_file
    shoe = read_shoe_file(args.shoe_file)
    check_against_decks(shoe, decks)
    cut = shoe.cut_position
    if cut is None and cut_from_end and cut_from_end < len(shoe.cards):
        cut = len(shoe.cards) - cut_from_end
    return shoe.codes, cut


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.settings.profile import load_profile_for_use
    if args.pace_ms < 0:
        raise InputError(f"--pace-ms {args.pace_ms}: give 0 or more milliseconds")
    if not (math.isfinite(args.shuffle_seconds) and args.shuffle_seconds >= 0):
        raise InputError(f"--shuffle-seconds {args.shuffle_seconds}: give a number of seconds, "
                         f"0 or more")
    profile = load_profile_for_use(args.profile)
    if profile.continuous_shuffler and not args.blind:
        # its dealer would never put a round's cards back into the machine: the shoe runs dry
        raise InputError(f"--profile {args.profile}: this rig has no continuous shuffler; deal "
                         f"a continuous shuffler's table on the embedded simulator (tablectl "
                         f"run, tablectl simulate)")
    cut_from_end = profile.cut_card.default_from_end if profile.cut_card.enabled else None
    cards, cut = _first_shoe(args, profile.decks, cut_from_end)
    from simulators.rig_dealer import events_url
    from simulators.server import build_server, run_until_interrupted
    display = None if args.blind else args.dealer_display
    try:
        shown = events_url(display)[3] if display else ""
        server = build_server(cards=cards, cut_position=cut, decks=profile.decks,
                              cut_from_end=cut_from_end, shoe_protocol=args.shoe_protocol,
                              tcp=args.tcp, faults=args.fault, pace_ms=args.pace_ms,
                              seed=args.seed, shuffle_time_s=args.shuffle_seconds,
                              human_input=sys.stdin, log=sys.stderr,
                              weak_shuffler=args.weak_shuffler, display=display)
    except ValueError as err:               # a bad --fault, URL, or cards the shoe cannot hold
        raise InputError(str(err)) from err
    if display:
        how = (f"the dealer follows the dealer's display at {shown}, a card at most every "
               f"{args.pace_ms} ms")
    elif args.pace_ms == 0:
        how = "blind dealer: press Enter to pull a card"
    else:
        how = (f"blind dealer: a card every {args.pace_ms} ms while a controller has the shoe "
               f"open")
    print(f"tablectl devices: {how}; Ctrl-C stops", file=sys.stderr, flush=True)
    if not getattr(args, "json", False):
        return run_until_interrupted(server, sys.stdout)
    import io
    import json
    urls = {name: {"url": url, **({"protocol": args.shoe_protocol} if name == "shoe" else {})}
            for name, url in server.urls.items()}
    print(json.dumps(urls), flush=True)
    return run_until_interrupted(server, io.StringIO())      # the lines: said above
