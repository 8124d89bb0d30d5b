"""Shuffle-quality statistics (controller.shuffle.stats) and `tablectl shuffle-test`."""
from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from controller.shoe.cards import ordered_shoe
from controller.errors import InputError
from controller.shuffle.stats import (adjacent_pairs, chi2_sf, gamma_p, gamma_q,
                                      normal_two_sided, poisson_two_sided, rising_sequences,
                                      run_shuffle_test, runs_test, to_permutation, verdict)
from simulators.shuffler import ShufflerModel

FACTORY = [c.code for c in ordered_shoe(1)]


# ---- distribution tails --------------------------------------------------------------------------

@pytest.mark.parametrize("x,df", [(3.841458820694124, 1), (18.307038053275146, 10),
                                  (124.34211340400407, 100), (1.1454762260617692, 5)])
def test_chi_square_critical_values(x, df):
    # 95th (and, for df 5, 5th) percentiles of χ²
    expected = 0.95 if df == 5 else 0.05
    assert chi2_sf(x, df) == pytest.approx(expected, abs=1e-9)


def test_chi_square_closed_forms_and_large_df():
    for x in (0.1, 2.0, 9.0, 40.0):
        assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
        assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10)
    # large df: near the mean the tail is about a half (Wilson–Hilferty gives 0.4977)
    assert chi2_sf(6724, 6724) == pytest.approx(0.4977, abs=1e-3)
    for a, x in ((0.5, 0.3), (3.0, 7.5), (200.0, 180.0)):
        assert gamma_p(a, x) + gamma_q(a, x) == pytest.approx(1.0, abs=1e-14)


def test_poisson_and_normal_tails():
    lam = 3.2
    pmf = [math.exp(-lam) * lam ** i / math.factorial(i) for i in range(60)]
    for k in (0, 1, 3, 8):
        low, high = sum(pmf[:k + 1]), sum(pmf[k:])
        assert poisson_two_sided(k, lam) == pytest.approx(min(1.0, 2 * min(low, high)),
                                                          rel=1e-9)
    assert normal_two_sided(1.959963984540054) == pytest.approx(0.05, rel=1e-12)
    assert (verdict(0.2), verdict(0.03), verdict(0.001)) == ("PASS", "FLAG", "FAIL")


# ---- null moments, checked over every permutation of a small deck --------------------------------

def test_rising_sequence_and_adjacent_pair_moments_are_exact():
    n = 6
    perms = [list(p) for p in itertools.permutations(range(n))]
    k = len(perms)
    # the whole symmetric group: the z of rising sequences is exactly 0 and the kept pairs
    # total k·(n − 1)/n, each the exact mean
    assert rising_sequences(perms, n).statistic == pytest.approx(0.0, abs=1e-12)
    assert adjacent_pairs(perms, n).statistic == k * (n - 1) // n
    rising = [1 + sum(1 for i in range(n - 1) if p.index(i + 1) < p.index(i)) for p in perms]
    var = sum(r * r for r in rising) / k - ((n + 1) / 2) ** 2
    assert var == pytest.approx((n + 1) / 12)
    kept = [sum(1 for a, b in zip(p, p[1:]) if b == a + 1) for p in perms]
    var = sum(x * x for x in kept) / k - ((n - 1) / n) ** 2
    assert var == pytest.approx((n * n - n - 1) / n ** 2)


def test_runs_test_is_centred_over_all_arrangements():
    seqs = [list(s) for s in set(itertools.permutations([True] * 3 + [False] * 4))]
    assert runs_test(seqs, "x").statistic == pytest.approx(0.0, abs=1e-12)


# ---- good and weak shuffles ---------------------------------------------------------------------

def _riffle(cards: list, rng: random.Random) -> list:
    cut = sum(rng.getrandbits(1) for _ in cards)
    left, right, out = cards[:cut], cards[cut:], []
    while left and right:
        src = left if rng.randrange(len(left) + len(right)) < len(left) else right
        out.append(src.pop(0))
    return out + left + right


def _source(kind: str, seed: int, items: list):
    rng = random.Random(seed)

    def source():
        out = list(items)
        if kind == "random":
            rng.shuffle(out)
        elif kind == "riffle":
            out = _riffle(out, rng)
        return items, out
    return source


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_good_shuffle_passes(seed):
    report = run_shuffle_test(_source("random", seed, FACTORY), 100)
    assert [t.verdict for t in report.tests] == ["PASS"] * 6
    assert report.verdict == "PASS" and report.cards == 52


@pytest.mark.parametrize("kind", ["riffle", "identity"])
def test_weak_shuffles_fail(kind):
    report = run_shuffle_test(_source(kind, 4, FACTORY), 30)
    assert report.verdict == "FAIL"
    by_name = {t.name: t.verdict for t in report.tests}
    assert by_name["rising sequences"] == by_name["adjacent pairs kept"] == "FAIL"
    assert by_name["top card position"] == "FAIL"


def test_numbered_items_use_the_median_split():
    items = list(range(40))
    good = run_shuffle_test(_source("random", 9, items), 60)
    assert good.verdict != "FAIL"
    assert good.tests[-1].name == "runs test (above/below median)"
    assert run_shuffle_test(_source("identity", 9, items), 20).tests[-1].verdict == "FAIL"


def test_null_calibration_of_every_test():
    """Over 300 sessions of a perfect shuffle each test rejects at 5 % about 5 % of the time."""
    rng = random.Random(2024)
    items = list(range(30))

    def source():
        out = list(items)
        rng.shuffle(out)
        return items, out
    p_values: dict[str, list[float]] = {}
    for _ in range(300):
        for t in run_shuffle_test(source, 20).tests:
            p_values.setdefault(t.name, []).append(t.p_value)
    for name, ps in p_values.items():
        rate = sum(p < 0.05 for p in ps) / len(ps)
        assert 0.005 <= rate <= 0.12, (name, rate)
        assert 0.4 <= sum(ps) / len(ps) <= 0.6, name


@pytest.mark.parametrize("decks", [1, 8])
def test_simulator_shuffles(decks):
    factory = [c.code for c in ordered_shoe(decks)]
    good = ShufflerModel(seed=5, decks=decks)
    weak = ShufflerModel(seed=5, decks=decks, weak=True)
    assert run_shuffle_test(lambda: (factory, good.shuffled(factory)), 40).verdict != "FAIL"
    assert run_shuffle_test(lambda: (factory, weak.shuffled(factory)), 20).verdict == "FAIL"


def test_identical_cards_are_matched_at_random():
    before = ["AS", "KD", "AS", "2C"]
    after = ["AS", "2C", "AS", "KD"]
    seen = {tuple(to_permutation(before, after, random.Random(s))) for s in range(20)}
    assert seen == {(0, 3, 2, 1), (2, 3, 0, 1)}


def test_bad_sources():
    with pytest.raises(InputError, match="at least 10"):
        run_shuffle_test(_source("random", 1, FACTORY), 5)
    with pytest.raises(InputError, match="not a rearrangement"):
        run_shuffle_test(lambda: (FACTORY, FACTORY[:-1] + ["AS"]), 10)
    sizes = iter([FACTORY, FACTORY[:26]] * 10)

    def changing():
        items = next(sizes)
        return items, list(items)
    with pytest.raises(InputError, match="the first had 52"):
        run_shuffle_test(changing, 10)


# ---- the command, through the shuffler driver ----------------------------------------------------

def test_shuffle_test_command(capsys):
    pytest.importorskip("drivers.shuffler")
    from controller.cli import main
    from simulators import registry
    from simulators.usb_backend import SIM_PRODUCT_ID, SIM_VENDOR_ID
    ids = f"{SIM_VENDOR_ID:04x}:{SIM_PRODUCT_ID:04x}"
    registry.register("shuffle-test-good", ShufflerModel(seed=3, decks=1))
    registry.register("shuffle-test-weak", ShufflerModel(seed=3, decks=1, weak=True))
    try:
        assert main(["shuffle-test", "--shuffler-url", f"usb://{ids}?sim=shuffle-test-good",
                     "--runs", "40", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["verdict"] != "FAIL" and doc["runs"] == 40 and len(doc["tests"]) == 6
        assert main(["shuffle-test", "--shuffler-url", f"usb://{ids}?sim=shuffle-test-weak",
                     "--runs", "20"]) == 1
        out = capsys.readouterr().out
        assert "Overall: FAIL" in out and "rising sequences" in out
        assert main(["shuffle-test", "--shuffler-url", f"usb://{ids}?sim=shuffle-test-good",
                     "--runs", "3"]) == 2
    finally:
        registry.unregister("shuffle-test-good")
        registry.unregister("shuffle-test-weak")
