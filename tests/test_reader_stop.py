"""A shoe's reader thread stops at close without waiting out its read timeout: the driver's
cancel_read ends the blocking read (pyserial's own on a pty, the simulator's shoesim:// port's),
and the closed source's thread is gone. The reads are given a timeout far longer than the
join's, so a reader that waits it out is still alive when close() returns."""
from __future__ import annotations

import os
import threading
import uuid

import pytest

from controller.service.devices import ShoeSource
from drivers.events import CardRead
from drivers.shoe import open_shoe
from drivers.transport import open_serial
from simulators import registry
from simulators.shoe import ENCODERS, ShoeModel

LONG = 60.0        # a read's timeout no test waits for


@pytest.fixture
def shoesim_url():
    name = f"stop-{uuid.uuid4().hex[:8]}"
    model = ShoeModel(["AS", "KD"], protocol="beetek")
    registry.register(name, model)
    yield f"shoesim://{name}", model
    registry.unregister(name)


def _read_in_thread(fn):
    out: list = []
    thread = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    thread.start()
    return thread, out


def test_the_shoesim_port_ends_a_blocking_read_on_cancel_read(shoesim_url):
    url, _ = shoesim_url
    port = open_serial(url, timeout=LONG)
    try:
        thread, out = _read_in_thread(lambda: port.read(1))
        thread.join(0.2)
        assert thread.is_alive()            # it blocks: nothing was sent
        port.cancel_read()
        thread.join(5)
        assert not thread.is_alive() and out == [b""]
    finally:
        port.close()


@pytest.mark.parametrize("transport", ["shoesim", "pty"])
def test_cancel_read_ends_the_drivers_read_and_every_later_one(transport, shoesim_url, pty):
    url = shoesim_url[0] if transport == "shoesim" else pty[1]
    driver = open_shoe(url, "beetek", read_timeout_s=LONG)
    try:
        thread, out = _read_in_thread(lambda: driver.read_event(LONG))
        thread.join(0.2)
        assert thread.is_alive()
        driver.cancel_read()
        thread.join(5)
        assert not thread.is_alive() and out == [None]
        assert driver.read_event(LONG) is None      # the reader is stopping: no more waits
        assert driver.stats["timeouts"] == 0         # a cancelled read is not a silent line
    finally:
        driver.close()


def test_a_read_that_came_before_the_cancel_is_not_lost(pty):
    master, path = pty
    driver = open_shoe(path, "beetek", read_timeout_s=LONG)
    try:
        os.write(master, ENCODERS["beetek"]().card("QH", seq=1))
        event = driver.read_event(LONG)
        assert isinstance(event, CardRead) and event.code == "QH"
    finally:
        driver.close()


@pytest.mark.parametrize("transport", ["shoesim", "pty"])
def test_closing_the_shoe_source_stops_its_reader_at_once(transport, shoesim_url, pty):
    url = shoesim_url[0] if transport == "shoesim" else pty[1]
    got: list = []
    source = ShoeSource(got.append, lambda: open_shoe(url, "beetek", read_timeout_s=LONG),
                        protocol="beetek", read_timeout_s=LONG, url=url)
    source.start()
    thread = source._thread
    assert thread is not None
    thread.join(0.2)
    assert thread.is_alive()                # reading, with nothing to read
    source.close()                          # joins for at most 5 s, far less than LONG
    assert not thread.is_alive()
    assert got == []
