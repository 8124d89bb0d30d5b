"""The shuffler opened for each request, and the outlets told only the kinds they take."""
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


def test_every_request_opens_the_shuffler_afresh_so_one_plugged_back_is_found() -> None:
    rig, clock, src, opened, told = _shuffler(threaded=False)
    try:
        for _ in range(2):
            rig.gather()                # the dealer puts every card into the shuffler
            _ask(src, clock, "shuffle")
            _ask(src, clock, "deliver")
            assert rig.shoe.remaining == 416
        assert len(opened) == 4, "a request used a driver another request had opened"
        assert sum(isinstance(t, ev.ShuffleDone) for t in told) == 2
        assert not any(isinstance(t, ev.DeviceAlarm) for t in told)
        rig.gather()
        # the cable is pulled: the next request cannot open it, and says so
        device = next(d for d in backend_for(rig.shuffler_name).devices)
        device.unplug()
        _ask(src, clock, "shuffle")
        assert [t.code for t in told if isinstance(t, ev.DeviceAlarm)] == ["open_failed"]
        # plugged back, the next request finds it
        device.plug()
        _ask(src, clock, "shuffle")
        assert len(opened) == 5 and isinstance(told[-1], ev.ShuffleDone)
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
                        None, {"event": "refused", "action": "x", "why": "no"})
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


def test_each_actor_takes_exactly_the_kinds_its_entry_looks_at() -> None:
    # the loop tells an actor only the kinds in its `takes`: a kind its entry point tests for
    # but does not name would never reach it, one it names but never tests costs a call
    import inspect
    import re
    from controller.service.cycle import BettingTimer, ShoeCycle
    from controller.service.idle import IdleWatch
    from simulators.dealer import BlindDealer, PlayersActor, VirtualDealer, VirtualSupervisor
    compared = re.compile(r'(?:kind|e\["event"\])\s*(?:==|!=)\s*"(\w+)"')
    for actor in (BettingTimer, ShoeCycle, IdleWatch, BlindDealer, PlayersActor,
                  VirtualDealer, VirtualSupervisor, ShufflerSource):
        entry = getattr(actor, "on_event", None) or actor.publish
        looked_at = set(compared.findall(inspect.getsource(entry)))
        assert looked_at == actor.takes, (actor.__name__, sorted(looked_at), sorted(actor.takes))


class _Outward:
    def __init__(self, takes: frozenset | None = None, ignores: frozenset = frozenset()):
        if takes is not None:
            self.takes = takes
        self.ignores = ignores
        self.seen: list[str] = []

    def publish(self, event: dict) -> None:
        self.seen.append(event["event"])


def test_an_outward_outlet_is_told_only_the_kinds_it_takes_and_none_it_ignores() -> None:
    out = Fanout()
    everything = _Outward()
    printer = _Outward(ignores=frozenset({"prompt"}))
    rounds = _Outward(takes=frozenset({"round_result"}))
    for outlet in (everything, printer, rounds):
        out.connect(outlet, Tap.OUTWARD)
    events = [{"event": "card", "seq": 1}, {"event": "round_result", "seq": 2}]
    told = Announcement(command("reveal"), events, {"event": "status", "shoe": 1},
                        {"event": "prompt"}, None)
    out.announce(told)
    out.outward_only({"event": "prompt"})
    assert everything.seen == ["card", "round_result", "prompt", "prompt"]
    assert printer.seen == ["card", "round_result"]
    assert rounds.seen == ["round_result"]
    assert out.wants("prompt") and out.wants("card")
    only = Fanout()
    only.connect(printer, Tap.OUTWARD)
    only.connect(rounds, Tap.OUTWARD)
    assert not only.wants("prompt")     # nobody outward takes prompts: none need be made


def test_the_consoles_memory_takes_exactly_the_kinds_it_keeps() -> None:
    import inspect
    import re
    from controller.roads import ShoeRoads
    from controller.service.control import Memory
    compared = re.compile(r'kind\s*(?:==|!=)\s*"(\w+)"')
    looked_at = set(compared.findall(inspect.getsource(Memory.publish))) \
        | set(compared.findall(inspect.getsource(ShoeRoads.publish)))
    assert looked_at == Memory.takes, sorted(looked_at)


def test_the_consoles_memory_is_kept_only_where_the_control_socket_is_served(tmp_path) -> None:
    # it serves the socket's state requests alone: a table without the socket (a simulation,
    # `run --no-control`) is spared its roads on every result, and a restart its rebuild
    from controller.commands._simulation import run_simulation
    from controller.service.build import ControlSpec, DeviceSettings, TableSpec
    from controller.service.clock import VirtualClock
    from controller.service.runtime import TableRuntime
    from controller.settings.profile import load_profile
    profile = load_profile("macau")
    path = str(tmp_path / "j.db")
    results = [e for e in run_simulation(profile, seed=5, shoes=1, journal_path=path)
               if e["event"] == "round_result"]
    assert results
    seen = {}
    for control in (None, ControlSpec(str(tmp_path / "c.sock"), str(tmp_path / "users.db"))):
        rt = TableRuntime(TableSpec(profile, DeviceSettings(shoe_url="shoesim://unused"),
                                    plan=lambda n: None, journal_path=path, clock=VirtualClock(),
                                    control=control))
        try:
            # the restart's roads: the last shoe's results (none without the socket)
            seen[control is None] = rt.memory.roads_view()["counts"]["rounds"]
            kept = rt.memory in rt.service._out.outward
            assert kept == (control is not None)
        finally:
            rt.close()
    assert seen == {True: 0, False: len(results)}


def test_a_request_waits_for_a_door_left_open_and_holds_again_only_after_the_wait() -> None:
    """The shuffle pauses with its door open (an alarm: the table holds). The request the
    resume sends finds the door still open: a warning, then it waits; a door still open after
    DOOR_WAIT_S is an alarm again (the table holds again). Closed during the next request's
    wait, the shuffle goes on by itself and is reported done, with no alarm more."""
    from controller.service.devices import DOOR_WAIT_S
    from simulators.shoe import parse_fault
    install()
    clock = VirtualClock()
    rig = SimRig(8, seed=5, clock=clock, faults=(parse_fault("door_open@0"),))
    # the door is closed after this many looks at the shuffler: more than one wait takes
    rig.shuffler.door_polls = int(DOOR_WAIT_S / 0.1) + 50
    told: list[Any] = []
    src = ShufflerSource(told.append, lambda: open_shuffler(rig.shuffler_url,
                                                            response_timeout_s=1.0),
                         decks=8, threaded=False, clock=clock.now)
    try:
        rig.gather()
        _ask(src, clock, "shuffle")
        assert [(type(t).__name__, t.code) for t in told if isinstance(t, ev.DeviceAlarm)] \
            == [("DeviceAlarm", "door_open")]
        told.clear()
        began = clock.now()
        _ask(src, clock, "shuffle")          # the resume's request: the door is still open
        alarms = [t for t in told if isinstance(t, ev.DeviceAlarm)]
        assert [(type(t).__name__, t.code) for t in alarms] == [
            ("DeviceWarning", "door_open"), ("DeviceAlarm", "door_open")]
        assert "still open after" in alarms[-1].text
        assert clock.now() - began >= DOOR_WAIT_S
        told.clear()
        _ask(src, clock, "shuffle")          # closed while this one waits
        assert [type(t).__name__ for t in told if isinstance(t, ev.DeviceAlarm)] == \
            ["DeviceWarning"]
        assert isinstance(told[-1], ev.ShuffleDone) and told[-1].count == 416
    finally:
        src.close()
        rig.close()
