"""ShufflerModel: the shuffle itself (CSPRNG / seeded / weak riffle), faults, clock."""
from __future__ import annotations

import secrets
from collections import Counter

import pytest

from drivers.shuffler import protocol as p
from simulators.faults import Fault
from simulators.shuffler import ShufflerModel, parse_shuffler_fault

LABELS = [f"{i:03d}" for i in range(416)]


def rising_sequences(order: list[str]) -> int:
    """How many rising runs of consecutive labels the order splits into (1 = unshuffled)."""
    where = {label: i for i, label in enumerate(order)}
    ranks = sorted(order)
    return 1 + sum(where[b] < where[a] for a, b in zip(ranks, ranks[1:]))


def test_production_model_uses_the_os_csprng_and_seeded_is_reproducible():
    assert isinstance(ShufflerModel()._rng, secrets.SystemRandom)
    assert not ShufflerModel().seeded and ShufflerModel(seed=1).seeded
    assert ShufflerModel(seed=5).shuffled(LABELS) == ShufflerModel(seed=5).shuffled(LABELS)
    assert ShufflerModel(seed=5).shuffled(LABELS) != ShufflerModel(seed=6).shuffled(LABELS)


def test_shuffled_is_a_permutation_and_leaves_the_input_alone():
    cards = list(p.CARD_CODES) * 8
    before = list(cards)
    out = ShufflerModel().shuffled(cards)
    assert cards == before and Counter(out) == Counter(cards) and out != cards


def test_weak_riffle_is_detectably_bad_and_the_real_shuffle_is_not():
    weak = ShufflerModel(seed=2, weak=True).shuffled(LABELS)
    good = ShufflerModel(seed=2).shuffled(LABELS)
    assert sorted(weak) == LABELS and weak != LABELS
    assert rising_sequences(weak) <= 2            # one riffle leaves two rising packets
    assert rising_sequences(good) > 150           # about n/2 for a random order


def test_each_card_lands_uniformly_in_each_position():
    model = ShufflerModel(seed=11)
    n, trials = 10, 3000
    counts = Counter(model.shuffled(list("ABCDEFGHIJ")).index("A") for _ in range(trials))
    expected = trials / n
    chi2 = sum((counts[i] - expected) ** 2 / expected for i in range(n))
    assert chi2 < 27.88                          # 9 degrees of freedom, p = 0.001


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_shuffle_time_is_modelled_on_the_clock():
    clock = Clock()
    m = ShufflerModel(seed=1, decks=6, shuffle_time_s=30, clock=clock)
    assert m.request(p.SHUFFLE, b"\x06")[0] == p.SHUFFLE | p.RESPONSE_BIT
    assert m.state == "shuffling"
    clock.now += 29.9
    assert m.state == "shuffling"
    clock.now += 0.1
    assert m.state == "ready" and m.request(p.COUNT)[1] == (312).to_bytes(2, "big")


def test_a_tray_that_does_not_hold_the_decks_asked_for_is_a_count_mismatch():
    m = ShufflerModel(seed=1, decks=8)
    m.load(list(p.CARD_CODES) * 7)
    m.request(p.SHUFFLE, b"\x08")
    assert (m.state, m.error_code) == ("error", p.E_COUNT_MISMATCH)


def test_reshuffling_a_ready_shoe_keeps_its_cards():
    m = ShufflerModel(seed=1, decks=1)
    m.request(p.SHUFFLE, b"\x01")
    m.request(p.SHUFFLE, b"\x01")
    assert m.state == "ready" and m.shuffles == 2
    _, payload = m.request(p.DELIVER)
    assert sorted(p.decode_delivery(payload)[1]) == sorted(p.CARD_CODES)


def test_fault_parsing_and_validation():
    assert parse_shuffler_fault("jam@2") == Fault("jam", 2)
    assert parse_shuffler_fault("door_open") == Fault("door_open", 0)
    for bad in ("misread@1", "jam@x", "jam@-1"):
        with pytest.raises(ValueError, match=bad.split("@")[0]):
            parse_shuffler_fault(bad)
    with pytest.raises(ValueError, match="not a shuffler fault"):
        ShufflerModel(faults=[object()])
    m = ShufflerModel(decks=1, faults=["jam@1"])
    m.inject(Fault("count_mismatch", 0))
    m.request(p.SHUFFLE, b"\x01")
    assert m.state == "error"
    with pytest.raises(ValueError):
        ShufflerModel(decks=13)
    with pytest.raises(ValueError):
        ShufflerModel().load(["XX"])
