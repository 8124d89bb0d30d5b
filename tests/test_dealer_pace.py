"""The virtual dealer at zero pace takes the shoe the moment the shuffler hands it over (told by
the rig, from whatever thread loads it), not a moment later; its look-again timer then finds
the pull made and pulls nothing more."""
from __future__ import annotations

from simulators.dealer import VirtualDealer
from simulators.rig import SimRig


def _dealer(pace_s: float):
    rig = SimRig(decks=8, seed=1)
    timers: list = []
    later: list = []
    dealer = VirtualDealer(rig, submit=lambda cmd: None,
                           schedule=lambda delay, fn: timers.append((delay, fn)),
                           pace_s=pace_s, after_inputs=later.append)
    rig.next_for = 1
    dealer.on_event({"event": "status", "expects": "card", "shoe": 1, "reads": 0})
    return rig, dealer, timers, later


def test_at_zero_pace_the_dealer_pulls_when_the_shoe_is_loaded():
    rig, _, timers, later = _dealer(0.0)
    try:
        assert rig.shoe.position == 0 and len(timers) == 1      # waiting for the shoe
        rig.load_shoe(rig.hand_shuffle())       # the shuffler hands it over
        assert len(later) == 1                  # the pull is queued for the table's loop
        later.pop()()
        assert rig.shoe.position == 1
        timers[0][1]()                          # the look-again finds it done
        assert rig.shoe.position == 1
    finally:
        rig.close()


def test_at_a_pace_the_dealer_looks_again_after_it():
    rig, _, timers, later = _dealer(0.3)
    try:
        rig.load_shoe(rig.hand_shuffle())
        assert later == [] and rig.shoe.position == 0 and timers[0][0] == 0.3
        timers[0][1]()
        assert rig.shoe.position == 1
    finally:
        rig.close()
