"""Third-card rules against a table written out independently."""
from fractions import Fraction

import pytest

from controller.shoe.cards import Card, cards
from controller.games import punto_banco as pb
from controller.settings.profile import BetRule

# The banker's printed tableau when Player drew a third card of value x (columns x = 0..9):
# D = draws, S = stands.  Rows are Banker's two-card total 0..7.
PRINTED_TABLE = """
0: D D D D D D D D D D
1: D D D D D D D D D D
2: D D D D D D D D D D
3: D D D D D D D D S D
4: S S D D D D D D S S
5: S S S S D D D D S S
6: S S S S S S D D S S
7: S S S S S S S S S S
"""
EXPECTED_AFTER_THIRD = {int(row.split(":")[0]): [c == "D" for c in row.split(":")[1].split()]
                        for row in PRINTED_TABLE.strip().splitlines()}

# one card of each point value (T counts 0)
BY_POINT = {0: "T", 1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9"}


def two_cards(total: int, suit: str) -> list[Card]:
    a = (total + 10 - 3) % 10     # first card, second is a 3 so that no pair arises by accident
    return [Card(BY_POINT[a], suit), Card("3", suit)]


def expected_next(p_total: int, b_total: int, third: int | None) -> str | None:
    """An independent statement of Punto Banco's drawing rules (docs/rules.md)."""
    if p_total >= 8 or b_total >= 8:
        return None
    if third is None:
        if p_total <= 5:
            return "player_third"
        return "banker_third" if b_total <= 5 else None
    return "banker_third" if EXPECTED_AFTER_THIRD[b_total][third] else None


@pytest.mark.parametrize("p_total", range(10))
@pytest.mark.parametrize("b_total", range(10))
def test_every_two_card_pair_and_every_third_card(p_total, b_total):
    player, banker = two_cards(p_total, "S"), two_cards(b_total, "H")
    assert pb.next_phase(player, banker) == expected_next(p_total, b_total, None)
    if expected_next(p_total, b_total, None) != "player_third":
        return
    for x in range(10):
        third = Card(BY_POINT[x], "D")
        got = pb.next_phase(player + [third], banker)
        assert got == expected_next(p_total, b_total, x), (p_total, b_total, x)
        if got == "banker_third":
            assert pb.next_phase(player + [third], banker + [Card("5", "C")]) is None


@pytest.mark.parametrize("rank", ["T", "J", "Q", "K"])
def test_faces_count_zero_in_the_third_card_rule(rank):
    # banker 3 draws on a third card of value 0 (any face), stands only on an 8
    player, banker = cards("2S 3S") + [Card(rank, "D")], cards("AH 2H")
    assert pb.next_phase(player, banker) == "banker_third"


def test_dealing_order_is_player_banker_player_banker():
    p, b = [], []
    order = []
    for c in cards("2S 3H 4D 5C"):
        phase = pb.next_phase(p, b)
        order.append(phase)
        (p if phase.startswith("P") else b).append(c)
    assert order == ["P1", "B1", "P2", "B2"]


PAY = {"player": BetRule(Fraction(1)), "banker": BetRule(Fraction(19, 20)),
       "tie": BetRule(Fraction(8)), "player_pair": BetRule(Fraction(11)),
       "banker_pair": BetRule(Fraction(11)), "big": BetRule(Fraction(27, 50)),
       "small": BetRule(Fraction(3, 2))}
SUPER6 = dict(PAY, banker=BetRule(Fraction(1), {"on_six": Fraction(1, 2)}))


def test_settlement_banker_win_with_commission_and_big():
    r = pb.settle(cards("9H 5C KD"), cards("2S 3D"), PAY)
    assert r == {"player": -1, "banker": Fraction(19, 20), "tie": -1, "player_pair": -1,
                 "banker_pair": -1, "big": Fraction(27, 50), "small": -1}


def test_settlement_tie_pushes_player_and_banker_and_pays_tie():
    r = pb.settle(cards("8C 8H"), cards("5D JD AH"), PAY)
    assert r["player"] == 0 and r["banker"] == 0 and r["tie"] == 8
    assert r["player_pair"] == 11 and r["banker_pair"] == -1


def test_pairs_need_equal_rank_not_equal_value():
    assert pb.settle(cards("JC QC"), cards("2S 3D"), PAY)["player_pair"] == -1
    assert pb.settle(cards("JC JD"), cards("2S 3D"), PAY)["player_pair"] == 11
    assert pb.settle(cards("2C 5D"), cards("9S 9D"), PAY)["banker_pair"] == 11


def test_small_pays_on_four_cards_only():
    r = pb.settle(cards("9C 9D"), cards("KS 2D"), PAY)
    assert r["small"] == Fraction(3, 2) and r["big"] == -1
    r = pb.settle(cards("2C 3D 5S"), cards("KS 7D"), PAY)
    assert r["small"] == -1 and r["big"] == Fraction(27, 50)


def test_super6_pays_half_on_a_winning_six_only():
    assert pb.settle(cards("2C 3D 9S"), cards("KS 6D"), SUPER6)["banker"] == Fraction(1, 2)
    assert pb.settle(cards("2C 3D 9S"), cards("KS 7D"), SUPER6)["banker"] == 1
    assert pb.settle(cards("2C 4D"), cards("KS 6D"), SUPER6)["banker"] == 0   # 6-6 tie pushes


def test_winner_and_natural():
    assert pb.winner(cards("9H 5C KD"), cards("2S 3D")) == "banker"
    assert pb.is_natural(cards("4H 4C"), cards("2S 3D"))
    assert not pb.is_natural(cards("4H 3C"), cards("2S 3D"))


def test_a_rounds_key_and_outcome_agree_with_their_definitions():
    """The key the settlement tables are read by, and the outcome's totals and natural, on
    every hand of two or three cards by rank (the inline forms a table asks every round)."""
    ranks = "A2345TJ"
    hands = [[Card(a, "S"), Card(b, "H")] for a in ranks for b in ranks]
    hands += [h + [Card(c, "D")] for h in hands[::3] for c in ranks]
    for player in hands:
        for banker in hands[::5]:
            p, b = pb._total(player), pb._total(banker)
            want = pb.settlement_key(0 if p > b else 1 if b > p else 2, b,
                                     player[0].rank == player[1].rank,
                                     banker[0].rank == banker[1].rank, len(player) + len(banker))
            assert pb._key_of(player, banker) == want
            out = pb.RULES.outcome({"player": player, "banker": banker})
            assert (out["player_total"], out["banker_total"]) == (p, b)
            assert out["natural"] == pb.is_natural(player, banker)
            assert out["winner"] == pb.winner(player, banker)


def test_a_tables_settlement_is_the_rules_on_every_hand():
    """The settlement a table keeps for its paytable (settler) gives the rules' own on hands
    of two and three cards, pairs and Super 6 among them."""
    from controller.games.rules import bet_numbers
    from controller.settings.profile import load_profile
    paytable = load_profile("live-super6").paytable
    settled = pb.RULES.settler(paytable)
    ranks = "A2356TK"
    hands = [[Card(a, "S"), Card(b, "H")] for a in ranks for b in ranks]
    hands += [h + [Card(c, "D")] for h in hands[::4] for c in ranks]
    for player in hands[::2]:
        for banker in hands[::3]:
            hands_ = {"player": player, "banker": banker}
            assert settled(hands_) == bet_numbers(pb.settle_reference(player, banker, paytable))


def test_place_answers_what_next_phase_answers_after_it():
    """`place` gives the phase due next (its inline form of next_phase) for every hand the
    placed card leaves: the deal's own, and odd ones (a hand of one, four cards, none)."""
    assert pb.RULES.place_answers
    ranks = "A2345689TK"
    hands = [[]] + [[Card(a, "S")] for a in ranks]
    hands += [[Card(a, "S"), Card(b, "H")] for a in ranks for b in ranks]
    hands += [h + [Card(c, "D")] for h in hands[11::7] for c in ranks[::3]]
    hands += [[Card("2", "C")] * 4]
    card = Card("7", "C")
    for player in hands[::2]:
        for banker in hands[::3]:
            for phase in pb.PHASES:
                a = {"player": list(player), "banker": list(banker)}
                b = {"player": list(player), "banker": list(banker)}
                answer = pb.RULES.place(a, phase, card)
                b[pb._HAND_OF[phase]].append(card)
                assert a == b and answer == pb.RULES.next_phase(b), (player, banker, phase)
