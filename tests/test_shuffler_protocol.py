"""Shuffler protocol: byte scripts against the model and the driver, codec checks, fuzzing.

A byte script is [(sent, received), ...] in hex; every script fails if bytes are left over
(unread device output, a half-received request, or unanswered driver traffic).
"""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.crc import crc16_ccitt_false
from drivers.errors import ProtocolError, Timeout
from drivers.shuffler import protocol as p
from drivers.shuffler.driver import FramedShuffler, ShufflerRefused
from simulators.shuffler import ShufflerModel


def run_device_script(model: ShufflerModel, script: list[tuple[str, str]]) -> None:
    for i, (sent, received) in enumerate(script):
        model.write(bytes.fromhex(sent))
        got = model.read(model.in_waiting)
        assert got.hex(" ") == bytes.fromhex(received).hex(" "), f"step {i}: {sent}"
    assert model.in_waiting == 0, "device output left unread"
    assert model._reader.pending == 0, "a partial request left in the device"


IDENTIFY_RESPONSE = ("a5 00 25 01 81 0f" + " 53 49 4d 2d 53 48 55 46 46 4c 45 52 2d 31 32"  # model
                     " 0a 53 49 4d 2d 30 30 30 30 30 31"                                  # serial
                     " 09 73 69 6d 2d 31 2e 30 2e 30 b6 84")                              # firmware


def test_crc_is_ccitt_false():
    assert p.crc16(b"123456789") == 0x29B1
    # the framed shoe's CRC, checked bit by bit in test_shoe_protocols
    assert p.crc16 is crc16_ccitt_false


def test_script_identify_status_shuffle_count_composition():
    run_device_script(ShufflerModel(seed=3, decks=1), [
        ("a5 00 00 01 01 a7 d0", IDENTIFY_RESPONSE),
        ("a5 00 00 02 03 d2 c1", "a5 00 02 02 83 00 00 c5 f1"),          # idle, no error
        ("a5 00 01 03 02 01 48 ab", "a5 00 01 03 82 01 53 33"),          # shuffle 1 deck
        ("a5 00 00 04 03 78 67", "a5 00 02 04 83 02 00 84 0a"),          # ready
        ("a5 00 00 05 04 3b b1", "a5 00 02 05 84 00 34 67 9b"),          # 52 cards
        ("a5 00 00 06 05 7e c3", "a5 00 34 06 85" + " 01" * 52 + " aa 50"),
    ])


def test_script_refusals_are_naks_with_the_reason():
    run_device_script(ShufflerModel(seed=3, decks=1), [
        ("a5 00 00 08 42 65 ef", "a5 00 02 08 ff 42 01 7b bc"),          # unknown command
        ("a5 00 00 09 06 5e 9e", "a5 00 02 09 ff 06 06 bc e7"),          # deliver: not ready
        ("a5 00 01 0a 02 0d 17 b6", "a5 00 02 0a ff 02 04 cb bd"),       # 13 decks: bad argument
        ("a5 00 00 0b 03 68 58", "a5 00 02 0b ff 03 03 fe df"),          # corrupted CRC
    ])


def test_script_bad_payload_length_is_refused():
    model = ShufflerModel(decks=1)
    status_with_payload = p.encode_frame(7, p.STATUS, b"\x00")
    shuffle_without = p.encode_frame(8, p.SHUFFLE)
    run_device_script(model, [
        (status_with_payload.hex(),
         p.encode_frame(7, p.NAK, bytes([p.STATUS, p.E_BAD_LENGTH])).hex()),
        (shuffle_without.hex(), p.encode_frame(8, p.NAK, bytes([p.SHUFFLE, p.E_BAD_LENGTH])).hex()),
    ])


def test_script_split_frames_garbage_and_back_to_back_requests():
    run_device_script(ShufflerModel(decks=1), [
        ("a5 00 00", ""),                                                # half a request: no answer
        ("02 03 d2 c1", "a5 00 02 02 83 00 00 c5 f1"),                   # the rest completes it
        ("00 ff 13 a5 00 00 02 03 d2 c1", "a5 00 02 02 83 00 00 c5 f1"),  # noise before SOF skipped
        ("a5 00 00 02 03 d2 c1 a5 00 00 02 03 d2 c1",
         "a5 00 02 02 83 00 00 c5 f1 a5 00 02 02 83 00 00 c5 f1"),
    ])


def test_a_request_left_half_sent_is_a_leftover():
    with pytest.raises(AssertionError, match="partial request"):
        run_device_script(ShufflerModel(decks=1), [("a5 00 00 02", "")])


def test_delivery_payload_carries_the_order_from_the_simulator():
    model = ShufflerModel(seed=3, decks=1)
    for seq, (cmd, payload) in enumerate([(p.SHUFFLE, b"\x01"), (p.STATUS, b"")], 1):
        model.write(p.encode_frame(seq, cmd, payload))
    model.read(model.in_waiting)
    model.write(p.encode_frame(9, p.DELIVER))
    frame = p.decode_frame(model.read(model.in_waiting))
    assert (frame.seq, frame.cmd) == (9, p.DELIVER | p.RESPONSE_BIT)
    count, order = p.decode_delivery(frame.payload)
    assert count == 52 and sorted(order) == sorted(p.CARD_CODES) and order == model.last_delivery
    assert frame.payload[:5] == bytes([0x01, 0x00, 0x34, 0x00, 0x34])


def test_payload_codecs_round_trip_and_reject():
    assert p.decode_identity(p.encode_identity("M", "S1", "F")) == ("M", "S1", "F")
    assert p.decode_delivery(p.encode_delivery(416, None)) == (416, None)
    assert p.decode_composition(p.encode_composition({"AS": 2, "KC": 1})) == (("AS", 2), ("KC", 1))
    assert p.decode_status(bytes([4, 8])) == ("door_open", 8)
    for bad, fn in [(bytes([9, 0]), p.decode_status), (b"\x03ab", p.decode_identity),
                    (b"\x01\x01", p.decode_identity), (bytes([1, 0, 2, 0, 2, 0, 60]),
                                                       p.decode_delivery),
                    (bytes([2, 0, 0]), p.decode_delivery), (bytes(51), p.decode_composition)]:
        with pytest.raises(ProtocolError):
            fn(bad)


# ---- the driver against byte scripts ----------------------------------------------------------

class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s + 0.001


class ScriptLink:
    """A link that checks every write against the script and answers with the scripted bytes.

    A read with nothing to give spends its whole timeout on the fake clock, so a missing
    answer ends in a Timeout instead of a hang."""

    def __init__(self, script: list[tuple[str, str]], clock: FakeClock):
        self.script = [(bytes.fromhex(s), bytes.fromhex(r)) for s, r in script]
        self.unread = bytearray()
        self.clock = clock

    def write(self, data: bytes) -> int:
        assert self.script, f"unexpected write {data.hex(' ')}"
        sent, reply = self.script.pop(0)
        assert data.hex(" ") == sent.hex(" ")
        self.unread += reply
        return len(data)

    def read(self, size: int, timeout_s: float) -> bytes:
        if not self.unread:
            self.clock.sleep(timeout_s)
            return b""
        chunk = bytes(self.unread[:size])
        del self.unread[:size]
        return chunk

    def close(self) -> None:
        assert not self.script and not self.unread, "script left over"


def scripted_driver(script: list[tuple[str, str]], **kw) -> FramedShuffler:
    clock = FakeClock()
    return FramedShuffler(ScriptLink(script, clock), clock=clock, sleep=clock.sleep, **kw)


def test_driver_script_identify():
    d = scripted_driver([("a5 00 00 01 01 a7 d0", IDENTIFY_RESPONSE)])
    ident = d.identify()
    assert (ident.model, ident.serial, ident.firmware) == ("SIM-SHUFFLER-12", "SIM-000001",
                                                           "sim-1.0.0")
    assert ident.device == "shuffler"
    d.close()


def test_driver_retries_a_corrupted_status_answer_with_a_new_seq():
    good = p.encode_frame(2, p.STATUS | p.RESPONSE_BIT, b"\x01\x00").hex()
    bad = bytearray(p.encode_frame(1, p.STATUS | p.RESPONSE_BIT, b"\x01\x00"))
    bad[6] ^= 0x40
    d = scripted_driver([(p.encode_frame(1, p.STATUS).hex(), bad.hex()),
                         (p.encode_frame(2, p.STATUS).hex(), good)])
    assert d.status().state == "shuffling"
    assert d.stats["bad_frames"] == 1 and d.stats["retries"] == 1
    d.close()


def test_driver_skips_a_stale_answer():
    stale = p.encode_frame(9, p.STATUS | p.RESPONSE_BIT, b"\x00\x00").hex()
    fresh = p.encode_frame(1, p.STATUS | p.RESPONSE_BIT, b"\x02\x00").hex()
    d = scripted_driver([(p.encode_frame(1, p.STATUS).hex(), stale + fresh)])
    assert d.status().state == "ready" and d.stats["stale_frames"] == 1
    d.close()


def test_driver_resends_shuffle_the_device_could_not_read_but_never_after_a_timeout():
    nak_crc = p.encode_frame(1, p.NAK, bytes([p.SHUFFLE, p.E_BAD_CRC])).hex()
    ack = p.encode_frame(2, p.SHUFFLE | p.RESPONSE_BIT, b"\x08").hex()
    d = scripted_driver([(p.encode_frame(1, p.SHUFFLE, b"\x08").hex(), nak_crc),
                         (p.encode_frame(2, p.SHUFFLE, b"\x08").hex(), ack)])
    d.shuffle(8)
    assert d.decks == 8
    d.close()
    silent = scripted_driver([(p.encode_frame(1, p.SHUFFLE, b"\x08").hex(), "")])
    with pytest.raises(Timeout):
        silent.shuffle(8)
    silent.close()                       # exactly one write: no resend


def test_driver_reports_a_refusal_with_its_reason():
    d = scripted_driver([(p.encode_frame(1, p.DELIVER).hex(),
                          p.encode_frame(1, p.NAK, bytes([p.DELIVER, p.E_JAM])).hex())])
    with pytest.raises(ShufflerRefused, match="refused DELIVER: card jam"):
        d.deliver()
    d.close()


def test_driver_times_out_after_its_retries():
    d = scripted_driver([(p.encode_frame(i, p.STATUS).hex(), "") for i in (1, 2, 3)], retries=2)
    with pytest.raises(Timeout, match="no answer to STATUS"):
        d.status()
    assert d.stats["timeouts"] == 3
    d.close()


# ---- fuzzing: the decoders raise ProtocolError and nothing else -------------------------------

@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_fuzz_decode_frame_only_protocol_error(data):
    try:
        frame = p.decode_frame(data)
    except ProtocolError:
        return
    assert p.encode_frame(frame.seq, frame.cmd, frame.payload) == data


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=8),
       st.lists(st.tuples(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=30)),
                max_size=3))
def test_fuzz_stream_reader_recovers_frames_and_raises_only_protocol_error(chunks, frames):
    reader = p.FrameReader()
    stream = b"".join(chunks) + b"".join(p.encode_frame(*f) for f in frames)
    got = []
    for i in range(0, len(stream), 7):
        reader.feed(stream[i:i + 7])
        for _ in range(len(stream) + 1):           # each error drops a byte: this must end
            try:
                frame = reader.next_frame()
            except ProtocolError:
                continue
            if frame is None:
                break
            got.append((frame.seq, frame.cmd, frame.payload))
    if not any(p.SOF in c for c in chunks):      # noise without a start byte is skipped
        assert got == [tuple(f) for f in frames]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=120))
def test_fuzz_payload_decoders_only_protocol_error(data):
    for fn in (p.decode_identity, p.decode_status, p.decode_count, p.decode_composition,
               p.decode_delivery, p.decode_nak):
        try:
            fn(data)
        except ProtocolError:
            pass


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=30), max_size=6))
def test_fuzz_device_answers_noise_with_well_formed_frames(chunks):
    model = ShufflerModel(decks=1)
    for chunk in chunks:
        model.write(chunk)
    out = p.FrameReader()
    out.feed(model.read(model.in_waiting))
    while (frame := out.next_frame()) is not None:
        assert frame.cmd & p.RESPONSE_BIT
    assert out.pending == 0 and out.garbage_bytes == 0


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=20), st.data())
def test_any_single_bit_flip_is_detected(seq, cmd, payload, data):
    frame = bytearray(p.encode_frame(seq, cmd, payload))
    bit = data.draw(st.integers(0, len(frame) * 8 - 1))
    frame[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(ProtocolError):
        p.decode_frame(bytes(frame))


def test_command_names_cover_every_command():
    for cmd in itertools.chain(p.COMMAND_NAMES, [p.NAK]):
        assert p.command_name(cmd) and p.command_name(cmd | p.RESPONSE_BIT)
