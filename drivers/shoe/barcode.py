"""Barcode shoe: one 4-digit card code per line, as printed on live-dealer cards.

`SRRR`: suit digit 1–4 (1 ♠ S, 2 ♥ H, 3 ♣ C, 4 ♦ D), then rank × 10 zero-padded (`010` ace …
`130` king): `1010` = AS, `3100` = TC, `4130` = KD. Our reserved lines: `0000` the cut card,
`9999` a failed read. Lines end with CR, LF or CRLF; empty lines are ignored. A line that is not
exactly four digits is rejected whole: without a checksum, guessing inside it could make a card
out of noise. See docs/protocols.md.
"""
from __future__ import annotations

from drivers.cardcodes import RANKS
from drivers.events import CardRead, CutCardSeen, DeviceEvent, ReadFailed
from drivers.shoe.base import ShoeDriverBase
from drivers.shoe.codec import BadCardCode, BufferedDecoder, GarbageBytes, MalformedFrame

SUIT_DIGITS = {"1": "S", "2": "H", "3": "C", "4": "D"}
DIGIT_OF_SUIT = {s: d for d, s in SUIT_DIGITS.items()}
CUT_LINE = "0000"
FAILED_LINE = "9999"
MAX_LINE = 16            # a lost line end must not make the buffer grow without bound
_EOL = b"\r\n"


def line_to_code(line: str) -> str:
    """`"3100"` → `"TC"`; ValueError when the digits name no card."""
    suit = SUIT_DIGITS.get(line[0])
    value = int(line[1:])
    if suit is None or value % 10 or not 1 <= value // 10 <= 13:
        raise ValueError(f"{line} names no card")
    return RANKS[value // 10 - 1] + suit


def code_to_line(code: str) -> str:
    """`"TC"` → `"3100"`."""
    return f"{DIGIT_OF_SUIT[code[1]]}{(RANKS.index(code[0]) + 1) * 10:03d}"


class BarcodeDecoder(BufferedDecoder):
    """Incremental line splitter + parser of the barcode stream."""


    def next(self) -> DeviceEvent | None:
        buf = self._buf
        while True:
            end = next((i for i, b in enumerate(buf) if b in _EOL), -1)
            if end < 0:
                if len(buf) > MAX_LINE:
                    raw = bytes(buf)
                    buf.clear()
                    raise GarbageBytes(f"no line end within {MAX_LINE} bytes", raw)
                return None
            line = bytes(buf[:end])
            stop = end
            while stop < len(buf) and buf[stop] in _EOL:
                stop += 1
            raw = bytes(buf[:stop])
            del buf[:stop]
            if line:
                return self._parse(line, raw)

    @staticmethod
    def _parse(line: bytes, raw: bytes) -> DeviceEvent:
        if not line.isdigit():
            raise GarbageBytes("line is not digits", raw)
        if len(line) != 4:
            raise MalformedFrame(f"{len(line)} digits, not 4", raw)
        text = line.decode("ascii")
        if text == CUT_LINE:
            return CutCardSeen(raw=raw)
        if text == FAILED_LINE:
            return ReadFailed(raw=raw)
        try:
            return CardRead(code=line_to_code(text), raw=raw)
        except ValueError as err:
            raise BadCardCode(str(err), raw) from err


class BarcodeEncoder:
    """Shoe actions → barcode lines (for the simulator)."""

    sequenced = False

    def card(self, code: str, *, seq: int = 0, face_up: bool = False,
             manual_burn: bool = False, multiple: int = 0) -> bytes:
        return code_to_line(code).encode("ascii") + b"\r\n"

    def failed(self, *, seq: int = 0) -> bytes:
        return FAILED_LINE.encode("ascii") + b"\r\n"

    def cut(self, *, seq: int = 0) -> bytes:
        return CUT_LINE.encode("ascii") + b"\r\n"

    def alarm(self, code: str, text: str) -> bytes:
        raise ValueError("the barcode protocol has no alarm line")

    def warning(self, code: str, text: str = "") -> bytes:
        raise ValueError("the barcode protocol has no warning line")

    def noise(self) -> bytes:
        # a burst of noise on an idle line, closed by the next line end
        return b"\x00\xff\x13~#%\x7f\r\n"


class BarcodeDriver(ShoeDriverBase):
    protocol = "barcode"
    encoder = BarcodeEncoder

    def _make_decoder(self) -> BarcodeDecoder:
        return BarcodeDecoder()

