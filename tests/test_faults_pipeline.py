"""Every fault kind through the real pipeline (simulator behind its URL, drivers, table,
journal): the round results and the journal record, as the misdeal rules require (docs/rules.md)."""
from dataclasses import replace
from functools import lru_cache

import pytest

from controller.journal import Journal
from controller.settings.profile import load_profile
from controller.commands._simulation import run_simulation
from simulators.shoe import parse_fault

PROFILE = "live-commission"


def simulate(tmp_path, *faults, protocol="beetek", profile=None, name="j"):
    path = tmp_path / f"{name}.db"
    events = list(run_simulation(profile or load_profile(PROFILE), seed=3,
                                 faults=[parse_fault(f) for f in faults], journal_path=str(path),
                                 protocol=protocol))
    j = Journal.open_readonly(path)
    records = list(j.records())
    assert j.verify().ok
    j.close()
    return events, records


@lru_cache(maxsize=None)
def baseline_results():
    events = run_simulation(load_profile(PROFILE), seed=3)
    return tuple(_result(e) for e in events if e["event"] == "round_result")


def _result(e):
    return tuple((k, repr(v)) for k, v in sorted(e.items()) if k not in ("irregularities", "seq"))


def results(events):
    return tuple(_result(e) for e in events if e["event"] == "round_result")


def kinds(events, event="irregularity"):
    return [e["kind"] for e in events if e["event"] == event]


def journaled(records, record_kind, **match):
    return [r.data for r in records if r.kind == record_kind
            and all(r.data.get(k) == v for k, v in match.items())]


def test_double_draw_gives_the_same_results_plus_the_irregularity(tmp_path):
    events, records = simulate(tmp_path, "double_draw@40")
    assert results(events) == baseline_results()
    assert kinds(events) == ["multiple_cards"]
    assert journaled(records, "irregularity", kind="multiple_cards")
    flagged = [e for e in events if e["event"] == "round_result" and e.get("irregularities")]
    assert [e["irregularities"] for e in flagged] == [["multiple_cards"]]


@pytest.mark.parametrize("protocol", ["beetek", "framed"])
def test_triple_draw_is_kept_in_read_order(tmp_path, protocol):
    events, records = simulate(tmp_path, "triple_draw@60", protocol=protocol)
    assert results(events) == baseline_results()
    assert set(kinds(events)) == {"multiple_cards"} and len(kinds(events)) >= 2


@pytest.mark.parametrize("protocol", ["beetek", "barcode", "framed"])
def test_misread_is_entered_by_the_supervisor(tmp_path, protocol):
    events, records = simulate(tmp_path, "misread@40", protocol=protocol)
    assert results(events) == baseline_results()
    assert kinds(events) == ["unreadable_card"]
    overrides = journaled(records, "override", action="enter_card")
    assert len(overrides) == 1 and overrides[0]["reason"] and overrides[0]["user"]
    assert overrides[0]["before"]["state"] == "hold"
    entered = [r.data for r in records if r.kind == "card" and "entered" in r.data["flags"]]
    assert len(entered) == 1 and entered[0]["n"] == 41


@pytest.mark.parametrize("fault", ["noise@30", "split@30", "silence@40"])
@pytest.mark.parametrize("protocol", ["beetek", "framed"])
def test_line_faults_change_nothing(tmp_path, fault, protocol):
    events, _ = simulate(tmp_path, fault, protocol=protocol)
    assert results(events) == baseline_results()
    assert kinds(events) == []


@pytest.mark.parametrize("protocol,remedy", [("beetek", "enter_card"),
                                             ("framed", "accept_reads")])
def test_dropped_link_loses_no_card(tmp_path, protocol, remedy):
    # beetek: the read dies with the link; the dealer reports it and the supervisor enters it.
    # framed: the shoe resends it after the link is back; the supervisor reviews and accepts.
    events, records = simulate(tmp_path, "drop@40", protocol=protocol)
    assert results(events) == baseline_results()
    assert "link_lost" in kinds(events)
    assert journaled(records, "override", action=remedy)
    assert [e["code"] for e in events if e["event"] == "alarm"].count("link_lost") == 1
    review = [e for e in events if e["event"] == "link_review"]
    queued = [e["code"] for e in events if e["event"] == "card_queued"]
    # framed: the resent read waits for review, then is dealt like the others; the review is
    # shown when the link is back and again with every read that comes after it
    assert len(queued) == (1 if protocol == "framed" else 0)
    assert len(review) == 1 + len(queued) and review[-1]["codes"] == queued
    accepted = [r.data for r in records if r.kind == "card" and "held" in r.data["flags"]]
    assert [c["code"] for c in accepted] == queued


def test_foreign_card_is_removed_and_the_shoe_does_not_reconcile(tmp_path):
    events, records = simulate(tmp_path, "foreign_card@50")
    assert kinds(events) == ["foreign_card"]
    assert journaled(records, "override", action="remove_card")
    rec = [e for e in events if e["event"] == "reconciliation"]
    assert rec and rec[0]["ok"] is False and rec[0]["removed"] == 1
    assert journaled(records, "alarm", code="reconciliation")


def test_clean_shoe_reconciles(tmp_path):
    events, _ = simulate(tmp_path)
    rec = [e for e in events if e["event"] == "reconciliation"]
    assert rec == [dict(rec[0], ok=True, differences=0)]
    assert rec[0]["burned"] + rec[0]["dealt"] + rec[0]["remainder"] == 416


def test_face_up_card_is_valid_on_macau_rules(tmp_path):
    events, records = simulate(tmp_path, "face_up@45", protocol="framed")
    assert results(events) == baseline_results()
    assert kinds(events) == ["face_up_card"] and not journaled(records, "override")


def test_face_up_card_burned_and_replaced(tmp_path):
    profile = load_profile(PROFILE)
    profile = replace(profile, face_up_card="burn")
    events, records = simulate(tmp_path, "face_up@45", protocol="framed", profile=profile)
    assert kinds(events) == ["face_up_card"]
    assert journaled(records, "override", action="burn_card")
    burned = [e for e in events if e["event"] == "burned"]
    assert burned and burned[0]["cause"] == "face_up_card"
    # the face-up card never reached a hand
    code = burned[0]["code"]
    rnd = [e for e in events if e["event"] == "round_result" and e.get("irregularities")][0]
    assert code not in rnd["player"] + rnd["banker"] or rnd["player"].count(code) + \
        rnd["banker"].count(code) < 2


def test_face_up_card_voids_the_round(tmp_path):
    profile = replace(load_profile(PROFILE), face_up_card="void")
    events, records = simulate(tmp_path, "face_up@45", protocol="framed", profile=profile)
    void = [e for e in events if e["event"] == "round_result" and e.get("void")]
    assert len(void) == 1 and set(void[0]["bets"].values()) == {0}
    assert journaled(records, "override", action="void_round")


def test_skip_burn_is_corrected_by_read_order(tmp_path):
    events, records = simulate(tmp_path, "skip_burn@20")
    assert results(events) == baseline_results()
    assert kinds(events) == ["misplaced_cards"]
    assert journaled(records, "input", type="command", action="report_misplaced")


@pytest.mark.parametrize("fault,n_warnings", [("jam@0", 0), ("door_open@0", 1)])
def test_shuffler_faults_hold_until_cleared(tmp_path, fault, n_warnings):
    """One hold for the fault; a door still open when the supervisor resumes is waited for
    (a warning), not held again."""
    events, records = simulate(tmp_path, fault)
    assert results(events) == baseline_results()
    alarms = [e["severity"] for e in events if e["event"] == "alarm" and e["source"] == "shuffler"]
    assert alarms == ["error"] + ["warning"] * n_warnings
    assert [e["reason"] for e in events if e["event"] == "hold"] == ["device_alarm"]
    assert journaled(records, "override", action="resume")
    # no card was read before the shuffle completed and the count was accepted
    first_card = next(i for i, e in enumerate(events) if e["event"] == "card")
    last_resume = max(i for i, e in enumerate(events) if e["event"] == "resume")
    assert last_resume < first_card


def test_count_mismatch_blocks_the_shoe_until_reshuffled(tmp_path):
    events, records = simulate(tmp_path, "count_mismatch@0")
    assert kinds(events) == ["count_mismatch"]
    assert journaled(records, "override", action="reject_count")
    inputs = [r.data for r in records if r.kind == "input" and r.data["type"] == "shuffled"]
    assert [i["count"] for i in inputs] == [415, 416]
    first_card = next(i for i, e in enumerate(events) if e["event"] == "card")
    assert all(e["event"] != "card" for e in events[:first_card])
    assert len(results(events)) > 60


def test_bad_fault_text_is_refused():
    from simulators.shoe import FaultError
    with pytest.raises(FaultError):
        parse_fault("explode@3")


def test_a_jam_while_the_rest_is_counted_back_is_counted_again(tmp_path):
    """Shuffle 1 is the count of shoe 1's undealt rest: it jams, the supervisor resumes, the
    shuffler counts again and the next shoe is dealt."""
    path = tmp_path / "j.db"
    events = list(run_simulation(load_profile(PROFILE), seed=3, shoes=2, journal_path=str(path),
                                 faults=[parse_fault("jam@1")]))
    ended = next(i for i, e in enumerate(events) if e["event"] == "shoe_ended")
    assert results(events[:ended]) == baseline_results()
    [hold] = [e for e in events if e["event"] == "hold"]
    assert (hold["shoe"], hold["reason"], hold["resume_to"]) == (1, "device_alarm", "shoe_ended")
    after = events[events.index(hold):]
    asked = [e["shoe"] for e in events
             if e["event"] == "device_request" and e["action"] == "count_rest"]
    assert asked == [1, 1, 2]               # shoe 1's rest at its end and again after the resume
    [counted] = [e for e in after if e["event"] == "reconciliation" and e["shoe"] == 1]
    assert counted["ok"] and counted["remainder"] > 0
    assert any(e["event"] == "round_result" and e["shoe"] == 2 for e in after)
    assert [e["shoe"] for e in events if e["event"] == "shoe_ended"] == [1, 2]


def test_a_door_opened_while_the_rest_is_counted_back_is_held_as_the_door(tmp_path):
    """Shuffle 1, the count of shoe 1's rest, finds the door open: the one hold says so, and
    the count goes on where it paused. Before, the count asked the paused shuffler to SHUFFLE
    again: held as a refused command ("door open") and then as a count that "does not match
    the decks requested", neither of which the dealer could act on; and a supervisor who
    resumed before the door was closed had the table held again, once a resume."""
    path = tmp_path / "j.db"
    events = list(run_simulation(load_profile(PROFILE), seed=3, shoes=2, journal_path=str(path),
                                 faults=[parse_fault("door_open@1")]))
    [hold] = [e for e in events if e["event"] == "hold"]
    assert (hold["shoe"], hold["reason"], hold.get("code"), hold["resume_to"]) == \
        (1, "device_alarm", "door_open", "shoe_ended"), hold
    alarms = [(e["code"], e["severity"]) for e in events
              if e["event"] == "alarm" and e["source"] == "shuffler"]
    # the resume's request found the door still open: said, and waited for, not held again
    assert alarms == [("door_open", "error"), ("door_open", "warning")]
    [counted] = [e for e in events if e["event"] == "reconciliation" and e["shoe"] == 1]
    assert counted["ok"] and counted["remainder"] > 0 and counted["differences"] == 0
    assert [e["shoe"] for e in events if e["event"] == "shoe_ended"] == [1, 2]


def test_a_shuffler_fault_the_run_never_meets_is_said(capsys):
    from controller.cli import main
    assert main(["simulate", "--profile", "macau", "--seed", "1", "--fault", "jam@9"]) == 0
    err = capsys.readouterr().err
    assert "--fault jam@9 was never met: the shuffler shuffled 2 time(s), numbered from 0" in err
    assert main(["simulate", "--profile", "macau", "--seed", "1", "--fault", "jam@0",
                 "--shuffler-url", "none"]) == 0
    assert "--fault jam@0 was never met: this run loads its shoe without the shuffler" in \
        capsys.readouterr().err


def test_a_burn_card_whose_read_is_lost_is_burned_on_and_the_shoe_count_shows_it(tmp_path):
    """The link dropped with a start-burn card's read (a shoe that cannot resend): outside a
    round the table takes no report of an unread card, so the dealer burns on as the display
    says (reporting it again and again, refused every time, never ended); the shoe's count at
    its end names the card. A process of its own: a dealer who never stops would not let it
    end."""
    import os
    import subprocess
    import sys
    path = tmp_path / "j.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    done = subprocess.run([sys.executable, "-m", "controller.cli", "simulate", "--profile",
                           PROFILE, "--seed", "15", "--shoes", "1", "--shoe-protocol", "barcode",
                           "--fault", "drop@4", "--journal", str(path)],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    with Journal.open_readonly(path) as j:
        records = list(j.records())
    refused = [r.data for r in records if r.kind == "input" and "refused" in r.data]
    alarms = [r.data["text"] for r in records if r.kind == "alarm"]
    assert len(journaled(records, "round_result")) > 60 and not refused
    assert journaled(records, "shoe_ended")[0]["reason"] == "cut_card"
    assert any("do not reconcile" in text for text in alarms), alarms
