"""Andar Bahar rules: dealing, every bet's settlement, first-three patterns, golden decks, RTP."""
from __future__ import annotations

import json
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest

from controller.shoe.cards import ALL_CARDS, Card, card, cards
from controller.games import get_rules
from controller.games.andar_bahar import (CARD_COUNT_BETS, RULES, RoundIncomplete,
                                          first_three_pattern)
from controller.settings.profile import BetRule, ProfileError, load_profile
from controller.shoe.shoefile import read_shoe_file
from tests.golden import GOLDEN

COMMISSION = load_profile("andar-bahar").paytables["commission"]
NO_COMMISSION = load_profile("andar-bahar").paytables["no_commission"]


def play(deck: list[Card]):
    """Drive the rules with a deck in draw order; returns the hands and the cards left."""
    hands = RULES.new_hands()
    it = iter(deck)
    while (phase := RULES.next_phase(hands)) is not None:
        RULES.place(hands, phase, next(it))
    return hands, list(it)


def round_of(game: str, dealt: str):
    return play(cards(f"{game} {dealt}"))[0]


def match_at(k: int, game: str = "7H", match: str = "7S") -> list[Card]:
    """A deck whose first card matching the game card is the k-th dealt (1–49)."""
    g = card(game)
    others = [c for c in ALL_CARDS if c.rank != g.rank]
    return [g, *others[:k - 1], card(match)]


def test_registered_and_phases():
    assert get_rules("andar_bahar") is RULES
    assert RULES.phases == ("game_card", "andar", "bahar")
    assert RULES.rounds_per_shoe == 1
    hands = RULES.new_hands()
    seen = []
    for c in cards("5C 9D KS 2H 5H"):
        seen.append(RULES.next_phase(hands))
        RULES.place(hands, seen[-1], c)
    assert seen == ["game_card", "andar", "bahar", "andar", "bahar"]
    assert RULES.next_phase(hands) is None
    assert RULES.outcome(hands) == {"game_card": "5C", "andar": ["9D", "2H"],
                                    "bahar": ["KS", "5H"], "winner": "bahar", "cards_dealt": 4}


def test_only_rank_matters_and_extra_cards_are_not_dealt():
    hands, rest = play(cards("QH 3C QD 8S 8H"))
    assert RULES.outcome(hands)["winner"] == "bahar"
    assert [c.code for c in rest] == ["8S", "8H"]


def test_incomplete_round_and_bad_phase():
    hands = RULES.new_hands()
    for phase, c in zip(RULES.phases, cards("QH 3C 4D")):
        RULES.place(hands, phase, c)
    assert RULES.next_phase(hands) == "andar"
    with pytest.raises(RoundIncomplete):
        RULES.outcome(hands)
    with pytest.raises(RoundIncomplete):
        RULES.settle(hands, COMMISSION)
    with pytest.raises(ValueError, match="no phase"):
        RULES.place(hands, "P1", card("AS"))


def test_andar_wins_on_first_card():
    hands = round_of("7H", "7D")
    got = RULES.settle(hands, COMMISSION)
    assert got["andar"] == Fraction(9, 10)
    assert got["bahar"] == -1
    assert got["first_andar"] == 15
    assert got["first_bahar"] == -1
    assert got["first_three"] == -1          # fewer than three cards
    assert got["cards_1_5"] == 2
    assert all(got[b] == -1 for b in CARD_COUNT_BETS if b != "cards_1_5")
    nc = RULES.settle(hands, NO_COMMISSION)
    assert nc["andar"] == Fraction(1, 4)
    assert set(nc) == {"andar", "bahar", *CARD_COUNT_BETS}


def test_bahar_wins_on_its_first_card():
    hands = round_of("7H", "8H 7C")
    got = RULES.settle(hands, COMMISSION)
    assert got["bahar"] == 1 and got["andar"] == -1
    assert got["first_bahar"] == Fraction(31, 2)
    assert got["first_andar"] == -1
    assert got["first_three"] == -1          # 7H 8H 7C: a pair, no pattern
    assert RULES.settle(hands, NO_COMMISSION)["bahar"] == 1


def test_andar_wins_later_pays_full_without_commission():
    hands = round_of("7H", "5D KD 5S TD 7S")
    assert RULES.settle(hands, COMMISSION)["andar"] == Fraction(9, 10)
    assert RULES.settle(hands, NO_COMMISSION)["andar"] == 1
    assert RULES.settle(hands, COMMISSION)["first_andar"] == -1


@pytest.mark.parametrize("bet,lo,hi", [(b, lo, hi) for b, (lo, hi) in CARD_COUNT_BETS.items()])
def test_card_count_bets_on_their_bounds(bet, lo, hi):
    pays = COMMISSION[bet].pays
    for k in (lo, hi):
        hands, _ = play(match_at(k))
        assert RULES.outcome(hands)["cards_dealt"] == k
        assert RULES.outcome(hands)["winner"] == ("andar" if k % 2 else "bahar")
        for mode in (COMMISSION, NO_COMMISSION):
            got = RULES.settle(hands, mode)
            assert got[bet] == pays
            assert all(v == -1 for b, v in got.items() if b in CARD_COUNT_BETS and b != bet)
    for k in (lo - 1, hi + 1):
        if 1 <= k <= 49:
            assert RULES.settle(play(match_at(k))[0], COMMISSION)[bet] == -1


def test_longest_possible_round_is_49():
    hands, rest = play(match_at(49))
    assert RULES.outcome(hands)["cards_dealt"] == 49 and rest == []


@pytest.mark.parametrize("three,pattern", [
    ("KS QS JS", "straight_flush"),
    ("KC QD JH", "straight"),
    ("9H 7H 5H", "flush"),
    ("AD 2C 3S", "straight"),
    ("3S AD 2C", "straight"),
    ("QH KD AS", "straight"),
    ("AH QH KH", "straight_flush"),
    ("2C 3C AC", "straight_flush"),
    ("KD AS 2C", None),                  # no wrap
    ("KH AH 2H", "flush"),               # no wrap, suited
    ("5D 5S 6C", None),
    ("9C TD JS", "straight"),
    ("TC 9C 8C", "straight_flush"),
    ("2D 4D 6S", None),
])
def test_first_three_patterns(three, pattern):
    assert first_three_pattern(*cards(three)) == pattern


@pytest.mark.parametrize("game,a1,b1,result", [
    ("KS", "QS", "JS", 120), ("KC", "QD", "JH", 8), ("9H", "7H", "5H", 5),
    ("2C", "AD", "3S", 8), ("KD", "QH", "AS", 8), ("AH", "KH", "2H", 5), ("KD", "AS", "2C", -1),
    ("2H", "3H", "AH", 120),
])
def test_first_three_settles_through_the_paytable(game, a1, b1, result):
    g = card(game)
    # game card, 1st Andar, 1st Bahar, then the match on Andar's 2nd card
    match = next(c for c in ALL_CARDS if c.rank == g.rank and c not in (g,))
    hands = round_of(game, f"{a1} {b1} {match.code}")
    got = RULES.settle(hands, COMMISSION)
    assert got["first_three"] == result
    assert RULES.outcome(hands)["cards_dealt"] == 3


def _golden(name: str):
    shoe = read_shoe_file(GOLDEN / f"{name}.shoe")
    expected = [json.loads(line) for line in (GOLDEN / f"{name}.expected.jsonl").open()]
    rounds = [e for e in expected if e["event"] == "round_result"]
    decks = [list(shoe.cards[i:i + 52]) for i in range(0, len(shoe.cards), 52)]
    return decks, rounds


@pytest.mark.parametrize("name", ["andar-bahar", "andar-bahar-no-commission"])
def test_golden_decks(name):
    profile = load_profile(name)
    assert profile.game == "andar_bahar" and profile.decks == 1
    decks, rounds = _golden(name)
    assert len(decks) == len(rounds) > 0
    for deck, want in zip(decks, rounds):
        assert sorted(deck) == sorted(ALL_CARDS)          # one whole deck per round
        hands, _ = play(deck)
        got = RULES.outcome(hands)
        for key in ("game_card", "andar", "bahar", "winner", "cards_dealt"):
            assert got[key] == want[key], (name, want["round"], key)
        bets = RULES.settle(hands, profile.paytable)
        assert list(bets) == list(want["bets"])
        assert bets == {b: Fraction(str(v)) for b, v in want["bets"].items()}, want["round"]


def _rtp(paytable, bet: str) -> Fraction:
    """Exact return of a bet over the position k of the first match: P(k) = C(51-k,2)/C(51,3)."""
    total = Fraction(0)
    for k in range(1, 50):
        net = RULES.settle(play(match_at(k))[0], {bet: paytable[bet]})[bet]
        total += Fraction(comb(51 - k, 2), comb(51, 3)) * (1 + net)
    return total


def test_exact_main_bet_returns():
    p_andar = sum(Fraction(comb(51 - k, 2), comb(51, 3)) for k in range(1, 50, 2))
    assert p_andar == Fraction(429, 833)
    assert round(float(_rtp(COMMISSION, "andar")) * 100, 4) == 97.8511
    assert round(float(_rtp(NO_COMMISSION, "andar")) * 100, 4) == 98.5894
    assert round(float(_rtp(COMMISSION, "bahar")) * 100, 4) == 96.9988


def test_profiles_hold_both_modes():
    ab, nc = load_profile("andar-bahar"), load_profile("andar-bahar-no-commission")
    assert ab.mode == "commission" and nc.mode == "no_commission"
    assert ab.paytables == nc.paytables
    assert nc.with_mode("commission").paytable == ab.paytable
    for p in (ab, nc):
        assert p.burn.rule == "none" and not p.cut_card.enabled
        assert p.game_options == {"modes": "both"}
        for table in p.paytables.values():
            RULES.validate_paytable(table, p.path)
    assert "first_three" not in nc.paytable and "first_andar" not in nc.paytable
    assert nc.paytable["andar"] == BetRule(Fraction(1), {"on_first": Fraction(1, 4)})


@pytest.mark.parametrize("table,key", [
    ({"first_three": BetRule(None, {"straight": Fraction(8)})}, "first_three"),
    ({"first_three": BetRule(Fraction(5))}, "first_three"),
    ({"bahar": BetRule(None, {"on_first": Fraction(1)})}, "bahar"),
    ({"cards_1_5": BetRule(Fraction(2), {"x": Fraction(1)})}, "cards_1_5"),
])
def test_validate_paytable_rejects_incomplete_entries(table, key):
    with pytest.raises(ProfileError) as err:
        RULES.validate_paytable(table, "x.toml")
    assert err.value.key == key and "\n" not in str(err.value)


def test_unknown_bet_in_settle():
    with pytest.raises(KeyError):
        RULES.settle(round_of("7H", "7D"), {"tie": BetRule(Fraction(8))})


def test_next_phase_is_its_definition_on_the_cards_dealt():
    """next_phase looks at the last card of `dealt(hands)` without dealing them again: the same
    answer as the definition, on hands of every length, Bahar's ahead of Andar's among them."""
    import random

    from controller.games.andar_bahar import dealt, next_phase

    def defined(hands) -> str | None:
        if not hands["game_card"]:
            return "game_card"
        out = dealt(hands)
        if out and out[-1].rank == hands["game_card"][0].rank:
            return None
        return "andar" if len(hands["andar"]) == len(hands["bahar"]) else "bahar"

    rng = random.Random(5)
    for _ in range(3000):
        draw = lambda n: [rng.choice(ALL_CARDS) for _ in range(n)]      # noqa: E731
        hands = {"game_card": draw(rng.choice([0, 1, 1, 1])), "andar": draw(rng.randrange(5)),
                 "bahar": draw(rng.randrange(5))}
        assert next_phase(hands) == defined(hands), hands


def test_a_tables_settlement_is_the_rules_on_every_round():
    """The settlement a table keeps for a paytable (settler, worked out once for each winner,
    count of cards and first-three pattern) gives the rules' own on every round, round after
    round, for both modes' paytables."""
    import random

    from controller.games.andar_bahar import next_phase
    from controller.games.rules import bet_numbers
    profile = load_profile("andar-bahar")
    rng = random.Random(11)
    for paytable in profile.paytables.values():
        settled = RULES.settler(paytable)
        for _ in range(400):
            deck = list(ALL_CARDS)
            rng.shuffle(deck)
            hands = RULES.new_hands()
            it = iter(deck)
            while (phase := next_phase(hands)) is not None:
                RULES.place(hands, phase, next(it))
            want = bet_numbers(RULES.settle(hands, paytable))
            got = settled(hands)
            assert got == want and list(got) == list(want), hands
            got["andar"] = 99                   # each round's own dict
            assert settled(hands) == want
