
import pytest

from controller.shoe.cards import (ALL_CARDS, Card, CardCodeError, deck_composition, hand_total,
                              parse_card, cards)


@pytest.mark.parametrize("text,code", [("AS", "AS"), ("td", "TD"), ("10D", "TD"), ("10h", "TH"),
                                       (" kc ", "KC"), ("9s", "9S")])
def test_parse_accepts_variants_and_outputs_canonical(text, code):
    assert parse_card(text).code == code


@pytest.mark.parametrize("text", ["XZ", "1S", "11H", "A", "ASS", "", "0D", "TX", "1OD"])
def test_parse_rejects_with_the_code_rule(text):
    with pytest.raises(CardCodeError) as err:
        parse_card(text)
    assert "rank A23456789TJQK + suit SHDC" in str(err.value)


def test_points_and_burn_values_differ_for_faces():
    assert [c.point for c in cards("AS 2H 9D TC JS QH KD")] == [1, 2, 9, 0, 0, 0, 0]
    assert [c.burn_value for c in cards("AS 2H 9D TC JS QH KD")] == [1, 2, 9, 10, 10, 10, 10]


def test_deck_composition():
    comp = deck_composition(8)
    assert sum(comp.values()) == 416 and len(comp) == 52 and set(comp.values()) == {8}
    assert len(set(ALL_CARDS)) == 52


def test_hand_total_is_mod_ten():
    assert hand_total(cards("9H 5C KD")) == 4
    assert hand_total(cards("7S 8D")) == 5
    assert hand_total([]) == 0


def test_card_rejects_bad_fields():
    with pytest.raises(CardCodeError):
        Card("Z", "S")
