"""Exact probability of every outcome and the RTP and house edge of every bet of the profile's
paytable, as decimals and exact fractions, off the top of a full shoe (or an infinite deck).

Chemin de Fer and Baccarat en Banque: the figures depend on the choices of each side (the
player on 5, the banker's optional cells; in Banque each hand on 5 and the bank's free draw),
so they are given for a strategy (--strategy; default: what the table's rules decide when
nobody chooses), with each side's best response to it and the equilibrium, where no side
gains by changing. SPEC: default | draw | stand, then CELL=draw|stand|P (P the probability of
drawing, e.g. 0.25 or 9/11; cells player_5, banker_3_9, banker_5_4; right_5, left_5 and
bank_TOTAL_RIGHT_LEFT with RIGHT/LEFT natural, stood or the third card 0-9), SIDE=best, and in
Banque bank=N (draws on 0 to N) or bank=tableau[-right|-left]; comma-separated, later items
override earlier ones, e.g. `--strategy draw,player_5=stand`.

With --simulate, deals that many seeded shoes by the table's rules in process (the shoes
`tablectl simulate --seed` plays) and prints the observed frequencies and mean returns beside
the exact ones, with 95 % confidence intervals; an interval that misses the exact value is
explained, and the misses are weighed against what chance allows for the number of intervals
shown. Exit status 1 when they are more than chance allows (binomial tail below 1 %), else 0.
"""
from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any

from controller.errors import InputError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "odds", help="exact odds, RTP and house edge of a profile's paytable",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", required=True, metavar="NAME|PATH",
                        help="profile name (config/profiles/NAME.toml) or path")
    parser.add_argument("--decks", metavar="N|inf",
                        help="decks in the shoe, 1-12, or inf (default: the profile's)")
    parser.add_argument("--mode", help="paytable mode (default: the profile's mode)")
    parser.add_argument("--strategy", metavar="SPEC",
                        help="chemin de fer / baccarat en banque: the sides' choices (see above)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--simulate", type=int, metavar="SHOES",
                        help="also play SHOES shoes through the pipeline and compare")
    parser.add_argument("--seed", type=int,
                        help="seed of the simulated shuffles (default: a random seed, printed)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.odds import BANKING_GAMES, compute_odds, parse_decks, report
    from controller.settings.profile import load_profile_for_use

    profile = load_profile_for_use(args.profile)
    if args.mode is not None:
        profile = profile.with_mode(args.mode)
    decks = profile.decks if args.decks is None else parse_decks(args.decks)
    if profile.game in BANKING_GAMES:
        return banking(args, profile, decks)
    if args.strategy is not None:
        raise InputError(f"--strategy: {profile.game} has no choices to make; strategies "
                         f"apply to {', '.join(BANKING_GAMES)}")
    if args.simulate is not None:
        if args.simulate < 1:
            raise InputError(f"--simulate {args.simulate}: give a number of shoes, 1 or more")
        if decks != profile.decks:
            raise InputError(f"--simulate plays the profile's {profile.decks}-deck shoe; "
                             "leave out --decks or give the profile's")
    exact = compute_odds(profile, decks)
    doc: dict[str, Any] = report.to_json(exact) if args.json else {}
    text = report.to_text(exact)
    status = 0
    if args.simulate is not None:
        from controller.odds import simulation   # only --simulate deals shoes
        seed = args.seed if args.seed is not None else secrets.randbelow(2 ** 31)
        summary = simulation.simulate(profile, exact, args.simulate, seed,
                                      progress=simulation.ProgressBar(args.simulate))
        doc["simulation"] = simulation.to_json(summary, seed)
        text += "\n\n" + simulation.to_text(summary, seed)
        status = 0 if simulation.misses(summary).within_chance else 1
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(text)
    return status


def banking(args: argparse.Namespace, profile: Any, decks: int | None) -> int:
    """Chemin de Fer and Baccarat en Banque: the figures of a strategy."""
    from controller.odds import banking_report
    if args.simulate is not None:
        raise InputError(f"--simulate compares Punto Banco and Andar Bahar shoes with their "
                         f"odds; {profile.game} is computed for a stated strategy only")
    if sys.stderr.isatty():
        print(f"tablectl odds: enumerating every coup of {profile.game}…", file=sys.stderr,
              flush=True)
    odds = banking_report.compute(profile, decks, args.strategy)
    if args.json:
        json.dump(banking_report.to_json(odds), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(banking_report.to_text(odds))
    return 0
