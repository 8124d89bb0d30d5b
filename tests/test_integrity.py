"""Live integrity detectors (controller.shoe.integrity): planted patterns and false-alarm rates."""
from __future__ import annotations

import random

import pytest

from controller.shoe.cards import ordered_shoe
from controller.shoe.integrity import Alarm, FactoryOrderDetector, RepeatDetector


def feed_all(detector, codes: list[str]) -> list[Alarm]:
    return [a for a in map(detector.feed, codes) if a is not None]


# ---- factory order -------------------------------------------------------------------------------

def test_ascending_run_alarms_once_at_the_fifth_card():
    alarms = feed_all(FactoryOrderDetector(), "KD 2H AS 2S 3S 4S 5S 6S 7S 9C".split())
    assert len(alarms) == 1
    a = alarms[0]
    assert (a.kind, a.card_index) == ("factory_order", 7)
    assert "ascending" in a.detail and "AS 2S 3S 4S 5S" in a.detail


def test_descending_run_and_turning_round():
    # 3S 4S 5S then down 5S 4S 3S 2S AS: the descending run starts at 5S
    alarms = feed_all(FactoryOrderDetector(), "3S 4S 5S 4S 3S 2S AS".split())
    assert [(a.card_index, "descending" in a.detail) for a in alarms] == [(7, True)]


def test_breaks_suit_changes_gaps_and_no_wrap():
    d = FactoryOrderDetector()
    assert feed_all(d, "AS 2S 3S 4H 5S 6S".split()) == []                 # suit breaks
    assert feed_all(d, "AH 2H 4H 5H 6H 7H".split()) == []                 # gap breaks
    assert feed_all(d, "JC QC KC AC 2C".split()) == []                    # no K-A wrap
    assert feed_all(d, "5D 6D 7D XX 8D 9D".split()) == []                 # non-card breaks


def test_configurable_length_lower_case_and_new_shoe():
    d = FactoryOrderDetector(length=3)
    assert [a.card_index for a in feed_all(d, ["9h", "th", "jh"])] == [3]
    d.new_shoe()
    assert feed_all(d, ["qh", "kh"]) == []            # the run does not carry across shoes
    with pytest.raises(ValueError):
        FactoryOrderDetector(length=1)


# ---- repeats of the previous shoe ----------------------------------------------------------------

def _shoe(seed: int) -> list[str]:
    shoe = [c.code for c in ordered_shoe(8)]
    random.Random(seed).shuffle(shoe)
    return shoe


def test_repeat_of_previous_shoe_alarms_once_per_stretch():
    first, second = _shoe(1), _shoe(2)
    d = RepeatDetector()
    assert feed_all(d, first) == []
    d.new_shoe()
    planted = second[:100] + first[200:212] + second[112:]      # 12 cards of the last shoe
    alarms = feed_all(d, planted)
    assert len(alarms) == 1
    a = alarms[0]
    assert (a.kind, a.card_index) == ("repeated_sequence", 108)  # the 8th repeated card
    assert "cards 101-108" in a.detail and "cards 201-208 of the previous shoe" in a.detail


def test_seven_cards_do_not_alarm_and_whole_shoe_replay_does():
    first = _shoe(3)
    d = RepeatDetector()
    d.set_previous(first)
    shoe = _shoe(4)
    assert feed_all(d, shoe[:50] + first[10:17] + shoe[57:]) == []
    d.new_shoe()
    d.set_previous(first)
    alarms = feed_all(d, first)                                   # dealt again unshuffled
    assert [a.card_index for a in alarms] == [8]


# ---- false alarms on random shoes ----------------------------------------------------------------

def test_false_alarm_rate_of_the_defaults():
    """2000 seeded 8-deck shoes: the module docstring derives ≈ 8.0e-5 factory-order alarms and
    ≈ 3e-9 repeat alarms per shoe, i.e. 0.16 expected here; allow at most 2."""
    shoe = [c.code for c in ordered_shoe(8)]
    rng = random.Random(20240601)
    factory, repeat = FactoryOrderDetector(), RepeatDetector()
    alarms = 0
    for _ in range(2000):
        rng.shuffle(shoe)
        factory.new_shoe()
        repeat.new_shoe()
        for code in shoe:
            if factory.feed(code) is not None:
                alarms += 1
            if repeat.feed(code) is not None:
                alarms += 1
    assert alarms <= 2
    assert alarms / 2000 < 1 / 1000


def test_factory_order_rate_matches_the_analytic_expectation():
    """Length 3 alarms often enough to check the derivation behind the default's rate."""
    n, copies = 416, 8
    # per window: the first rank leaves room for two more (11/13), then the two specific codes
    per_window = 2 * (11 / 13) * copies / (n - 1) * copies / (n - 2)
    expected = 500 * (n - 2) * per_window                       # ≈ 130 over 500 shoes
    shoe = [c.code for c in ordered_shoe(8)]
    rng = random.Random(7)
    d = FactoryOrderDetector(length=3)
    seen = 0
    for _ in range(500):
        rng.shuffle(shoe)
        d.new_shoe()
        seen += len(feed_all(d, shoe))
    assert abs(seen - expected) < 4 * expected ** 0.5, (seen, expected)


# ---- the table's watch: both detectors in one pass ----------------------------------------------

def _detectors_alarms(shoes: list[list[str]], length: int, k: int) -> list[list[Alarm]]:
    factory, repeat = FactoryOrderDetector(length), RepeatDetector(k)
    out = []
    for shoe in shoes:
        factory.new_shoe()
        repeat.new_shoe()
        for code in shoe:
            out.append([a for a in (factory.feed(code), repeat.feed(code)) if a is not None])
    return out


@pytest.mark.parametrize("length,k,odd", [(5, 8, True), (3, 4, True), (2, 2, True),
                                          (5, 8, False), (3, 4, False)])
def test_the_watch_raises_what_the_two_detectors_raise(length, k, odd):
    """Shoes with planted runs, replayed stretches of the shoe before, codes in other spellings
    and reads that are no card: card for card, the watch's alarms are the detectors'."""
    from controller.shoe.integrity import IntegrityWatch
    rng = random.Random(length * 100 + k)
    factory = [c.code for c in ordered_shoe(1)]
    shoes: list[list[str]] = []
    for n in range(40):
        shoe = [c.code for c in ordered_shoe(2)]
        rng.shuffle(shoe)
        at = rng.randrange(0, 80)
        shoe[at:at + 7] = factory[rng.randrange(0, 40):][:7]            # a factory-order run
        shoe[at + 20:at + 27] = list(reversed(factory[13:20]))          # a descending one
        if shoes and n % 3 == 0:                                        # the shoe before, again
            start = rng.randrange(0, 60)
            shoe[120:120 + k + 3] = shoes[-1][start:start + k + 3]
        for i in rng.sample(range(len(shoe)), 3 if odd else 0):
            c = shoe[i]
            shoe[i] = rng.choice(["??", "", "1OS", c.lower(), "10" + c[-1:]])
        shoes.append(shoe)
    want = _detectors_alarms(shoes, length, k)
    watch = IntegrityWatch(length, k)
    got = []
    for shoe in shoes:
        watch.new_shoe()
        got.extend(watch.feed(code) for code in shoe)
    assert got == want
    assert sum(map(len, want)) > 40         # the shoes did raise alarms of both kinds
    assert {a.kind for alarms in want for a in alarms} == {"factory_order", "repeated_sequence"}
