"""Decisions, false coups, the bank and the continuous shuffler in the table machine (no devices)."""
import random
from dataclasses import replace

import pytest

from controller.shoe.cards import ordered_shoe
from controller.errors import CommandRefused
from controller.settings.profile import load_profile
from controller.table import Corrected, Table, command
from tests.tablekit import card, deal, new_shoe, of

BURN = ["AS", "KD"]          # turned ace: one more card burned



def decide(table, name, value, user="dealer"):
    return table.apply(decision(name, value, user))


def decision(name, value, user="dealer"):
    return command("decide", user=user, role="dealer", reason="players' call", name=name,
                   value=value)


def started(profile_name="chemin-de-fer", **options):
    """A banking table after its burn; false coups are corrected at once unless asked (the
    shipped profiles void them: tested through the pipeline)."""
    profile = load_profile(profile_name)
    options.setdefault("false_coup", "correct")
    profile = replace(profile, game_options={**profile.game_options, **options})
    t = Table(profile)
    new_shoe(t, cut_position=300)
    deal(t, BURN)
    return t


# --- decisions ------------------------------------------------------------------------------

def test_player_on_five_waits_for_the_decision_and_stands():
    t = started()
    deal(t, "2S 3H 3C 3D")                      # player 5, banker 6
    assert t.state == "dealing.decide_player_draw" and t.round.pending == "player_draw"
    assert t.decision()[0] == "player_draw"
    assert t.prompt() == "Decide whether the Player draws: draw or stand"
    ev = decide(t, "player_draw", "stand", user="seat-4")
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
    assert t.state == "dealing.decide_banker_draw" and t.round.pending == "banker_draw"
    decide(t, "banker_draw", "draw", user="banker")
    ev = deal(t, "4H")
    result = of(ev, "round_result")[0]
    assert result["banker"] == ["2H", "AD", "4H"]
    assert result["decisions"] == {"player_draw": True, "banker_draw": True}


@pytest.mark.parametrize("name,value,why", [
    ("player_draw", "draw", "first cards are not dealt"),
    ("banker_tip", "draw", "takes no such decision"),
    ("player_draw", "maybe", "rules do not accept that"),
])
def test_decisions_that_are_not_due_are_refused(name, value, why):
    t = started()
    deal(t, "2S 3H")
    snap = t.snapshot()
    with pytest.raises(CommandRefused, match=why):
        decide(t, name, value)
    assert t.state == "dealing.P2" and t.round.decisions == {}
    assert t.snapshot() == snap                 # a refused command changes nothing


def test_only_the_pending_decision_is_taken():
    t = started()
    deal(t, "2S 3H 3C 3D")
    with pytest.raises(CommandRefused, match="waits to know whether the Player draws"):
        decide(t, "banker_draw", "stand")
    assert t.state == "dealing.decide_player_draw" and t.round.decisions == {}
    t2 = Table(load_profile("macau"))
    with pytest.raises(CommandRefused, match="takes no such decision"):
        decide(t2, "player_draw", "draw")


# --- false coups ----------------------------------------------------------------------------

def test_false_coup_corrected_at_once_is_refused_and_dealing_goes_on():
    t = started()                               # profile remedy: correct
    deal(t, "2S 3H AC 3D")                      # player 3 must draw
    assert t.state == "dealing.player_third"
    out = t.apply_safely(decision("player_draw", "stand"))
    assert isinstance(out.refused, CommandRefused)
    assert str(out.refused).startswith("false coup: player stands on 3; corrected: "
                                       "the player draws")
    assert t.state == "dealing.player_third"    # dealing goes on as the tableau says
    assert t.round.decisions == {}
    result = of(deal(t, "5H"), "round_result")[0]
    assert result["player"] == ["2S", "AC", "5H"] and not result.get("void")


def test_false_coup_corrected_at_once_is_recorded():
    t = started()
    deal(t, "2S 3H AC 3D")                      # player 3 must draw
    out = t.apply_safely(decision("player_draw", "stand"))
    assert isinstance(out.refused, Corrected)
    irr = of(out.events, "irregularity")[0]
    assert irr["kind"] == "false_coup" and irr["remedy"] == "correct" and not irr["pass_bank"]
    other = started()
    deal(other, "2S 3H AC 3D")
    with pytest.raises(Corrected):              # apply raises it too (the record stays)
        other.apply(decision("player_draw", "stand"))
    assert other.round.flags and other.round.flags[0]["kind"] == "false_coup"
    result = of(deal(t, "5H"), "round_result")[0]
    assert result["irregularities"] == ["false_coup"] and not result.get("void")


def test_false_coup_void_remedy_holds_for_the_supervisor():
    t = started(false_coup="void")
    deal(t, "3S 2H 3C 2D")                      # player 6 stands; banker 4 must draw
    ev = decide(t, "player_draw", "draw")       # the player draws on 6
    assert t.state == "hold" and of(ev, "hold")[0]["reason"] == "false_coup"
    problem = t.hold.last
    assert problem.kind == "false_coup" and problem.detail.startswith(
        "false coup: player draws on 6")
    ev = t.apply(command("void_round", user="sup", role="supervisor", reason="false coup"))
    result = of(ev, "round_result")[0]
    assert result["void"] and set(result["bets"].values()) == {0}
    assert result["irregularities"] == ["false_coup"]
    assert result["bank_seat"] == result["next_bank_seat"] == 1    # not the banker's fault


def test_banker_misdraw_is_refused_with_the_correction():
    t = started()
    deal(t, "3S 2H 3C 2D")                      # player 6 stands; banker 4 must draw
    assert t.state == "dealing.banker_third"
    with pytest.raises(CommandRefused, match="banker stands on 4"):
        decide(t, "banker_draw", "stand")
    assert t.state == "dealing.banker_third"
    result = of(deal(t, "5S"), "round_result")[0]          # banker 9 wins
    assert result["winner"] == "banker" and result["banker"] == ["2H", "2D", "5S"]


def test_banker_misdraw_passes_the_bank():
    t = started()
    deal(t, "3S 2H 3C 2D")                      # player 6 stands; banker 4 must draw
    out = t.apply_safely(decision("banker_draw", "stand"))
    assert isinstance(out.refused, Corrected)
    irr = of(out.events, "irregularity")[0]
    assert irr["pass_bank"] and irr["hand"] == "banker"
    result = of(deal(t, "5S"), "round_result")[0]          # banker 9 wins, yet passes the bank
    assert result["winner"] == "banker"
    assert result["bank_seat"] == 1 and result["next_bank_seat"] == 2
    assert t.snapshot()["bank"]["banker"] == 2


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
    assert back.state == "dealing.decide_player_draw" and back.round.pending == "player_draw"
    assert back.snapshot()["bank"] == t.snapshot()["bank"] and back.snapshot()["round_count"] == 2
    assert back.decision()[0] == "player_draw"
    ev = decide(back, "player_draw", "stand")
    assert of(ev, "round_result")[0]["bank_seat"] == 2


# --- baccarat en banque ---------------------------------------------------------------------

def test_banque_bank_draw_is_a_free_decision_and_a_hand_false_coup_is_caught():
    t = started("baccarat-banque")
    deal(t, "5S 6H 3D KC QC 2D")                # right 5, left 6, bank 5
    assert t.round.pending == "right_draw" and t.state == "dealing.decide_right_draw"
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
        t.apply(command("new_shoe", cut_position=400))
    assert t.state == "closed" and t.shoe is None
    new_shoe(t)
    assert t.state == "dealing.P1"              # no burn, bets open and close at once
    rounds = 0
    events = []
    while t.state != "shoe_ended":
        code, = model.pull()
        ev = card(t, code)
        events += ev
        for e in ev:
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
    # the machine's ledger reconciles by itself at the shoe's end: nothing to count back
    assert of(events, "shoe_ended")[0]["reason"] == "cards_dealt"
    rec, = of(events, "reconciliation")
    assert rec["ok"] and rec["method"] == "ledger" and rec["remainder"] == profile.cards
    assert not of(events, "device_request") and t.shoe.reconciled
    snap = Table.restore(profile, t.snapshot())
    assert snap.shoe.inventory.reconcile(model.undealt()) == []


def test_machine_ledger_takes_back_strays_but_not_a_foreign_copy():
    from controller.shoe.cards import parse_card
    from controller.table.model import MachineInventory
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


# --- stakes, banco, and who decides ---------------------------------------------------------

def betting(profile_name="chemin-de-fer"):
    """A chemin de fer table after its burn, bets open with a window (stakes are taken then)."""
    t = Table(replace(load_profile(profile_name), game_options={"false_coup": "void"}),
              betting_seconds=30)
    new_shoe(t, cut_position=300)
    deal(t, BURN)
    assert t.state == "betting"
    return t


def test_the_highest_covered_stake_plays_and_only_that_seat_decides_on_five():
    t = betting()
    for seat, amount in ((3, 500), (5, 700), (8, 200)):
        t.apply(command("stake", seat=seat, amount=amount))
    t.apply(command("accept_stakes", amount=1000))
    pooled = of(t.apply(command("close_bets")), "stakes_pooled")[0]
    assert pooled["stakes"] == {"3": 500, "5": 500} and pooled["refused"] == {"5": 200, "8": 200}
    assert pooled["active_player"] == 3                      # 500 each: seat 3 comes first
    deal(t, "2S 3H 3C 3D")                                   # player 5: his choice
    assert t.decision()[0] == "player_draw"
    with pytest.raises(CommandRefused, match="Seat 5 does not play the hand"):
        t.apply(command("decide", name="player_draw", value="stand", seat=5))
    done = t.apply(command("decide", name="player_draw", value="stand", seat=3))
    result = of(done, "round_result")[0]                     # banker 6, player stood: over
    assert result["active_player"] == 3 and result["banco"] is None
    assert result["stakes"] == {"3": 500, "5": 500} and result["decisions"]["player_draw"] is False


def test_banco_is_recorded_in_the_result():
    t = betting()
    t.apply(command("stake", seat=3, amount=500))
    t.apply(command("banco", seat=7))
    t.apply(command("close_bets"))
    result = of(deal(t, "9S 2H KC 4D"), "round_result")[0]   # player natural 9
    assert (result["banco"], result["active_player"]) == (7, 7)
    assert result["stakes"] == {"7": None}                    # the whole bank, amount unstated


def test_stakes_only_while_bets_are_open_and_never_from_the_bank():
    t = betting()
    with pytest.raises(CommandRefused, match="holds the bank and cannot"):
        t.apply(command("stake", seat=1, amount=100))
    t.apply(command("close_bets"))
    with pytest.raises(CommandRefused, match="only while bets are open"):
        t.apply(command("stake", seat=3, amount=100))
    punto = Table(load_profile("macau"), betting_seconds=30)
    new_shoe(punto, cut_position=400)
    deal(punto, ["2S", "AH", "3C"])
    with pytest.raises(CommandRefused, match="takes no stakes"):
        punto.apply(command("stake", seat=3, amount=100))


def test_stakes_and_banco_from_a_decisions_file(tmp_path):
    from controller.commands._simulation import run_simulation
    path = tmp_path / "d.txt"
    path.write_text("1 stake 3 500\n1 stake 5 500\n1 accept_stakes 800\n2 banco 6\n")
    events = run_simulation(load_profile("chemin-de-fer"), seed=3, decisions=str(path))
    results = {r["round"]: r for r in of(events, "round_result")}
    assert results[1]["stakes"] == {"3": 500, "5": 300} and results[1]["active_player"] == 3
    assert results[2]["banco"] == 6 and results[2]["active_player"] == 6
    assert all(r["stakes"] == {} for n, r in results.items() if n > 2)
