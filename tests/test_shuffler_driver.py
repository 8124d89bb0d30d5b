"""FramedShuffler end to end: over real pyusb calls into the simulated USB device
(usb://VID:PID?sim=NAME) and over serial URLs (a pty through pyserial's serialposix port, and
socket://) served by simulators.server."""
from __future__ import annotations

import itertools
import threading
from collections import Counter

import pytest

from drivers.errors import BadURL, Busy, DeviceIOError, NotFound, Timeout
from drivers.shuffler import (FramedShuffler, ShuffleCountError, ShufflerFault, ShufflerRefused,
                              open_shuffler)
from drivers.shuffler import protocol as p
from drivers.usb_transport import open_usb
from simulators import registry
from simulators.server import DeviceServer
from simulators.shuffler import ShufflerModel
from simulators.usb_backend import SIM_PRODUCT_ID, SIM_VENDOR_ID, backend_for

IDS = f"{SIM_VENDOR_ID:04x}:{SIM_PRODUCT_ID:04x}"
_names = itertools.count()


class Rig:
    """One model reached through one kind of URL; closes everything it opened."""

    def __init__(self, kind: str, model: ShufflerModel):
        self.kind, self.model = kind, model
        self.server: DeviceServer | None = None
        self.stop = threading.Event()
        if kind == "usb":
            self.name = f"shuffler-test-{next(_names)}"
            registry.register(self.name, model)
            self.url = f"usb://{IDS}?sim={self.name}"
        else:
            self.server = DeviceServer(shuffler=model, tcp=(kind == "tcp"))
            self.thread = threading.Thread(target=self.server.serve, args=(self.stop,),
                                           daemon=True)
            self.thread.start()
            self.url = self.server.urls["shuffler"]
        self.drivers: list[FramedShuffler] = []

    def open(self) -> FramedShuffler:
        d = open_shuffler(self.url, poll_interval_s=0.005)
        self.drivers.append(d)
        return d

    def close(self) -> None:
        for d in self.drivers:
            d.close()
        if self.server is not None:
            self.stop.set()
            self.thread.join(5)
            self.server.close()
        else:
            registry.unregister(self.name)


@pytest.fixture(params=["usb", "pty", "tcp"])
def rig(request):
    made: list[Rig] = []

    def make(**model_kw) -> tuple[FramedShuffler, ShufflerModel]:
        model_kw.setdefault("seed", 7)
        r = Rig(request.param, ShufflerModel(**model_kw))
        made.append(r)
        return r.open(), r.model

    yield make
    for r in made:
        r.close()


def test_identify(rig):
    d, _ = rig()
    ident = d.identify()
    assert (ident.model, ident.serial, ident.firmware) == ("SIM-SHUFFLER-12", "SIM-000001",
                                                           "sim-1.0.0")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_status_transitions_idle_shuffling_ready_idle(rig):
    clock = Clock()
    d, model = rig(decks=6, shuffle_time_s=45, clock=clock)
    assert d.status().state == "idle"
    d.shuffle(6)
    assert d.status().state == "shuffling"
    clock.now = 45
    st = d.status()
    assert (st.state, st.error_code, st.device) == ("ready", 0, "shuffler")
    assert len(d.deliver()) == 312
    assert d.status().state == "idle"


@pytest.mark.parametrize("decks", [6, 8])
def test_shuffle_count_composition_and_deliver(rig, decks):
    d, model = rig(decks=decks)
    d.shuffle(decks)
    done = d.wait_ready(2)
    assert done.count == 52 * decks
    assert dict(done.composition) == {code: decks for code in p.CARD_CODES}
    order = d.deliver()
    assert order == model.last_delivery and Counter(order) == Counter(p.CARD_CODES * decks)
    assert order != list(p.CARD_CODES) * decks
    with pytest.raises(ShufflerRefused, match="no shuffled shoe ready"):
        d.deliver()


def test_a_device_that_does_not_read_cards_gives_no_composition(rig):
    d, _ = rig(decks=8, reads_cards=False)
    d.shuffle(8)
    done = d.wait_ready(2)
    assert (done.count, done.composition) == (416, ())


def test_jam_is_reported_and_cleared_by_clear_then_a_new_shuffle(rig):
    d, model = rig(decks=8, faults=["jam@0"])
    d.shuffle(8)
    with pytest.raises(ShufflerFault, match="jam") as err:
        d.wait_ready(2)
    assert (err.value.status.state, err.value.status.error_code) == ("jam", p.E_JAM)
    with pytest.raises(ShufflerRefused, match="card jam"):
        d.deliver()
    with pytest.raises(ShufflerRefused, match="card jam"):
        d.shuffle(8)
    assert d.clear().state == "idle"
    d.shuffle(8)
    assert d.wait_ready(2).count == 416 and len(d.deliver()) == 416


def test_door_open_pauses_the_shuffle_until_closed(rig):
    d, model = rig(decks=8, faults=["door_open@0"], door_polls=2)
    d.shuffle(8)
    with pytest.raises(ShufflerFault, match="door open"):
        d.wait_ready(2)
    with pytest.raises(ShufflerRefused, match="door open"):
        d.clear()
    assert d.status().state == "door_open"          # the second poll: the door closes after it
    assert d.wait_ready(2).count == 416


@pytest.mark.parametrize("miscount,counted", [(-1, 415), (1, 417)])
def test_count_mismatch_detected_by_the_device(rig, miscount, counted):
    d, _ = rig(decks=8, faults=["count_mismatch@0"], count_error=miscount)
    d.shuffle(8)
    with pytest.raises(ShuffleCountError, match=f"counted {counted}") as err:
        d.wait_ready(2)
    assert (err.value.count, err.value.expected) == (counted, 416)
    with pytest.raises(ShufflerRefused, match="count does not match"):
        d.deliver()
    assert d.clear().state == "idle"
    d.shuffle(8)                                     # the fault was for shuffle 0 only
    assert d.wait_ready(2).count == 416


@pytest.mark.parametrize("miscount,problem", [(-1, "counted 415 cards, 8 decks hold 416"),
                                              (1, "counted 417 cards, 8 decks hold 416")])
def test_an_impossible_count_from_a_device_that_says_ready_is_never_trusted(rig, miscount,
                                                                            problem):
    d, _ = rig(decks=8, faults=["count_mismatch@0"], count_error=miscount, self_check=False)
    d.shuffle(8)
    assert d.status().state == "ready"               # the device itself sees nothing wrong
    with pytest.raises(ShuffleCountError, match=problem):
        d.wait_ready(2)


def test_a_count_is_checked_even_when_the_decks_are_not_known(rig):
    d, _ = rig(decks=8, faults=["count_mismatch@0"], self_check=False)
    d.shuffle(8)
    fresh = FramedShuffler(d.link, url=d.url)          # e.g. after a controller restart
    with pytest.raises(ShuffleCountError, match="not a whole number of decks"):
        fresh.wait_ready(2)


def test_composition_that_contradicts_the_count_is_rejected():
    comp = tuple((c, 8) for c in p.CARD_CODES[:-1]) + (("KC", 9),)
    with pytest.raises(ShuffleCountError, match="composition holds 417 cards but the count is 416"):
        FramedShuffler._check(416, comp, 8)
    comp = tuple((c, 8) for c in p.CARD_CODES[:-2]) + (("QC", 9), ("KC", 7))
    with pytest.raises(ShuffleCountError, match="QC×9, KC×7"):
        FramedShuffler._check(416, comp, 8)


def test_wait_ready_times_out_and_refuses_when_nothing_runs(rig):
    d, _ = rig(decks=8, shuffle_time_s=3600)
    with pytest.raises(ShufflerFault, match="idle"):
        d.wait_ready(1)
    d.shuffle(8)
    with pytest.raises(Timeout, match="still shuffling"):
        d.wait_ready(0.05)
    with pytest.raises(ShufflerRefused, match="busy"):
        d.shuffle(8)


# ---- USB specifics ----------------------------------------------------------------------------

@pytest.fixture
def usb_model():
    model = ShufflerModel(seed=1, decks=8)
    registry.register("usb-specifics", model)
    yield model
    registry.unregister("usb-specifics")


def test_usb_device_not_found_names_the_ids(usb_model):
    with pytest.raises(NotFound, match="USB device 7a5c:5349 .*not found.*lsusb -d 7a5c:5349"):
        open_shuffler("usb://7a5c:5349?sim=usb-specifics")
    with pytest.raises(NotFound, match="no simulator registered as 'nobody'"):
        open_shuffler(f"usb://{IDS}?sim=nobody")


def test_sim_urls_fail_with_their_cause_until_a_backend_is_registered(usb_model, monkeypatch):
    from drivers import usb_transport
    monkeypatch.setattr(usb_transport, "_backends", {})
    with pytest.raises(BadURL, match="sim= names a simulated device, and no simulator backend"):
        open_shuffler(f"usb://{IDS}?sim=usb-specifics")
    with pytest.raises(ValueError, match="not a usb:// backend option"):
        usb_transport.register_backend("emulated", backend_for)


def test_usb_without_simulator_reaches_the_real_bus_and_reports_not_found():
    # No such device here: either libusb is missing or the bus has none; both are NotFound.
    with pytest.raises(NotFound, match=IDS):
        open_shuffler(f"usb://{IDS}")


def test_usb_serial_number_selects_the_device(usb_model):
    d = open_shuffler(f"usb://{IDS}?sim=usb-specifics&serial=SIM-000001")
    assert d.identify().serial == "SIM-000001"
    d.close()
    with pytest.raises(NotFound, match="serial 'X9' not found \\(present: 'SIM-000001'\\)"):
        open_shuffler(f"usb://{IDS}?sim=usb-specifics&serial=X9")


def test_usb_second_opener_is_busy_until_the_first_closes(usb_model):
    first = open_usb(f"usb://{IDS}?sim=usb-specifics")
    with pytest.raises(Busy, match="another program has claimed it"):
        open_usb(f"usb://{IDS}?sim=usb-specifics")
    first.close()
    open_usb(f"usb://{IDS}?sim=usb-specifics").close()


def test_usb_unplugged_device_is_an_io_error(usb_model):
    d = open_shuffler(f"usb://{IDS}?sim=usb-specifics")
    backend_for("usb-specifics").devices[0].unplug()
    try:
        with pytest.raises(DeviceIOError, match="disconnected"):
            d.status()
    finally:
        d.close()
        backend_for("usb-specifics").devices[0].plug()


@pytest.mark.parametrize("url,why", [
    ("usb://7a5c", "expected usb://VID:PID"), ("usb://zz:5348", "hex ids"),
    ("usb://7a5c:5348?speed=1", "unknown option"), ("usb://1ffff:1", "16-bit"),
    ("usb://7a5c:5348?sim=", "empty")])
def test_usb_bad_urls(url, why):
    with pytest.raises(BadURL, match=why):
        open_shuffler(url)


def test_usb_twelve_deck_delivery_spans_several_bulk_packets():
    registry.register("usb-12", ShufflerModel(seed=4, decks=12))
    try:
        link = open_usb(f"usb://{IDS}?sim=usb-12")
        link.write(p.encode_frame(1, p.SHUFFLE, b"\x0c"))
        link.read(512, 1.0)
        link.write(p.encode_frame(2, p.DELIVER))
        first = link.read(64, 1.0)                    # asks for one whole 512-byte packet
        rest = link.read(1024, 1.0)
        assert (len(first), len(rest)) == (512, 7 + 5 + 624 - 512)
        _, order = p.decode_delivery(p.decode_frame(first + rest).payload)
        assert len(order) == 624
        link.close()
    finally:
        registry.unregister("usb-12")


@pytest.mark.parametrize("kind", ["pty", "tcp"])
def test_serial_link_lost_is_an_io_error(kind):
    model = ShufflerModel(seed=1, decks=8)
    rig = Rig(kind, model)
    d = rig.open()
    assert d.status().state == "idle"
    rig.stop.set()
    rig.thread.join(5)
    rig.server.close()                               # the device goes away mid-session
    with pytest.raises(DeviceIOError, match="link lost"):
        d.status()
    d.close()
