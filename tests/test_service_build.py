"""The service as a built part: a small surface, parts on other threads heard only through the
inbox, and the crash@N fault outside the loop's own fields."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

import controller.service.fault as fault
from controller.commands._simulation import run_simulation
from controller.journal import Journal
from controller.service.clock import VirtualClock
from controller.service.inputs import CursorMoved, OutletView, Reported
from controller.service.loop import TableService
from controller.service.parts import Listener, Tap
from controller.service.recovery import open_table
from controller.settings.profile import load_profile

LOOP = Path(__file__).resolve().parents[1] / "controller" / "service" / "loop.py"


class Crash(Exception):
    pass


def service(journal: Journal) -> TableService:
    table, _ = open_table(load_profile("classic"), journal)
    return TableService(table, journal, VirtualClock())


def test_the_service_keeps_a_small_surface_in_a_small_module():
    with Journal(":memory:") as journal:
        public = [n for n in dir(service(journal)) if not n.startswith("_")]
    assert len(public) <= 20, public
    assert len(LOOP.read_text().splitlines()) <= 500


def test_what_a_feed_thread_reports_reaches_the_loop_only_through_its_inbox():
    with Journal(":memory:") as journal:
        svc = service(journal)
        seen: list[dict] = []
        svc.connect(Listener(seen.append), Tap.LISTENER)
        views, cursors = Reported(svc.submit, OutletView), Reported(svc.submit, CursorMoved)
        other = threading.Thread(target=lambda: (views.__setitem__("feed", {"connected": True}),
                                                 cursors.__setitem__("floor", 7)))
        other.start()
        other.join()
        assert svc.reports == {}            # set on the feed's thread: not yet the loop's
        assert views["feed"] == {"connected": True} and cursors["floor"] == 7
        svc.run()                           # a virtual clock: until nothing is left to do
        assert svc.reports == {"feed": {"connected": True}}
        with pytest.raises(TypeError):
            del views["feed"]


@pytest.mark.parametrize("at", [1, 7, 40])
def test_crash_at_n_dies_right_after_the_nth_input_is_durable(tmp_path, monkeypatch, at):
    def die() -> None:
        raise Crash()
    monkeypatch.setattr(fault, "die", die)
    path = str(tmp_path / "j.db")
    with pytest.raises(Crash):
        run_simulation(load_profile("macau"), seed=3, journal_path=path, crash_after=at)
    with Journal.open_readonly(path) as j:
        inputs = sum(1 for _ in j.records(kinds=["input"]))
    assert inputs == at                     # the Nth is on disk, nothing after it


def test_crash_at_zero_is_refused():
    with pytest.raises(ValueError):
        fault.CrashAfter(0)
