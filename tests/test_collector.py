"""The live loop collects Python's garbage while nothing waits for it: CPython's automatic
collector is off while a live table runs, a collection due is made when the loop's inbox is
empty (not in the middle of a card), a flood of inputs still gets its collections, and the
process gets its collector back when the table stops."""
from __future__ import annotations

import gc
import sys
import threading
import weakref

import pytest

from controller.journal import Journal
from controller.service import collector as collector_module
from controller.service.clock import RealClock
from controller.service.collector import FLOOD_FACTOR, Collector
from controller.service.loop import TableService
from controller.service.recovery import open_table
from controller.settings.profile import load_profile


class Cycle:
    """Garbage only the cycle collector frees: it refers to itself."""

    def __init__(self) -> None:
        self.me = self


def cycles(n: int) -> list[weakref.ref]:
    """n unreachable cycles made; weak references to them."""
    refs = []
    for _ in range(n):
        c = Cycle()
        refs.append(weakref.ref(c))
    return refs


@pytest.fixture(autouse=True)
def collector_as_it_was():
    assert gc.isenabled()
    yield
    assert gc.isenabled(), "a test left the automatic collector off"
    assert gc.get_freeze_count() == 0


def test_off_while_running_a_collection_due_made_when_idle_and_back_on_after():
    c = Collector()
    c.start()
    try:
        assert not gc.isenabled()
        refs = cycles(gc.get_threshold()[0] * 2)
        assert all(r() is not None for r in refs)       # nothing collected them on its own
        c.turn(idle=True)
        assert all(r() is None for r in refs) and sum(c.collections) == 1
    finally:
        c.stop()
    assert gc.isenabled()


def test_inputs_waiting_put_a_collection_off_until_far_more_is_due():
    c = Collector()
    c.start()
    try:
        first = gc.get_threshold()[0]
        refs = cycles(first * 2)
        c.turn(idle=False)
        assert all(r() is not None for r in refs) and sum(c.collections) == 0
        refs += cycles(first * FLOOD_FACTOR)
        c.turn(idle=False)                              # a flood: collected anyway
        assert all(r() is None for r in refs) and sum(c.collections) == 1
    finally:
        c.stop()


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="3.14's collector is incremental: "
                    "its generations are not counted this way")
def test_the_generations_follow_cpythons_thresholds():
    c = Collector()
    c.start()
    try:
        first, second, _ = gc.get_threshold()
        for _ in range(second):
            cycles(first)
            c.turn(idle=True)
        assert c.collections[0] == second and c.collections[1] == 0
        cycles(first)
        c.turn(idle=True)                               # the tenth young one: the middle too
        assert c.collections[1] == 1
    finally:
        c.stop()


def test_two_tables_in_one_process_give_it_back_when_the_last_stops():
    a, b = Collector(), Collector()
    a.start()
    b.start()
    a.stop()
    assert not gc.isenabled()
    b.stop()
    assert gc.isenabled()
    b.stop()                                            # a second stop changes nothing
    assert gc.isenabled() and collector_module._users == 0


def test_a_process_that_turned_collection_off_is_left_so():
    gc.disable()
    try:
        c = Collector()
        c.start()
        refs = cycles(gc.get_threshold()[0] * 2)
        c.turn(idle=True)
        assert all(r() is not None for r in refs) and not c.running
        c.stop()
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.collect()


def test_the_live_loop_collects_between_inputs_and_gives_the_collector_back():
    seen: dict[str, object] = {}
    done = threading.Event()
    with Journal(":memory:") as journal:
        table, _ = open_table(load_profile("classic"), journal)
        svc = TableService(table, journal, RealClock())
        loop = threading.Thread(target=svc.run)
        loop.start()
        try:
            def make() -> None:
                seen["enabled"] = gc.isenabled()
                seen["refs"] = cycles(gc.get_threshold()[0] * 2)

            def look() -> None:          # the loop found its inbox empty since `make`
                seen["alive"] = sum(r() is not None for r in seen["refs"])  # type: ignore
                done.set()
            svc.submit(make)
            for _ in range(500):         # until the loop, idle after `make`, has collected
                if "refs" in seen and gc.get_count()[0] < gc.get_threshold()[0]:
                    break
                threading.Event().wait(0.01)
            svc.submit(look)
            assert done.wait(5)
        finally:
            svc.stop()
            loop.join(5)
    assert seen["enabled"] is False and seen["alive"] == 0
    assert gc.isenabled()
