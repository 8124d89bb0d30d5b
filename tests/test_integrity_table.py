"""Live integrity alarms on the table: an unshuffled or replayed shoe stops dealing."""
import random

from controller.actions import apply_input
from controller.cards import ordered_shoe
from controller.inputs import command
from controller.journal import Journal
from controller.profile import load_profile
from controller.simulate import run_simulation
from controller.table import Table


def shuffled(seed):
    codes = [c.code for c in ordered_shoe(8)]
    random.Random(seed).shuffle(codes)
    return codes


def feed(t, codes, cut=402):
    for i, code in enumerate(codes):
        if t.state in ("hold", "shoe_ended"):
            break
        if i == cut:
            apply_input(t, {"type": "cut_card"})
        apply_input(t, {"type": "card", "code": code})


def test_factory_ordered_shoe_is_withdrawn(tmp_path):
    codes = [c.code for c in ordered_shoe(8)]
    shoe = tmp_path / "factory.shoe"
    shoe.write_text("\n".join(codes[:402] + ["CUT"] + codes[402:]) + "\n")
    journal = tmp_path / "j.db"
    events = list(run_simulation(load_profile("macau"), shoe_file=str(shoe),
                                 journal_path=str(journal)))
    alarm = [e for e in events if e["event"] == "irregularity"]
    assert alarm[0]["kind"] == "integrity_alarm" and alarm[0]["detector"] == "factory_order"
    assert "AS 2S 3S 4S 5S" in alarm[0]["detail"]
    ended = [e for e in events if e["event"] == "shoe_ended"][0]
    assert ended["reason"] == "invalid"
    assert all(e.get("void") for e in events if e["event"] == "round_result")
    j = Journal.open_readonly(journal)
    overrides = [r.data for r in j.records(kinds=["override"])]
    j.close()
    assert overrides[0]["action"] == "end_shoe" and overrides[0]["args"] == {"void": True}


def test_a_shoe_replaying_the_previous_one_stops_the_table():
    t = Table(load_profile("macau"))
    first = shuffled(1)
    apply_input(t, command("new_shoe", cut_position=402))
    feed(t, first)
    assert t.state == "shoe_ended"
    apply_input(t, command("new_shoe", cut_position=402))
    feed(t, first)                       # the same order again: never reshuffled
    assert t.state == "hold"
    problem = t.hold_info["problems"][-1]
    assert problem["kind"] == "integrity_alarm" and problem["detector"] == "repeated_sequence"
    assert problem["card_index"] == 8


def test_no_alarm_on_shuffled_shoes():
    t = Table(load_profile("macau"))
    for seed in range(3):
        apply_input(t, command("new_shoe", cut_position=402))
        feed(t, shuffled(seed))
        assert t.state == "shoe_ended"


def test_detectors_survive_a_restart():
    profile = load_profile("macau")
    t = Table(profile)
    codes = shuffled(5)
    apply_input(t, command("new_shoe", cut_position=402))
    feed(t, codes[:60] + ["AH", "2H", "3H"])     # a run begins before the restart
    snap = t.snapshot()
    t2 = Table.restore(profile, snap)
    feed(t2, ["4H", "5H"])
    assert t2.state == "hold" and t2.hold_info["problems"][-1]["detector"] == "factory_order"
