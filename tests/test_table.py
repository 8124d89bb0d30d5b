"""The table machine driven directly (no devices): golden shoes, invariants, irregular cards."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from controller.actions import apply_input
from controller.cards import ordered_shoe
from controller.errors import CommandRefused
from controller.inputs import command
from controller.profile import load_profile
from controller.shoefile import read_shoe_file
from controller.table import Table
from tests.golden import GOLDEN, compare, expected, golden_names, needs_golden, profile_of


def run_shoe(profile, codes, cut_position, demo_rounds=0):
    t = Table(profile)
    apply_input(t, command("new_shoe", cut_position=cut_position, demo_rounds=demo_rounds))
    events = t.drain()
    used = 0
    for i, code in enumerate(codes):
        if t.state == "shoe_ended":
            break
        if i == cut_position:
            t.on_cut_card()
        t.on_card(code)
        used += 1
        events += t.drain()
    if t.state != "shoe_ended":
        t.shoe_empty()
        events += t.drain()
    return t, events, used


@needs_golden
@pytest.mark.parametrize("name", [n for n in golden_names() if not n.startswith("andar")])
def test_golden_shoe_through_the_machine(name):
    shoe = read_shoe_file(GOLDEN / f"{name}.shoe")
    _, events, _ = run_shoe(load_profile(profile_of(name)), shoe.codes, shoe.cut_position)
    compare(expected(name), events)


def shuffled_shoe(seed, decks):
    cards = [c.code for c in ordered_shoe(decks)]
    random.Random(seed).shuffle(cards)
    return cards


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(["macau", "live-commission", "classic"]),
       behind=st.integers(12, 20), after=st.sampled_from(["finish", "one_more"]))
def test_invariants_over_random_shoes(seed, name, behind, after):
    from dataclasses import replace
    profile = load_profile(name)
    profile = replace(profile, cut_card=replace(profile.cut_card, after=after))
    codes = shuffled_shoe(seed, profile.decks)
    cut = len(codes) - behind
    table, events, used = run_shoe(profile, codes, cut)
    rounds = [e for e in events if e["event"] == "round_result"]
    burn = [e for e in events if e["event"] == "burn"][0]["cards"]
    # every card of the shoe is accounted for exactly once: burns, rounds, undealt rest
    dealt = list(burn)
    for r in rounds:
        dealt += r.get("burned_before", []) + r["player"] + r["banker"]
    assert sorted(dealt) == sorted(codes[:used])
    assert [e["code"] for e in events if e["event"] == "card"] == codes[:used]
    assert sorted(dealt + codes[used:]) == sorted(codes)
    assert table.shoe.inventory.reconcile(codes[used:]) == []
    for r in rounds:
        assert 2 <= len(r["player"]) <= 3 and 2 <= len(r["banker"]) <= 3
    # cut-card rule: the cut round is the round holding the first card behind the cut card
    position = len(burn)
    cut_round = None
    for r in rounds:
        n = len(r.get("burned_before", [])) + len(r["player"]) + len(r["banker"])
        if cut_round is None and position + n > cut:
            cut_round = r["round"]
        position += n
    end = [e for e in events if e["event"] == "shoe_ended"][0]
    if end["reason"] == "cut_card":
        assert rounds[-1]["round"] == cut_round + (1 if after == "one_more" else 0)
    else:
        assert end["reason"] == "exhausted" and rounds[-1].get("void")


def test_burn_rule_counts_faces_as_ten():
    codes = ["KD"] + shuffled_shoe(1, 8)[:60]
    codes = [c for c in codes if c != "KD"][:0] + codes
    _, events, _ = run_shoe(load_profile("macau"), codes, 400)
    assert len([e for e in events if e["event"] == "burn"][0]["cards"]) == 11


def test_demo_rounds_are_flagged_and_not_settled():
    profile = load_profile("macau")
    _, events, _ = run_shoe(profile, shuffled_shoe(3, 8), 402, demo_rounds=2)
    rounds = [e for e in events if e["event"] == "round_result"]
    assert [r.get("demo", False) for r in rounds[:3]] == [True, True, False]
    assert set(rounds[0]["bets"].values()) == {0}
    assert set(rounds[2]["bets"].values()) != {0}


def test_more_demo_rounds_than_allowed_is_refused():
    t = Table(load_profile("macau"))
    with pytest.raises(CommandRefused):
        apply_input(t, command("new_shoe", cut_position=402, demo_rounds=4))


def test_exhausted_shoe_voids_the_round_in_progress():
    profile = load_profile("classic")
    codes = shuffled_shoe(5, 6)[:40]
    _, events, _ = run_shoe(profile, codes, None)
    last = [e for e in events if e["event"] == "round_result"][-1]
    end = [e for e in events if e["event"] == "shoe_ended"][0]
    assert end["reason"] == "exhausted"
    if last.get("void"):
        assert set(last["bets"].values()) == {0} and last["reason"] == "exhausted"


def test_card_when_none_due_holds_the_table():
    t = Table(load_profile("macau"), auto_open=False)
    apply_input(t, command("new_shoe", cut_position=402))
    for code in ["2S", "AH", "3C"]:     # turned 2: two more burned
        t.on_card(code)
    assert t.state == "idle"
    t.on_card("9D")
    assert t.state == "hold"
    kinds = [e["kind"] for e in t.drain() if e["event"] == "irregularity"]
    assert kinds == ["card_not_due"]
    with pytest.raises(CommandRefused):
        apply_input(t, command("open_bets"))


def test_a_fourth_card_cannot_reach_a_hand():
    t = Table(load_profile("classic"))
    apply_input(t, command("new_shoe", cut_position=300))
    for code in "AS KD".split():      # burn: A + 1
        t.on_card(code)
    for code in "9H 9C KD 3S".split():   # natural 9 for Player: the round ends at four cards
        t.on_card(code)
    rounds = [e for e in t.drain() if e["event"] == "round_result"]
    assert rounds[0]["player"] == ["9H", "KD"] and rounds[0]["banker"] == ["9C", "3S"]
    assert t.state == "dealing.P1"     # the next card belongs to the next round


def test_the_dealer_is_told_where_each_card_goes():
    t = Table(load_profile("live-commission"))
    apply_input(t, command("new_shoe", cut_position=402))
    assert t.prompt() == "Turn the first card for the burn"
    t.on_card("3D")
    assert t.prompt() == "Burn 3 more card(s)"
    for code in "AS KD 2C".split():
        t.on_card(code)
    assert t.prompt() == "Deal Player's first card (P1)"
    for code in "2S 3H 4D 5C".split():     # P 2+4=6, B 3+5=8: a natural, four cards
        t.on_card(code)
    assert t.prompt() == "Burn one card"         # between-round burn before round 2
