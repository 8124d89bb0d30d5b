"""Shuffle quality: statistical tests of K shuffles, each an (input order, output order) pair.

A run becomes a permutation `perm` with perm[output position] = input position. Items that occur
once (a single deck, or numbered cards) map exactly; identical items (the copies of a card in a
multi-deck shoe) are matched at random. For a uniform shuffle that matching yields a uniform
permutation, so every null distribution below stays exact; it weakens the tests that follow one
card (top and bottom card, rising sequences, adjacent pairs) on multi-deck shoes, which is why a
single deck is the sharper instrument.

Tests (docs/shuffle-test.md), each with a statistic and a p-value:
- position × card chi-square: output-position bins × input-position bins. Each run's table has
  fixed margins (one card per position, each card once), so it is a random contingency table
  with df = (R − 1)(C − 1), and Pearson's X² has mean df · n/(n − 1) exactly; X² · (n − 1)/n is
  referred to χ²(df). Bins are as many as keep every expected count ≥ 5 (R = C, sizes differing
  by at most one), so few runs are aggregated into coarse bins, many runs reach one cell per
  position and card.
- adjacent pairs: how often a card is still directly followed by its original successor. Per
  run the mean is (n − 1)/n and the variance (n² − n − 1)/n²; the total over K runs is referred
  to a Poisson law with that mean (two-sided).
- top card / bottom card: where the original first and last cards end up, chi-square against
  uniform over position bins with expected counts ≥ 5 (df = bins − 1).
- rising sequences: 1 + the number of cards i + 1 placed before card i; for a uniform
  permutation mean (n + 1)/2, variance (n + 1)/12; z over the K runs, two-sided normal p.
- Wald–Wolfowitz runs: the output as a two-valued sequence (odd/even rank for card codes,
  otherwise below/above the median input position); runs against their exact mean and variance
  for that many of each kind; z over the K runs, two-sided.
Several tests on one set of shuffles: each p-value is adjusted by the Holm–Bonferroni procedure
(`holm`), which keeps the family-wise error rate — the chance that a perfect shuffler draws any
verdict at all — at the stated level whatever the dependence between the tests. Verdicts on the
adjusted p: FAIL below 0.01 (a family-wise false-alarm rate of at most 1 %: a session of a
perfect shuffler says FAIL at most once in a hundred), FLAG below 0.05 (at most 5 %), else PASS.
Measured by bench/shuffle_fpr.py.

No scipy: the chi-square and Poisson tails use the regularised incomplete gamma function below,
normal tails math.erfc.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Callable, Hashable, Sequence

from controller.shoe.cards import CardCodeError, parse_card
from controller.errors import InputError

PASS_P, FAIL_P = 0.05, 0.01
MIN_RUNS = 10
DEFAULT_RUNS = 40
MIN_EXPECTED = 5.0


# ---- distribution tails ---------------------------------------------------------------------

def _lower_series(a: float, x: float) -> float:
    """P(a, x) by its power series (converges fast for x < a + 1)."""
    term = total = 1.0 / a
    ap = a
    for _ in range(100_000):
        ap += 1.0
        term *= x / ap
        total += term
        if abs(term) < abs(total) * 1e-16:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _upper_fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction (modified Lentz; for x ≥ a + 1)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def gamma_p(a: float, x: float) -> float:
    """Regularised lower incomplete gamma P(a, x)."""
    if a <= 0:
        raise ValueError("gamma_p needs a > 0")
    if x <= 0:
        return 0.0
    return _lower_series(a, x) if x < a + 1 else 1.0 - _upper_fraction(a, x)


def gamma_q(a: float, x: float) -> float:
    """Regularised upper incomplete gamma Q(a, x) = 1 − P(a, x)."""
    if a <= 0:
        raise ValueError("gamma_q needs a > 0")
    if x <= 0:
        return 1.0
    return 1.0 - _lower_series(a, x) if x < a + 1 else _upper_fraction(a, x)


def chi2_sf(x: float, df: int) -> float:
    """P(χ²(df) ≥ x)."""
    return gamma_q(df / 2.0, x / 2.0)


def normal_two_sided(z: float) -> float:
    """P(|N(0, 1)| ≥ |z|)."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def poisson_two_sided(k: int, mean: float) -> float:
    """Two-sided p of observing k from Poisson(mean): twice the smaller tail, at most 1."""
    at_most = gamma_q(k + 1, mean)                    # P(X ≤ k)
    at_least = 1.0 if k == 0 else gamma_p(k, mean)    # P(X ≥ k)
    return min(1.0, 2.0 * min(at_most, at_least))


# ---- results ----------------------------------------------------------------------------------

def verdict(p: float) -> str:
    return "PASS" if p >= PASS_P else "FLAG" if p >= FAIL_P else "FAIL"


#: the family-wise error rates the verdicts stand for (FAIL, FLAG), as the output states them
FAMILY_WISE = {"FAIL": FAIL_P, "FLAG": PASS_P}


@dataclass(frozen=True)
class TestResult:
    name: str
    statistic: float
    p_value: float
    detail: str
    adjusted: float | None = None       # Holm–Bonferroni over the battery; None: alone

    @property
    def verdict(self) -> str:
        return verdict(self.p_value if self.adjusted is None else self.adjusted)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the given order: the i-th smallest p times
    (m − i + 1), made non-decreasing, at most 1. Rejecting where adjusted < α keeps the
    family-wise error rate ≤ α."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def adjust(results: Sequence[TestResult]) -> list[TestResult]:
    """The battery's results with their Holm-adjusted p-values."""
    from dataclasses import replace
    return [replace(t, adjusted=a) for t, a in zip(results, holm([t.p_value for t in results]))]


def _bins(n: int, b: int) -> list[int]:
    """Bin index of each of n positions for b bins whose sizes differ by at most one."""
    return [i * b // n for i in range(n)]


def _inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for pos, src in enumerate(perm):
        inv[src] = pos
    return inv


# ---- the tests ----------------------------------------------------------------------------------

def position_card_chi_square(perms: Sequence[Sequence[int]], n: int) -> TestResult:
    k = len(perms)
    size = max(1, math.ceil(math.sqrt(MIN_EXPECTED * n / k)))
    b = min(n, max(2, n // size))
    bin_of = _bins(n, b)
    sizes = Counter(bin_of)
    table = [[0] * b for _ in range(b)]
    for perm in perms:
        for pos, src in enumerate(perm):
            table[bin_of[pos]][bin_of[src]] += 1
    x2 = 0.0
    for r in range(b):
        for c in range(b):
            expected = k * sizes[r] * sizes[c] / n
            x2 += (table[r][c] - expected) ** 2 / expected
    x2 *= (n - 1) / n
    df = (b - 1) ** 2
    return TestResult("position x card chi-square", x2, chi2_sf(x2, df),
                      f"{b}x{b} bins of output x input positions, df {df}")


def adjacent_pairs(perms: Sequence[Sequence[int]], n: int) -> TestResult:
    kept = sum(1 for perm in perms for a, b in zip(perm, perm[1:]) if b == a + 1)
    mean = len(perms) * (n - 1) / n
    return TestResult("adjacent pairs kept", kept, poisson_two_sided(kept, mean),
                      f"{kept} kept, expected {mean:.2f}")


def extreme_card_position(perms: Sequence[Sequence[int]], n: int, which: str) -> TestResult:
    """Chi-square of where the original top (`which="top"`) or bottom card ends up."""
    card = 0 if which == "top" else n - 1
    k = len(perms)
    b = min(n, max(2, n // max(1, math.ceil(MIN_EXPECTED * n / k))))
    bin_of = _bins(n, b)
    sizes = Counter(bin_of)
    seen = Counter(bin_of[list(perm).index(card)] for perm in perms)
    x2 = sum((seen[r] - k * sizes[r] / n) ** 2 / (k * sizes[r] / n) for r in range(b))
    return TestResult(f"{which} card position", x2, chi2_sf(x2, b - 1),
                      f"{b} position bins, df {b - 1}")


def rising_sequences(perms: Sequence[Sequence[int]], n: int) -> TestResult:
    total = 0
    for perm in perms:
        inv = _inverse(perm)
        total += 1 + sum(1 for i in range(n - 1) if inv[i + 1] < inv[i])
    k = len(perms)
    mean, var = k * (n + 1) / 2, k * (n + 1) / 12
    z = (total - mean) / math.sqrt(var)
    return TestResult("rising sequences", z, normal_two_sided(z),
                      f"mean {total / k:.2f} per run, expected {(n + 1) / 2:.2f}")


def runs_test(sequences: Sequence[Sequence[bool]], what: str) -> TestResult:
    """Wald–Wolfowitz runs of each shuffle's output, read as a two-valued sequence."""
    total, mean, var = 0, 0.0, 0.0
    for seq in sequences:
        n = len(seq)
        n1 = sum(1 for m in seq if m)
        n2 = n - n1
        if not n1 or not n2:
            raise ValueError("the runs test needs cards of both kinds")
        total += 1 + sum(1 for a, b in zip(seq, seq[1:]) if a != b)
        mean += 2 * n1 * n2 / n + 1
        var += 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    k = len(sequences)
    z = (total - mean) / math.sqrt(var)
    return TestResult(f"runs test ({what})", z, normal_two_sided(z),
                      f"mean {total / k:.2f} runs per shuffle, expected {mean / k:.2f}")


def two_valued(after: Sequence[Hashable], perm: Sequence[int]) -> tuple[list[bool], str]:
    """The output as odd/even rank when every item is a card code, else as below/above the
    median input position."""
    try:
        return [parse_card(str(x)).rank_index % 2 == 1 for x in after], "rank parity"
    except CardCodeError:
        half = len(perm) / 2
        return [src < half for src in perm], "above/below median"


def shuffle_tests(perms: Sequence[Sequence[int]], sequences: Sequence[Sequence[bool]],
                  what: str) -> list[TestResult]:
    """Every test on K permutations of n cards and their two-valued output sequences."""
    n = len(perms[0])
    return [position_card_chi_square(perms, n), adjacent_pairs(perms, n),
            extreme_card_position(perms, n, "top"), extreme_card_position(perms, n, "bottom"),
            rising_sequences(perms, n), runs_test(sequences, what)]


# ---- driving a shuffler --------------------------------------------------------------------------

def to_permutation(before: Sequence[Hashable], after: Sequence[Hashable],
                   rng: random.Random) -> list[int]:
    """perm[output position] = input position; identical items are matched at random."""
    where: dict[Hashable, list[int]] = {}
    for i, x in enumerate(before):
        where.setdefault(x, []).append(i)
    for positions in where.values():
        rng.shuffle(positions)
    return [where[x].pop() for x in after]


@dataclass(frozen=True)
class ShuffleReport:
    runs: int
    cards: int
    tests: list[TestResult]

    @property
    def verdict(self) -> str:
        return overall_verdict(self.tests)

    def to_json(self) -> dict:
        return {"runs": self.runs, "cards": self.cards, "verdict": self.verdict,
                "correction": correction_json(len(self.tests)),
                "tests": [{**asdict(t), "verdict": t.verdict} for t in self.tests]}

    def to_text(self, title: str = "") -> str:
        return battery_text(title or f"Shuffle test: {self.runs} shuffles of {self.cards} cards",
                            self.tests, self.verdict)


def correction_json(m: int) -> dict:
    return {"method": "holm-bonferroni", "tests": m,
            "family_wise_error_rate": {"FAIL": FAIL_P, "FLAG": PASS_P}}


def correction_text(m: int) -> str:
    return (f"The {m} p-values are adjusted by the Holm-Bonferroni procedure, so each verdict "
            f"holds for the whole battery: a perfect shuffler gives FAIL in at most "
            f"{FAIL_P:.0%} of sessions (family-wise error rate) and FLAG in at most "
            f"{PASS_P:.0%}. FAIL: adjusted p < {FAIL_P}; FLAG: adjusted p < {PASS_P}; "
            f"else PASS.")


def battery_text(title: str, tests: Sequence[TestResult], overall: str) -> str:
    """A battery's results as an aligned table, its correction and its overall verdict."""
    from controller.odds.report import table
    rows = [[t.name, f"{t.statistic:.3f}", f"{t.p_value:.4f}",
             f"{t.p_value if t.adjusted is None else t.adjusted:.4f}", t.verdict, t.detail]
            for t in tests]
    lines = [title, ""]
    lines += table(["Test", "Statistic", "p-value", "Adjusted p", "Verdict", "Detail"], rows,
                   {1, 2, 3})
    lines += ["", correction_text(len(tests)), f"Overall: {overall}"]
    return "\n".join(lines)


def overall_verdict(tests: Sequence[TestResult]) -> str:
    order = ("PASS", "FLAG", "FAIL")
    return max((t.verdict for t in tests), key=order.index, default="PASS")


def run_shuffle_test(source: Callable[[], tuple[Sequence[Hashable], Sequence[Hashable]]],
                     runs: int, *, matching_seed: int = 0,
                     progress: Callable[[int], None] | None = None) -> ShuffleReport:
    """Call `source()` `runs` times for (input order, output order) and run every test."""
    if runs < MIN_RUNS:
        raise InputError(f"--runs {runs}: the tests need at least {MIN_RUNS} shuffles")
    rng = random.Random(matching_seed)
    perms: list[list[int]] = []
    sequences: list[list[bool]] = []
    kinds: set[str] = set()
    for i in range(runs):
        before, after = source()
        if len(before) < 4:
            raise InputError(f"shuffle {i + 1}: {len(before)} cards are too few to test")
        if Counter(before) != Counter(after):
            raise InputError(f"shuffle {i + 1}: the output is not a rearrangement of the input "
                             f"({len(before)} cards in, {len(after)} out)")
        if perms and len(before) != len(perms[0]):
            raise InputError(f"shuffle {i + 1}: {len(before)} cards, the first had "
                             f"{len(perms[0])}")
        perm = to_permutation(before, after, rng)
        seq, what = two_valued(after, perm)
        perms.append(perm)
        sequences.append(seq)
        kinds.add(what)
        if progress is not None:
            progress(i + 1)
    if len(kinds) > 1:
        raise InputError("the shuffles mix card codes with other items")
    return ShuffleReport(runs, len(perms[0]), adjust(shuffle_tests(perms, sequences,
                                                                    kinds.pop())))
