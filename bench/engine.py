r"""The same shoes three ways, side by side in one run: the pure rules path, the table machine,
and PyBaccarat's rules-only loop.

- rules: controller.games.deal.ShoeDeal: start burn, between-round burns, rounds to the cut card
  per the profile, third-card rule, outcome and the exact settlement of every bet (every
  round's result, as `ShoeDeal.rounds()` gives them);
- machine: the table machine in process (controller.table.Table, one table dealing shoe after
  shoe as a table does), fed the shoe's card reads as the shoe's driver delivers them
  (drivers.events.CardRead, built before the timing) through `Table.apply_safely`, as the
  table's loop calls it: every event, the inventory, the integrity watch;
- pybaccarat: PyBaccarat 0.18's Shoe and Hand (the optional extra `bench`), its `Game.play`
  loop without display, scoreboards or systems: burn, deal to the cut card, third-card rule,
  winner. It plays one more hand once it has seen the cut card.

Every path deals the same seeded shoes, already shuffled: the timings leave the shuffle out.
A second line times each path shuffling its own shoe first (rules: random.shuffle of the codes;
PyBaccarat: its Shoe.shuffle). Each path repeats the shoes until a timing lasts about
--min-seconds; the paths are timed in turn, --repeat times; every figure is the best of them,
with its range over the repeats beside it. rules_vs_pybaccarat is rules ÷ PyBaccarat timed
shoe by shoe in turn (the same shoe through one, then the other), its median and range over
the repeats: the steadiest side-by-side figure on a shared machine; _best is best to best,
_paired_* the whole timings back to back. Timings are read on this process's
CPU time by default (--clock cpu): on a shared machine the wall clock also counts the turns
other processes take. Should the table machine fail (its API mid-change), the bench says so in
one line and reports the rest.

Usage: python bench/engine.py [--profile macau] [--shoes N] [--repeat R] [--clock cpu|wall]
                              [--json]
With --json, one JSON line: rules_hands_per_s, machine_hands_per_s, pybaccarat_hands_per_s
(null without PyBaccarat), machine_us_per_card and machine_us_per_card_range, machine_vs_rules
(machine ÷ rules), rules_vs_pybaccarat (rules ÷ PyBaccarat, best to best) and
rules_vs_pybaccarat_range, hands_per_s_range per path, and more.

PyBaccarat 0.18's setup.py imports the Windows-only `msvcrt`, so on Linux install it with a
stand-in for the build (setuptools and wheel in the venv), from the repository's root:
    .venv/bin/pip install setuptools wheel
    PYTHONPATH="$PWD/bench/msvcrt_stub" \
        .venv/bin/pip install --no-build-isolation "pybaccarat==0.18"
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess  # noqa: F401  (imported before any msvcrt stand-in: it probes for Windows)
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.games import procedure as procedures  # noqa: E402
from controller.shoe.cards import ordered_shoe  # noqa: E402
from controller.games.deal import ShoeDeal  # noqa: E402
from controller.settings.profile import load_profile  # noqa: E402


def shoes(profile, n: int, seed: int = 1) -> list[list[str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        codes = [c.code for c in ordered_shoe(profile.decks)]
        rng.shuffle(codes)
        out.append(codes)
    return out


# ---- the table machine ---------------------------------------------------------------------------

def card_reads(all_shoes) -> list[list]:
    """Each shoe's card reads as the shoe's driver delivers them to the table's loop."""
    from drivers.events import CardRead
    return [[CardRead(code=code) for code in codes] for codes in all_shoes]


def machine_shoe(table, reads: list, cut: int | None) -> tuple[int, int]:
    """One shoe through the table machine in process: (complete rounds, cards read).
    The one place that knows the table's API (`Table.apply_safely`, as the table's loop
    calls it; a refusal or a defect stops the bench)."""
    from controller.table import command
    from drivers.events import CutCardSeen
    apply = table.apply_safely
    cut_seen = CutCardSeen()
    cards = rounds = 0

    def take(inp) -> list[dict]:
        out = apply(inp)
        if out.refused is not None or out.error is not None:
            raise RuntimeError(f"the table did not take {inp}: {out.refused or out.error}")
        return out.events

    def count(events: list[dict]) -> int:
        n = 0
        for e in events:        # (a loop: a generator would add its own frames to the timing)
            if e["event"] == "round_result" and not e.get("void"):
                n += 1
        return n
    rounds += count(take(command("new_shoe", cut_position=cut)))
    cards = len(reads)
    for i, read in enumerate(reads):
        if i == cut:
            take(cut_seen)
        # as take(read), inline: a card is what is timed
        out = apply(read)
        if out.refused is not None or out.error is not None:
            raise RuntimeError(f"the table did not take {read}: {out.refused or out.error}")
        events = out.events
        if len(events) > 1:             # a card's own event, and more: a round's end, the shoe's
            rounds += count(events)
            if table.state == "shoe_ended":
                cards = i + 1
                break
    return rounds, cards


def machine(profile, all_shoes, cut) -> tuple[int, int]:
    """Every shoe through one table, as a table deals shoe after shoe (reads: card_reads, or
    the shoes' codes)."""
    from controller.table import Table
    table = Table(profile)
    hands = cards = 0
    for reads in all_shoes:
        if reads and isinstance(reads[0], str):
            reads = card_reads([reads])[0]
        h, c = machine_shoe(table, reads, cut)
        hands += h
        cards += c
    return hands, cards


# ---- the pure rules path -------------------------------------------------------------------------

def rules(profile, all_shoes, cut) -> tuple[int, int]:
    hands = cards = 0
    for codes in all_shoes:
        deal = ShoeDeal(profile, codes, cut_position=cut)
        hands += len(deal.rounds())
        cards += deal.cards_used
    return hands, cards


def rules_shuffling(profile, all_shoes, cut) -> tuple[int, int]:
    """As `rules`, each shoe shuffled first (random.shuffle, as PyBaccarat's Shoe.shuffle)."""
    shuffle = random.Random(2).shuffle
    hands = cards = 0
    for codes in all_shoes:
        codes = list(codes)
        shuffle(codes)
        deal = ShoeDeal(profile, codes, cut_position=cut)
        hands += len(deal.rounds())
        cards += deal.cards_used
    return hands, cards


# ---- PyBaccarat ----------------------------------------------------------------------------------

def load_pybaccarat():
    """PyBaccarat's (Card, Shoe, Hand, version), or None when it is not installed.

    pybaccarat.baccarat imports `getch` from the Windows-only msvcrt (for its interactive play);
    a stand-in sits in sys.modules while it loads, and is removed after."""
    stub = types.ModuleType("msvcrt")
    stub.getch = lambda: b"\x1b"
    added = "msvcrt" not in sys.modules
    if added:
        sys.modules["msvcrt"] = stub
    try:
        from pybaccarat import baccarat
        from pybaccarat.playingcards import Card, Shoe
    except ImportError:
        return None
    finally:
        if added:
            sys.modules.pop("msvcrt", None)
    return Card, Shoe, baccarat.Hand, getattr(baccarat, "__version__", "?")


def pybaccarat_shoes(pyb, all_shoes) -> list:
    """The same shoes as PyBaccarat Shoes (a Shoe built from a list of Cards never shuffles)."""
    Card, Shoe = pyb[0], pyb[1]
    cards = {}
    return [Shoe([cards.setdefault(c, Card(c)) for c in codes]) for codes in all_shoes]


def pybaccarat(pyb, pyb_shoes, cut_from_end: int, shuffle: bool = False) -> tuple[int, int]:
    """PyBaccarat's rules-only loop (Game.play less display, scoreboards and systems)."""
    Hand = pyb[2]
    player, banker = Hand(), Hand()
    hands = 0
    for shoe in pyb_shoes:
        hands += pybaccarat_shoe(shoe, player, banker, cut_from_end, shuffle)
    return hands, 0


def pybaccarat_shoe(shoe, player, banker, cut_from_end: int, shuffle: bool = False) -> int:
    """One shoe of PyBaccarat's loop: the hands it played."""
    hands = 0
    shoe.reset()
    if shuffle:
        shoe.shuffle()
    shoe.set_cut_card(-cut_from_end)
    burn = shoe.deal().get_rank()
    if burn > 9:
        burn = 10
    for _ in range(burn):
        shoe.deal()
    last_hand = False
    while not last_hand:
        player.empty()
        banker.empty()
        last_hand = shoe.cut_card_seen()
        player.add(shoe.deal())
        banker.add(shoe.deal())
        player.add(shoe.deal())
        banker.add(shoe.deal())
        if not player.is_natural() and not banker.is_natural():
            if player.need_hit(None):
                player.add(shoe.deal())
            if banker.need_hit(player):
                banker.add(shoe.deal())
        p, b = player.value(), banker.value()
        _winner = "P" if p > b else "B" if b > p else "T"
        hands += 1
    return hands


def interleaved(profile, all_shoes, cut, pyb, pyb_shoes, cut_from_end: int, passes: int,
                clock=time.process_time) -> float:
    """rules ÷ PyBaccarat in hands a second, the two timed shoe by shoe in turn (the same
    shoe one after the other), so that a busier or quieter moment of a shared machine falls
    on both alike."""
    Hand = pyb[2]
    player, banker = Hand(), Hand()
    rules_s = pyb_s = 0.0
    rules_hands = pyb_hands = 0
    for _ in range(passes):
        for codes, shoe in zip(all_shoes, pyb_shoes):
            t0 = clock()
            rules_hands += len(ShoeDeal(profile, codes, cut_position=cut).rounds())
            t1 = clock()
            pyb_hands += pybaccarat_shoe(shoe, player, banker, cut_from_end)
            t2 = clock()
            rules_s += t1 - t0
            pyb_s += t2 - t1
    return (rules_hands / max(rules_s, 1e-9)) / (pyb_hands / max(pyb_s, 1e-9))


# ---- timing --------------------------------------------------------------------------------------

#: the clocks a timing can be read on: the process's own CPU time (what the code costs, less
#: the turns other processes take on a shared machine), or the wall clock
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def timed(fn, *args, passes: int = 1, clock=time.process_time) -> tuple[float, int, int]:
    """(seconds, hands, cards) of `passes` runs of fn(*args)."""
    hands = cards = 0
    t0 = clock()
    for _ in range(passes):
        h, c = fn(*args)
        hands += h
        cards += c
    return clock() - t0, hands, cards


def passes_for(fn, args, min_seconds: float, clock=time.process_time) -> int:
    dt, _, _ = timed(fn, *args, clock=clock)
    return max(1, int(min_seconds / max(dt, 1e-6)) + 1)


def span(values: list[float]) -> list[float] | None:
    """[lowest, highest] of a figure over the repeats (None: never measured)."""
    return [min(values), max(values)] if values else None


def measure(profile, n_shoes: int, repeat: int, min_seconds: float,
            clock_name: str = "cpu") -> dict:
    clock = CLOCKS[clock_name]
    data = shoes(profile, n_shoes)
    cut = procedures.default_cut_position(profile, profile.cards)
    from_end = profile.cards - cut if cut is not None else 0
    runs: dict[str, tuple] = {
        "rules": (rules, (profile, data, cut)),
        "machine": (machine, (profile, card_reads(data), cut)),
        "rules_with_shuffle": (rules_shuffling, (profile, data, cut)),
    }
    pyb = load_pybaccarat()
    if pyb is not None and from_end:
        runs["pybaccarat"] = (pybaccarat, (pyb, pybaccarat_shoes(pyb, data), from_end))
        own = [pyb[1](profile.decks) for _ in range(n_shoes)]
        runs["pybaccarat_with_shuffle"] = (pybaccarat, (pyb, own, from_end, True))
    runs_failed: set[str] = set()
    passes: dict[str, int] = {}
    for name, (fn, args) in list(runs.items()):
        try:
            passes[name] = passes_for(fn, args, min_seconds, clock)
        except Exception as err:        # the table machine mid-rewrite: say so, go on
            if name != "machine":
                raise
            print(f"table machine not measured: {type(err).__name__}: {err}", file=sys.stderr)
            del runs[name]
    best: dict[str, tuple[float, int, int]] = {}
    rates: dict[str, list[float]] = {name: [] for name in runs}     # hands/s, per repeat
    us_per_card: list[float] = []        # the machine's, per repeat
    paired: list[float] = []             # rules ÷ PyBaccarat, timed back to back, per repeat
    turns: list[float] = []              # the same, timed shoe by shoe in turn, per repeat
    pyb_by_shoe = pybaccarat_shoes(pyb, data) if pyb is not None else []
    for _ in range(repeat):
        this: dict[str, float] = {}
        for name, (fn, args) in runs.items():
            try:
                dt, hands, cards = timed(fn, *args, passes=passes[name], clock=clock)
            except Exception as err:
                if name != "machine":
                    raise
                print(f"table machine not measured: {type(err).__name__}: {err}",
                      file=sys.stderr)
                runs_failed.add(name)
                continue
            dt = max(dt, 1e-9)
            this[name] = hands / dt
            rates[name].append(hands / dt)
            if name == "machine" and cards:
                us_per_card.append(dt / cards * 1e6)
            if name not in best or hands / dt > best[name][1] / best[name][0]:
                best[name] = (dt, hands, cards)
        if "pybaccarat" in this:
            paired.append(this["rules"] / this["pybaccarat"])
            turns.append(interleaved(profile, data, cut, pyb, pyb_by_shoe, from_end,
                                     passes["rules"], clock))
        runs = {k: v for k, v in runs.items() if k not in runs_failed}

    def rate(name: str, what: int = 1) -> float | None:
        if name not in best:
            return None
        dt, hands, cards = best[name]
        return (hands if what == 1 else cards) / dt

    out = {"profile": profile.name, "decks": profile.decks, "shoes": n_shoes, "repeat": repeat,
           "clock": clock_name,
           "rules_hands_per_s": rate("rules"), "machine_hands_per_s": rate("machine"),
           "pybaccarat_hands_per_s": rate("pybaccarat"),
           "rules_cards_per_s": rate("rules", 2), "machine_cards_per_s": rate("machine", 2),
           "rules_with_shuffle_hands_per_s": rate("rules_with_shuffle"),
           "pybaccarat_with_shuffle_hands_per_s": rate("pybaccarat_with_shuffle"),
           "hands_per_shoe": {name: best[name][1] / passes[name] / n_shoes for name in best},
           "hands_per_s_range": {name: span(v) for name, v in rates.items() if v},
           "machine_us_per_card": min(us_per_card) if us_per_card else None,
           "machine_us_per_card_range": span(us_per_card),
           "pybaccarat_version": None if pyb is None else str(pyb[3])}
    out["machine_vs_rules"] = (None if out["machine_hands_per_s"] is None
                               else out["machine_hands_per_s"] / out["rules_hands_per_s"])
    # the ratio: shoe by shoe in turn (the steadiest side-by-side figure on a shared machine);
    # beside it the best of each path's own timings, and their back-to-back ratio
    out["rules_vs_pybaccarat"] = statistics.median(turns) if turns else None
    out["rules_vs_pybaccarat_range"] = span(turns)
    out["rules_vs_pybaccarat_best"] = (None if out["pybaccarat_hands_per_s"] is None
                                       else out["rules_hands_per_s"]
                                       / out["pybaccarat_hands_per_s"])
    out["rules_vs_pybaccarat_paired_median"] = statistics.median(paired) if paired else None
    out["rules_vs_pybaccarat_paired_range"] = span(paired)
    return out


def _range(r: list[float] | None, fmt: str) -> str:
    return "-" if r is None else f"{r[0]:{fmt}}–{r[1]:{fmt}}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shoes", type=int, default=20)
    ap.add_argument("--profile", default="macau")
    ap.add_argument("--repeat", type=int, default=5,
                    help="timings per path, taken in turn; the best counts, the range is shown")
    ap.add_argument("--min-seconds", type=float, default=0.2,
                    help="each path repeats the shoes until a timing lasts this long")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                    help="cpu: this process's CPU time (default; other processes' turns on a "
                    "shared machine left out); wall: the wall clock")
    ap.add_argument("--json", action="store_true", help="print one JSON line")
    a = ap.parse_args()
    profile = load_profile(a.profile)
    r = measure(profile, a.shoes, a.repeat, a.min_seconds, a.clock)
    if r["pybaccarat_hands_per_s"] is None:
        print("pybaccarat is not installed (optional extra `bench`; see bench/engine.py): "
              "its figures are left out", file=sys.stderr)
    if a.json:
        print(json.dumps(r))
        return
    print(f"{a.shoes} shoes of {profile.name} ({profile.decks} decks), the same shoes on every "
          f"path; best of {a.repeat} on the {a.clock} clock, range over the {a.repeat}")
    print(f"{'':<24}{'hands/s':>12}{'cards/s':>14}{'µs/hand':>10}   hands/s range")
    rows = (("rules (games.deal)", "rules", "rules_hands_per_s", "rules_cards_per_s"),
            ("table machine", "machine", "machine_hands_per_s", "machine_cards_per_s"),
            (f"pybaccarat {r['pybaccarat_version'] or ''}".rstrip(), "pybaccarat",
             "pybaccarat_hands_per_s", None))
    for label, name, hk, ck in rows:
        hps, cps = r[hk], r[ck] if ck else None
        if hps is None:
            print(f"{label:<24}{'-':>12}{'-':>14}{'-':>10}")
            continue
        print(f"{label:<24}{hps:>12,.0f}{(f'{cps:,.0f}' if cps else '-'):>14}{1e6 / hps:>10.2f}"
              f"   {_range(r['hands_per_s_range'].get(name), ',.0f')}")
    if r["machine_us_per_card"] is not None:
        print(f"table machine: {r['machine_us_per_card']:.2f} µs a card at best, "
              f"{_range(r['machine_us_per_card_range'], '.2f')} µs over the repeats "
              f"(aim: at most 3)")
    if r["rules_vs_pybaccarat"] is not None:
        print(f"rules vs pybaccarat: {r['rules_vs_pybaccarat']:.2f}x (median; "
              f"{_range(r['rules_vs_pybaccarat_range'], '.2f')}x) timed shoe by shoe in turn; "
              f"{r['rules_vs_pybaccarat_best']:.2f}x best to best, "
              f"{_range(r['rules_vs_pybaccarat_paired_range'], '.2f')}x whole timings back to "
              f"back (aim: at least 2x)")
        print(f"each shuffling its own shoe: rules {r['rules_with_shuffle_hands_per_s']:,.0f}, "
              f"pybaccarat {r['pybaccarat_with_shuffle_hands_per_s']:,.0f} hands/s")
    if r["machine_vs_rules"] is not None:
        print(f"machine vs rules: {r['machine_vs_rules']:.4f} "
              f"(the machine takes {1 / r['machine_vs_rules']:.0f}x the rules' time per hand)")


if __name__ == "__main__":
    main()
