"""One behaviour suite for the devices: on the simulator by default, on real hardware with
`pytest tests/test_behaviour.py --shoe-url /dev/ttyUSB0 [--shoe-protocol P]
--shuffler-url usb://VID:PID` (the operator deals a few cards when asked)."""
import random
import time

import pytest

from controller.cards import ALL_CARDS, parse_card
from drivers.events import CardRead, DeviceEvent
from drivers.shoe import open_shoe
from drivers.shuffler import open_shuffler
from simulators import registry
from simulators.shoe import ShoeModel
from simulators.shuffler import ShufflerModel

CARDS = [c.code for c in ALL_CARDS]


@pytest.fixture
def shoe(request, shoe_url):
    """(driver, pull) — `pull()` makes one card leave the shoe (an operator on hardware)."""
    protocol = request.config.getoption("--shoe-protocol")
    if shoe_url:
        drv = open_shoe(shoe_url, protocol, read_timeout_s=0.5)

        def pull():
            print("\n>>> deal one card from the shoe now")
        yield drv, pull, None
        drv.close()
        return
    cards = CARDS[:]
    random.Random(4).shuffle(cards)
    model = ShoeModel(cards, protocol=protocol)
    registry.register("behaviour", model)
    drv = open_shoe(f"shoesim://behaviour?protocol={protocol}", protocol, read_timeout_s=0.05)
    yield drv, model.pull, cards
    drv.close()
    registry.unregister("behaviour")


@pytest.fixture
def shuffler(shuffler_url):
    if shuffler_url:
        drv = open_shuffler(shuffler_url)
        yield drv
        drv.close()
        return
    registry.register("behaviour-shuffler", ShufflerModel(seed=2, decks=8))
    drv = open_shuffler("usb://7a5c:5348?sim=behaviour-shuffler", poll_interval_s=0.0)
    yield drv
    drv.close()
    registry.unregister("behaviour-shuffler")


def read_cards(drv, n, timeout_s):
    got, deadline = [], time.monotonic() + timeout_s
    while len(got) < n and time.monotonic() < deadline:
        ev = drv.read_event(timeout=0.2)
        assert ev is None or isinstance(ev, DeviceEvent)
        if isinstance(ev, CardRead):
            got.append(ev)
    return got


def test_each_pulled_card_arrives_once_in_order_as_a_valid_code(request, shoe):
    drv, pull, cards = shoe
    n = request.config.getoption("--hardware-cards") if cards is None else 6
    got = []
    for _ in range(n):
        pull()
        got += read_cards(drv, 1, 60.0 if cards is None else 2.0)
        for ev in got:
            if ev.seq is not None:
                drv.ack(ev.seq)
    assert len(got) == n
    for ev in got:
        assert parse_card(ev.code).code == ev.code      # canonical and possible
    if cards is not None:
        assert [ev.code for ev in got] == cards[:n]
    seqs = [ev.seq for ev in got if ev.seq is not None]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_silence_is_not_a_card(shoe):
    drv, _, _ = shoe
    assert read_cards(drv, 1, 0.5) == []


def test_shuffler_identifies_itself(shuffler):
    ident = shuffler.identify()
    assert ident.model and ident.serial and ident.firmware


def test_shuffler_shuffles_and_counts_a_whole_shoe(shuffler):
    assert shuffler.status().state in ("idle", "ready")
    shuffler.shuffle(8)
    done = shuffler.wait_ready(600.0, decks=8)
    assert done.count == 416
    if done.composition:
        assert sum(n for _, n in done.composition) == 416
