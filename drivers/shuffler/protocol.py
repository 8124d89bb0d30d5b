"""The shuffler's framed protocol, shared by the USB bulk endpoints and serial links.

Every frame, in both directions (docs/shuffler-protocol.md has the byte-by-byte description):

    SOF 0xA5 | LEN (u16 BE, payload bytes) | SEQ | CMD | PAYLOAD (LEN bytes) | CRC-16 (u16 BE)

The CRC is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor) over
LEN, SEQ, CMD and PAYLOAD. A response echoes the request's SEQ; its CMD is the request's
CMD | 0x80, or NAK (0xFF) with payload [request CMD, error code].

Decoders raise only ProtocolError (drivers.errors) on bad input; nothing else escapes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from drivers.cardcodes import CARD_CODES, RANKS, SUITS  # noqa: F401 (still importable from here)
from drivers.crc import crc16_ccitt_false as crc16   # the name callers of this module use
from drivers.errors import ProtocolError

SOF = 0xA5
HEADER = 5                  # SOF, LEN (2), SEQ, CMD
TRAILER = 2                 # CRC
MAX_PAYLOAD = 1024          # room for a 12-deck delivery order (624 cards) and more

# Commands (host -> device); the response carries CMD | RESPONSE_BIT.
IDENTIFY = 0x01
SHUFFLE = 0x02
STATUS = 0x03
COUNT = 0x04
COMPOSITION = 0x05
DELIVER = 0x06
CLEAR = 0x07
RESPONSE_BIT = 0x80
NAK = 0xFF
COMMAND_NAMES = {IDENTIFY: "IDENTIFY", SHUFFLE: "SHUFFLE", STATUS: "STATUS", COUNT: "COUNT",
                 COMPOSITION: "COMPOSITION", DELIVER: "DELIVER", CLEAR: "CLEAR"}

# Device states (STATUS payload byte 0).
STATES = ("idle", "shuffling", "ready", "jam", "door_open", "error")
STATE_CODES = {name: i for i, name in enumerate(STATES)}

# Error codes: NAK payload byte 1 and STATUS payload byte 1 (0 = none).
E_NONE = 0x00
E_UNKNOWN_COMMAND = 0x01
E_BAD_LENGTH = 0x02
E_BAD_CRC = 0x03
E_BAD_ARGUMENT = 0x04
E_BUSY = 0x05
E_NOT_READY = 0x06
E_JAM = 0x07
E_DOOR_OPEN = 0x08
E_UNSUPPORTED = 0x09
E_COUNT_MISMATCH = 0x10
ERROR_TEXT = {
    E_NONE: "no error",
    E_UNKNOWN_COMMAND: "unknown command",
    E_BAD_LENGTH: "wrong payload length for the command",
    E_BAD_CRC: "frame CRC check failed",
    E_BAD_ARGUMENT: "argument out of range",
    E_BUSY: "busy shuffling",
    E_NOT_READY: "no shuffled shoe ready",
    E_JAM: "card jam",
    E_DOOR_OPEN: "door open",
    E_UNSUPPORTED: "not supported by this device",
    E_COUNT_MISMATCH: "card count does not match the decks requested",
}

MIN_DECKS, MAX_DECKS = 1, 12

# Card index on the wire: CARD_CODES' order (0 = AS, 12 = KS, 13 = AH, ..., 51 = KC).
CARD_INDEX = {code: i for i, code in enumerate(CARD_CODES)}


@dataclass(frozen=True)
class Frame:
    seq: int
    cmd: int
    payload: bytes = b""
    raw: bytes = b""

    @property
    def name(self) -> str:
        return command_name(self.cmd)


def command_name(cmd: int) -> str:
    if cmd == NAK:
        return "NAK"
    base = COMMAND_NAMES.get(cmd & ~RESPONSE_BIT, f"0x{cmd & ~RESPONSE_BIT:02x}")
    return base + ("-RESP" if cmd & RESPONSE_BIT else "")


def encode_frame(seq: int, cmd: int, payload: bytes = b"") -> bytes:
    """One complete frame; raises ValueError for values our own code must never produce."""
    if not 0 <= seq <= 0xFF or not 0 <= cmd <= 0xFF:
        raise ValueError(f"seq {seq} / cmd {cmd} out of byte range")
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = struct.pack(">HBB", len(payload), seq, cmd) + bytes(payload)
    return bytes([SOF]) + body + struct.pack(">H", crc16(body))


class FrameCRCError(ProtocolError):
    """A frame whose CRC does not match; seq and cmd are as received (maybe corrupted)."""

    def __init__(self, message: str, raw: bytes, seq: int, cmd: int):
        super().__init__(message, raw)
        self.seq, self.cmd = seq, cmd


def decode_frame(data: bytes) -> Frame:
    """Decode exactly one frame; anything else (short, long, bad SOF/LEN/CRC) is ProtocolError."""
    data = bytes(data)
    if len(data) < HEADER + TRAILER:
        raise ProtocolError(f"frame too short ({len(data)} bytes)", data)
    if data[0] != SOF:
        raise ProtocolError(f"frame does not start with 0x{SOF:02x}", data)
    length = (data[1] << 8) | data[2]
    if length > MAX_PAYLOAD:
        raise ProtocolError(f"length {length} exceeds {MAX_PAYLOAD}", data)
    if len(data) != HEADER + length + TRAILER:
        raise ProtocolError(f"frame is {len(data)} bytes, its length field says "
                            f"{HEADER + length + TRAILER}", data)
    body = data[1:HEADER + length]
    got = (data[-2] << 8) | data[-1]
    want = crc16(body)
    if got != want:
        raise FrameCRCError(f"CRC 0x{got:04x} != 0x{want:04x}", data, data[3], data[4])
    return Frame(seq=data[3], cmd=data[4], payload=data[HEADER:HEADER + length], raw=data)


class FrameReader:
    """Stream decoder: feed() bytes as they arrive, then next_frame() until it returns None.

    Bytes before a start byte are skipped (counted in `garbage_bytes`). A frame that fails its
    checks raises ProtocolError after its start byte is dropped, so the next call resynchronises
    on the bytes that followed it (a corrupted length cannot swallow good frames behind it).
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self.garbage_bytes = 0

    def feed(self, data: bytes) -> None:
        self._buf += data

    def clear(self) -> None:
        self._buf.clear()

    @property
    def pending(self) -> int:
        return len(self._buf)

    def next_frame(self) -> Frame | None:
        start = self._buf.find(SOF)
        if start < 0:
            self.garbage_bytes += len(self._buf)
            self._buf.clear()
            return None
        if start:
            self.garbage_bytes += start
            del self._buf[:start]
        if len(self._buf) < 3:
            return None
        length = (self._buf[1] << 8) | self._buf[2]
        if length > MAX_PAYLOAD:
            raw = bytes(self._buf[:3])
            del self._buf[:1]
            raise ProtocolError(f"length {length} exceeds {MAX_PAYLOAD}", raw)
        total = HEADER + length + TRAILER
        if len(self._buf) < total:
            return None
        raw = bytes(self._buf[:total])
        try:
            frame = decode_frame(raw)
        except ProtocolError:
            del self._buf[:1]
            raise
        del self._buf[:total]
        return frame


# ---- payloads -------------------------------------------------------------------------------

def _need(payload: bytes, n: int, what: str) -> None:
    if len(payload) != n:
        raise ProtocolError(f"{what} payload is {len(payload)} bytes, expected {n}", payload)


def encode_identity(model: str, serial: str, firmware: str) -> bytes:
    out = bytearray()
    for text in (model, serial, firmware):
        raw = text.encode("ascii")
        if len(raw) > 64:
            raise ValueError(f"identity field {text!r} longer than 64 bytes")
        out += bytes([len(raw)]) + raw
    return bytes(out)


def decode_identity(payload: bytes) -> tuple[str, str, str]:
    """Three length-prefixed printable ASCII strings: model, serial number, firmware."""
    fields, i = [], 0
    for name in ("model", "serial", "firmware"):
        if i >= len(payload):
            raise ProtocolError(f"identity ends before its {name} field", payload)
        n = payload[i]
        raw = payload[i + 1:i + 1 + n]
        if len(raw) != n:
            raise ProtocolError(f"identity {name} field truncated", payload)
        if not all(0x20 <= b < 0x7F for b in raw):
            raise ProtocolError(f"identity {name} field is not printable ASCII", payload)
        fields.append(raw.decode("ascii"))
        i += 1 + n
    if i != len(payload):
        raise ProtocolError(f"{len(payload) - i} stray bytes after the identity", payload)
    return fields[0], fields[1], fields[2]


def decode_status(payload: bytes) -> tuple[str, int]:
    """(state name, error code)."""
    _need(payload, 2, "STATUS")
    if payload[0] >= len(STATES):
        raise ProtocolError(f"unknown shuffler state {payload[0]}", payload)
    return STATES[payload[0]], payload[1]


def decode_count(payload: bytes) -> int:
    _need(payload, 2, "COUNT")
    return (payload[0] << 8) | payload[1]


def encode_composition(copies: dict[str, int]) -> bytes:
    return bytes(min(copies.get(code, 0), 255) for code in CARD_CODES)


def decode_composition(payload: bytes) -> tuple[tuple[str, int], ...]:
    """52 bytes, copies of each card in wire order; returned without the zero entries."""
    _need(payload, len(CARD_CODES), "COMPOSITION")
    return tuple((code, n) for code, n in zip(CARD_CODES, payload) if n)


def encode_delivery(count: int, order: list[str] | None) -> bytes:
    """flags (bit 0: card order follows), count (u16 BE, the device's counter), then, with
    bit 0, the order's length (u16 BE) and one card index per card, first card out first."""
    if order is None:
        return struct.pack(">BH", 0, count)
    return struct.pack(">BHH", 1, count, len(order)) + bytes(CARD_INDEX[c] for c in order)


def decode_delivery(payload: bytes) -> tuple[int, list[str] | None]:
    """(count, order or None)."""
    if len(payload) < 3:
        raise ProtocolError(f"DELIVER payload is {len(payload)} bytes, expected at least 3",
                            payload)
    flags, count = payload[0], (payload[1] << 8) | payload[2]
    if flags & ~0x01:
        raise ProtocolError(f"unknown DELIVER flags 0x{flags:02x}", payload)
    if not flags & 0x01:
        _need(payload, 3, "DELIVER (no order)")
        return count, None
    if len(payload) < 5:
        raise ProtocolError("DELIVER order length missing", payload)
    n, body = (payload[3] << 8) | payload[4], payload[5:]
    if len(body) != n:
        raise ProtocolError(f"DELIVER order says {n} cards but holds {len(body)}", payload)
    if any(b >= len(CARD_CODES) for b in body):
        raise ProtocolError("DELIVER order holds a card index above 51", payload)
    return count, [CARD_CODES[b] for b in body]


def decode_nak(payload: bytes) -> tuple[int, int]:
    """(the refused command, error code)."""
    _need(payload, 2, "NAK")
    return payload[0], payload[1]


def error_text(code: int) -> str:
    return ERROR_TEXT.get(code, f"device error 0x{code:02x}")
