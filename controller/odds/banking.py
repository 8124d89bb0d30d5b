"""Exact odds of the banking games under a strategy, best responses and the equilibrium.

In Chemin de Fer and Baccarat en Banque some cells of the tableau are a choice: the player's 5,
the banker's optional cells, the bank's free draw in Banque. Each such place is a `Cell`, owned
by one *side* (the punters of a hand, or the bank). A *strategy* gives every cell a probability
of drawing: 1 draws, 0 stands, anything between is a mixed choice.

The game modules (chemin_de_fer.py, baccarat_banque.py) enumerate the coup once over card
values with every cell left open, and record each final outcome under the choices that led to
it (a `Coup`). A strategy's figures are then those records weighed by the probability of their
choices, so any strategy, mixed or not, is exact without dealing the coup again.

No cell lies after another cell of the same side on one coup, so a side's best response is
found cell by cell: draw where drawing gains (given what the others do), stand where it loses.

The equilibrium (`equilibria`) is a strategy pair where no side gains by changing. Each punter
side here owns one cell (its hand on 5), the bank owns the rest. A side's return is linear in
each cell's probability, so:

1. every punter pure (draw or stand) with the bank's best response to them;
2. one punter mixed: the bank's gain from drawing in a cell is linear in that punter's
   probability, so the bank can be indifferent only where one of those lines crosses zero;
   there the bank mixes in that cell just enough to leave the punter indifferent;
3. (two punters, Banque) both mixed against a pure bank: each hand is indifferent when the
   other's probability solves one linear equation; the pair found is kept if the bank's best
   response to it is the bank strategy it was solved against (searched from the bank's best
   response to hands that draw on 5 half the time).

Every candidate is checked exactly, so what is printed is an equilibrium; if none is found the
report says so.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import lcm
from typing import Any, Callable, Hashable, Iterable, Mapping

from controller.odds.exact import corners, quadratic_roots, reaches_zero, solve_box

Choice = tuple[str, bool]           # (cell name, drew)
Path = tuple[Choice, ...]           # the choices made on one coup, in cell order
Outcome = Hashable                  # a game's description of one final
ZERO, ONE = Fraction(0), Fraction(1)


@dataclass(frozen=True)
class Cell:
    """A place where `side` chooses to draw or stand."""
    name: str
    side: str
    text: str                       # plain words, e.g. "player on 5"


@dataclass(frozen=True)
class Coup:
    """Every final of one coup: records[path][outcome] = how many card sequences of `length`
    cards end there along `path`; `total` is all of them."""
    game: str
    decks: int | None
    cells: Mapping[str, Cell]       # in the order they are shown
    records: Mapping[Path, Mapping[Any, int]]
    total: int


@dataclass(frozen=True)
class Strategy:
    """The probability of drawing in every cell of a coup, and how it was stated."""
    draw: Mapping[str, Fraction]
    text: str

    def __getitem__(self, cell: str) -> Fraction:
        return self.draw[cell]

    def with_cells(self, cells: Mapping[str, Fraction], text: str) -> "Strategy":
        return Strategy({**self.draw, **cells}, text)


@dataclass(frozen=True)
class Equilibrium:
    strategy: Strategy
    pure: bool                      # no cell mixed
    means: Mapping[str, Fraction]   # each side's expected net per unit staked
    #: cells where a side is indifferent between drawing and standing
    indifferent: tuple[str, ...] = ()


class Solver:
    """A Coup with a paytable: `net(bet, outcome)` per bet, and which bets each side holds.

    The records are regrouped by the bank's cell (and whether it drew) and, within it, by the
    punters' choices (`flags`: per punter cell absent, drew or stood), each group holding every
    side's value as an integer (weight × net × the nets' common denominator). A strategy's
    figures are then sums over those groups with the punters' probabilities brought to a common
    denominator, so they stay exact integers until the last division."""

    def __init__(self, coup: Coup, net: Callable[[str, Outcome], Fraction],
                 bets: tuple[str, ...], sides: Mapping[str, tuple[str, ...]], bank: str):
        self.coup, self.bets, self.bank, self._net_of = coup, bets, bank, net
        self.sides = dict(sides)
        self._side_index = {side: i for i, side in enumerate(self.sides)}
        self.punters = [c for c, cell in coup.cells.items() if cell.side != bank]
        distinct = {o for finals in coup.records.values() for o in finals}
        nets = {(b, o): net(b, o) for o in distinct for b in bets}
        self._den = lcm(*(n.denominator for n in nets.values())) if nets else 1
        # each side's net at each outcome, × den: an integer
        side_net = {o: [sum(int(nets[b, o] * self._den) for b in held)
                        for held in self.sides.values()] for o in distinct}
        # (bank cell or None, drew) → flags → per side value, and → outcome → weight
        self._values: dict[tuple[str | None, bool | None], dict[tuple, list[int]]] = {}
        self._finals: dict[tuple[str | None, bool | None], dict[tuple, Mapping]] = {}
        punter_at = {c: i for i, c in enumerate(self.punters)}
        n_sides = len(self.sides)
        for path, finals in coup.records.items():
            flags = [0] * len(self.punters)
            group: tuple[str | None, bool | None] = (None, None)
            for cell, drew in path:
                if cell in punter_at:
                    flags[punter_at[cell]] = 1 if drew else 2
                else:
                    group = (cell, drew)
            key = tuple(flags)
            values = self._values.setdefault(group, {}).setdefault(key, [0] * n_sides)
            for o, w in finals.items():
                for i, v in enumerate(side_net[o]):
                    values[i] += w * v
            self._finals.setdefault(group, {})[key] = finals
        self._bank_cells = [c for c, cell in coup.cells.items() if cell.side == bank]
        self._equilibria: dict[tuple, list[Equilibrium]] = {}

    # ---- probabilities of the punters' choices, as integers over one denominator --------

    def _phi(self, strategy: Strategy, skip: str | None = None) -> tuple[dict[tuple, int], int]:
        """flags → the punters' probability of those choices × den, and den."""
        parts = []
        den = 1
        for c in self.punters:
            if c == skip:
                parts.append((1, 1, 1))
                continue
            q = strategy[c]
            a, b = q.numerator, q.denominator
            parts.append((b, a, b - a))
            den *= b
        out = {}
        for flags in {k for group in self._values.values() for k in group}:
            v = 1
            for (absent, drew, stood), f in zip(parts, flags):
                v *= absent if f == 0 else drew if f == 1 else stood
            out[flags] = v
        return out, den

    def _bank_factor(self, strategy: Strategy, cell: str | None,
                     drew: bool | None) -> Fraction | int:
        if cell is None:
            return 1
        q = strategy[cell]
        return q if drew else 1 - q

    # ---- a strategy's figures ------------------------------------------------------------

    def outcomes(self, strategy: Strategy) -> dict[Outcome, Fraction]:
        """Probability of every final outcome (they sum to exactly 1)."""
        phi, den = self._phi(strategy)
        acc: dict[Outcome, Fraction | int] = {}
        for (cell, drew), groups in self._finals.items():
            f = self._bank_factor(strategy, cell, drew)
            if not f:
                continue
            for flags, finals in groups.items():
                m = phi[flags] * f
                if m:
                    for o, w in finals.items():
                        acc[o] = acc.get(o, 0) + m * w
        scale = den * self.coup.total
        return {o: Fraction(v) / scale for o, v in acc.items()}

    def bet_distribution(self, strategy: Strategy, bet: str,
                         outcomes: Mapping[Outcome, Fraction] | None = None
                         ) -> dict[Fraction, Fraction]:
        acc: dict[Fraction, Fraction] = {}
        for o, p in (outcomes or self.outcomes(strategy)).items():
            n = self._net(bet, o)
            acc[n] = acc.get(n, ZERO) + p
        return {n: v for n, v in acc.items() if v}

    def mean(self, strategy: Strategy, side: str) -> Fraction:
        """A side's expected net per unit staked under `strategy` (a side holding several bets,
        Banque's bank against each hand, stakes one unit on each)."""
        i = self._side_index[side]
        phi, den = self._phi(strategy)
        acc: Fraction | int = 0
        for (cell, drew), groups in self._values.items():
            f = self._bank_factor(strategy, cell, drew)
            if f:
                acc += f * sum(phi[k] * v[i] for k, v in groups.items())
        return Fraction(acc) / (den * self._den * self.coup.total * len(self.sides[side]))

    def means(self, strategy: Strategy) -> dict[str, Fraction]:
        return {side: self.mean(strategy, side) for side in self.sides}

    # ---- best responses --------------------------------------------------------------------

    def owned(self, side: str) -> list[str]:
        return [c for c, cell in self.coup.cells.items() if cell.side == side]

    def gains(self, strategy: Strategy, side: str) -> dict[str, Fraction]:
        """What `side` gains per coup by drawing rather than standing in each of its cells,
        everything else playing `strategy`."""
        if side == self.bank:
            i = self._side_index[side]
            phi, den = self._phi(strategy)
            scale = den * self._den * self.coup.total
            out = {}
            for c in self._bank_cells:
                d = self._values.get((c, True), {})
                s = self._values.get((c, False), {})
                g = sum(phi[k] * v[i] for k, v in d.items()) - \
                    sum(phi[k] * v[i] for k, v in s.items())
                out[c] = Fraction(g, scale)
            return out
        return {c: self.gain(strategy, c) for c in self.owned(side)}

    def gain(self, strategy: Strategy, cell: str) -> Fraction:
        if self.coup.cells[cell].side == self.bank:
            return self.gains(strategy, self.bank)[cell]
        base, slope = self._linear_gain(strategy, cell)
        return base + sum((slope[c] * strategy[c] for c in slope), ZERO)

    def _linear_gain(self, strategy: Strategy, j: str) -> tuple[Fraction, dict[str, Fraction]]:
        """Punter cell j's gain as base + Σ slope[c] · (the bank's probability of drawing in c),
        the other punters playing `strategy`."""
        side = self._side_index[self.coup.cells[j].side]
        at = self.punters.index(j)
        phi, den = self._phi(strategy, skip=j)
        scale = den * self._den * self.coup.total

        def signed(groups: Mapping[tuple, list[int]]) -> int:
            g = 0
            for k, v in groups.items():
                if k[at]:
                    g += phi[k] * v[side] if k[at] == 1 else -phi[k] * v[side]
            return g

        base = signed(self._values.get((None, None), {}))
        slope = {}
        for c in self._bank_cells:
            d, s = signed(self._values.get((c, True), {})), signed(self._values.get((c, False), {}))
            base += s
            if d != s:
                slope[c] = Fraction(d - s, scale)
        return Fraction(base, scale), slope

    def best_response(self, strategy: Strategy, side: str) -> tuple[Strategy, tuple[str, ...]]:
        """`side`'s best reply to the others' parts of `strategy` (draw where it gains, stand
        where it loses, its own choice kept where it is indifferent), and those cells."""
        gains = self.gains(strategy, side)
        ties = tuple(c for c, g in gains.items() if g == 0)
        best = {c: ONE if g > 0 else ZERO for c, g in gains.items() if g != 0}
        return strategy.with_cells(best, f"{side}'s best response"), ties

    def _net(self, bet: str, outcome: Outcome) -> Fraction:
        return self._net_of(bet, outcome)

    # ---- the equilibrium ---------------------------------------------------------------

    def equilibria(self, start: Strategy) -> list[Equilibrium]:
        """Strategy pairs where no side gains by changing (see the module's docstring);
        `start` gives the cells a search leaves alone (none, in the end)."""
        memo = tuple(sorted(start.draw.items()))
        if memo in self._equilibria:
            return self._equilibria[memo]
        punters = self.punters
        found: list[Equilibrium] = []

        def keep(s: Strategy) -> None:
            if any(e.strategy.draw == s.draw for e in found):
                return
            gains = self.all_gains(s)
            if not self.is_equilibrium(s, gains):
                return
            found.append(Equilibrium(Strategy(s.draw, "equilibrium"),
                                     all(v in (0, 1) for v in s.draw.values()), self.means(s),
                                     tuple(c for c, g in gains.items() if g == 0)))

        for corner in corners(punters):
            keep(self._bank_reply(start.with_cells(corner, "")))
        for j in punters:
            others = [c for c in punters if c != j]
            for corner in corners(others):
                for s in self._one_mixed(start.with_cells(corner, ""), j):
                    keep(s)
        if len(punters) == 2 and not found:
            for s in self._both_mixed(start, punters):
                keep(s)
        self._equilibria[memo] = found
        return found

    def all_gains(self, s: Strategy) -> dict[str, Fraction]:
        out = {}
        for side in {cell.side for cell in self.coup.cells.values()}:
            out.update(self.gains(s, side))
        return out

    def is_equilibrium(self, s: Strategy, gains: Mapping[str, Fraction] | None = None) -> bool:
        """No cell's side gains by moving that cell's probability (draws only where drawing
        does not lose, stands only where standing does not lose)."""
        for c, g in (gains or self.all_gains(s)).items():
            if (g > 0 and s[c] != 1) or (g < 0 and s[c] != 0):
                return False
        return True

    def _bank_reply(self, s: Strategy) -> Strategy:
        reply, _ = self.best_response(s, self.bank)
        return reply

    def _one_mixed(self, s: Strategy, j: str) -> Iterable[Strategy]:
        """Punter cell `j` mixed, the bank indifferent in a cell and mixing to keep it so.

        The bank's gain in each of its cells is linear in j's probability q, so its best reply
        changes only where one of those lines crosses zero; j's own gain does not depend on q,
        only on the bank's cells (linearly). Sweeping q from 0 to 1 through those crossings,
        j can be indifferent only at a crossing where its gain passes through zero."""
        g0 = self.gains(s.with_cells({j: ZERO}, ""), self.bank)
        g1 = self.gains(s.with_cells({j: ONE}, ""), self.bank)
        base, slope = self._linear_gain(s, j)
        crossings: dict[Fraction, list[str]] = {}
        sigma = {}
        for c in g0:
            up = g1[c] - g0[c]
            # the bank's choice just above q = 0
            sigma[c] = ONE if g0[c] > 0 or g0[c] == 0 and up > 0 else ZERO
            if up != 0:
                r = -g0[c] / up
                if 0 < r < 1:
                    crossings.setdefault(r, []).append(c)
        value = base + sum((slope.get(c, ZERO) * v for c, v in sigma.items()), ZERO)
        for r in sorted(crossings):
            cells = crossings[r]
            steps = [slope.get(c, ZERO) * (1 - 2 * sigma[c]) for c in cells]
            after = value + sum(steps, ZERO)
            if reaches_zero(value, steps):
                at = s.with_cells({**sigma, j: r}, "")
                mix = solve_box(lambda m: (self.gain(at.with_cells(m, ""), j),), cells)
                if mix is not None:
                    yield at.with_cells(mix, "")
            for c in cells:
                sigma[c] = 1 - sigma[c]
            value = after

    def _both_mixed(self, start: Strategy, punters: list[str]) -> Iterable[Strategy]:
        """Both punters mixing alike (probability q each): the bank's gain in a cell is a
        quadratic in q along that diagonal, so its best reply changes only at those roots; each
        punter's gain is linear in the other's probability and in the bank's cells. Between two
        roots a punter is indifferent where a line crosses zero; at a root, the bank mixes in
        the cells that change there so that both punters are indifferent."""
        a, b = punters
        corner = {(i, j): self.gains(start.with_cells({a: Fraction(i), b: Fraction(j)}, ""),
                                     self.bank) for i in (0, 1) for j in (0, 1)}
        roots: dict[Fraction, list[str]] = {}
        inexact: set[Fraction] = set()
        sigma: dict[str, Fraction] = {}
        for c in corner[0, 0]:
            k0 = corner[0, 0][c]
            k1 = corner[1, 0][c] + corner[0, 1][c] - 2 * k0
            k2 = corner[1, 1][c] - corner[1, 0][c] - corner[0, 1][c] + k0
            lead = next((k for k in (k0, k1, k2) if k), ZERO)
            sigma[c] = ONE if lead > 0 else ZERO
            for r, exact in quadratic_roots(k0, k1, k2):
                roots.setdefault(r, []).append(c)
                if not exact:
                    inexact.add(r)
        # each punter's gain at q: b0 + (b1 - b0)·q + Σ_c (s0_c + (s1_c - s0_c)·q)·σ_c
        slopes, line = {}, {}
        for own, other in ((a, b), (b, a)):
            b0, s0 = self._linear_gain(start.with_cells({other: ZERO}, ""), own)
            b1, s1 = self._linear_gain(start.with_cells({other: ONE}, ""), own)
            per = {c: (s0.get(c, ZERO), s1.get(c, ZERO) - s0.get(c, ZERO))
                   for c in set(s0) | set(s1)}
            slopes[own] = per
            line[own] = [b0 + sum((per[c][0] for c in per if sigma[c]), ZERO),
                         b1 - b0 + sum((per[c][1] for c in per if sigma[c]), ZERO)]

        def gain_at(own: str, q: Fraction, change: Mapping[str, Fraction] = {}) -> Fraction:
            g = line[own][0] + line[own][1] * q
            for c, v in change.items():
                lo, up = slopes[own].get(c, (ZERO, ZERO))
                g += (lo + up * q) * (v - sigma[c])
            return g

        edges = [ZERO, *sorted(roots), ONE]
        for k in range(len(edges) - 1):
            lo, hi = edges[k], edges[k + 1]
            # inside (lo, hi) the bank's reply is sigma: the punters' gains are lines in q
            g_lo, g_hi = gain_at(a, lo), gain_at(a, hi)
            if g_lo != g_hi:
                q = lo + (hi - lo) * g_lo / (g_lo - g_hi)
                if lo < q < hi and gain_at(b, q) == 0:
                    yield start.with_cells({**sigma, a: q, b: q}, "")
            if hi == ONE:
                break
            flips = roots[hi]
            brackets = all(reaches_zero(gain_at(o, hi), [
                gain_at(o, hi, {c: 1 - sigma[c]}) - gain_at(o, hi) for c in flips])
                for o in (a, b))
            if brackets and hi not in inexact:
                mix = solve_box(lambda m: (gain_at(a, hi, m), gain_at(b, hi, m)), flips)
                if mix is not None:
                    yield start.with_cells({**sigma, **mix, a: hi, b: hi}, "")
            for c in flips:
                sigma[c] = 1 - sigma[c]
                for own in (a, b):
                    lo_c, up_c = slopes[own].get(c, (ZERO, ZERO))
                    sign = 1 if sigma[c] else -1
                    line[own][0] += sign * lo_c
                    line[own][1] += sign * up_c


def choice_text(p: Fraction) -> str:
    """A cell's probability of drawing in words."""
    if p == 1:
        return "draw"
    if p == 0:
        return "stand"
    return f"draw with probability {float(p):.6f} ({p.numerator}/{p.denominator})"
