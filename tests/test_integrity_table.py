"""Live integrity alarms on the table: an unshuffled or replayed shoe stops dealing."""
import pytest

from controller.shoe.cards import ordered_shoe
from controller.commands._simulation import run_simulation
from controller.journal import Journal
from controller.settings.profile import load_profile
from controller.table import Table
from tests.tablekit import card, new_shoe, of, shuffled_shoe


def shuffled(seed):
    return shuffled_shoe(seed, 8)


def feed(t, codes, cut=402):
    """Deal `codes` until the table holds or the shoe ends; at the shoe's end read the undealt
    rest back through the shoe (the count-back). All the events."""
    events = []
    used = 0
    for i, code in enumerate(codes):
        if t.state in ("hold", "shoe_ended"):
            break
        if i == cut:
            events += t.apply({"type": "cut_card"})
        events += card(t, code)
        used += 1
    if t.state == "shoe_ended" and t.shoe.counting == "shoe":
        for code in codes[used:]:
            events += card(t, code)
    return events




@pytest.mark.parametrize("options", [
    {"use_shuffler": False},
    {},
], ids=["hand-loaded", "default-options"])
def test_factory_ordered_shoe_is_withdrawn(tmp_path, options):
    codes = [c.code for c in ordered_shoe(8)]
    shoe = tmp_path / "factory.shoe"
    shoe.write_text("\n".join(codes[:402] + ["CUT"] + codes[402:]) + "\n")
    journal = tmp_path / "j.db"
    events = run_simulation(load_profile("macau"), shoe_file=str(shoe),
                            journal_path=str(journal), **options)
    alarm = of(events, "irregularity")
    assert alarm[0]["kind"] == "integrity_alarm" and alarm[0]["detector"] == "factory_order"
    assert "AS 2S 3S 4S 5S" in alarm[0]["detail"]
    ended = of(events, "shoe_ended")[0]
    assert ended["reason"] == "invalid"
    assert all(e.get("void") for e in of(events, "round_result"))
    j = Journal.open_readonly(journal)
    overrides = [r.data for r in j.records(kinds=["override"])]
    j.close()
    assert overrides[0]["action"] == "end_shoe" and overrides[0]["args"] == {"void": True}
    # the withdrawn shoe's rest is still counted back: the cards reconcile
    rec, = of(events, "reconciliation")
    assert rec["ok"]


def test_a_shoe_replaying_the_previous_one_stops_the_table():
    t = Table(load_profile("macau"))
    first = shuffled(1)
    new_shoe(t, cut_position=402)
    events = feed(t, first)
    assert t.state == "shoe_ended" and of(events, "reconciliation")[0]["ok"]
    new_shoe(t, cut_position=402)
    events = feed(t, first)                 # the same order again: never reshuffled
    assert t.state == "hold"
    problem = t.hold.last
    assert problem.kind == "integrity_alarm" and problem.extra["detector"] == "repeated_sequence"
    assert problem.extra["card_index"] == 8
    assert of(events, "hold")[-1]["actions"] == ["resume", "end_shoe"]


def test_no_alarm_on_shuffled_shoes():
    t = Table(load_profile("macau"))
    for seed in range(3):
        events = new_shoe(t, cut_position=402)
        events += feed(t, shuffled(seed))
        assert t.state == "shoe_ended"
        assert not of(events, "irregularity") and not of(events, "alarm")
        assert of(events, "reconciliation")[0]["ok"]


def test_detectors_survive_a_restart():
    profile = load_profile("macau")
    t = Table(profile)
    codes = shuffled(5)
    new_shoe(t, cut_position=402)
    feed(t, codes[:60] + ["AH", "2H", "3H"])     # a run begins before the restart
    assert t.state != "hold"
    snap = t.snapshot()
    t2 = Table.restore(profile, snap)
    feed(t2, ["4H", "5H"])
    assert t2.state == "hold" and t2.hold.last.extra["detector"] == "factory_order"
