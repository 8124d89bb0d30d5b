"""The table machine driven directly (no devices): golden shoes, invariants, irregular cards."""
import pytest
from hypothesis import example, given, settings, strategies as st

from controller.errors import CommandRefused
from controller.settings.profile import load_profile
from controller.shoe.shoefile import read_shoe_file
from controller.table import Table, command
from tests.golden import GOLDEN, compare, expected, golden_names, needs_golden, profile_of
from tests.tablekit import BURN_TWO, card, deal, kinds, new_shoe, of, shuffled_shoe, sup


def run_shoe(profile, codes, cut_position, demo_rounds=0):
    """Deal `codes` until the shoe ends (or runs out: shoe_empty), then read the undealt rest
    back through the shoe, as the dealer does without a shuffler. `used`: the cards dealt."""
    t = Table(profile)
    events = new_shoe(t, cut_position=cut_position, demo_rounds=demo_rounds)
    used = 0
    for i, code in enumerate(codes):
        if t.state == "shoe_ended":
            break
        if i == cut_position:
            events += t.apply({"type": "cut_card"})
        events += card(t, code)
        used += 1
        if t.state == "hold" and t.hold is not None and "integrity_alarm" in t.hold.kinds:
            # a well-shuffled shoe can hold a short run in order (rarely: the integrity
            # watch's false alarms); the supervisor looks and deals on
            events += t.apply(sup("resume"))
    if t.state != "shoe_ended":
        events += t.apply(command("shoe_empty"))
    assert t.state == "shoe_ended"
    events += deal(t, codes[used:])          # the count-back
    return t, events, used


@needs_golden
@pytest.mark.parametrize("name", [n for n in golden_names() if not n.startswith("andar")])
def test_golden_shoe_through_the_machine(name):
    shoe = read_shoe_file(GOLDEN / f"{name}.shoe")
    _, events, used = run_shoe(load_profile(profile_of(name)), shoe.codes, shoe.cut_position)
    compare(expected(name), events)
    rec, = of(events, "reconciliation")       # the rest read back: the shoe is exact
    assert rec["ok"] and rec["method"] == "shoe"
    assert rec["remainder"] == len(shoe.codes) - used


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(["macau", "live-commission", "classic"]),
       behind=st.integers(12, 20), after=st.sampled_from(["finish", "one_more"]))
@example(seed=76054, name="macau", behind=14, after="finish")   # a run of five in order
def test_invariants_over_random_shoes(seed, name, behind, after):
    from dataclasses import replace
    profile = load_profile(name)
    profile = replace(profile, cut_card=replace(profile.cut_card, after=after))
    codes = shuffled_shoe(seed, profile.decks)
    cut = len(codes) - behind
    table, events, used = run_shoe(profile, codes, cut)
    rounds = of(events, "round_result")
    burn = of(events, "burn")[0]["cards"]
    # every card of the shoe is accounted for exactly once: burns, rounds, undealt rest
    dealt = list(burn)
    for r in rounds:
        dealt += r.get("burned_before", []) + r["player"] + r["banker"]
    assert sorted(dealt) == sorted(codes[:used])
    assert [e["code"] for e in of(events, "card")] == codes[:used]
    assert sorted(dealt + codes[used:]) == sorted(codes)
    assert table.shoe.inventory.reconcile(codes[used:]) == []
    # the count-back: each card of the rest is counted, then the shoe reconciles by itself
    assert [e["n"] for e in of(events, "count_back")] == list(range(1, len(codes) - used + 1))
    rec, = of(events, "reconciliation")
    assert events[-1] is rec and rec["ok"] and rec["differences"] == 0
    assert (rec["burned"], rec["dealt"], rec["remainder"]) == \
        (len(dealt) - sum(len(r["player"]) + len(r["banker"]) for r in rounds),
         sum(len(r["player"]) + len(r["banker"]) for r in rounds), len(codes) - used)
    assert rec["burned"] + rec["dealt"] + rec["removed"] + rec["remainder"] == len(codes)
    assert not of(events, "alarm") and table.shoe.reconciled
    for r in rounds:
        assert 2 <= len(r["player"]) <= 3 and 2 <= len(r["banker"]) <= 3
    # every round opens and closes its bets (at once: betting_seconds=0)
    assert len(of(events, "bets_open")) == len(of(events, "bets_closed")) == len(rounds)
    assert {e["closes_in_s"] for e in of(events, "bets_open")} == {0.0}
    # cut-card rule: the cut round is the round holding the first card behind the cut card
    position = len(burn)
    cut_round = None
    for r in rounds:
        n = len(r.get("burned_before", [])) + len(r["player"]) + len(r["banker"])
        if cut_round is None and position + n > cut:
            cut_round = r["round"]
        position += n
    end = of(events, "shoe_ended")[0]
    if end["reason"] == "cut_card":
        assert rounds[-1]["round"] == cut_round + (1 if after == "one_more" else 0)
    else:
        assert end["reason"] == "exhausted" and rounds[-1].get("void")


def test_burn_rule_counts_faces_as_ten():
    codes = ["KD"] + [c for c in shuffled_shoe(1, 8) if c != "KD"][:60]
    _, events, _ = run_shoe(load_profile("macau"), codes, 400)
    burn = of(events, "burn")[0]["cards"]
    assert len(burn) == 11 and burn == codes[:11]


def test_demo_rounds_are_flagged_and_not_settled():
    profile = load_profile("macau")
    _, events, _ = run_shoe(profile, shuffled_shoe(3, 8), 402, demo_rounds=2)
    rounds = of(events, "round_result")
    assert [r.get("demo", False) for r in rounds[:3]] == [True, True, False]
    assert set(rounds[0]["bets"].values()) == {0}
    assert set(rounds[2]["bets"].values()) != {0}


def test_more_demo_rounds_than_allowed_is_refused():
    t = Table(load_profile("macau"))
    with pytest.raises(CommandRefused, match="at most"):
        t.apply(command("new_shoe", cut_position=402, demo_rounds=4))
    assert t.state == "closed" and t.shoe is None and t.shoe_no == 0    # nothing changed
    new_shoe(t, cut_position=402, demo_rounds=3)
    assert t.state == "loaded" and t.shoe.demo_left == 3


def test_exhausted_shoe_voids_the_round_in_progress():
    profile = load_profile("classic")
    codes = shuffled_shoe(5, 6)[:40]
    t, events, _ = run_shoe(profile, codes, None)
    last = of(events, "round_result")[-1]
    end = of(events, "shoe_ended")[0]
    assert end["reason"] == "exhausted"
    if last.get("void"):
        assert set(last["bets"].values()) == {0} and last["reason"] == "exhausted"
    # 40 cards of a 312-card shoe: nothing reconciles by itself; counting done shows the gap
    assert not of(events, "reconciliation") and t.shoe.counting == "shoe"
    done = t.apply(command("count_done"))
    rec, = of(done, "reconciliation")
    assert not rec["ok"] and rec["remainder"] == 0
    assert [a["code"] for a in of(done, "alarm")] == ["reconciliation"]


def test_card_when_none_due_holds_the_table():
    t = Table(load_profile("macau"), auto_open=False)
    new_shoe(t, cut_position=402)
    deal(t, ["2S", "AH", "3C"])      # turned 2: two more burned
    assert t.state == "idle"
    ev = card(t, "9D")
    assert t.state == "hold"
    assert kinds(ev) == ["card_not_due"]
    snap = t.snapshot()
    with pytest.raises(CommandRefused):
        t.apply(command("open_bets"))
    assert t.state == "hold" and t.snapshot() == snap


def test_a_fourth_card_cannot_reach_a_hand():
    t = Table(load_profile("classic"))
    new_shoe(t, cut_position=300)
    deal(t, "AS KD")      # burn: A + 1
    ev = deal(t, "9H 9C KD 3S")   # natural 9 for Player: the round ends at four cards
    rounds = of(ev, "round_result")
    assert rounds[0]["player"] == ["9H", "KD"] and rounds[0]["banker"] == ["9C", "3S"]
    assert t.state == "dealing.P1"     # the next card belongs to the next round
    assert t.round.number == 2


def test_the_dealer_is_told_where_each_card_goes():
    t = Table(load_profile("live-commission"))
    new_shoe(t, cut_position=402)
    assert t.prompt() == "Turn the first card for the burn"
    card(t, "3D")
    assert t.prompt() == "Burn 3 more cards"
    deal(t, "AS KD 2C")
    assert t.prompt() == "Deal the Player's first card"
    deal(t, "2S 3H 4D 5C")     # P 2+4=6, B 3+5=8: a natural, four cards
    assert t.prompt() == "Burn one card"         # between-round burn before round 2


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), -1.0, "15"])
def test_a_betting_window_no_clock_can_time_is_refused(seconds):
    from controller.errors import InputError
    with pytest.raises(InputError, match="betting_seconds .*: give a number of seconds"):
        Table(load_profile("classic"), betting_seconds=seconds)
    t = Table(load_profile("classic"), betting_seconds=15)
    new_shoe(t, cut_position=300)
    opened = deal(t, BURN_TWO)
    assert [e["closes_in_s"] for e in opened if e["event"] == "bets_open"] == [15.0]
