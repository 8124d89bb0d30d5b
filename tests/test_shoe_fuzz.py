"""Fuzz: random and mutated bytes never break a decoder or the driver, never forge a card."""
from __future__ import annotations

from collections import deque

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from drivers.errors import ProtocolError
from drivers.events import CardRead
from drivers.shoe import PROTOCOLS
from drivers.shoe.barcode import BarcodeDecoder
from drivers.shoe.beetek import BeetekDecoder
from drivers.cardcodes import CARD_CODES
from drivers.shoe.framed import FramedDecoder, FramedEncoder, crc16_ccitt_false

DECODERS = {"beetek": BeetekDecoder, "barcode": BarcodeDecoder, "framed": FramedDecoder}
ENCODERS = {name: driver.encoder for name, driver in PROTOCOLS.items()}
CODES = list(CARD_CODES)
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

chunks = st.lists(st.binary(max_size=40), max_size=12)
protocols = st.sampled_from(sorted(PROTOCOLS))   # a new protocol needs its DECODERS entry
codes = st.lists(st.sampled_from(CODES), min_size=1, max_size=6)


def decode_all(decoder, pieces, *, flush: bool = True) -> list:
    """Feed pieces, collect events; only ProtocolError may come out of next()."""
    events = []

    def drain():
        while True:
            try:
                event = decoder.next()
            except ProtocolError:
                continue
            if event is None:
                return
            events.append(event)

    for piece in pieces:
        decoder.feed(piece)
        drain()
    while flush and isinstance(decoder, FramedDecoder) and decoder.pending:
        try:
            decoder.expire()        # what the framed driver does when the line goes quiet
        except ProtocolError:
            pass
        drain()
    return events


def stream(protocol: str, cards: list[str]) -> bytes:
    enc = ENCODERS[protocol]()
    return b"".join(enc.card(c, seq=i + 1) for i, c in enumerate(cards))


@FUZZ
@given(protocols, chunks)
def test_random_bytes_raise_only_protocol_errors(protocol, pieces):
    decoder = DECODERS[protocol]()
    for event in decode_all(decoder, pieces):
        if isinstance(event, CardRead):
            assert event.code in CODES


@FUZZ
@given(protocols, codes, st.data())
def test_mutated_streams_raise_only_protocol_errors(protocol, cards, data):
    raw = bytearray(stream(protocol, cards))
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        i = data.draw(st.integers(0, max(0, len(raw) - 1)))
        if op == "flip" and raw:
            raw[i] ^= data.draw(st.integers(1, 255))
        elif op == "insert":
            raw[i:i] = data.draw(st.binary(min_size=1, max_size=4))
        elif raw:
            del raw[i]
    cut = data.draw(st.integers(0, len(raw)))
    decode_all(DECODERS[protocol](), [bytes(raw[:cut]), bytes(raw[cut:])])


@FUZZ
@given(codes, st.data())
def test_framed_never_yields_a_card_from_a_corrupt_frame(cards, data):
    enc = FramedEncoder()
    frames = [enc.card(c, seq=i + 1) for i, c in enumerate(cards)]
    bad = data.draw(st.integers(0, len(frames) - 1))
    frame = bytearray(frames[bad])
    pos = data.draw(st.integers(1, len(frame) - 1))        # keep SOF: corrupt inside the frame
    frame[pos] ^= data.draw(st.integers(1, 255))
    frames[bad] = bytes(frame)
    events = decode_all(FramedDecoder(), [b"".join(frames)])
    cards_read = [e for e in events if isinstance(e, CardRead)]
    for event in cards_read:
        assert crc16_ccitt_false(event.raw[1:-2]) == int.from_bytes(event.raw[-2:], "big")
    assert bad + 1 not in [e.seq for e in cards_read]
    # resync: every intact frame still comes through, in order
    assert [e.seq for e in cards_read] == [i + 1 for i in range(len(cards)) if i != bad]


@FUZZ
@given(protocols, codes, st.lists(st.integers(1, 30), max_size=6))
def test_clean_streams_decode_exactly_however_they_are_split(protocol, cards, cuts):
    raw = stream(protocol, cards)
    pieces, start = [], 0
    for step in cuts:
        pieces.append(raw[start:start + step])
        start += step
    pieces.append(raw[start:])
    decoder = DECODERS[protocol]()
    events = decode_all(decoder, pieces)
    assert [e.code for e in events] == cards
    assert decoder.pending == 0


class ScriptedPort:
    """A transport that hands out scripted chunks, then nothing (after the read timeout)."""

    def __init__(self, pieces, clock=None, timeout: float = 0.05):
        self.pieces = deque(p for p in pieces if p)
        self.written = bytearray()
        self.clock = clock
        self.timeout = timeout

    @property
    def in_waiting(self) -> int:
        return len(self.pieces[0]) if self.pieces else 0

    def read(self, size: int) -> bytes:
        if not self.pieces:
            if self.clock is not None:
                self.clock.sleep(self.timeout)
            return b""
        head = self.pieces.popleft()
        if len(head) > size:
            self.pieces.appendleft(head[size:])
        return head[:size]

    def write(self, data: bytes) -> int:
        self.written += data
        return len(data)

    def close(self) -> None:
        pass


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@FUZZ
@given(protocols, chunks, st.integers(0, 3))
def test_read_event_never_raises(protocol, pieces, dead_after):
    clock = FakeClock()
    port = ScriptedPort(pieces, clock)
    driver = PROTOCOLS[protocol](f"fuzz://{protocol}", opener=lambda: port, clock=clock,
                                 sleep=clock.sleep, dead_after_timeouts=dead_after)
    for _ in range(len(pieces) * 4 + 8):
        event = driver.read_event()
        if isinstance(event, CardRead):
            assert event.code in CODES
    assert driver.stats["internal_errors"] == 0
