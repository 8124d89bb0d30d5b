"""Exact rational algebra for the equilibrium search (banking.py): roots of a quadratic in
(0, 1), one solution of a linear system, a point of the unit box where affine functions
vanish. Everything is a Fraction; an irrational root is the one approximation, and says so.
"""
from __future__ import annotations

from fractions import Fraction
from itertools import combinations, product
from math import isqrt
from typing import Callable

ZERO, ONE = Fraction(0), Fraction(1)


def reaches_zero(value: Fraction, steps: list[Fraction]) -> bool:
    """Whether value plus some part (0 to all) of each step can be zero."""
    low = value + sum((d for d in steps if d < 0), ZERO)
    high = value + sum((d for d in steps if d > 0), ZERO)
    return low <= 0 <= high


def corners(cells: list[str]) -> list[dict[str, Fraction]]:
    """Every setting of `cells` to 1 (draw) or 0 (stand)."""
    out: list[dict[str, Fraction]] = [{}]
    for c in cells:
        out = [{**d, c: v} for d in out for v in (ONE, ZERO)]
    return out


def quadratic_roots(k0: Fraction, k1: Fraction, k2: Fraction) -> list[tuple[Fraction, bool]]:
    """The roots in (0, 1) of k0 + k1·q + k2·q² where the sign changes, as (root, exact): an
    irrational root is given to 1e-40 (enough to order it among the others) and marked
    inexact: no equilibrium with an exact rational form lies there."""
    if k2 == 0:
        return [(r, True) for r in ([-k0 / k1] if k1 else []) if 0 < r < 1]
    disc = k1 * k1 - 4 * k2 * k0
    if disc <= 0:
        return []
    root, exact = rational_sqrt(disc), True
    if root is None:
        scale = 10 ** 40
        root, exact = Fraction(isqrt(disc.numerator * scale * scale // disc.denominator),
                               scale), False
    return sorted((r, exact) for r in ((-k1 - root) / (2 * k2), (-k1 + root) / (2 * k2))
                  if 0 < r < 1)


def rational_sqrt(x: Fraction) -> Fraction | None:
    n, d = isqrt(x.numerator), isqrt(x.denominator)
    return Fraction(n, d) if n * n == x.numerator and d * d == x.denominator else None


def solve_box(f: Callable[[dict[str, Fraction]], tuple[Fraction, ...]],
               cells: list[str]) -> dict[str, Fraction] | None:
    """Probabilities in [0, 1] for `cells` making every affine function of f zero, or None.

    A feasible point exists if and only if one exists with at most as many cells strictly
    between 0 and 1 as there are equations, the others at 0 or 1 (a basic solution), so those
    are tried: every choice of free cells, every setting of the rest, solved exactly."""
    zero = {c: ZERO for c in cells}
    f0 = f(zero)
    m = len(f0)
    cols = {c: tuple(v - w for v, w in zip(f({**zero, c: ONE}), f0)) for c in cells}
    for k in range(min(m, len(cells)) + 1):
        for free in combinations(cells, k):
            bound = [c for c in cells if c not in free]
            for values in product((ZERO, ONE), repeat=len(bound)):
                rhs = [-f0[i] - sum((cols[c][i] * v for c, v in zip(bound, values)), ZERO)
                       for i in range(m)]
                x = solve_linear([[cols[c][i] for c in free] for i in range(m)], rhs)
                if x is not None and all(0 <= v <= 1 for v in x):
                    return {**dict(zip(bound, values)), **dict(zip(free, x))}
    return None


def solve_linear(a: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """One exact solution of a·x = b (a: m rows of k columns), or None if there is none."""
    m, k = len(a), len(a[0]) if a else 0
    rows = [list(r) + [v] for r, v in zip(a, b)]
    pivots = []
    r = 0
    for col in range(k):
        pivot = next((i for i in range(r, m) if rows[i][col] != 0), None)
        if pivot is None:
            continue
        rows[r], rows[pivot] = rows[pivot], rows[r]
        for i in range(m):
            if i != r and rows[i][col] != 0:
                factor = rows[i][col] / rows[r][col]
                rows[i] = [x - factor * y for x, y in zip(rows[i], rows[r])]
        pivots.append(col)
        r += 1
    if any(all(x == 0 for x in row[:k]) and row[k] != 0 for row in rows):
        return None
    x = [ZERO] * k
    for i, col in enumerate(pivots):
        x[col] = rows[i][k] / rows[i][col]
    return x
