"""Baccarat en Banque rules: dealing order, naturals, decisions, false coups, settlement by side."""
from __future__ import annotations

from fractions import Fraction

import pytest

from controller.shoe.cards import Card, cards
from controller.errors import InputError
from controller.games import get_rules
from controller.games.baccarat_banque import RULES, side_winner
from controller.settings.profile import BetRule, ProfileError, load_profile, parse_profile

PAYTABLE = load_profile("baccarat-banque").paytable
EVEN = {b: BetRule(Fraction(1)) for b in RULES.bets}


def deal(deck: list[Card] | str, decisions=None):
    """Run a coup: cards in order; decisions from the dict, else the default policy. Returns
    the hands and the phases/decisions met, in order."""
    deck = cards(deck) if isinstance(deck, str) else deck
    hands, it, steps = RULES.new_hands(), iter(deck), []
    while (phase := RULES.next_phase(hands)) is not None:
        steps.append(phase)
        if phase.startswith("decide:"):
            name = phase[7:]
            value = (decisions or {}).get(name, RULES.default_decision(hands, name))
            RULES.decide(hands, name, value)
        else:
            RULES.place(hands, phase, next(it))
    return hands, steps


def codes_of(hands, hand):
    return [c.code for c in hands[hand]]


def test_registered_shape():
    assert get_rules("baccarat_banque") is RULES
    assert RULES.bets == ("right", "left", "bank_right", "bank_left")
    assert RULES.phases[:6] == ("R1", "L1", "B1", "R2", "L2", "B2")


def test_dealing_order_one_card_at_a_time_right_left_bank():
    # right 2+TD=2, left 3+JD=3, bank 4+KD=4: both hands draw, then the bank chooses
    hands, steps = deal("2S 3S 4S TD JD KD 5H 6H 7H")
    assert steps == ["R1", "L1", "B1", "R2", "L2", "B2", "right_third", "left_third",
                     "decide:bank_draw", "bank_third"]
    assert codes_of(hands, "right") == ["2S", "TD", "5H"]
    assert codes_of(hands, "left") == ["3S", "JD", "6H"]
    assert codes_of(hands, "bank") == ["4S", "KD", "7H"]
    out = RULES.outcome(hands)
    assert (out["right_total"], out["left_total"], out["bank_total"]) == (7, 9, 1)
    assert out["right_winner"] == "right" and out["left_winner"] == "left"
    assert out["decisions"] == {"bank_draw": True}


def test_bank_natural_ends_the_coup_for_both_hands():
    hands, steps = deal("2S 3S 9S TD JD KD")
    assert steps[-1] == "B2" and RULES.next_phase(hands) is None
    assert RULES.outcome(hands)["naturals"] == ["bank"]
    assert RULES.settle(hands, PAYTABLE) == {"right": -1, "left": -1,
                                             "bank_right": Fraction(19, 20),
                                             "bank_left": Fraction(19, 20)}


def test_natural_hand_takes_no_card_and_is_settled_on_two_cards():
    # right natural 8, left 3 draws; the bank (4) draws a 5 to 9 but the natural stands
    hands, steps = deal("8S 3S 4S TD JD KD 2H 5H")
    assert "right_third" not in steps and "left_third" in steps
    assert steps.count("decide:bank_draw") == 1
    assert RULES.outcome(hands)["bank_total"] == 9
    assert side_winner(hands, "right") == "right"
    assert side_winner(hands, "left") == "bank"
    assert RULES.settle(hands, PAYTABLE) == {"right": 1, "left": -1, "bank_right": -1,
                                             "bank_left": Fraction(19, 20)}


def test_both_hands_natural_no_bank_decision():
    hands, steps = deal("8S 9S 4S TD JD KD")
    assert steps == ["R1", "L1", "B1", "R2", "L2", "B2"]
    assert RULES.outcome(hands)["naturals"] == ["right", "left"]


def test_right_chooses_on_five_before_left_acts():
    hands, steps = deal("5S 2S 6S TD JD KD 3H", {"right_draw": False, "bank_draw": False})
    assert steps == ["R1", "L1", "B1", "R2", "L2", "B2", "decide:right_draw", "left_third",
                     "decide:bank_draw"]
    assert len(hands["right"]) == 2 and codes_of(hands, "left") == ["2S", "JD", "3H"]
    hands, steps = deal("2S 5S 6S TD JD KD 3H 4H")
    assert steps[6:] == ["right_third", "decide:left_draw", "left_third", "decide:bank_draw"]
    assert hands["decisions"] == {"left_draw": True, "bank_draw": False}   # bank 6 stands


@pytest.mark.parametrize("bank,draws", [(0, True), (3, True), (5, True), (6, False), (7, False)])
def test_default_bank_policy(bank, draws):
    hands, _ = deal(f"6S 7S {bank or 'T'}C TD JD KD QH")
    assert hands["decisions"]["bank_draw"] is draws
    assert len(hands["bank"]) == (3 if draws else 2)


def test_bank_choice_is_free_and_made_once():
    hands = six("6S 7S 2C TD JD KD")
    assert RULES.next_phase(hands) == "decide:bank_draw"
    assert RULES.decision_options(hands, "bank_draw") == (True, False)
    RULES.decide(hands, "bank_draw", "stand")
    assert RULES.next_phase(hands) is None
    assert RULES.decision_options(hands, "bank_draw") == ()
    with pytest.raises(InputError, match="not due"):
        RULES.decide(hands, "bank_draw", True)


@pytest.mark.parametrize("deck,want", [
    ("7S 6S 5C TD JD KD", {"right": 1, "left": 1, "bank_right": -1, "bank_left": -1}),
    ("7S 5S 6C TD JD KD", {"right": 1, "left": -1, "bank_right": -1, "bank_left": 1}),
    ("6S 7S 6C TD JD KD", {"right": 0, "left": 1, "bank_right": 0, "bank_left": -1}),
])
def test_each_side_is_settled_separately(deck, want):
    hands, _ = deal(deck, {"left_draw": False, "right_draw": False, "bank_draw": False})
    assert RULES.settle(hands, EVEN) == want


def test_commission_on_the_bank_side_only():
    hands, _ = deal("2S 3S 7C TD JD KD 2H 3H")        # right 4, left 6, bank 7 stands
    assert RULES.settle(hands, PAYTABLE) == {"right": -1, "left": -1,
                                             "bank_right": Fraction(19, 20),
                                             "bank_left": Fraction(19, 20)}


# --- false coups ---------------------------------------------------------------------------

def six(deck: str):
    hands = RULES.new_hands()
    for phase, c in zip(RULES.phases, cards(deck)):
        RULES.place(hands, phase, c)
    return hands


def test_hand_drawing_on_six_or_standing_on_four():
    hands = six("6S 4S 2C TD JD KD")                   # right 6, left 4, bank 2
    coup = RULES.check_draw(hands, "right_third", {"false_coup": "correct"})
    assert coup.hand == "right" and coup.detail == "right draws on 6" and coup.drawn_in_error
    assert coup.remedy == "correct" and not coup.pass_bank
    assert RULES.check_draw(hands, "stand:right") is None
    assert RULES.check_draw(hands, "left_third") is None
    coup = RULES.check_draw(hands, "stand:left")
    assert coup.detail == "left stands on 4" and coup.remedy == "void" and not coup.drawn_in_error
    coup = RULES.check_draw(hands, "bank_third")      # the bank acting: left stood on 4
    assert coup.hand == "left" and not coup.drawn_in_error


def test_later_hand_acting_closes_the_earlier_turn():
    hands = six("3S 7S 2C TD JD KD")                   # right 3 must draw
    coup = RULES.check_draw(hands, "left_third")
    assert coup.hand == "right" and coup.detail == "right stands on 3"
    hands = six("5S 7S 2C TD JD KD")                   # right 5: standing is his choice
    assert RULES.check_draw(hands, "stand:left") is None
    assert RULES.check_draw(hands, "left_third").detail == "left draws on 7"


def test_bank_card_that_cannot_be_due():
    assert RULES.check_draw(six("6S 7S 9C TD JD KD"), "bank_third").detail == \
        "bank draws after the bank's natural"
    assert RULES.check_draw(six("8S 9S 2C TD JD KD"), "bank_third").detail == \
        "bank draws with both hands natural"
    assert RULES.check_draw(six("8S 7S 2C TD JD KD"), "left_third").detail == "left draws on 7"
    assert RULES.check_draw(six("8S 7S 2C TD JD KD"), "right_third").detail == \
        "right draws on a natural"
    assert RULES.check_draw(six("6S 7S 2C TD JD KD"), "bank_third") is None
    assert RULES.check_draw(six("6S 7S 6C TD JD KD"), "stand:bank") is None
    hands, _ = deal("2S 3S 4S TD JD KD 5H 6H 7H")
    assert RULES.check_draw(hands, "bank_third").detail == "bank draws a fourth card"
    assert RULES.check_draw(hands, "right_third").detail == "right draws out of turn"


def test_check_draw_bad_calls():
    with pytest.raises(ValueError, match="not dealt yet"):
        RULES.check_draw(six("6S 7S 2C"), "bank_third")
    with pytest.raises(ValueError, match="not a third-card move"):
        RULES.check_draw(six("6S 7S 2C TD JD KD"), "player_third")


def test_decision_errors_and_seats():
    hands = RULES.new_hands()
    with pytest.raises(InputError, match="no decision"):
        RULES.decision_options(hands, "player_draw")
    with pytest.raises(InputError, match="no default"):
        RULES.default_decision(hands, "banker_seat")
    RULES.decide(hands, "banker_seat", 1)
    RULES.decide(hands, "right_player", 4)
    assert RULES.next_phase(hands) == "R1"
    with pytest.raises(ValueError, match="no phase"):
        RULES.place(hands, "P1", cards("AS")[0])


def test_profile():
    p = load_profile("baccarat-banque")
    assert p.game == "baccarat_banque" and p.decks == 6
    assert p.cut_card.default_from_end == p.cut_card.min_from_end == p.cut_card.max_from_end == 10
    assert p.cut_card.after == "no_more_coup"
    assert set(p.paytable) == set(RULES.bets)
    with pytest.raises(ProfileError):
        parse_profile({"game": "baccarat_banque", "decks": 6, "paytable": {"right": 1},
                       "game_options": {"false_coup": "later"}}, "bb.toml")
    with pytest.raises(ProfileError) as err:
        parse_profile({"game": "baccarat_banque", "decks": 6, "paytable": {"banker": 1}}, "bb.toml")
    assert err.value.key == "paytable.banker"
