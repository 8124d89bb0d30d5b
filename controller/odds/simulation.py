"""Observed frequencies and mean returns of simulated shoes beside the exact odds.

The rounds come from the table's rules dealing whole shoes (controller.games.deal, which
deals a shoe exactly as the table does: burns, rounds to the cut card, settlement), each shoe a
fresh set of decks shuffled by random.Random(seed) as the seeded simulated shuffler shuffles it
(`tablectl simulate --seed` deals the same shoes); odds never import the pipeline. Whole shoes
are dealt to the cut card, so the observed figures carry the cut-card effect (tiny) as well as
sampling error. 95 % intervals: Wilson's for a frequency; for a bet's mean return,
observed mean ± 1.96 · σ/√n with σ the standard deviation of the bet's exact distribution (a
sample estimate collapses to 0 when, say, every 800:1 bet of a short run lost).

An interval that misses the exact value is explained (how far off, in standard errors), and
the misses are weighed together: each 95 % interval misses by chance once in twenty, so with m
intervals shown k misses or more come by chance with the binomial probability P(X ≥ k),
X ~ B(m, 0.05), treating the intervals as independent (they are not quite: the outcomes and the
bets share rounds). Below 1 % the misses are more than chance allows (`Misses.within_chance`).
"""
from __future__ import annotations

import math
import random
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, TextIO

from controller.shoe.cards import ALL_CARDS, parse_card
from controller.games.andar_bahar import first_three_pattern
from controller.games.deal import ShoeDeal, shuffled_shoes
from controller.odds import OddsReport
from controller.odds.report import table

if TYPE_CHECKING:
    from controller.settings.profile import Profile

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Comparison:
    name: str
    exact: float
    observed: float
    low: float
    high: float

    @property
    def within(self) -> bool:
        return self.low <= self.exact <= self.high


#: below this binomial tail probability the misses are more than chance allows
CHANCE_P = 0.01
MISS_RATE = 0.05


@dataclass
class SimulationSummary:
    shoes: int = 0
    rounds: int = 0
    skipped: int = 0                           # void and demo rounds, not counted
    outcomes: list[Comparison] = field(default_factory=list)
    bets: list[Comparison] = field(default_factory=list)


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95 % interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def round_outcomes(event: dict) -> set[str]:
    """The outcome names (as in OddsReport.outcomes) that one round_result event shows."""
    if event.get("game") == "andar_bahar" or "game_card" in event:
        return _andar_bahar_outcomes(event)
    return _punto_banco_outcomes(event)


def _punto_banco_outcomes(e: dict) -> set[str]:
    player, banker = e["player"], e["banker"]
    cards = {4: "four_cards", 5: "five_cards", 6: "six_cards"}[len(player) + len(banker)]
    out = {e["winner"], cards}
    if e["winner"] == "banker" and e["banker_total"] == 6:
        out.add("banker_wins_with_6")
    if e.get("natural"):
        out.add("natural")
    if _rank(player[0]) == _rank(player[1]):
        out.add("player_pair")
    if _rank(banker[0]) == _rank(banker[1]):
        out.add("banker_pair")
    return out


_RANK_OF = {c.code: c.rank for c in ALL_CARDS}


def _rank(code: str) -> str:
    """The rank of a card code (a canonical code at once, any other through parse_card)."""
    rank = _RANK_OF.get(code)
    return rank if rank is not None else parse_card(code).rank


def _andar_bahar_outcomes(e: dict) -> set[str]:
    out = {e["winner"]}
    n = e["cards_dealt"]
    if n == 1:
        out.add("andar_on_first_card")
    elif n == 2:
        out.add("bahar_on_first_card")
    if n >= 2:
        pattern = first_three_pattern(parse_card(e["game_card"]), parse_card(e["andar"][0]),
                                      parse_card(e["bahar"][0]))
        if pattern:
            out.add(f"first_three_{pattern}")
    return out


def summarise(events: Iterable[dict], exact: OddsReport,
              on_shoe: Callable[[int], None] | None = None) -> SimulationSummary:
    """Tally round results against `exact`; `on_shoe(shoes_done)` after every shoe."""
    s = SimulationSummary()
    seen = {name: 0 for name in exact.outcomes}
    sums = {bet: 0.0 for bet in exact.bets}
    for e in events:
        kind = e.get("event")
        if kind == "shoe_ended":
            s.shoes += 1
            if on_shoe is not None:
                on_shoe(s.shoes)
        if kind != "round_result":
            continue
        if e.get("void") or e.get("demo"):
            s.skipped += 1
            continue
        s.rounds += 1
        for name in round_outcomes(e) & seen.keys():
            seen[name] += 1
        for bet in sums:
            sums[bet] += float(e["bets"][bet])
    n = s.rounds
    for name, p in exact.outcomes.items():
        lo, hi = wilson(seen[name], n)
        s.outcomes.append(Comparison(name, float(p), seen[name] / n if n else 0.0, lo, hi))
    for bet, o in exact.bets.items():
        mean = sums[bet] / n if n else 0.0
        half = Z95 * math.sqrt(float(o.variance) / n) if n else math.inf
        s.bets.append(Comparison(bet, float(o.mean), mean, mean - half, mean + half))
    return s


def simulated_events(profile: Profile, shoes: int, seed: int) -> Iterator[dict]:
    """`round_result` and `shoe_ended` events of `shoes` shoes of `profile`, dealt by the rules
    from the shoes a seeded simulated shuffler delivers (as `tablectl simulate --seed`)."""
    game = profile.game
    for _, codes in zip(range(shoes), shuffled_shoes(profile, seed)):
        # a continuous shuffler's returned cards: the simulated machine is seeded alike
        deal = ShoeDeal(profile, codes, returns=random.Random(seed))
        rounds = 0
        for r in deal:
            rounds += 1
            yield r.event(game)
        yield {"event": "shoe_ended", "rounds": rounds, "reason": deal.end_reason}


def simulate(profile: Profile, exact: OddsReport, shoes: int, seed: int,
             progress: Callable[[int], None] | None = None) -> SimulationSummary:
    """Deal `shoes` seeded shoes of `profile` by the rules and compare with `exact`."""
    return summarise(simulated_events(profile, shoes, seed), exact, on_shoe=progress)


class ProgressBar:
    """`simulating [#####-----] 3/10 shoes` redrawn in place on a stream (stderr)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30):
        self.total, self.width = total, width
        self.stream = stream if stream is not None else sys.stderr

    def __call__(self, done: int) -> None:
        filled = self.width * done // self.total if self.total else self.width
        self.stream.write(f"\rsimulating [{'#' * filled}{'-' * (self.width - filled)}] "
                          f"{done}/{self.total} shoes")
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


@dataclass(frozen=True)
class Misses:
    """The intervals that miss their exact value, and whether that many is within chance."""
    missed: list[tuple[Comparison, float]]     # each with its distance in standard errors
    shown: int
    p_value: float                             # P(this many misses or more by chance)

    @property
    def expected(self) -> float:
        return self.shown * MISS_RATE

    @property
    def within_chance(self) -> bool:
        return self.p_value >= CHANCE_P


def binomial_at_least(k: int, m: int, p: float) -> float:
    """P(X ≥ k) for X ~ B(m, p)."""
    return min(1.0, sum(math.comb(m, i) * p ** i * (1 - p) ** (m - i) for i in range(k, m + 1)))


def misses(s: SimulationSummary) -> Misses:
    out: list[tuple[Comparison, float]] = []
    n = s.rounds
    for i, c in enumerate(s.outcomes + s.bets):
        if c.within or not n:
            continue
        if i < len(s.outcomes):             # a frequency: its standard error at the exact p
            se = math.sqrt(c.exact * (1 - c.exact) / n)
        else:
            se = (c.high - c.low) / (2 * Z95)
        out.append((c, (c.observed - c.exact) / se if se > 0 else math.inf))
    shown = len(s.outcomes) + len(s.bets)
    return Misses(out, shown, binomial_at_least(len(out), shown, MISS_RATE))


def misses_text(m: Misses) -> list[str]:
    """Each miss explained, then the misses weighed against chance."""
    if not m.missed:
        return [f"Every exact value lies in its interval ({m.shown} shown)."]
    lines = ["Intervals that miss the exact value:"]
    for c, z in m.missed:
        side = "above" if c.exact > c.high else "below"
        lines.append(f"  {c.name}: the exact {c.exact:.6f} lies {side} the interval "
                     f"[{c.low:.6f}, {c.high:.6f}]; observed {c.observed:.6f}, "
                     f"{abs(z):.1f} standard errors {'above' if z > 0 else 'below'} it.")
    verdict = ("within what chance allows" if m.within_chance else
               "MORE than chance allows: check the rules, the paytable and the shuffles")
    lines.append(f"{len(m.missed)} of {m.shown} intervals miss. At 95 % each misses by chance "
                 f"once in twenty, so about {m.expected:.1f} are expected to; {len(m.missed)} or "
                 f"more miss by chance with probability {m.p_value:.3f} (binomial, the intervals "
                 f"taken as independent): {verdict} (the line is {CHANCE_P}).")
    return lines


def to_json(s: SimulationSummary, seed: int) -> dict:
    def rows(items: list[Comparison]) -> dict:
        return {c.name: {"exact": c.exact, "observed": c.observed, "ci95": [c.low, c.high],
                         "within": c.within} for c in items}
    m = misses(s)
    return {"seed": seed, "shoes": s.shoes, "rounds": s.rounds, "skipped_rounds": s.skipped,
            "outcomes": rows(s.outcomes), "mean_return": rows(s.bets),
            "misses": {"intervals": m.shown, "missed": [c.name for c, _ in m.missed],
                       "expected": m.expected, "p_value": m.p_value,
                       "within_chance": m.within_chance}}


def to_text(s: SimulationSummary, seed: int) -> str:
    lines = [f"Simulation: {s.shoes} shoes, {s.rounds} rounds (seed {seed}"
             + (f"; {s.skipped} void or demo rounds left out" if s.skipped else "") + "), "
             "dealt to the cut card by the table's rules; 95 % confidence intervals", ""]
    rows = [[c.name, f"{c.exact:.6f}", f"{c.observed:.6f}", f"[{c.low:.6f}, {c.high:.6f}]",
             "yes" if c.within else "NO"] for c in s.outcomes]
    lines += table(["Outcome", "Exact", "Observed", "95 % CI", "Exact in CI"], rows, {1, 2})
    lines.append("")
    rows = [[c.name, f"{c.exact:+.6f}", f"{c.observed:+.6f}", f"[{c.low:+.6f}, {c.high:+.6f}]",
             "yes" if c.within else "NO"] for c in s.bets]
    lines += table(["Bet", "Exact mean return", "Observed", "95 % CI", "Exact in CI"], rows,
                    {1, 2})
    lines.append("")
    lines += misses_text(misses(s))
    return "\n".join(lines)

