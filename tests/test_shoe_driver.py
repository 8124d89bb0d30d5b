"""ShoeDriver behaviour over shoesim://, loop:// and a pty: split frames, noise, resync,
link loss after N timeouts, reconnect with capped backoff, and the errors for bad URLs."""
from __future__ import annotations

import errno
import os
import select
import sys
import time
import types
import uuid
from collections import deque

import pytest
import serial
from structlog.testing import capture_logs

from controller.shoe.cards import ordered_shoe
from drivers import transport
from drivers.errors import BadURL, Busy, DevicePermissionError, NotFound
from drivers.events import CardRead, DeviceWarning, LinkBack, LinkLost, ReadFailed
from drivers.shoe import PROTOCOLS, open_shoe
from drivers.shoe.framed import FramedEncoder
from simulators import registry
from simulators.shoe import ShoeModel

FE = FramedEncoder()


@pytest.fixture
def shoe():
    """Register ShoeModels under fresh names; unregister them afterwards."""
    names = []

    def make(cards, protocol="beetek", **options):
        name = f"shoe-{uuid.uuid4().hex[:8]}"
        model = ShoeModel(cards, protocol=protocol, **options)
        registry.register(name, model)
        names.append(name)
        return f"shoesim://{name}", model

    yield make
    for name in names:
        registry.unregister(name)


def read_master(fd: int, wait: float = 0.2) -> bytes:
    out = bytearray()
    while select.select([fd], [], [], wait)[0]:
        out += os.read(fd, 4096)
        wait = 0.02
    return bytes(out)


def events_until(driver, predicate, limit: int = 200, timeout: float = 0.05) -> list:
    """Read events until one satisfies predicate (it is included); fail after `limit` reads."""
    seen = []
    for _ in range(limit):
        event = driver.read_event(timeout)
        if event is not None:
            seen.append(event)
            if predicate(event):
                return seen
    pytest.fail(f"no matching event in {limit} reads; saw {seen}")


# -- cards over every transport ---------------------------------------------------------

@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_cards_over_shoesim(shoe, protocol):
    url, model = shoe(["AS", "TD", "KH"], protocol)
    with open_shoe(url, protocol) as driver:
        got = []
        for _ in range(3):
            model.pull()
            event = events_until(driver, lambda e: isinstance(e, CardRead))[-1]
            got.append(event.code)
            if event.seq:
                driver.ack(event.seq)
        assert got == ["AS", "TD", "KH"]
        assert driver.stats["cards"] == 3 and driver.stats["garbage_bytes"] == 0
        assert driver.read_event(0.01) is None
    assert model.unacked == []


def test_throwaway_shoe_deals_itself():
    with open_shoe("shoesim://?cards=9H,2C&protocol=barcode", "barcode") as driver:
        codes = [e.code for e in (driver.read_event(0.2), driver.read_event(0.2))]
    assert codes == ["9H", "2C"]


def test_throwaway_shoe_deals_the_cut_card_behind_the_last_card():
    with open_shoe("shoesim://?cards=AS&cut=1") as driver:
        events = [driver.read_event(0.2), driver.read_event(0.2), driver.read_event(0.02)]
    assert [type(e).__name__ for e in events] == ["CardRead", "CutCardSeen", "NoneType"]


def test_framed_resume_after_a_controller_restart(shoe):
    url, model = shoe(["AS", "TD", "KH"], "framed")
    pulled = [model.pull() for _ in range(3)]       # read and journaled by a controller that died
    model.discard_output()
    with open_shoe(url, "framed") as driver:
        driver.resume(2)                            # the journal holds reads 1 and 2
        seen = events_until(driver, lambda e: isinstance(e, CardRead))
        assert [(e.code, e.seq) for e in seen] == [("KH", 3)]
        assert model.unacked == [3]
        driver.ack(3)
        assert driver.read_event(0.02) is None
    assert pulled == [["AS"], ["TD"], ["KH"]] and model.unacked == []


def test_framed_resume_meets_a_shoe_started_afresh_and_drops_none_of_its_reads(pty):
    # the journal holds 4,005 reads; the shoe met after the restart was powered off meanwhile
    # and numbers from 1 again (its HELLO: a session never seen, nothing acknowledged)
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        assert read_master(master) == FE.hello_request()
        driver.resume(4005)
        os.write(master, FE.hello(21, 0) + FE.card("AS", seq=1) + FE.card("KD", seq=2))
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 2)
        assert [(e.code, e.seq) for e in seen if isinstance(e, CardRead)] == \
            [("AS", 1), ("KD", 2)]
        assert driver.stats["duplicates"] == 0
        assert FE.ack(4005) not in read_master(master)     # nothing acknowledged blind


def test_framed_resume_drops_the_resends_of_reads_a_crash_left_unacknowledged(pty):
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        driver.resume(405)              # 404 was the last acknowledgement the shoe heard
        os.write(master, FE.hello(21, 404) + FE.card("AS", seq=405) + FE.card("KD", seq=406))
        seen = events_until(driver, lambda e: isinstance(e, CardRead))
        assert [(e.code, e.seq) for e in seen if isinstance(e, CardRead)] == [("KD", 406)]
        assert driver.stats["duplicates"] == 1
        assert FE.ack(405) in read_master(master)


def test_framed_resume_goes_by_the_session_on_record_where_there_is_one(pty):
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        driver.resume_session(7)
        driver.resume(5)
        # another session, its acknowledgements close behind the journal: a shoe started
        # afresh all the same (the session says so), its reads new
        os.write(master, FE.hello(8, 3) + FE.card("AS", seq=4) + FE.card("KD", seq=5))
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 5)
        assert [(e.code, e.seq) for e in seen if isinstance(e, CardRead)] == \
            [("AS", 4), ("KD", 5)]
        assert driver.session == 8
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        driver.resume_session(7)
        driver.resume(4005)
        # the session on record, however far behind its acknowledgements: the shoe the
        # journal knows, its resends dropped
        os.write(master, FE.hello(7, 2) + FE.card("AS", seq=4005) + FE.card("KD", seq=4006))
        seen = events_until(driver, lambda e: isinstance(e, CardRead))
        assert [(e.code, e.seq) for e in seen if isinstance(e, CardRead)] == [("KD", 4006)]
        assert FE.ack(4005) in read_master(master)


def test_loop_url_split_frame_and_noise():
    with open_shoe("loop://", "beetek") as driver:
        port = driver.transport
        port.write(b"\x00\xfe~[Game]<Card:1")
        assert driver.read_event(0.02) is None          # garbage counted, the frame not yet whole
        port.write(b"0S>\r\n")
        event = events_until(driver, lambda e: isinstance(e, CardRead))[-1]
        assert event.code == "TS"
        assert driver.stats["garbage_bytes"] == 3


def test_buffered_reports_bytes_read_but_not_yet_delivered(shoe):
    url, model = shoe(["AS", "KD"], "beetek")
    with open_shoe(url) as driver:
        model.pull()
        model.pull()                                # both reads arrive in one chunk
        assert driver.read_event(0.2).code == "AS"
        assert model.in_waiting == 0 and driver.buffered
        assert driver.read_event(0.2).code == "KD" and not driver.buffered


def test_pty_split_frame(pty):
    master, path = pty
    with open_shoe(path, "barcode", read_timeout_s=0.02) as driver:
        os.write(master, b"41")
        assert driver.read_event(0.05) is None
        os.write(master, b"30\r\n")
        event = events_until(driver, lambda e: isinstance(e, CardRead))[-1]
        assert event.code == "KD" and event.raw == b"4130\r\n"


def test_pty_framed_resync_after_bad_crc_and_false_start(pty):
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        assert read_master(master) == FE.hello_request()    # asks the shoe to resync on open
        bad = bytearray(FE.card("AS", seq=1))
        bad[7] ^= 0x01
        os.write(master, bytes(bad) + FE.card("2D", seq=2))
        os.write(master, b"\xa5\x20\x10" + FE.card("3D", seq=3))  # false start, then a frame
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 3)
        cards = [e.code for e in seen if isinstance(e, CardRead)]
        assert cards == ["2D", "3D"]                   # never AS: its CRC was wrong
        assert driver.stats["checksum_errors"] >= 1


def test_pty_framed_duplicates_dropped_gaps_reported_acks_sent(pty):
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        os.write(master, FE.hello(7, 0) + FE.card("AS", seq=1) + FE.card("AS", seq=1)
                 + FE.card("KC", seq=3))
        seen = events_until(driver, lambda e: isinstance(e, CardRead))
        assert driver.read_event(0.05) is None and driver.buffered     # read 3 waits
        assert read_master(master) == FE.hello_request()               # read 2 asked for
        # a shoe that has read 2 no more answers without it: once the line is quiet, a failed
        # read in its place (the card that left the shoe unread), after the warning, then 3
        os.write(master, FE.hello(7, 0))
        seen += events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 3)
        assert [type(e) for e in seen] == [CardRead, DeviceWarning, ReadFailed, CardRead]
        assert not driver.buffered
        assert seen[1].code == "SEQ_GAP" and "expected read 2, got 3" in seen[1].text
        assert seen[2].seq == 2 and "lost" in seen[2].reason
        assert driver.stats["duplicates"] == 1 and driver.stats["seq_gaps"] == 1
        driver.ack(3)
        assert read_master(master) == FE.ack(3)
        # the same shoe session again (a resend after a reconnect): nothing is delivered twice
        os.write(master, FE.hello(7, 1) + FE.card("KC", seq=3) + FE.card("5S", seq=4))
        seen = events_until(driver, lambda e: isinstance(e, CardRead))
        assert [e.seq for e in seen] == [4]
        assert read_master(master) == FE.ack(3)       # the shoe missed our ack: sent again


def gap_after_read_1(driver, master: int) -> None:
    """The shoe (session 9) sends read 1, then read 3: read 1 is delivered, read 3 waits."""
    os.write(master, FE.hello(9, 0) + FE.card("AS", seq=1) + FE.card("KC", seq=3))
    assert events_until(driver, lambda e: isinstance(e, CardRead))[-1].seq == 1
    assert driver.read_event(0.05) is None and driver.buffered


def test_pty_framed_read_missing_behind_a_gap_is_asked_for_and_delivered_in_order(
        pty, monkeypatch):
    monkeypatch.setattr("drivers.shoe.framed.GAP_WAIT_S", 3600.0)     # however slow the test
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        gap_after_read_1(driver, master)
        assert read_master(master) == FE.hello_request()       # the missing read asked for
        # the shoe's answer: its HELLO, then every read not acknowledged, in order
        os.write(master, FE.hello(9, 0) + FE.card("AS", seq=1) + FE.card("7D", seq=2)
                 + FE.card("KC", seq=3))
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 3)
        assert [(type(e), e.seq) for e in seen] == [(CardRead, 2), (CardRead, 3)]
        assert [e.code for e in seen] == ["7D", "KC"]
        assert driver.read_event(0.05) is None      # read 3's resend: a duplicate, dropped
        assert driver.stats["seq_gaps"] == 0 and driver.stats["duplicates"] == 2
        assert not driver.buffered


def test_pty_framed_a_burst_behind_a_gap_waits_for_the_resends_that_follow_it(pty):
    # a shoe that dealt on while the controller restarted sends what it held in one burst;
    # the port's opening lost its start: the resends come after the burst, and fill the gap
    master, path = pty
    codes = [c.code for c in ordered_shoe(1)]
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        os.write(master, FE.hello(9, 0) + FE.card(codes[0], seq=1))
        assert events_until(driver, lambda e: isinstance(e, CardRead))[-1].seq == 1
        os.write(master, b"".join(FE.card(codes[n - 1], seq=n) for n in range(12, 51)))
        assert driver.read_event(0.05) is None and driver.buffered     # 39 reads kept back
        os.write(master, FE.hello(9, 0) + b"".join(FE.card(codes[n - 1], seq=n)
                                                   for n in range(1, 51)))
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 50,
                            limit=400)
        assert [e.seq for e in seen] == list(range(2, 51))
        assert [e.code for e in seen] == codes[1:50]
        assert driver.stats["seq_gaps"] == 0


def test_pty_framed_a_shoe_that_stalls_before_answering_has_not_lost_its_reads(pty):
    # a restart: the opening of the port lost read 5, reads 6 and 7 came before the shoe's
    # answer; the shoe (or the computer behind a rig's shoe) stalls longer than the line's
    # quiet wait before it answers: its resends are still awaited, and fill the gap
    from drivers.shoe.framed import GAP_ANSWER_S, GAP_WAIT_S
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        driver.resume(4)
        os.write(master, FE.card("KD", seq=6) + FE.card("2C", seq=7))
        stalled = time.monotonic() + min(GAP_WAIT_S * 2, GAP_ANSWER_S / 2)
        while time.monotonic() < stalled:
            assert driver.read_event(0.02) is None
        os.write(master, FE.hello(9, 4) + FE.card("AS", seq=5) + FE.card("KD", seq=6)
                 + FE.card("2C", seq=7))
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 7)
        assert [(type(e), e.seq) for e in seen] == [(CardRead, 5), (CardRead, 6), (CardRead, 7)]
        assert driver.read_event(0.05) is None and driver.stats["seq_gaps"] == 0


def test_pty_framed_a_reader_back_late_reads_the_resends_waiting_for_it(pty):
    # the shoe answered at once; the reader (a busy computer) comes back after the line's
    # quiet wait: what waits on the port is read before anything is given up
    from drivers.shoe.framed import GAP_WAIT_S
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        gap_after_read_1(driver, master)
        os.write(master, FE.hello(9, 0))
        assert driver.read_event(0.05) is None                         # the answer, so far
        os.write(master, FE.card("AS", seq=1) + FE.card("7D", seq=2) + FE.card("KC", seq=3))
        time.sleep(GAP_WAIT_S * 1.5)
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 3)
        assert [(type(e), e.seq) for e in seen] == [(CardRead, 2), (CardRead, 3)]
        assert driver.stats["seq_gaps"] == 0


def test_pty_framed_a_shoe_that_never_answers_has_the_gap_given_up_after_the_answer_wait(
        pty, monkeypatch):
    monkeypatch.setattr("drivers.shoe.framed.GAP_ANSWER_S", 0.3)
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        start = time.monotonic()
        gap_after_read_1(driver, master)
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 3)
        assert [(type(e), e.seq) for e in seen if not isinstance(e, DeviceWarning)] == \
            [(ReadFailed, 2), (CardRead, 3)]
        assert time.monotonic() - start >= 0.3       # not before the shoe had its time


def test_pty_framed_reads_delivered_before_the_shoe_is_met_come_once(pty):
    # a first start: the shoe's reads as it stood come before its HELLO, then its answer
    # resends them (never acknowledged): each is delivered once
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        reads = FE.card("AS", seq=5) + FE.card("KD", seq=6) + FE.card("2C", seq=7)
        os.write(master, reads)
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 7)
        os.write(master, FE.hello(9, 4) + reads + FE.card("3H", seq=8))
        seen += events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 8)
        assert [e.seq for e in seen if isinstance(e, CardRead)] == [5, 6, 7, 8]
        assert driver.stats["duplicates"] == 3


def test_pty_framed_resend_without_the_missing_read_gives_it_up_at_once(
        pty, monkeypatch):
    monkeypatch.setattr("drivers.shoe.framed.GAP_WAIT_S", 3600.0)     # only the resend tells
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.02) as driver:
        read_master(master)
        os.write(master, FE.hello(9, 0) + FE.card("AS", seq=1) + FE.card("KC", seq=3)
                 + FE.card("5H", seq=4))
        events_until(driver, lambda e: isinstance(e, CardRead))
        assert driver.read_event(0.05) is None and driver.buffered     # 3 and 4 wait
        assert read_master(master) == FE.hello_request()
        # the shoe has read 2 no more (acknowledged by another controller, say)
        os.write(master, FE.hello(9, 2) + FE.card("KC", seq=3))
        seen = events_until(driver, lambda e: isinstance(e, CardRead) and e.seq == 4,
                            timeout=0.01)
        assert [(type(e), e.seq) for e in seen if not isinstance(e, DeviceWarning)] == \
            [(ReadFailed, 2), (CardRead, 3), (CardRead, 4)]


def test_framed_quiet_line_is_asked_for_a_hello_every_second(pty):
    # a read lost on the way with the link never seen to drop comes back with the answer
    from drivers.shoe.framed import PROBE_S
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.05) as driver:
        assert read_master(master) == FE.hello_request()       # on open
        quiet = round(PROBE_S / 0.05)
        for _ in range(quiet - 1):
            assert driver.read_event() is None
        assert read_master(master, wait=0.01) == b""
        assert driver.read_event() is None
        assert read_master(master) == FE.hello_request()


def test_framed_keepalive_when_dead_detection_is_on(pty):
    master, path = pty
    with open_shoe(path, "framed", read_timeout_s=0.01, dead_after_timeouts=6) as driver:
        read_master(master)
        for _ in range(3):
            assert driver.read_event() is None
        assert read_master(master) == FE.hello_request()


# -- link loss and reconnection ---------------------------------------------------------

def test_link_lost_after_n_timeouts_then_back_on_bytes(shoe):
    url, model = shoe(["AS", "KD"], "beetek")
    with capture_logs() as logs:
        driver = open_shoe(url, "beetek", read_timeout_s=0.01, dead_after_timeouts=3,
                           reconnect_initial_s=0.01)
        assert [driver.read_event() for _ in range(2)] == [None, None]
        lost = driver.read_event()
        assert isinstance(lost, LinkLost) and "3 reads" in lost.reason
        assert [driver.read_event() for _ in range(10)] == [None] * 10   # lost once, not again
        model.pull()
        seen = events_until(driver, lambda e: isinstance(e, CardRead))
        assert [type(e) for e in seen] == [LinkBack, CardRead] and seen[-1].code == "AS"
        driver.close()
    messages = [entry["event"] for entry in logs]
    assert messages.count("shoe link lost") == 1 and messages.count("shoe link back") == 1
    assert driver.stats["link_lost"] == 1 and driver.stats["reconnects"] == 1


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Port:
    """A fake transport: scripted chunks, an optional failure, writes recorded."""

    def __init__(self, clock, pieces=(), fail: Exception | None = None):
        self.clock, self.pieces, self.fail = clock, deque(pieces), fail
        self.written = bytearray()
        self.closed = False

    @property
    def in_waiting(self) -> int:
        return len(self.pieces[0]) if self.pieces else 0

    def read(self, size: int) -> bytes:
        if self.fail is not None:
            raise self.fail
        if self.pieces:
            return self.pieces.popleft()
        self.clock.sleep(0.05)
        return b""

    def write(self, data: bytes) -> int:
        self.written += data
        return len(data)

    def close(self) -> None:
        self.closed = True


def test_reconnect_backoff_doubles_up_to_the_cap_then_link_back():
    clock = FakeClock()
    attempts = []
    broken = Port(clock, fail=serial.SerialException("device disconnected"))
    ports = iter([broken])

    def opener():
        attempts.append(clock.now)
        port = next(ports, None)
        if port is None:
            if len(attempts) < 8:
                raise NotFound("shoe gone")
            port = Port(clock, [b"[Game]<Card:AS>"])
        return port

    driver = PROTOCOLS["beetek"]("fake://shoe", opener=opener, clock=clock, sleep=clock.sleep,
                                 reconnect_initial_s=0.05, reconnect_max_s=0.5)
    lost = driver.read_event()
    assert isinstance(lost, LinkLost) and "device disconnected" in lost.reason
    assert broken.closed
    seen = events_until(driver, lambda e: isinstance(e, CardRead))
    assert [type(e) for e in seen] == [LinkBack, CardRead]
    # attempts[0] is the first open; the link was lost at that same fake instant
    gaps = [round(b - a, 6) for a, b in zip(attempts, attempts[1:])]
    assert gaps == [0.05, 0.1, 0.2, 0.4, 0.5, 0.5, 0.5]
    assert driver.reconnect_delay_s == 0.05     # reset once back


def test_write_failure_marks_the_link_lost():
    clock = FakeClock()

    class DeadWrites(Port):
        def write(self, data: bytes) -> int:
            raise serial.SerialException("write failed: EIO")

    driver = PROTOCOLS["framed"]("fake://shoe", opener=lambda: DeadWrites(clock), clock=clock,
                                 sleep=clock.sleep)
    event = driver.read_event()
    assert isinstance(event, LinkLost) and "write failed" in event.reason


def test_read_event_after_close_is_none(shoe):
    url, model = shoe(["AS"])
    driver = open_shoe(url)
    driver.close()
    model.pull()
    assert driver.read_event(0.01) is None and not driver.connected


# -- opening: clear errors ----------------------------------------------------------------

def one_line(err: Exception) -> str:
    text = str(err)
    assert "\n" not in text
    return text


def test_missing_port_is_not_found():
    with pytest.raises(NotFound) as info:
        open_shoe("/dev/ttyUSB-no-such-shoe")
    assert one_line(info.value).startswith("/dev/ttyUSB-no-such-shoe: no such port")


def test_unknown_scheme_is_bad_url_naming_the_url_and_why():
    with pytest.raises(BadURL) as info:
        open_shoe("shoe-sim://table1")
    text = one_line(info.value)
    assert text.startswith("shoe-sim://table1: ") and "not a URL scheme" in text
    with pytest.raises(BadURL) as info:
        open_shoe("nosuch://x")
    text = one_line(info.value)
    assert text.startswith("nosuch://x: unknown scheme nosuch://") and "shoesim" in text


def test_shoesim_is_unknown_until_the_simulators_are_installed(monkeypatch):
    monkeypatch.setattr(serial, "protocol_handler_packages",
                        [p for p in serial.protocol_handler_packages if not p.startswith("simulators")])
    with pytest.raises(BadURL) as info:
        open_shoe("shoesim://table")
    text = one_line(info.value)
    assert text.startswith("shoesim://table: unknown scheme shoesim://") and "loop" in text


@pytest.mark.parametrize("url, cls, words", [
    ("shoesim://nobody-here", NotFound, "no simulator registered as 'nobody-here'"),
    ("shoesim://?cards=AS&colour=red", BadURL, "unknown option 'colour'"),
    ("shoesim://?cards=AS,ZZ", BadURL, "ZZ is not a card"),
    ("shoesim://?cards=AS&fault=melt@1", BadURL, "'melt@1' is not a fault"),
    ("", BadURL, "empty device URL"),
    ("usb://1234:5678", BadURL, "a shoe is a serial device"),
])
def test_bad_shoesim_urls(url, cls, words):
    with pytest.raises(cls) as info:
        open_shoe(url)
    assert words in one_line(info.value)


def test_protocol_mismatch_and_unknown_protocol(shoe):
    url, _ = shoe(["AS"], "framed")
    with pytest.raises(BadURL, match="speaks framed, not beetek"):
        open_shoe(url + "?protocol=beetek")
    with pytest.raises(ValueError, match="unknown shoe protocol 'morse'"):
        open_shoe(url, "morse")


def test_busy_port(pty):
    _, path = pty
    with open_shoe(path, "beetek"):
        with pytest.raises(Busy) as info:
            open_shoe(path, "beetek")
    assert one_line(info.value).startswith(f"{path}: port busy")


@pytest.mark.skipif(os.geteuid() == 0, reason="root opens any file")
def test_permission_denied_on_a_real_path(tmp_path):
    path = tmp_path / "ttyLOCKED"
    path.write_bytes(b"")
    path.chmod(0)
    with pytest.raises(DevicePermissionError, match="dialout"):
        open_shoe(str(path))


def test_permission_denied_hint():
    err = serial.SerialException(errno.EACCES, "could not open port /dev/ttyUSB0: denied")
    mapped = transport._map_error("/dev/ttyUSB0", err)
    assert isinstance(mapped, DevicePermissionError)
    text = one_line(mapped)
    assert "dialout" in text and "deploy/99-tablectl.rules" in text


def test_a_broken_handler_reports_its_import_error(tmp_path, monkeypatch):
    package = tmp_path / "broken_handlers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "protocol_brokensim.py").write_text("import module_that_is_not_there\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(serial, "protocol_handler_packages",
                        serial.protocol_handler_packages + ["broken_handlers"])
    with pytest.raises(BadURL) as info:
        transport.open_serial("brokensim://x")
    text = one_line(info.value)
    assert "handler failed to import" in text and "module_that_is_not_there" in text


def test_usb_urls_are_delegated_lazily(monkeypatch):
    calls = []
    fake = types.ModuleType("drivers.usb_transport")
    fake.open_usb = lambda url: calls.append(url) or "usb-transport"
    monkeypatch.setitem(sys.modules, "drivers.usb_transport", fake)
    assert transport.open_transport("usb://1234:abcd?sim=shuffler") == "usb-transport"
    assert calls == ["usb://1234:abcd?sim=shuffler"]
    assert transport.open_transport("loop://").is_open


def test_shoesim_port_behaves_like_a_serial_port(shoe):
    url, model = shoe(["AS", "KD"], "barcode")
    port = transport.open_serial(url, timeout=0.01)
    assert port.read(10) == b""                     # honours the timeout when nothing is queued
    model.pull()
    assert port.in_waiting == 6 and port.read(4) == b"1010" and port.read(10) == b"\r\n"
    model.pull()
    port.reset_input_buffer()                       # discards what is queued, like a real port
    assert port.in_waiting == 0 and model.position == 2
    assert port.write(b"ignored") == 7 and bytes(model.written) == b"ignored"
    port.close()
    with pytest.raises(serial.PortNotOpenError):
        port.read(1)


# -- a poll (timeout 0) on its short path -----------------------------------------------

@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_a_poll_reads_what_the_general_read_loop_reads_through_faults(shoe, protocol):
    """A simulated table polls its shoe (`read_event(0)`) for every card on a path of its
    own; through noise, a split frame, a misread, a double draw, a dropped link and a silence
    it gives the events, in order, and the counts that the general read loop gives."""
    from simulators.faults import Fault
    from simulators.rig import DeviceClock
    cards = ["AS", "TD", "KH", "2C", "3D", "4H", "5S", "6C", "7D", "8H", "9S", "QC"]
    kinds = ["noise@1", "split@2", "misread@3", "double_draw@4", "drop@6", "silence@9"]
    if protocol == "framed":
        kinds.append("face_up@10")
    faults = [Fault(k.split("@")[0], int(k.split("@")[1])) for k in kinds]
    clock = DeviceClock()
    sides = []
    for poll in (True, False):
        url, model = shoe(cards, protocol, faults=faults, clock=clock, silence_s=0.5,
                          drop_s=0.3)
        driver = open_shoe(url, protocol, clock=clock, stamp=clock, sleep=lambda s: None,
                           reconnect_initial_s=0.05, reconnect_max_s=0.1)
        read = (lambda d: d.read_event(0.0)) if poll else (lambda d: d._read_event(0.0))
        sides.append((model, driver, read, []))
    while any(model.has_more for model, *_ in sides):
        for model, driver, read, seen in sides:
            model.pull()
        for _ in range(8):
            clock.advance(0.1)
            for model, driver, read, seen in sides:
                for _ in range(4):
                    event = read(driver)
                    if event is None:
                        break
                    seen.append((type(event).__name__, getattr(event, "code", None),
                                 getattr(event, "manual_burn", None),
                                 getattr(event, "face_up", None),
                                 getattr(event, "multiple", None),
                                 # (the link's events carry the wall's time, not the bytes')
                                 None if isinstance(event, (LinkLost, LinkBack)) else event.t))
                    if getattr(event, "seq", None):
                        driver.ack(event.seq)
    (_, polled, _, by_poll), (_, looped, _, by_loop) = sides
    assert by_poll == by_loop
    assert [e for e in by_poll if e[0] == "CardRead"]            # cards came through
    assert {"LinkLost", "LinkBack"} <= {e[0] for e in by_poll}  # and the drop did
    assert polled.stats == looped.stats
    for _, driver, _, _ in sides:
        driver.close()
