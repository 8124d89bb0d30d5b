"""The shuffler's driver as the loop keeps it, and the outlets told only the kinds they take."""
from __future__ import annotations

from typing import Any

from controller.service.announce import Announcement, Fanout
from controller.service.clock import VirtualClock
from controller.service.devices import ShufflerSource
from controller.service.parts import Listener, Tap
from controller.table.inputs import command
from drivers import events as ev
from drivers.shuffler import open_shuffler
from simulators.install import install
from simulators.rig import SimRig
from simulators.usb_backend import backend_for


def _shuffler(threaded: bool) -> tuple[SimRig, VirtualClock, ShufflerSource, list, list]:
    install()
    clock = VirtualClock()
    rig = SimRig(8, seed=5, clock=clock)
    opened: list[Any] = []
    told: list[Any] = []

    def open_driver() -> Any:
        drv = open_shuffler(rig.shuffler_url, response_timeout_s=1.0)
        opened.append(drv)
        return drv
    src = ShufflerSource(told.append, open_driver, decks=8, threaded=threaded,
                         clock=clock.now)
    return rig, clock, src, opened, told


def _ask(src: ShufflerSource, clock: VirtualClock, action: str) -> None:
    src.publish({"event": "device_request", "device": "shuffler", "action": action})
    while (wake := src.pump()) is not None:
        clock.advance_to(wake)


def test_a_pumped_shuffler_keeps_its_driver_until_a_request_fails() -> None:
    rig, clock, src, opened, told = _shuffler(threaded=False)
    try:
        for _ in range(2):
            rig.gather()                # the dealer puts every card into the shuffler
            _ask(src, clock, "shuffle")
            _ask(src, clock, "deliver")
            assert rig.shoe.remaining == 416
        assert len(opened) == 1, "every request opened the shuffler again"
        assert sum(isinstance(t, ev.ShuffleDone) for t in told) == 2
        assert not any(isinstance(t, ev.DeviceAlarm) for t in told)
        rig.gather()
        # the cable is pulled: the kept driver fails, and is let go
        device = next(d for d in backend_for(rig.shuffler_name).devices)
        device.unplug()
        _ask(src, clock, "shuffle")
        assert [t.code for t in told if isinstance(t, ev.DeviceAlarm)] == ["fault"]
        # the next request opens the device afresh: gone, it says it cannot be opened
        _ask(src, clock, "shuffle")
        assert [t.code for t in told if isinstance(t, ev.DeviceAlarm)] == ["fault",
                                                                           "open_failed"]
        device.plug()
        rig.gather()
        _ask(src, clock, "shuffle")
        assert len(opened) == 2 and isinstance(told[-1], ev.ShuffleDone)
    finally:
        src.close()
        rig.close()


def test_a_shuffler_on_its_own_thread_opens_the_device_for_every_request() -> None:
    rig, clock, src, opened, told = _shuffler(threaded=True)
    try:
        # worked here without the thread: what matters is that nothing is kept
        for action in ("shuffle", "deliver"):
            for wait in src._work(action):
                clock.advance(wait)
        assert len(opened) == 2 and src._kept is None
    finally:
        src.close()
        rig.close()


def test_an_outlet_is_told_only_the_kinds_it_takes() -> None:
    out = Fanout()
    seen: dict[str, list[str]] = {"all": [], "status": [], "requests": []}
    out.connect(Listener(lambda e: seen["all"].append(e["event"])), Tap.ACTOR)
    out.connect(Listener(lambda e: seen["status"].append(e["event"]),
                         frozenset({"status"})), Tap.ACTOR)
    out.connect(Listener(lambda e: seen["requests"].append(e["event"]),
                         frozenset({"device_request"})), Tap.LISTENER)
    events = [{"event": "card", "seq": 1}, {"event": "device_request", "seq": 2}]
    told = Announcement(command("reveal"), events, {"event": "status", "shoe": 1},
                        None, {"event": "refused", "action": "x", "why": "no"}, True)
    out.tell(told)
    out.announce(told)
    assert seen["all"] == ["card", "device_request", "status", "refused"]
    assert seen["status"] == ["status"]
    assert seen["requests"] == ["device_request"]
    # a request told again (not journaled again) reaches the device's listener too
    out.status(None, {"event": "device_request", "action": "shuffle"})
    assert seen["requests"] == ["device_request", "device_request"]
    assert seen["status"] == ["status"] and seen["all"][-1] == "device_request"
    # an outlet joining later is told what it takes from then on
    late: list[dict] = []
    out.connect(Listener(late.append, frozenset({"status"})), Tap.ACTOR)
    out.status(None, {"event": "status"})
    assert late == [{"event": "status"}]


def test_the_loops_actors_name_what_they_take() -> None:
    from controller.service.cycle import BettingTimer, ShoeCycle
    from controller.service.idle import IdleWatch
    from simulators.dealer import BlindDealer, PlayersActor, VirtualDealer, VirtualSupervisor
    for actor in (BettingTimer, ShoeCycle, IdleWatch, BlindDealer, PlayersActor,
                  VirtualDealer, VirtualSupervisor, ShufflerSource):
        assert isinstance(actor.takes, frozenset) and actor.takes, actor
    # a bound method's object says what the listener made of it takes
    assert Listener(VirtualSupervisor(None, print, print).on_event).takes == {"status"}
