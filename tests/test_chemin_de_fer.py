"""Chemin de Fer rules: every tableau cell, decisions, false coups, commission, bank rotation."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.shoe.cards import ALL_CARDS, Card, cards, hand_total
from controller.errors import InputError
from controller.games import get_rules, punto_banco
from controller.games.chemin_de_fer import RULES, BankRotation, FalseCoup
from controller.settings.profile import BetRule, ProfileError, load_profile, parse_profile

PAYTABLE = load_profile("chemin-de-fer").paytable
#: a two-card hand of each total 0–7 (no natural)
TWO = {0: "TS KD", 1: "AS KD", 2: "2S KD", 3: "3S KD", 4: "4S KD", 5: "5S KD", 6: "6S KD",
       7: "7S KD"}
#: a card of each value 0–9
VALUE = {0: "QH", 1: "AH", 2: "2H", 3: "3H", 4: "4H", 5: "5H", 6: "6H", 7: "7H", 8: "8H", 9: "9H"}

# Chemin de Fer's tableau (docs/rules.md), written out cell by cell: banker total → (when the player stood, {x: action})
D, S, O = "draw", "stand", "option"
EXPECTED_BANKER = {
    0: (D, {x: D for x in range(10)}),
    1: (D, {x: D for x in range(10)}),
    2: (D, {x: D for x in range(10)}),
    3: (D, {0: D, 1: D, 2: D, 3: D, 4: D, 5: D, 6: D, 7: D, 8: S, 9: O}),
    4: (D, {0: S, 1: S, 2: D, 3: D, 4: D, 5: D, 6: D, 7: D, 8: S, 9: S}),
    5: (D, {0: S, 1: S, 2: S, 3: S, 4: O, 5: D, 6: D, 7: D, 8: S, 9: S}),
    6: (S, {0: S, 1: S, 2: S, 3: S, 4: S, 5: S, 6: D, 7: D, 8: S, 9: S}),
    7: (S, {x: S for x in range(10)}),
}


def hands_of(player: str, banker: str, **decisions) -> dict:
    """Hands built in dealing order from the two hands' cards (P1 B1 P2 B2, then thirds)."""
    hands = RULES.new_hands()
    p, b = cards(player), cards(banker)
    for phase, c in zip(("P1", "B1", "P2", "B2"), (p[0], b[0], p[1], b[1])):
        RULES.place(hands, phase, c)
    hands["decisions"].update(decisions)
    if len(p) == 3:
        RULES.place(hands, "player_third", p[2])
    if len(b) == 3:
        RULES.place(hands, "banker_third", b[2])
    return hands


def deal(deck: list[Card], decisions=None):
    """Run a coup: cards in order, decisions from the dict or the default policy."""
    hands, it = RULES.new_hands(), iter(deck)
    while (phase := RULES.next_phase(hands)) is not None:
        if phase.startswith("decide:"):
            name = phase[7:]
            value = (decisions or {}).get(name, RULES.default_decision(hands, name))
            assert value in RULES.decision_options(hands, name)
            RULES.decide(hands, name, value)
        else:
            RULES.place(hands, phase, next(it))
    return hands


def expected_phase(action: str, decided=None):
    if action == O:
        return "decide:banker_draw" if decided is None else "banker_third" if decided else None
    return "banker_third" if action == D else None


def test_registered_shape():
    assert get_rules("chemin_de_fer") is RULES
    assert RULES.bets == ("banker", "player")
    assert RULES.phases == ("P1", "B1", "P2", "B2", "player_third", "banker_third")
    hands = RULES.new_hands()
    order = []
    for c in cards("4S 3D 2C KH"):
        order.append(RULES.next_phase(hands))
        RULES.place(hands, order[-1], c)
    assert order == ["P1", "B1", "P2", "B2"]
    assert [c.code for c in hands["player"]] == ["4S", "2C"]
    assert [c.code for c in hands["banker"]] == ["3D", "KH"]
    with pytest.raises(ValueError, match="no phase"):
        RULES.place(hands, "game_card", cards("AS")[0])


@pytest.mark.parametrize("total", range(8))
def test_player_cells(total):
    hands = hands_of(TWO[total], "TD 7C")         # banker 7: stands if the player stands
    want = {0: "player_third", 1: "player_third", 2: "player_third", 3: "player_third",
            4: "player_third", 5: "decide:player_draw", 6: None, 7: None}[total]
    assert RULES.next_phase(hands) == want


def test_player_choice_on_five():
    hands = hands_of(TWO[5], "TD 7C")
    assert RULES.decision_options(hands, "player_draw") == (True, False)
    RULES.decide(hands, "player_draw", "stand")
    assert hands["decisions"] == {"player_draw": False}
    assert RULES.next_phase(hands) is None       # banker 7 stands
    hands = hands_of(TWO[5], "TD 7C")
    RULES.decide(hands, "player_draw", True)
    assert RULES.next_phase(hands) == "player_third"
    assert RULES.decision_options(hands, "player_draw") == ()
    with pytest.raises(InputError, match="not due"):
        RULES.decide(hands, "player_draw", False)


@pytest.mark.parametrize("banker", range(8))
def test_banker_cells_when_player_stood(banker):
    hands = hands_of(TWO[6], TWO[banker])
    assert RULES.next_phase(hands) == expected_phase(EXPECTED_BANKER[banker][0])


@pytest.mark.parametrize("banker,x", [(b, x) for b in range(8) for x in range(10)])
def test_banker_cells_after_player_third(banker, x):
    hands = hands_of(f"{TWO[2]} {VALUE[x]}", TWO[banker])
    action = EXPECTED_BANKER[banker][1][x]
    assert RULES.next_phase(hands) == expected_phase(action)
    if action == O:
        assert RULES.decision_options(hands, "banker_draw") == (True, False)
        for choice in (True, False):
            h = hands_of(f"{TWO[2]} {VALUE[x]}", TWO[banker])
            RULES.decide(h, "banker_draw", choice)
            assert RULES.next_phase(h) == expected_phase(O, choice)
    else:
        assert RULES.decision_options(hands, "banker_draw") == ()


def test_optional_cells_are_exactly_3v9_and_5v4():
    options = {(b, x) for b in range(8) for x in range(10)
               if RULES.next_phase(hands_of(f"{TWO[2]} {VALUE[x]}", TWO[b]))
               == "decide:banker_draw"}
    assert options == {(3, 9), (5, 4)}


@pytest.mark.parametrize("player,banker", [("8S KD", "2C 3D"), ("4S 5D", "TC 3D"),
                                           ("2C 3D", "9S KD"), ("4S 4D", "TC 8D")])
def test_naturals_end_the_coup(player, banker):
    hands = hands_of(player, banker)
    assert RULES.next_phase(hands) is None
    assert RULES.outcome(hands)["natural"] is True


def test_banker_third_ends_the_coup():
    hands = hands_of(f"{TWO[2]} 5C", f"{TWO[4]} 2D")
    assert RULES.next_phase(hands) is None
    out = RULES.outcome(hands)
    assert out["player_total"] == 7 and out["banker_total"] == 6 and out["winner"] == "player"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6))
def test_default_policy_is_the_punto_banco_tableau(deck):
    hands = deal(deck)
    p, b = [], []
    it = iter(deck)
    while (phase := punto_banco.next_phase(p, b)) is not None:
        (p if phase in ("P1", "P2", "player_third") else b).append(next(it))
    assert hands["player"] == p and hands["banker"] == b


def test_decisions_file_values_change_the_coup():
    deck = cards("5S 3D KC KD 9H 7C")           # player 5, banker 3; x = 9 if the player draws
    assert [c.code for c in deal(deck)["banker"]] == ["3D", "KD", "7C"]
    stood = deal(deck, {"player_draw": False})
    assert len(stood["player"]) == 2 and [c.code for c in stood["banker"]] == ["3D", "KD", "9H"]
    no = deal(deck, {"banker_draw": False})
    assert len(no["player"]) == 3 and len(no["banker"]) == 2
    assert no["decisions"] == {"player_draw": True, "banker_draw": False}
    assert RULES.outcome(no)["decisions"] == {"player_draw": True, "banker_draw": False}


def test_decision_input_errors():
    hands = hands_of(TWO[5], TWO[3])
    with pytest.raises(InputError, match="not a draw decision"):
        RULES.decide(hands, "player_draw", "maybe")
    with pytest.raises(InputError, match="no decision"):
        RULES.decision_options(hands, "insurance")
    with pytest.raises(InputError, match="not due"):
        RULES.decide(hands, "banker_draw", True)
    with pytest.raises(InputError, match="no default"):
        RULES.default_decision(hands, "banker_seat")


def test_seat_inputs_are_recorded_and_do_not_gate():
    hands = RULES.new_hands()
    RULES.decide(hands, "banker_seat", 3)
    RULES.decide(hands, "active_player", 7)
    assert RULES.next_phase(hands) == "P1"
    assert 12 in RULES.decision_options(hands, "banker_seat")
    for bad in (0, 13, True, "3"):
        with pytest.raises(InputError, match="not a seat"):
            RULES.decide(hands, "active_player", bad)
    assert hands["decisions"] == {"banker_seat": 3, "active_player": 7}


# --- false coups -------------------------------------------------------------------------

@pytest.mark.parametrize("total", [6, 7])
def test_player_drawing_on_six_or_seven_is_a_false_coup(total):
    hands = hands_of(TWO[total], TWO[3])
    coup = RULES.check_draw(hands, "player_third", {"false_coup": "correct"})
    assert coup == FalseCoup("player", f"player draws on {total}", "correct", True, False)
    assert coup.as_fields()["kind"] == "false_coup"
    assert RULES.check_draw(hands, "stand:player") is None


@pytest.mark.parametrize("total", range(5))
def test_player_standing_on_zero_to_four_is_a_false_coup(total):
    hands = hands_of(TWO[total], TWO[7])
    for move in ("stand:player", "banker_third", "stand:banker"):
        coup = RULES.check_draw(hands, move)
        assert coup is not None and coup.hand == "player", move
        assert coup.detail == f"player stands on {total}"
        assert coup.remedy == "void" and not coup.drawn_in_error and not coup.pass_bank
    assert RULES.check_draw(hands, "player_third") is None
    assert RULES.next_phase(hands) == "player_third"   # a correction still deals the card


def test_player_on_five_may_do_either_but_keeps_his_word():
    hands = hands_of(TWO[5], TWO[7])
    assert RULES.check_draw(hands, "player_third") is None
    assert RULES.check_draw(hands, "stand:player") is None
    assert RULES.check_draw(hands, "stand:banker") is None     # the player stood on 5
    RULES.decide(hands, "player_draw", False)
    assert RULES.check_draw(hands, "player_third").detail == "player draws on 5 after standing"
    hands = hands_of(TWO[5], TWO[7], player_draw=True)
    coup = RULES.check_draw(hands, "stand:banker")
    assert coup.hand == "player" and "after asking" in coup.detail


@pytest.mark.parametrize("banker,x", [(b, x) for b in range(8) for x in [None, *range(10)]])
def test_banker_misdraws_against_every_cell(banker, x):
    player = TWO[6] if x is None else f"{TWO[2]} {VALUE[x]}"
    hands = hands_of(player, TWO[banker])
    cell = EXPECTED_BANKER[banker][0] if x is None else EXPECTED_BANKER[banker][1][x]
    draw = RULES.check_draw(hands, "banker_third", {"false_coup": "correct"})
    stand = RULES.check_draw(hands, "stand:banker", {"false_coup": "correct"})
    if cell == S:
        assert draw is not None and draw.hand == "banker" and draw.pass_bank and draw.drawn_in_error
        assert stand is None
    elif cell == D:
        assert stand is not None and stand.hand == "banker" and stand.pass_bank
        assert not stand.drawn_in_error and draw is None
        assert stand.detail.startswith(f"banker stands on {banker} against")
    else:
        assert draw is None and stand is None
        RULES.decide(hands, "banker_draw", False)
        assert RULES.check_draw(hands, "banker_third").pass_bank


def test_draws_after_a_natural_or_a_third_card():
    natural = hands_of("9S KD", "2C 3D")
    assert RULES.check_draw(natural, "player_third").detail == "player draws after a natural"
    assert RULES.check_draw(natural, "banker_third").pass_bank
    assert RULES.check_draw(natural, "stand:banker") is None
    done = hands_of(f"{TWO[2]} 5C", f"{TWO[4]} 2D")
    assert RULES.check_draw(done, "banker_third").detail == "banker draws a fourth card"
    assert RULES.check_draw(done, "player_third").detail == "player draws out of turn"


def test_check_draw_bad_calls():
    with pytest.raises(ValueError, match="not dealt yet"):
        RULES.check_draw(RULES.new_hands(), "player_third")
    with pytest.raises(ValueError, match="not a third-card move"):
        RULES.check_draw(hands_of(TWO[2], TWO[3]), "P1")
    with pytest.raises(ValueError, match="not a third-card move"):
        RULES.check_draw(hands_of(TWO[2], TWO[3]), "stand:dealer")


# --- settlement and commission -------------------------------------------------------------

@pytest.mark.parametrize("player,banker,want", [
    ("9S KD", "2C 3D", {"banker": -1, "player": 1}),
    ("2C 3D 2H", "9S KD", {"banker": Fraction(19, 20), "player": -1}),
    (f"{TWO[7]}", f"{TWO[7]}", {"banker": 0, "player": 0}),
])
def test_settlement_with_commission(player, banker, want):
    hands = hands_of(player, banker)
    assert RULES.next_phase(hands) is None
    assert RULES.settle(hands, PAYTABLE) == want
    assert Fraction(1) - PAYTABLE["banker"].pays == Fraction(5, 100)


def test_settle_rejects_unknown_bets():
    with pytest.raises(KeyError):
        RULES.settle(hands_of(TWO[7], TWO[6]), {"tie": BetRule(Fraction(8))})


# --- bank rotation ------------------------------------------------------------------------

def test_bank_rotation_counter_clockwise():
    rot = BankRotation.start([5, 1, 3, 8])
    assert rot.seats == (1, 3, 5, 8) and rot.banker == 1 and rot.next_banker == 3
    assert rot.after_coup("banker") is rot
    assert rot.after_coup("tie") is rot
    assert rot.after_coup("player").banker == 3
    assert rot.after_coup("banker", retired=True).banker == 3
    assert rot.after_coup("banker", misdraw=True).banker == 3
    last = BankRotation((1, 3, 5, 8), 8)
    assert last.next_banker == 1 and last.punters() == (1, 3, 5)
    assert last.passed().passed().banker == 3          # seat 1 declined the bank
    with pytest.raises(ValueError):
        rot.after_coup("dealer")
    with pytest.raises(ValueError):
        BankRotation((1, 2), 4)
    with pytest.raises(ValueError):
        BankRotation.start([2])


def test_active_player():
    rot = BankRotation((1, 2, 3, 4, 5), 3)              # punters in order: 4, 5, 1, 2
    assert rot.active_player({1: 50, 2: 100, 4: 20}) == 2
    assert rot.active_player({1: 100, 2: 100, 4: 20}) == 1   # tie: first counter-clockwise
    assert rot.active_player({5: 100, 4: 100}) == 4
    assert rot.active_player({1: 100}, banco=[2, 5]) == 5    # banco first, nearest caller
    with pytest.raises(ValueError):
        rot.active_player({})


# --- profile --------------------------------------------------------------------------------

def test_profile():
    p = load_profile("chemin-de-fer")
    assert p.game == "chemin_de_fer" and p.decks == 6
    assert p.cut_card.enabled and p.cut_card.default_from_end == 7
    assert p.cut_card.min_from_end == p.cut_card.max_from_end == 7
    assert p.cut_card.after == "no_more_coup"
    assert p.game_options == {"false_coup": "void"}
    assert set(p.paytable) == set(RULES.bets)


@pytest.mark.parametrize("options,key", [({"false_coup": "ignore"}, "game_options.false_coup"),
                                         ({"seats": 9}, "game_options.seats")])
def test_profile_rejects_bad_options(options, key):
    data = {"game": "chemin_de_fer", "decks": 6, "paytable": {"banker": 0.95, "player": 1},
            "game_options": options}
    with pytest.raises(ProfileError) as err:
        parse_profile(data, "cdf.toml")
    assert err.value.key == key and "\n" not in str(err.value)


def test_hand_total_helper_matches_two_card_table():
    assert all(hand_total(cards(v)) == t for t, v in TWO.items())


# --- stakes against the bank --------------------------------------------------------------------

def test_banco_plays_the_whole_bank_alone_first_caller_counter_clockwise():
    from controller.games.chemin_de_fer import BankRotation, pool_stakes
    bank = BankRotation.start(range(1, 13))                     # seat 1 banks
    pool = pool_stakes(bank, {3: 500, 5: 900}, banco=[9, 4], limit=1000)
    assert (pool.active, pool.banco) == (4, 4)                  # 4 comes before 9 from seat 1
    assert pool.accepted == {4: 1000} and pool.refused == {3: 500, 5: 900}


def test_stakes_are_pooled_up_to_the_bank_and_the_excess_refused():
    from controller.games.chemin_de_fer import BankRotation, pool_stakes
    bank = BankRotation.start(range(1, 13)).with_banker(6)      # counter-clockwise: 7, 8, …, 5
    pool = pool_stakes(bank, {2: 400, 7: 300, 9: 500}, limit=900)
    assert pool.accepted == {7: 300, 9: 500, 2: 100} and pool.refused == {2: 300}
    assert pool.active == 9 and pool.banco is None              # the highest stake covered


def test_equal_highest_stakes_go_to_the_first_seat_counter_clockwise_from_the_bank():
    from controller.games.chemin_de_fer import BankRotation, pool_stakes
    bank = BankRotation.start(range(1, 13)).with_banker(10)     # order: 11, 12, 1, …, 9
    assert pool_stakes(bank, {3: 500, 12: 500, 11: 200}).active == 12
    assert pool_stakes(bank, {3: 500, 9: 500}).active == 3


def test_a_stake_from_the_banker_seat_or_a_stranger_is_refused():
    from controller.games.chemin_de_fer import BankRotation, pool_stakes
    from controller.errors import InputError
    bank = BankRotation.start(range(1, 13))
    with pytest.raises(InputError, match="seat 1 is not a punter"):
        pool_stakes(bank, {1: 100})
    with pytest.raises(InputError, match="seat 13"):
        pool_stakes(bank, {13: 100})
