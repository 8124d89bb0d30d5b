"""Byte scripts per shoe codec: [(sent, received), …], failing on leftover bytes.

Decoder scripts: bytes from the shoe → the events (or error kinds) decoded from them.
Model scripts: what the dealer or controller does → the exact bytes the simulated shoe sends.
"""
from __future__ import annotations

import pytest

from drivers.errors import ProtocolError
from drivers.events import (CardRead, CutCardSeen, DeviceAlarm, DeviceWarning, ReadFailed)
from drivers.shoe.barcode import BarcodeDecoder, code_to_line, line_to_code
from drivers.shoe.beetek import BeetekDecoder
from drivers.shoe.codec import (BadCardCode, ChecksumMismatch, GarbageBytes, MalformedFrame,
                                UnknownToken, canonical_code, card_read)
from drivers.shoe.framed import (AckFrame, FramedDecoder, FramedEncoder, HelloFrame,
                                 crc16_ccitt_false, encode_frame, next_seq, seq_at_or_before)
from simulators.shoe import Fault, ShoeModel

H = bytes.fromhex


def drain(decoder) -> list:
    out = []
    while True:
        try:
            event = decoder.next()
        except ProtocolError as err:
            out.append(type(err))
            continue
        if event is None:
            return out
        out.append(event)


def run_decoder_script(decoder, script) -> None:
    for sent, received in script:
        decoder.feed(sent)
        assert drain(decoder) == received, f"after {sent!r}"
    assert decoder.pending == 0, "leftover bytes in the decoder"


def run_model_script(model: ShoeModel, script) -> None:
    for sent, received in script:
        if sent == "pull":
            model.pull()
        elif sent == "burn":
            model.pull(manual_burn=True)
        elif sent:
            model.write(sent)
        got = bytearray()
        while model.in_waiting:
            got += model.read(4096)
        assert bytes(got) == received, f"after {sent!r}"
    assert model.in_waiting == 0 and model.read(4096) == b"", "leftover bytes in the shoe"


# -- beetek ---------------------------------------------------------------------------------

BEETEK_DECODE = [
    (b"[Game]<Card:AS>\r\n", [CardRead(code="AS")]),
    (b"[Game]<Card:10H> [Game]<Card:th>\r\n", [CardRead(code="TH"), CardRead(code="TH")]),
    (b"[Manual Burn Cards]<Card:7c>\r\n", [CardRead(code="7C", manual_burn=True)]),
    (b"[Ga", []), (b"me]<Card:Q", []), (b"D>\r", [CardRead(code="QD")]), (b"\n", []),
    (b"[Game]<Game>\r\n", [ReadFailed()]),
    (b"<Alarm:E3 Card Not Read>\r\n", [DeviceAlarm(code="E3", text="Card Not Read")]),
    (b"<Alarm:Lid open>", [DeviceAlarm(code="", text="Lid open")]),
    (b"<W0x12>\r\n<w0x1a>", [DeviceWarning(code="W0x12"), DeviceWarning(code="W0x1A")]),
    (b"<Cut>\r\n", [CutCardSeen()]),
    (b"\x00\xff#[Game]<Card:2S>", [GarbageBytes, CardRead(code="2S")]),
    (b"[Game]<Card:1X>\r\n", [BadCardCode]),
    (b"[Game]<Card:11S>", [BadCardCode]),
    (b"<Hello>[Shoe Ready]", [UnknownToken, UnknownToken]),
    (b"<Card>", [MalformedFrame]),
    (b"[Game]<Card:A<Cut>", [GarbageBytes, CutCardSeen()]),
    (b"<Card:K\x00S>", [GarbageBytes, GarbageBytes]),
    (b"<" + b"x" * 80 + b">", [GarbageBytes, GarbageBytes]),
    (b"<Card:9D>", [CardRead(code="9D")]),
]


def test_beetek_decoder_script():
    run_decoder_script(BeetekDecoder(), BEETEK_DECODE)


@pytest.mark.parametrize("burn", [False, True])
def test_a_decoded_read_is_the_card_read_its_constructor_makes(burn):
    made, built = card_read("TD", burn, b"<Card:10D>"), CardRead(code="TD", manual_burn=burn,
                                                                raw=b"<Card:10D>")
    assert type(made) is CardRead and made == built and hash(made) == hash(built)
    assert {**vars(made), "t": None} == {**vars(built), "t": None}
    assert list(vars(made)) == list(vars(built)) and made.raw == built.raw
    assert made.to_dict() == built.to_dict() and made.flags == built.flags
    with pytest.raises(AttributeError):           # frozen, as the dataclass is
        made.code = "AS"


def test_beetek_prefix_applies_to_the_next_record_only():
    run_decoder_script(BeetekDecoder(), [
        (b"[Manual Burn Cards]<W0x01><Card:5H>", [DeviceWarning(code="W0x01"),
                                                   CardRead(code="5H")]),
    ])


def test_beetek_model_script():
    model = ShoeModel(["AS", "TD", "7C", "KH"], protocol="beetek", cut_position=2)
    run_model_script(model, [
        ("pull", b"[Game]<Card:AS>\r\n"),
        ("pull", b"[Game]<Card:10D>\r\n"),
        ("burn", b"<Cut>\r\n[Manual Burn Cards]<Card:7C>\r\n"),
        (b"anything", b""),                     # the stream is one-way: writes are ignored
        ("pull", b"[Game]<Card:KH>\r\n"),
        ("pull", b""),
    ])
    model.alarm("E3", "Card Not Read")
    model.warning("W0x12")
    run_model_script(model, [(b"", b"<Alarm:E3 Card Not Read>\r\n<W0x12>\r\n")])


# -- barcode --------------------------------------------------------------------------------

BARCODE_DECODE = [
    (b"1010\r\n", [CardRead(code="AS")]),
    (b"3100\n4130\r", [CardRead(code="TC"), CardRead(code="KD")]),
    (b"\n", []),
    (b"21", []), (b"20\r\n", [CardRead(code="QH")]),
    (b"0000\r\n9999\r\n", [CutCardSeen(), ReadFailed()]),
    (b"5010\r\n1015\r\n1140\r\n1000\r\n", [BadCardCode] * 4),
    (b"101\r\n10100\r\n", [MalformedFrame, MalformedFrame]),
    (b"\x00\xff~\r\n", [GarbageBytes]),
    (b"12a4\r\n", [GarbageBytes]),
    (b"1" * 20, [GarbageBytes]),
    (b"\r\n2090\r\n", [CardRead(code="9H")]),
]


def test_barcode_decoder_script():
    run_decoder_script(BarcodeDecoder(), BARCODE_DECODE)


@pytest.mark.parametrize("line, code", [("1010", "AS"), ("3100", "TC"), ("4130", "KD"),
                                        ("2050", "5H"), ("1110", "JS"), ("4120", "QD")])
def test_barcode_line_mapping(line, code):
    assert line_to_code(line) == code
    assert code_to_line(code) == line


def test_barcode_model_script():
    model = ShoeModel(["AS", "TC", "KD"], protocol="barcode", cut_position=1)
    run_model_script(model, [
        ("pull", b"1010\r\n"),
        ("pull", b"0000\r\n3100\r\n"),
        ("pull", b"4130\r\n"),
    ])
    with pytest.raises(ValueError, match="no alarm line"):
        model.alarm("E3", "Card Not Read")


# -- framed ---------------------------------------------------------------------------------

CARD_AS_1 = H("a5 04 10 00 01 00 01 41 53 c0 22")      # the worked example of docs/protocols.md
CARD_TD_2_FACE_UP = H("a5 04 10 00 02 01 01 54 44 c6 14")
CARD_KH_3_DOUBLE = H("a5 04 10 00 03 02 02 4b 48 7c 08")
CARD_7C_4_BURN = H("a5 04 10 00 04 04 01 37 43 99 4a")
FAILED_5 = H("a5 00 11 00 05 a0 36")
CUT_6 = H("a5 00 12 00 06 c9 05")
ALARM_E3 = H("a5 10 20 00 00 02 45 33 43 61 72 64 20 4e 6f 74 20 52 65 61 64 ed b1")
WARNING_W12 = H("a5 06 21 00 00 05 57 30 78 31 32 92 4b")
HELLO_0 = H("a5 07 01 00 00 01 01 02 03 04 00 00 6c a9")
HELLO_1 = H("a5 07 01 00 00 01 01 02 03 04 00 01 7c 88")
HELLO_REQUEST = H("a5 00 01 00 00 b3 f0")
ACK_1 = H("a5 00 30 00 01 51 44")


def _crc_bitwise(data: bytes) -> int:
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def test_crc_is_ccitt_false():
    assert crc16_ccitt_false(b"123456789") == 0x29B1
    body = CARD_AS_1[1:-2]
    assert crc16_ccitt_false(body) == _crc_bitwise(body) == 0xC022
    for data in (b"", b"\x00", b"\xa5\x00\x00", bytes(range(256))):
        assert crc16_ccitt_false(data) == _crc_bitwise(data)


FRAMED_DECODE = [
    (CARD_AS_1, [CardRead(code="AS", seq=1)]),
    (CARD_TD_2_FACE_UP[:3], []), (CARD_TD_2_FACE_UP[3:], [CardRead(code="TD", seq=2,
                                                                   face_up=True)]),
    (CARD_KH_3_DOUBLE + CARD_7C_4_BURN, [CardRead(code="KH", seq=3, multiple=2),
                                         CardRead(code="7C", seq=4, manual_burn=True)]),
    (FAILED_5 + CUT_6, [ReadFailed(seq=5), CutCardSeen(seq=6)]),
    (ALARM_E3 + WARNING_W12, [DeviceAlarm(code="E3", text="Card Not Read"),
                              DeviceWarning(code="W0x12")]),
    (HELLO_1 + HELLO_REQUEST + ACK_1, [HelloFrame(session=0x01020304, last_acked=1),
                                       HelloFrame(), AckFrame(seq=1)]),
    # a flipped bit in the payload: a CRC error, its tail skipped as garbage, never a card
    (CARD_AS_1[:7] + b"\x42" + CARD_AS_1[8:], [ChecksumMismatch, GarbageBytes]),
    (b"\x00\x13" + CARD_AS_1, [GarbageBytes, CardRead(code="AS", seq=1)]),
    (b"\xa5\xff" + FAILED_5, [GarbageBytes, GarbageBytes, ReadFailed(seq=5)]),
    (encode_frame(0x10, 7, b"\x00\x01XX"), [BadCardCode]),
    (encode_frame(0x10, 7, b"\x00\x01td"), [BadCardCode]),
    (encode_frame(0x10, 7, b"\x02\x01AS"), [MalformedFrame]),       # multiple with count 1
    (encode_frame(0x10, 7, b"\x80\x01AS"), [MalformedFrame]),       # unknown flag bit
    (encode_frame(0x10, 7, b"\x00\x01A"), [MalformedFrame]),
    (encode_frame(0x11, 7, b"x"), [MalformedFrame]),
    (encode_frame(0x01, 0, b"\x01\x02"), [MalformedFrame]),
    (encode_frame(0x20, 0, b"\x09E3"), [MalformedFrame]),
    (encode_frame(0x7E, 9), [UnknownToken]),
]


def test_framed_decoder_script():
    run_decoder_script(FramedDecoder(), FRAMED_DECODE)


def test_framed_decoder_waits_then_expires_a_frame_that_never_completes():
    decoder = FramedDecoder()
    decoder.feed(H("a5 20 10") + CARD_AS_1)        # a false start claiming 32 bytes of payload
    assert drain(decoder) == []
    with pytest.raises(GarbageBytes):
        decoder.expire()
    assert drain(decoder) == [GarbageBytes, CardRead(code="AS", seq=1)]
    assert decoder.pending == 0


def test_framed_model_script():
    model = ShoeModel(["AS", "TD", "KH", "2C", "7C"], protocol="framed", session=0x01020304,
                      cut_position=4)
    run_model_script(model, [
        (b"", HELLO_0),                                     # power-on
        ("pull", CARD_AS_1),
        (HELLO_REQUEST, HELLO_0 + CARD_AS_1),               # resync: hello + unacked resent
        (ACK_1, b""),
        (HELLO_REQUEST, HELLO_1),                           # nothing left unacknowledged
        (b"\x00garbage", b""),                              # the shoe ignores what it can't parse
    ])
    model.inject(Fault("face_up", 1))
    model.inject(Fault("double_draw", 2))
    fe = FramedEncoder()
    run_model_script(model, [
        ("pull", CARD_TD_2_FACE_UP),
        ("pull", CARD_KH_3_DOUBLE + fe.card("2C", seq=4, multiple=2)),
        ("burn", fe.cut(seq=5) + fe.card("7C", seq=6, manual_burn=True)),
    ])
    assert model.unacked == [2, 3, 4, 5, 6]
    run_model_script(model, [(fe.ack(4), b"")])
    assert model.unacked == [5, 6]


def test_sequence_arithmetic_wraps():
    assert next_seq(0) == 1 and next_seq(65535) == 1 and next_seq(41) == 42
    assert seq_at_or_before(3, 3) and seq_at_or_before(2, 3) and not seq_at_or_before(4, 3)
    assert seq_at_or_before(65535, 2) and not seq_at_or_before(2, 65535)


def test_canonical_codes():
    assert canonical_code("10", "d") == "TD" and canonical_code("a", "s") == "AS"
    for rank, suit in [("1", "S"), ("11", "H"), ("A", "X"), ("", "S")]:
        with pytest.raises(ValueError):
            canonical_code(rank, suit)
