"""Irregularities driven by scripted dealer and supervisor actions on the table itself."""
import pytest

from controller.actions import apply_input
from controller.errors import CommandRefused
from controller.inputs import command
from controller.profile import load_profile
from controller.table import Table


def sup(action, **args):
    return command(action, user="sam", role="supervisor", reason="checked at the table", **args)


def attended(profile="macau", betting_seconds=30.0):
    t = Table(load_profile(profile), auto_open=False, betting_seconds=betting_seconds)
    apply_input(t, command("new_shoe", cut_position=402))
    return t


def burn_shoe_start(t):
    for code in ("2S", "AH", "3C"):      # a 2 turned: two more burned
        apply_input(t, {"type": "card", "code": code})
    # attended: the dealer opens the round; unattended: it opens and closes by itself
    assert t.state == ("idle" if not t.auto_open else "dealing.P1")


def test_round_started_before_the_shoe_burn_invalidates_the_shoe():
    t = attended()
    apply_input(t, command("open_bets"))
    out = t.drain()
    assert t.state == "hold" and [e["kind"] for e in out if e["event"] == "irregularity"] == \
        ["missed_shoe_burn"]
    with pytest.raises(CommandRefused):
        apply_input(t, sup("resume_nothing"))
    apply_input(t, sup("end_shoe"))
    ended = [e for e in t.drain() if e["event"] == "shoe_ended"]
    assert ended[0]["reason"] == "invalid"
    assert [e for e in t.drain() if e["event"] == "override"] == []  # already drained above


def test_card_while_bets_are_open_is_held_then_burned():
    t = attended()
    burn_shoe_start(t)
    apply_input(t, command("open_bets"))
    assert t.state == "betting"
    apply_input(t, {"type": "card", "code": "9D"})
    assert t.state == "hold" and t.hold_info["problems"][-1]["kind"] == "card_while_betting"
    with pytest.raises(CommandRefused, match="needs a reason"):
        apply_input(t, command("burn_card", user="sam", role="supervisor"))
    apply_input(t, sup("burn_card"))
    assert t.state == "betting"
    assert t.shoe.inventory.by_place["burn"][-1] == "9D"
    override = [e for e in t.drain() if e["event"] == "override"][-1]
    assert override["before"]["state"] == "hold" and override["after"]["state"] == "betting"


def test_card_when_none_due_can_void_instead():
    t = attended(betting_seconds=0)
    burn_shoe_start(t)
    apply_input(t, command("open_bets"))
    apply_input(t, command("close_bets"))
    for code in ("4H", "5D"):
        apply_input(t, {"type": "card", "code": code})
    apply_input(t, sup("hold", note="player dispute"))
    assert t.state == "hold"
    apply_input(t, sup("void_round"))
    void = [e for e in t.drain() if e["event"] == "round_result"][-1]
    assert void["void"] and set(void["bets"].values()) == {0} and void["player"] == ["4H"]


def test_reads_during_a_link_hold_are_dealt_on_resume():
    t = Table(load_profile("macau"))
    apply_input(t, command("new_shoe", cut_position=402))
    burn_shoe_start(t)
    apply_input(t, {"type": "card", "code": "4H"})
    apply_input(t, {"type": "link_lost", "device": "shoe", "reason": "cable"})
    assert t.state == "hold"
    apply_input(t, {"type": "card", "code": "5D"})
    apply_input(t, {"type": "card", "code": "6C"})
    assert [e["code"] for e in t.drain() if e["event"] == "card_queued"] == ["5D", "6C"]
    apply_input(t, sup("resume"))
    assert [c.code for c in t.round.hands["banker"]] == ["5D"]
    assert [c.code for c in t.round.hands["player"]] == ["4H", "6C"]


def test_enter_card_only_for_an_unreadable_card_and_only_a_possible_one():
    t = Table(load_profile("macau"))
    apply_input(t, command("new_shoe", cut_position=402))
    burn_shoe_start(t)
    apply_input(t, {"type": "read_failed", "reason": "E3"})
    assert t.hold_info["problems"][-1]["kind"] == "unreadable_card"
    with pytest.raises(CommandRefused, match="not a card code"):
        apply_input(t, sup("enter_card", code="XZ"))
    with pytest.raises(CommandRefused):
        apply_input(t, sup("burn_card"))
    apply_input(t, sup("enter_card", code="10h"))
    assert [c.code for c in t.round.hands["player"]] == ["TH"] and t.state == "dealing.B1"


def test_a_ninth_copy_in_an_eight_deck_shoe_is_a_foreign_card():
    t = Table(load_profile("macau"))
    apply_input(t, command("new_shoe", cut_position=402))
    burn_shoe_start(t)
    t.shoe.inventory.seen["KD"] = 8      # as if all eight KD had been dealt already
    apply_input(t, {"type": "card", "code": "KD"})
    assert t.state == "hold" and t.hold_info["problems"][-1]["kind"] == "foreign_card"
    apply_input(t, sup("remove_card"))
    assert t.state == "dealing.P1"


def test_profile_changes_only_between_shoes():
    t = Table(load_profile("macau"))
    apply_input(t, command("new_shoe", cut_position=402))
    with pytest.raises(CommandRefused, match="between shoes"):
        apply_input(t, command("change_profile", user="m", role="manager", reason="new rules",
                               profile="classic"))
    t2 = Table(load_profile("macau"))
    apply_input(t2, command("change_profile", user="m", role="manager", reason="new rules",
                            profile="live-commission"))
    assert t2.profile.name == "live-commission"
    assert [e["event"] for e in t2.drain()][-2:] == ["profile_changed", "override"]


def test_an_unread_card_voided_still_reconciles_at_shoe_end():
    from controller.cards import ordered_shoe
    t = Table(load_profile("macau"))
    apply_input(t, command("new_shoe", cut_position=402))
    burn_shoe_start(t)
    apply_input(t, {"type": "card", "code": "4H"})
    apply_input(t, {"type": "read_failed", "reason": "E3"})       # the 5D left unread
    apply_input(t, sup("void_round"))
    apply_input(t, sup("end_shoe"))
    shoe = [c.code for c in ordered_shoe(8)]
    for code in ("2S", "AH", "3C", "4H", "5D"):
        shoe.remove(code)
    apply_input(t, {"type": "remainder", "composition": {c: shoe.count(c) for c in set(shoe)}})
    rec = [e for e in t.drain() if e["event"] == "reconciliation"][0]
    assert rec["ok"] and rec["remainder"] == 411
    # one card more missing than the unread one explains is a difference
    t2 = Table(load_profile("macau"))
    apply_input(t2, command("new_shoe", cut_position=402))
    burn_shoe_start(t2)
    apply_input(t2, sup("end_shoe"))
    apply_input(t2, {"type": "remainder", "composition": {c: shoe.count(c) for c in set(shoe)}})
    events = t2.drain()
    assert [e for e in events if e["event"] == "reconciliation"][0]["ok"] is False
    assert any(e["event"] == "alarm" and e["code"] == "reconciliation" for e in events)


def test_a_defect_holds_the_table_journals_the_input_and_survives_replay(tmp_path, monkeypatch):
    from controller.app import Controller
    from controller.journal import Journal
    profile = load_profile("macau")
    journal = Journal(str(tmp_path / "j.db"))
    ctl, _ = Controller.open(profile, journal)
    ctl.submit(command("new_shoe", cut_position=402))
    for code in ("2S", "AH", "3C"):
        ctl.submit({"type": "card", "code": code})
    import controller.games.punto_banco as pb
    monkeypatch.setattr(pb.RULES, "place", lambda *a: 1 / 0)     # a bug in the rules
    with pytest.raises(ZeroDivisionError):
        ctl.submit({"type": "card", "code": "4H"})
    assert ctl.table.state == "hold"
    assert ctl.table.hold_info["problems"][-1]["kind"] == "internal_error"
    inputs = [r.data for r in journal.records(kinds=["input"])]
    assert inputs[-1]["code"] == "4H" and "ZeroDivisionError" in inputs[-1]["error"]
    again, rec = Controller.open(profile, journal)        # replay meets the same defect
    assert rec.resumed and again.table.state == "hold"
    journal.close()
