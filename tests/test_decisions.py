"""Decisions, false coups, the bank and the continuous shuffler in the table machine (no devices)."""
import random
from dataclasses import replace

import pytest

from controller.actions import apply_input
from controller.cards import ordered_shoe
from controller.errors import CommandRefused
from controller.inputs import command
from controller.profile import load_profile
from controller.table import Table

BURN = ["AS", "KD"]          # turned ace: one more card burned


def decide(table, name, value, user="dealer"):
    inp = command("decide", user=user, role="dealer", reason="players' call", name=name,
                  value=value)
    inp["args"]["user"] = user
    apply_input(table, inp)


def started(profile_name="chemin-de-fer", **options):
    profile = load_profile(profile_name)
    if options:
        profile = replace(profile, game_options={**profile.game_options, **options})
    t = Table(profile)
    apply_input(t, command("new_shoe", cut_position=300))
    for code in BURN:
        t.on_card(code)
    t.drain()
    return t


def deal(table, codes):
    for code in codes.split():
        table.on_card(code)
    return table.drain()


def of(events, kind):
    return [e for e in events if e["event"] == kind]


# --- decisions ------------------------------------------------------------------------------

def test_player_on_five_waits_for_the_decision_and_stands():
    t = started()
    deal(t, "2S 3H 3C 3D")                      # player 5, banker 6
    assert t.state == "dealing.decide" and t.round.pending == "player_draw"
    assert t.prompt() == "Decide: player_draw (draw/stand)"
    decide(t, "player_draw", "stand", user="seat-4")
    ev = t.drain()
    assert of(ev, "decision") == [{"event": "decision", "shoe": 1, "round": 1,
                                   "name": "player_draw", "value": "stand", "user": "seat-4"}]
    result = of(ev, "round_result")[0]
    assert result["player"] == ["2S", "3C"] and result["banker"] == ["3H", "3D"]
    assert result["decisions"] == {"player_draw": False} and result["winner"] == "banker"
    assert t.state == "dealing.P1"              # the next coup is dealt


def test_a_card_while_a_draw_decision_is_pending_means_the_hand_drew():
    t = started()
    deal(t, "2S 3H 3C 3D")
    ev = deal(t, "4C")                          # the player took a card: 2+3+4 = 9
    assert of(ev, "decision")[0] == {"event": "decision", "shoe": 1, "round": 1,
                                     "name": "player_draw", "value": "draw", "user": "shoe",
                                     "by": "card"}
    assert of(ev, "card")[0]["slot"] == "player_third"
    result = of(ev, "round_result")[0]        # banker 6 stands against a 4
    assert result["player"] == ["2S", "3C", "4C"] and result["winner"] == "player"
    assert result["decisions"] == {"player_draw": True}


def test_banker_option_cell_is_a_decision():
    t = started()
    deal(t, "TS 2H 5C AD")                      # player 5, banker 3
    decide(t, "player_draw", True)
    deal(t, "9C")                               # player's third card 9: banker 3 may choose
    assert t.state == "dealing.decide" and t.round.pending == "banker_draw"
    decide(t, "banker_draw", "draw", user="banker")
    ev = deal(t, "4H")
    result = of(ev, "round_result")[0]
    assert result["banker"] == ["2H", "AD", "4H"]
    assert result["decisions"] == {"player_draw": True, "banker_draw": True}


@pytest.mark.parametrize("name,value,why", [
    ("player_draw", "draw", "first cards are not dealt"),
    ("banker_tip", "draw", "no decision 'banker_tip'"),
    ("player_draw", "maybe", "not a draw decision"),
])
def test_decisions_that_are_not_due_are_refused(name, value, why):
    t = started()
    deal(t, "2S 3H")
    with pytest.raises(CommandRefused, match=why):
        decide(t, name, value)
    assert t.state == "dealing.P2" and t.round.decisions == {}


def test_only_the_pending_decision_is_taken():
    t = started()
    deal(t, "2S 3H 3C 3D")
    with pytest.raises(CommandRefused, match="waits for player_draw"):
        decide(t, "banker_draw", "stand")
    t2 = Table(load_profile("macau"))
    with pytest.raises(CommandRefused, match="takes no decisions"):
        decide(t2, "player_draw", "draw")


# --- false coups ----------------------------------------------------------------------------

def test_false_coup_corrected_at_once():
    t = started()                               # profile remedy: correct
    deal(t, "2S 3H AC 3D")                      # player 3 must draw
    assert t.state == "dealing.player_third"
    with pytest.raises(CommandRefused, match="false coup: player stands on 3; corrected: "
                                             "the player draws"):
        decide(t, "player_draw", "stand")
    ev = t.drain()
    irr = of(ev, "irregularity")[0]
    assert irr["kind"] == "false_coup" and irr["remedy"] == "correct" and not irr["pass_bank"]
    assert t.state == "dealing.player_third"    # dealing goes on as the tableau says
    result = of(deal(t, "5H"), "round_result")[0]
    assert result["player"] == ["2S", "AC", "5H"] and result["irregularities"] == ["false_coup"]
    assert not result.get("void")


def test_false_coup_void_remedy_holds_for_the_supervisor():
    t = started(false_coup="void")
    deal(t, "3S 2H 3C 2D")                      # player 6 stands; banker 4 must draw
    decide(t, "player_draw", "draw")            # the player draws on 6
    assert t.state == "hold"
    problem = t.hold_info["problems"][-1]
    assert problem["kind"] == "false_coup" and problem["detail"].startswith(
        "false coup: player draws on 6")
    apply_input(t, command("void_round", user="sup", role="supervisor", reason="false coup"))
    result = of(t.drain(), "round_result")[0]
    assert result["void"] and set(result["bets"].values()) == {0}
    assert result["irregularities"] == ["false_coup"]
    assert result["bank_seat"] == result["next_bank_seat"] == 1    # not the banker's fault


def test_banker_misdraw_passes_the_bank():
    t = started()
    deal(t, "3S 2H 3C 2D")                      # player 6 stands; banker 4 must draw
    assert t.state == "dealing.banker_third"
    with pytest.raises(CommandRefused, match="banker stands on 4"):
        decide(t, "banker_draw", "stand")
    irr = of(t.drain(), "irregularity")[0]
    assert irr["pass_bank"] and irr["hand"] == "banker"
    result = of(deal(t, "5S"), "round_result")[0]          # banker 9 wins, yet passes the bank
    assert result["winner"] == "banker"
    assert result["bank_seat"] == 1 and result["next_bank_seat"] == 2
    assert t.bank["banker"] == 2


def test_bank_passes_on_a_loss_stays_on_a_win_and_a_seat_can_take_it():
    t = started()
    r1 = of(deal(t, "9S 2H KC 3D"), "round_result")[0]     # player natural 9: the bank passes
    assert (r1["bank_seat"], r1["next_bank_seat"]) == (1, 2)
    r2 = of(deal(t, "2S 9H KC KD"), "round_result")[0]     # banker natural 9 keeps the bank
    assert r2["bank_seat"] == 2
    decide(t, "banker_seat", 7, user="dealer")              # seats 3–6 declined the bank
    r3 = of(deal(t, "KS 8H KC QD"), "round_result")[0]     # banker natural 8 keeps it
    assert (r3["bank_seat"], r3["next_bank_seat"]) == (7, 7)
    assert r3["decisions"] == {"banker_seat": 7}


def test_decision_state_survives_a_snapshot():
    t = started()
    deal(t, "9S 2H KC 3D")                      # bank passes to seat 2
    deal(t, "2S 3H 3C 3D")
    snap = t.snapshot()
    back = Table.restore(t.profile, snap)
    assert back.state == "dealing.decide" and back.round.pending == "player_draw"
    assert back.bank == t.bank and back.round_count == 2
    decide(back, "player_draw", "stand")
    assert of(back.drain(), "round_result")[0]["bank_seat"] == 2


# --- baccarat en banque ---------------------------------------------------------------------

def test_banque_bank_draw_is_a_free_decision_and_a_hand_false_coup_is_caught():
    t = started("baccarat-banque")
    deal(t, "5S 6H 3D KC QC 2D")                # right 5, left 6, bank 5
    assert t.round.pending == "right_draw"
    decide(t, "right_draw", "stand")
    assert t.round.pending == "bank_draw"       # left stands on 6
    decide(t, "bank_draw", "draw", user="banker")
    ev = deal(t, "4C")
    result = of(ev, "round_result")[0]
    assert result["bank"] == ["3D", "2D", "4C"] and result["bank_total"] == 9
    assert result["decisions"] == {"right_draw": False, "bank_draw": True}
    assert result["bank_seat"] == result["next_bank_seat"] == 1   # the banker keeps the bank
    t2 = started("baccarat-banque")
    deal(t2, "2S 6H 3D KC QC 2D")               # right 2 must draw
    with pytest.raises(CommandRefused, match="right stands on 2"):
        decide(t2, "right_draw", "stand")


# --- continuous shuffler --------------------------------------------------------------------

def test_continuous_shuffler_returns_each_rounds_cards_and_reconciles():
    from simulators.csm import ContinuousShufflerModel
    profile = load_profile("macau-csm")
    assert profile.continuous_shuffler and profile.burn.rule == "none"
    assert not profile.cut_card.enabled
    cards = [c.code for c in ordered_shoe(8)]
    random.Random(4).shuffle(cards)
    model = ContinuousShufflerModel(cards, seed=4)
    t = Table(profile)
    with pytest.raises(CommandRefused, match="without a cut card"):
        apply_input(t, command("new_shoe", cut_position=400))
    apply_input(t, command("new_shoe"))
    assert t.state == "dealing.P1"              # no burn, bets open and close at once
    rounds = 0
    while t.state != "shoe_ended":
        code, = model.pull()
        t.on_card(code)
        for e in t.drain():
            if e["event"] == "cards_returned":
                model.return_cards(e["cards"])
                rounds += 1
                inv = t.shoe.inventory
                assert inv.cards_out == 0
                assert inv.reconcile(model.undealt()) == []
    assert rounds > 60 and model.position >= profile.cards     # more than a shoe's worth dealt
    inv = t.shoe.inventory
    drawn = len(inv.by_place["burn"]) + len(inv.by_place["hand"])
    assert drawn - len(inv.by_place["returned"]) == inv.cards_out == 0
    snap = Table.restore(profile, t.snapshot())
    assert snap.shoe.inventory.reconcile(model.undealt()) == []


def test_machine_ledger_takes_back_strays_but_not_a_foreign_copy():
    from controller.cards import parse_card
    from controller.table_state import MachineInventory
    inv = MachineInventory(1)
    for code, place in (("AS", "hand"), ("KD", "hand"), ("2C", "burn"), ("AS", "removed")):
        inv.record(parse_card(code), place)
    assert inv.return_all(["KD", "AS"]) == ["KD", "AS", "2C"]
    assert inv.cards_out == 1                   # the second ace cannot go into a 1-deck machine
    full = [c.code for c in ordered_shoe(1)]
    assert inv.reconcile(full) == ["AS: expected 1, accounted 2"]
    back = MachineInventory.from_dict(inv.to_dict())
    assert back.cards_out == 1 and back.by_place["returned"] == ["KD", "AS", "2C"]
    with pytest.raises(ValueError, match="not out"):
        back.return_cards(["QH"])
