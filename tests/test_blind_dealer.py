"""One hold per incident, against a dealer who ignores the table: a shoe emptied card by card
for forty seconds while the shuffler shuffles is one hold, its review lists every read, one
supervisor action clears it, and the table deals on. The real loop, drivers and journal, on the
virtual clock (a shuffle takes its forty-five seconds there too)."""
from __future__ import annotations

import pytest

from controller.commands._people import Actors, People
from controller.journal import Journal
from controller.service.build import DeviceSettings, TableSpec, build
from controller.service.parts import Listener
from controller.settings.profile import load_profile
from controller.service.clock import VirtualClock
from controller.service.cycle import ShoePlan
from controller.table.inputs import command
from simulators.rig import SimRig

PACE_S, SHUFFLE_S, ACT_AT_S, ROUNDS_AFTER = 0.1, 45.0, 50.0, 10


def blind_table(profile, rig: SimRig, clock: VirtualClock, path: str, watcher, *,
                owner: bool = True, crash_after: int | None = None) -> TableSpec:
    """The table on the rig's framed shoe and shuffler, a blind dealer at it, `watcher` among
    its actors; `owner`: this process closes the rig's devices at its end (a process that
    crashes leaves them to the next)."""
    return TableSpec(
        profile, journal_path=path, shoes=0, clock=clock, rig=rig if owner else None,
        crash_after=crash_after,
        devices=DeviceSettings(shoe_url=rig.shoe_url, protocol="framed",
                               shoe_options=dict(read_timeout_s=0.01),
                               shuffler_url=rig.shuffler_url,
                               shuffler_options=dict(response_timeout_s=1.0)),
        plan=lambda n: ShoePlan(402, shuffler=True),
        people=(*People(rig, Actors(blind_pace_s=PACE_S), profile).makers(), watcher))


def test_a_blind_dealer_while_the_shuffler_works_is_one_hold_cleared_once(tmp_path):
    profile = load_profile("macau")
    clock = VirtualClock()
    rig = SimRig(profile.decks, protocol="framed", seed=4, clock=clock,
                 shuffle_time_s=SHUFFLE_S)
    stray = rig.hand_shuffle()
    rig.load_shoe(stray)            # a shoe of cards from elsewhere, dealt blindly from t=0
    path = str(tmp_path / "j.db")
    seen: dict = {"rounds": 0, "review": None}

    def supervisor() -> None:
        svc = seen["runtime"].service
        # what the supervisor reviews, then the one action that clears it
        seen["review"] = svc.table.view()["hold"]
        svc.submit(command("return_reads", user="sam", role="supervisor",
                           reason="cards from the old shoe, dealt while the new one shuffled"))

    def watch(e: dict) -> None:
        if e["event"] == "round_result":
            seen["rounds"] += 1
            if seen["rounds"] >= ROUNDS_AFTER:
                seen["runtime"].service.stop("enough rounds")

    def watcher(rt):
        # it stops the loop: one of its actors; the supervisor comes at ACT_AT_S
        seen["runtime"] = rt
        rt.service.call_later(ACT_AT_S, supervisor)
        return Listener(watch)

    build(blind_table(profile, rig, clock, path, watcher)).run()

    with Journal.open_readonly(path) as j:
        assert j.verify().ok
        holds = [r.data for r in j.records(kinds=["hold"])]
        queued = [r.data for r in j.records(kinds=["card_queued"])]
        returned = [r.data for r in j.records(kinds=["reads_returned"])]
        overrides = [r.data for r in j.records(kinds=["override"])]
        rounds = [r.data for r in j.records(kinds=["round_result"])]
        cards = [r.data for r in j.records(kinds=["card"])]
        records = sum(1 for _ in j.records())
    # forty seconds of reads: one hold (and its one hold event), every read kept under it
    assert len(holds) == 1 and holds[0]["reason"] == "card_not_due"
    assert holds[0]["where"] == "shuffling"
    assert len(queued) == len(stray) - 1 and [q["code"] for q in queued] == stray[1:]
    review = seen["review"]
    assert review["queued"] == stray[1:] and "return_reads" in review["actions"]
    # the journal grew by records per read (the read and what it caused), not holds per read
    assert records < 4 * len(stray) + 40 * len(rounds) + 200
    # one action cleared it: every read given back, none counted in the new shoe
    assert [o["action"] for o in overrides] == ["return_reads"]
    assert returned[0]["codes"] == stray
    assert len(rounds) == ROUNDS_AFTER and not any(r.get("void") for r in rounds)
    assert cards and all(c["code"] in rig.shuffler.last_delivery for c in cards[:20])
    assert cards[0]["n"] == 1                   # the new shoe's first card is its first


class Crash(Exception):
    """crash@N, raised here instead of killing the test's process."""


def test_a_crash_in_a_hold_raised_while_the_shuffler_works_has_the_shuffle_asked_again(
        tmp_path, monkeypatch):
    """The hold goes back to the shuffle once cleared: a restart inside it asks the shuffler
    again, as one in the shuffle itself does (without it the table would wait for ever)."""
    import controller.service.fault as fault

    def die():
        raise Crash()
    monkeypatch.setattr(fault, "die", die)
    profile = load_profile("macau")
    clock = VirtualClock()
    rig = SimRig(profile.decks, protocol="framed", seed=4, clock=clock,
                 shuffle_time_s=SHUFFLE_S)
    rig.load_shoe(rig.hand_shuffle())       # a shoe from elsewhere, dealt blindly from t=0
    path = str(tmp_path / "j.db")
    rounds: list[int] = []

    def watching(supervisor_at=None):
        def watcher(rt):
            def supervisor() -> None:
                rt.service.submit(command("return_reads", user="sam", role="supervisor",
                                          reason="cards of the old shoe"))

            def watch(e: dict) -> None:
                if e["event"] == "round_result":
                    rounds.append(e["round"])
                    if len(rounds) >= ROUNDS_AFTER:
                        rt.service.stop("enough rounds")
            if supervisor_at is not None:
                rt.service.call_later(supervisor_at, supervisor)
            # a table that waits for ever stops after a quarter of an hour of the virtual clock
            rt.service.call_later(900.0, lambda: rt.service.stop("the table waits for ever"))
            return Listener(watch)
        return watcher

    with pytest.raises(Crash):                  # held at the first stray read, then killed
        build(blind_table(profile, rig, clock, path, watching(), owner=False,
                          crash_after=40)).run()
    with Journal.open_readonly(path) as j:
        held = [r.data for r in j.records(kinds=["hold"])]
    assert [(h["reason"], h["resume_to"]) for h in held] == [("card_not_due", "shuffling")]
    build(blind_table(profile, rig, clock, path, watching(supervisor_at=ACT_AT_S))).run()
    with Journal.open_readonly(path) as j:
        assert j.verify().ok
        dealt = [r.data for r in j.records(kinds=["round_result"])]
    assert len(rounds) == ROUNDS_AFTER and len(dealt) == ROUNDS_AFTER
