"""One behaviour suite for the devices: on the simulator by default, both embedded (behind its
URLs in this process) and as the hardware-in-the-loop rig (`tablectl devices` in a process of
its own, on ptys, a person's Enter pulling each card), and on real hardware with
`pytest tests/test_behaviour.py --shoe-url /dev/ttyUSB0 [--shoe-protocol P]
--shuffler-url usb://VID:PID` (the operator deals a few cards when asked)."""
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.shoe.cards import ALL_CARDS, parse_card
from drivers.events import CardRead, DeviceEvent
from drivers.shoe import open_shoe
from drivers.shuffler import open_shuffler
from simulators import registry
from simulators.shoe import ShoeModel
from simulators.shuffler import ShufflerModel

# the suite that runs on real devices when given their URLs: `pytest -m hardware --shoe-url …`
pytestmark = pytest.mark.hardware

CARDS = [c.code for c in ALL_CARDS]
ROOT = Path(__file__).resolve().parents[1]


def shuffled_cards(decks: int = 1) -> list[str]:
    cards = CARDS * decks
    random.Random(4).shuffle(cards)
    return cards


@pytest.fixture(scope="module")
def rig(tmp_path_factory, request):
    """`tablectl devices` as a separate process: its shoe holds `shuffled_cards(8)`; a blind
    dealer pulls one card per Enter (as an operator at a bench would)."""
    path = tmp_path_factory.mktemp("rig") / "behaviour.shoe"
    path.write_text("\n".join(shuffled_cards(8)) + "\n")
    protocol = request.config.getoption("--shoe-protocol")
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "devices", "--blind",
                             "--pace-ms", "0", "--shuffle-seconds", "0", "--shoe-file",
                             str(path), "--shoe-protocol", protocol], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    urls = {}
    while len(urls) < 2:
        name, _, rest = proc.stdout.readline().partition(": ")
        assert rest, "tablectl devices ended early"
        urls[name] = rest.split()[0]

    def press():
        proc.stdin.write("\n")
        proc.stdin.flush()
    yield urls, press
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(params=["embedded", "rig"])
def where(request, shoe_url, shuffler_url):
    """On hardware when given its URLs; else once on each simulator."""
    if (shoe_url or shuffler_url) and request.param == "rig":
        pytest.skip("on hardware: the suite runs once, against it")
    return request.param


@pytest.fixture
def shoe(request, shoe_url, where):
    """(driver, pull) — `pull()` makes one card leave the shoe (an operator on hardware)."""
    protocol = request.config.getoption("--shoe-protocol")
    if shoe_url:
        drv = open_shoe(shoe_url, protocol, read_timeout_s=0.5)

        def pull():
            print("\n>>> deal one card from the shoe now")
        yield drv, pull, None
        drv.close()
        return
    if where == "rig":
        urls, press = request.getfixturevalue("rig")
        drv = open_shoe(urls["shoe"], protocol, read_timeout_s=0.05)
        time.sleep(0.4)             # the rig's shoe speaks once a controller has settled
        yield drv, press, shuffled_cards(8)
        drv.close()
        return
    cards = shuffled_cards()
    model = ShoeModel(cards, protocol=protocol)
    registry.register("behaviour", model)
    drv = open_shoe(f"shoesim://behaviour?protocol={protocol}", protocol, read_timeout_s=0.05)
    yield drv, model.pull, cards
    drv.close()
    registry.unregister("behaviour")


@pytest.fixture
def shuffler(request, shuffler_url, where):
    if shuffler_url:
        drv = open_shuffler(shuffler_url)
        yield drv
        drv.close()
        return
    if where == "rig":
        drv = open_shuffler(request.getfixturevalue("rig")[0]["shuffler"], poll_interval_s=0.01)
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
