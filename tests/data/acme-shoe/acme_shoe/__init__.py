"""The ACME shoe protocol, an example of a driver plugin.

The shoe sends one ASCII line per event, ended by LF: `CARD <code>` for a card read
(`CARD TD`), `CUT` when the cut card comes out, `FAIL` for a card it could not read. Anything
else is noise. Nothing is acknowledged.

A plugin provides the two sides of its protocol: the decoder (bytes → typed events) that the
driver reads through, and the encoder (shoe actions → bytes) that tablectl's simulator speaks
through, so the same behaviour suite runs on the simulator and on the real shoe.
"""
from __future__ import annotations

from drivers.events import CardRead, CutCardSeen, DeviceEvent, ReadFailed
from drivers.shoe.base import ShoeDriverBase
from drivers.shoe.codec import BadCardCode, BufferedDecoder, GarbageBytes, check_code

MAX_LINE = 32


class AcmeDecoder(BufferedDecoder):
    def next(self) -> DeviceEvent | None:
        buf = self._buf
        while True:
            end = buf.find(b"\n")
            if end < 0:
                if len(buf) > MAX_LINE:
                    raw = bytes(buf)
                    buf.clear()
                    raise GarbageBytes(f"no line end within {MAX_LINE} bytes", raw)
                return None
            raw = bytes(buf[:end + 1])
            del buf[:end + 1]
            line = raw.strip().decode("ascii", errors="replace")
            if not line:
                continue
            if line == "CUT":
                return CutCardSeen(raw=raw)
            if line == "FAIL":
                return ReadFailed(raw=raw)
            if line.startswith("CARD "):
                try:
                    return CardRead(code=check_code(line[5:]), raw=raw)
                except ValueError as err:
                    raise BadCardCode(str(err), raw) from err
            raise GarbageBytes("not an ACME line", raw)


class AcmeEncoder:
    sequenced = False

    def card(self, code: str, *, seq: int = 0, face_up: bool = False,
             manual_burn: bool = False, multiple: int = 0) -> bytes:
        return f"CARD {code}\n".encode("ascii")

    def failed(self, *, seq: int = 0) -> bytes:
        return b"FAIL\n"

    def cut(self, *, seq: int = 0) -> bytes:
        return b"CUT\n"

    def alarm(self, code: str, text: str) -> bytes:
        raise ValueError("the ACME protocol has no alarm line")

    def warning(self, code: str, text: str = "") -> bytes:
        raise ValueError("the ACME protocol has no warning line")

    def noise(self) -> bytes:
        return b"\x00~~\xff\n"


class AcmeDriver(ShoeDriverBase):
    protocol = "acme"
    encoder = AcmeEncoder

    def _make_decoder(self) -> AcmeDecoder:
        return AcmeDecoder()
