"""Whole shoes through the table machine in-process, beside the same rules in a plain loop.

Prints card reads per second and rounds per second for both, and their ratio: the cost of the
`transitions` machine (states, guards, callbacks, events) over the bare rules.
Usage: python bench/engine.py [--shoes N] [--profile NAME]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller import procedures  # noqa: E402
from controller.actions import apply_input  # noqa: E402
from controller.cards import ordered_shoe, parse_card  # noqa: E402
from controller.games import get_rules  # noqa: E402
from controller.inputs import command  # noqa: E402
from controller.profile import load_profile  # noqa: E402
from controller.table import Table  # noqa: E402


def shoes(profile, n: int) -> list[list[str]]:
    rng = random.Random(1)
    out = []
    for _ in range(n):
        codes = [c.code for c in ordered_shoe(profile.decks)]
        rng.shuffle(codes)
        out.append(codes)
    return out


def machine(profile, all_shoes) -> tuple[int, int]:
    cards = rounds = 0
    cut = procedures.default_cut_position(profile, profile.cards)
    for codes in all_shoes:
        t = Table(profile)
        apply_input(t, command("new_shoe", cut_position=cut))
        for i, code in enumerate(codes):
            if t.state == "shoe_ended":
                break
            if i == cut:
                t.on_cut_card()
            t.on_card(code)
            cards += 1
        rounds += sum(1 for e in t.drain() if e["event"] == "round_result")
    return cards, rounds


def plain(profile, all_shoes) -> tuple[int, int]:
    """The same procedure and rules without the machine: burn, rounds, cut card, settlement."""
    rules = get_rules(profile.game)
    cards = rounds = 0
    cut = procedures.default_cut_position(profile, profile.cards)
    for codes in all_shoes:
        pos = procedures.start_burn_total(profile, parse_card(codes[0]))
        cards += pos
        cut_round = None
        n = 0
        while pos < len(codes):
            n += 1
            hands = rules.new_hands()
            burn = procedures.between_round_burn(profile, n - 1)
            if cut_round is None and pos + burn > cut:
                cut_round = n
            pos += burn
            cards += burn
            phase = rules.next_phase(hands)
            while phase is not None and pos < len(codes):
                if cut_round is None and pos >= cut:
                    cut_round = n
                rules.place(hands, phase, parse_card(codes[pos]))
                pos += 1
                cards += 1
                phase = rules.next_phase(hands)
            rules.outcome(hands)
            rules.settle(hands, profile.paytable)
            rounds += 1
            if procedures.shoe_ends_after(profile, n, cut_round):
                break
    return cards, rounds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shoes", type=int, default=20)
    ap.add_argument("--profile", default="live-commission")
    a = ap.parse_args()
    profile = load_profile(a.profile)
    data = shoes(profile, a.shoes)
    results = {}
    for name, fn in (("table machine", machine), ("plain loop", plain)):
        t0 = time.perf_counter()
        cards, rounds = fn(profile, data)
        dt = time.perf_counter() - t0
        results[name] = (cards / dt, rounds / dt, dt / cards * 1e6)
    print(f"{a.shoes} shoes of {a.profile} ({profile.decks} decks)")
    print(f"{'':<15}{'cards/s':>12}{'rounds/s':>12}{'µs/card':>10}")
    for name, (cps, rps, us) in results.items():
        print(f"{name:<15}{cps:>12,.0f}{rps:>12,.0f}{us:>10.1f}")
    ratio = results["plain loop"][0] / results["table machine"][0]
    print(f"machine overhead: {ratio:.1f}x the plain loop (aim: at most 5x)")


if __name__ == "__main__":
    main()
