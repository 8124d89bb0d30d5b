"""Irregularities driven by scripted dealer and supervisor actions on the table itself."""
from dataclasses import replace

import pytest

from controller.errors import CommandRefused
from controller.settings.profile import load_profile, resolve
from controller.table import Table, command
from tests.tablekit import (BURN_TWO, burn_shoe_start, card, composition, count_back, deal,
                            kinds, new_shoe, of, rest_of, sup)


def attended(profile="macau", betting_seconds=30.0):
    t = Table(load_profile(profile), auto_open=False, betting_seconds=betting_seconds)
    new_shoe(t, cut_position=402)
    return t


def unattended(profile="macau"):
    t = Table(load_profile(profile))
    new_shoe(t, cut_position=402)
    burn_shoe_start(t)
    return t


def test_round_started_before_the_shoe_burn_invalidates_the_shoe():
    t = attended()
    out = t.apply(command("open_bets"))
    assert t.state == "hold" and kinds(out) == ["missed_shoe_burn"]
    assert of(out, "hold")[0]["actions"] == ["end_shoe", "declare_invalid"]
    with pytest.raises(CommandRefused, match="does not know this action"):
        t.apply(sup("resume_nothing"))
    assert t.state == "hold" and t.hold.last.kind == "missed_shoe_burn"   # nothing changed
    ended = t.apply(sup("end_shoe"))
    assert of(ended, "shoe_ended")[0]["reason"] == "invalid"
    override, = of(ended, "override")
    assert override["action"] == "end_shoe" and override["before"]["hold"] == "missed_shoe_burn"
    assert override["after"]["state"] == "shoe_ended"


def test_card_while_bets_are_open_is_held_then_burned():
    t = attended()
    burn_shoe_start(t)
    t.apply(command("open_bets"))
    assert t.state == "betting"
    card(t, "9D")
    assert t.state == "hold" and t.hold.last.kind == "card_while_betting"
    assert t.hold.last.extra == {"code": "9D"}
    with pytest.raises(CommandRefused, match="Give a reason"):
        t.apply(command("burn_card", user="sam", role="supervisor"))
    assert t.state == "hold" and t.shoe.inventory.by_place["removed"] == ["9D"]
    ev = t.apply(sup("burn_card"))
    assert t.state == "betting"
    assert t.shoe.inventory.by_place["burn"][-1] == "9D"
    assert t.shoe.inventory.by_place["removed"] == []
    assert of(ev, "burned") == [{"event": "burned", "shoe": 1, "round": 1, "code": "9D",
                                 "cause": "card_while_betting"}]
    override = of(ev, "override")[-1]
    assert override["before"]["state"] == "hold" and override["after"]["state"] == "betting"


def test_card_when_none_due_can_void_instead():
    t = attended(betting_seconds=0)
    burn_shoe_start(t)
    t.apply(command("open_bets"))
    t.apply(command("close_bets"))
    deal(t, "4H 5D")
    t.apply(sup("hold", note="player dispute"))
    assert t.state == "hold" and t.hold.last.kind == "hold"
    assert t.hold.last.detail == "player dispute"
    ev = t.apply(sup("void_round"))
    void = of(ev, "round_result")[-1]
    assert void["void"] and set(void["bets"].values()) == {0} and void["player"] == ["4H"]
    assert void["banker"] == ["5D"] and void["irregularities"] == ["hold"]
    assert t.state == "idle" and t.hold is None


def lost_link_with_two_reads():
    """Round 1 dealt to P1 (4H), the shoe's link lost, then 5D and 6C read while it was down."""
    t = unattended()
    card(t, "4H")
    t.apply({"type": "link_lost", "device": "shoe", "reason": "cable"})
    assert t.state == "hold" and t.hold.last.kind == "link_lost"
    queued = deal(t, "5D 6C")
    assert [e["code"] for e in of(queued, "card_queued")] == ["5D", "6C"]
    assert not of(queued, "card") and [q.code for q in t.hold.queued] == ["5D", "6C"]
    assert t.round.layout() == {"player": ["4H"], "banker": []}
    return t


def test_reads_during_a_link_hold_wait_for_the_supervisor_then_are_dealt_when_accepted():
    t = lost_link_with_two_reads()
    # the link is still down: neither resume nor accepting the reads may go on
    with pytest.raises(CommandRefused, match="link is still down"):
        t.apply(sup("resume"))
    with pytest.raises(CommandRefused, match="link is still down"):
        t.apply(sup("accept_reads"))
    assert t.state == "hold" and [q.code for q in t.hold.queued] == ["5D", "6C"]
    back = t.apply({"type": "link_back", "device": "shoe"})
    review, = of(back, "link_review")
    assert review["codes"] == ["5D", "6C"] and review["queued"] == 2
    assert review["actions"] == ["accept_reads", "discard_reads", "void_round"]
    assert t.hold.link_back and "accept or discard" in t.prompt()
    # resume is refused while reads are queued: they are not dealt behind anyone's back
    with pytest.raises(CommandRefused, match="accept or discard them first"):
        t.apply(sup("resume"))
    assert t.state == "hold" and t.round.layout() == {"player": ["4H"], "banker": []}
    ev = t.apply(sup("accept_reads"))
    dealt = of(ev, "card")
    assert [(e["code"], e["slot"], e["flags"]) for e in dealt] == \
        [("5D", "B1", ["held"]), ("6C", "P2", ["held"])]
    assert [c.code for c in t.round.hands["banker"]] == ["5D"]
    assert [c.code for c in t.round.hands["player"]] == ["4H", "6C"]
    assert t.state == "dealing.B2" and t.hold is None
    assert of(ev, "override")[0]["action"] == "accept_reads"


def test_discarded_reads_after_a_lost_link_void_the_round_and_end_the_shoe():
    t = lost_link_with_two_reads()
    t.apply({"type": "link_back", "device": "shoe"})
    ev = t.apply(sup("discard_reads"))
    assert of(ev, "reads_discarded")[0]["codes"] == ["5D", "6C"]
    void = of(ev, "round_result")[0]
    assert void["void"] and set(void["bets"].values()) == {0}
    assert void["player"] == ["4H"] and void["banker"] == []
    assert of(ev, "shoe_ended")[0]["reason"] == "link_lost"
    assert t.state == "shoe_ended" and t.hold is None
    assert t.shoe.inventory.by_place["removed"] == ["5D", "6C"]
    # the discarded reads are out of play, yet the shoe still reconciles exactly
    rest = rest_of(8, BURN_TWO, ["4H", "5D", "6C"])
    rec, = of(count_back(t, rest), "reconciliation")
    assert rec["ok"] and rec["removed"] == 2 and rec["remainder"] == len(rest) == 410


def test_a_link_back_with_no_reads_queued_resumes():
    t = unattended()
    card(t, "4H")
    t.apply({"type": "link_lost", "device": "shoe", "reason": "cable"})
    review, = of(t.apply({"type": "link_back", "device": "shoe"}), "link_review")
    assert review["codes"] == [] and review["actions"] == ["resume", "void_round"]
    t.apply(sup("resume"))
    assert t.state == "dealing.B1"
    deal(t, "5D")
    assert t.round.layout() == {"player": ["4H"], "banker": ["5D"]}


def test_accepted_reads_after_one_that_holds_are_not_lost():
    t = Table(replace(load_profile("macau"), face_up_card="burn"))
    new_shoe(t, cut_position=402)
    burn_shoe_start(t)
    card(t, "4H")
    t.apply({"type": "link_lost", "device": "shoe", "reason": "cable"})
    card(t, "5D", face_up=True)         # a face-up card: the profile burns it
    card(t, "6C")
    t.apply({"type": "link_back", "device": "shoe"})
    t.apply(sup("accept_reads"))
    assert t.state == "hold" and t.hold.last.kind == "face_up_card"
    t.apply(sup("burn_card"))
    queued = [q.code for q in t.hold.queued] if t.hold is not None else []
    assert "6C" in t.round.layout()["banker"] + queued     # dealt, or still awaiting review


def test_enter_card_only_for_an_unreadable_card_and_only_a_possible_one():
    t = unattended()
    t.apply({"type": "read_failed", "reason": "E3"})
    assert t.hold.last.kind == "unreadable_card"
    assert t.hold.last.extra == {"card_index": 3}
    with pytest.raises(CommandRefused, match="That is not a card"):
        t.apply(sup("enter_card", code="XZ"))
    with pytest.raises(CommandRefused, match="Burn card does not clear this hold "
                                             r"\(it is for a card the shoe could not read\)"):
        t.apply(sup("burn_card"))
    assert t.state == "hold" and t.hold.last.kind == "unreadable_card"
    ev = t.apply(sup("enter_card", code="10h"))
    assert [c.code for c in t.round.hands["player"]] == ["TH"] and t.state == "dealing.B1"
    assert of(ev, "card")[0]["flags"] == ["entered"]
    assert t.shoe.inventory.unidentified == 0


def test_enter_card_is_refused_on_a_hold_for_anything_else():
    t = unattended()
    t.apply(sup("hold", note="player dispute"))
    snap = t.snapshot()
    with pytest.raises(CommandRefused, match=r"Enter card does not clear this hold \(it is for a supervisor's hold\)"):
        t.apply(sup("enter_card", code="TH"))
    assert t.snapshot() == snap and t.round.layout() == {"player": [], "banker": []}
    t2 = attended()
    burn_shoe_start(t2)
    card(t2, "9D")                         # no card due
    with pytest.raises(CommandRefused, match="it is for a card drawn when none was due"):
        t2.apply(sup("enter_card", code="9D"))
    assert t2.hold.last.kind == "card_not_due"


def test_a_ninth_copy_in_an_eight_deck_shoe_is_a_foreign_card():
    t = unattended()
    t.shoe.inventory.seen["KD"] = 8      # as if all eight KD had been dealt already
    ev = card(t, "KD")
    assert t.state == "hold" and t.hold.last.kind == "foreign_card"
    assert "copy 9" in t.hold.last.detail and t.hold.last.extra == {"code": "KD"}
    assert not of(ev, "card") and t.round.layout() == {"player": [], "banker": []}
    ev = t.apply(sup("remove_card"))
    assert of(ev, "removed")[0]["code"] == "KD"
    assert t.state == "dealing.P1"


def profile_text(name):
    return resolve(name).read_text(encoding="utf-8")


def test_profile_changes_only_between_shoes_and_carries_its_text():
    t = Table(load_profile("macau"))
    new_shoe(t, cut_position=402)
    with pytest.raises(CommandRefused, match="between shoes"):
        t.apply(command("change_profile", user="m", role="manager", reason="new rules",
                        profile="classic", text=profile_text("classic")))
    assert t.profile.name == "macau"
    t2 = Table(load_profile("macau"))
    with pytest.raises(CommandRefused, match="That profile cannot be used") as why:
        t2.apply(command("change_profile", user="m", role="manager", reason="new rules",
                         profile="live-commission"))
    assert why.value.code == "invalid_args" and t2.profile.name == "macau"
    with pytest.raises(CommandRefused, match="for another game"):
        t2.apply(command("change_profile", user="m", role="manager", reason="new rules",
                         profile="andar-bahar", text=profile_text("andar-bahar")))
    with pytest.raises(CommandRefused):
        t2.apply(command("change_profile", user="m", role="manager", reason="new rules",
                         profile="broken", text="decks = [oops"))
    assert t2.profile.name == "macau"
    ev = t2.apply(command("change_profile", user="m", role="manager", reason="new rules",
                          profile="live-commission", text=profile_text("live-commission")))
    assert t2.profile.name == "live-commission"
    assert [e["event"] for e in ev][-2:] == ["profile_changed", "override"]
    assert ev[0]["profile_sha256"] == load_profile("live-commission").sha256
    new_shoe(t2, cut_position=402)
    assert t2.state == "loaded" and t2.profile.name == "live-commission"


def test_a_changed_profile_survives_a_snapshot():
    t = Table(load_profile("macau"))
    t.apply(command("change_profile", user="m", role="manager", reason="new rules",
                    profile="live-commission", text=profile_text("live-commission")))
    assert t.profile.name == "live-commission"
    back = Table.restore(load_profile("macau"), t.snapshot())
    assert back.profile.name == "live-commission" and back.profile.sha256 == t.profile.sha256


@pytest.mark.parametrize("method", ["shoe", "shuffler"])
def test_an_unread_card_voided_still_reconciles_at_shoe_end(method):
    from controller.table.inputs import Remainder, ShuffleDone

    def loaded():
        # attended: the dealer opens each round
        t = Table(load_profile("macau"), auto_open=False)
        if method == "shoe":
            new_shoe(t, cut_position=402)
        else:
            assert of(new_shoe(t, cut_position=402, shuffler=True), "device_request")[0][
                "action"] == "shuffle"
            assert t.state == "shuffling"
            t.apply(ShuffleDone(count=416))
            assert t.state == "loaded"
        burn_shoe_start(t)
        return t

    def rest_counted(t, rest, complete):
        assert t.shoe.counting == method
        if method == "shuffler":
            return t.apply(Remainder(composition=composition(rest)))
        events = count_back(t, rest)
        # the shoe reconciles by itself once burned + dealt + removed + rest make the shoe;
        # with cards missing, the dealer's count_done reconciles what was read
        assert t.shoe.reconciled is complete and bool(of(events, "reconciliation")) is complete
        return events + ([] if complete else t.apply(command("count_done")))

    t = loaded()
    t.apply(command("open_bets"))
    t.apply(command("close_bets"))
    card(t, "4H")
    t.apply({"type": "read_failed", "reason": "E3"})       # the 5D left unread
    t.apply(sup("void_round"))
    assert t.state == "idle"
    ended = t.apply(sup("end_shoe"))
    assert of(ended, "shoe_ended")[0]["reason"] == "supervisor"
    rest = rest_of(8, BURN_TWO, ["4H", "5D"])
    events = rest_counted(t, rest, complete=True)
    rec, = of(events, "reconciliation")
    assert rec["ok"] and rec["remainder"] == 411 and rec["method"] == method
    assert not of(events, "alarm") and t.shoe.reconciled
    # cards missing with no unread card to explain them (4H, 5D) are differences
    t2 = loaded()
    t2.apply(sup("end_shoe"))
    events = rest_counted(t2, rest, complete=False)
    rec, = of(events, "reconciliation")
    assert rec["ok"] is False and rec["differences"] == 2 and rec["remainder"] == 411
    assert any(e["event"] == "alarm" and e["code"] == "reconciliation" for e in events)


def test_an_unattended_table_ends_its_shoe_between_rounds():
    t = unattended()                     # round 1 opened, bets closed, no card dealt yet
    assert t.state == "dealing.P1" and t.round.cards == 0
    ev = t.apply(sup("end_shoe"))
    assert of(ev, "round_cancelled") and of(ev, "shoe_ended")[0]["reason"] == "supervisor"
    assert t.state == "shoe_ended" and t.shoe.rounds == 0


def test_a_defect_holds_the_table_journals_the_input_and_survives_replay(tmp_path, monkeypatch):
    from controller.journal import Journal
    from controller.service.clock import VirtualClock
    from controller.service.loop import TableService
    from controller.service.recovery import open_table
    from controller.table.inputs import CardRead
    profile = load_profile("macau")
    journal = Journal(str(tmp_path / "j.db"))
    table, _ = open_table(profile, journal)
    svc = TableService(table, journal, VirtualClock())
    svc.process(command("new_shoe", cut_position=402))
    for code in BURN_TWO:
        svc.process(CardRead(code=code))
    import controller.games.punto_banco as pb
    monkeypatch.setattr(pb.RULES, "place", lambda *a: 1 / 0)     # a bug in the rules
    out = svc.process(CardRead(code="4H"))
    assert isinstance(out.error, ZeroDivisionError)
    assert table.state == "hold" and table.hold.last.kind == "internal_error"
    assert table.hold.resume_to == "dealing.P1" and table.round.layout()["player"] == []
    assert kinds(out.events) == ["internal_error"]
    inputs = [r.data for r in journal.records(kinds=["input"])]
    assert inputs[-1]["code"] == "4H" and "ZeroDivisionError" in inputs[-1]["error"]
    assert [r.data["reason"] for r in journal.records(kinds=["hold"])] == ["internal_error"]
    again, rec = open_table(profile, journal)        # replay meets the same defect
    assert rec.resumed and again.state == "hold"
    assert again.hold.last.kind == "internal_error"
    journal.close()


@pytest.mark.parametrize("remedy, then", [("reject_count", "shuffling"), ("accept_count", None)])
def test_the_right_count_of_the_wrong_cards_holds_the_shoe_at_its_count(remedy, then):
    """A shuffler that reads the cards says which it counted: one card swapped for another
    (a seventh 6S in a six-deck shoe where a TD is missing) is the right number and no shoe to
    deal; the supervisor has it shuffled again, or loads it with the wrong card watched for."""
    from controller.shoe.cards import ordered_shoe
    from controller.table.inputs import ShuffleDone
    from controller.words.problems import problem_words
    from controller.words import render
    from simulators.dealer import VirtualSupervisor

    def counted(codes):
        return ShuffleDone(count=len(codes), composition=tuple(composition(codes).items()))
    t = Table(load_profile("classic"), auto_open=False)
    new_shoe(t, cut_position=300, shuffler=True)
    right = [c.code for c in ordered_shoe(t.profile.decks)]
    wrong = list(right)
    wrong[wrong.index("TD")] = "6S"
    events = t.apply(counted(wrong))
    hold = of(events, "hold")[0]
    assert (hold["reason"], hold["extra"], hold["missing"]) == ("count_mismatch", ["6S"], ["TD"])
    assert set(hold["actions"]) >= {"accept_count", "reject_count"}
    said = render(problem_words({"kind": "count_mismatch", **hold}))
    assert "too many of 6 of spades, too few of 10 of diamonds" in said, said
    # a supervisor nobody can send to the shoe takes the shoe and the wrong card as it comes
    virtual = VirtualSupervisor(None, lambda _: None, lambda *_: None)
    assert virtual.decide({"kind": "count_mismatch", **hold}, False, 0)["action"] == \
        "accept_count"
    events = t.apply(sup(remedy))
    if then == "shuffling":
        assert t.state == "shuffling" and of(events, "device_request")[0]["action"] == "shuffle"
        t.apply(counted(right))         # the right cards this time: the shoe is loaded
    assert t.state == "loaded"
