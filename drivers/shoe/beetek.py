"""Bee-Tek USPC plain-text shoe stream (9600 8N1): codec and driver.

Tokens are `[…]` prefixes and `<…>` records, separated by spaces or CRLF:
`[Game]<Card:10H>` a card read (rank then suit; rank `10` or `T`), `[Manual Burn Cards]<Card:7C>`
a read the dealer marked as burn, `[Game]<Game>` a failed read, `<Alarm:E3 Card Not Read>`
(also after a `[Game]` or `[GameAlarm]` prefix),
`<W0x12>` a warning, and `<Cut>`, our simulator's token for the cut card (the shoe's own stream
has none). See docs/protocols.md.
"""
from __future__ import annotations

import re

from drivers.events import (CardRead, CutCardSeen, DeviceAlarm, DeviceEvent, DeviceWarning,
                            ReadFailed)
from drivers.shoe.base import ShoeDriverBase
from drivers.shoe.codec import (BadCardCode, BufferedDecoder, GarbageBytes, MalformedFrame,
                                UnknownToken, canonical_code, card_read)

MAX_TOKEN = 64           # longer than any real token: a lost closer must not swallow the stream
_OPEN = {ord("["): ord("]"), ord("<"): ord(">")}
_SPACE = frozenset(b" \t\r\n")
# prefix → manual_burn; `[GameAlarm]` comes before an `<Alarm:…>` record in the shoe's stream
_PREFIXES = {"game": False, "manual burn cards": True, "gamealarm": False}
_CARD = re.compile(r"(10|[A2-9TJQK])([SHDC])", re.IGNORECASE)
_WARNING = re.compile(r"W0x([0-9A-F]{1,4})", re.IGNORECASE)
_ALARM_CODE = re.compile(r"[A-Z]{1,2}\d{1,3}", re.IGNORECASE)
# nearly every token pair is a card read as the shoe writes it: prefix and record at once
_CARD_READ = re.compile(rb"\[(Game|Manual Burn Cards)\](<Card:(10|[A2-9TJQK])([SHDC])>)[ \t\r\n]*")
_CODES: dict[tuple, str] = {(rank.encode(), suit.encode()): canonical_code(rank, suit)
          for rank in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "T", "J", "Q", "K")
          for suit in "SHDC"}


class BeetekDecoder(BufferedDecoder):
    """Incremental tokenizer + parser of the Bee-Tek stream."""

    def __init__(self) -> None:
        super().__init__()
        self._burn: bool | None = None     # the prefix waiting for its record, if any

    def reset(self) -> None:
        super().reset()
        self._burn = None

    def next(self) -> DeviceEvent | None:
        while True:
            buf = self._buf
            if buf and buf[0] in _SPACE:
                self._skip_space()
            if not buf:
                return None
            read = _CARD_READ.match(buf)
            if read is not None:
                # the general parse below gives the same event, token by token, and the
                # spaces after it; the record's group is its raw token, bytes of their own
                # (the match is read before its bytes leave the buffer)
                card = card_read(_CODES[read.group(3, 4)], read[1] == b"Manual Burn Cards",
                                 read[2])
                del buf[:read.end()]
                self._burn = None
                return card
            if self._buf[0] not in _OPEN:
                self._skip_garbage()
            token = self._take_token()
            if token is None:
                return None
            event = self._parse(token)
            if event is not None:
                self._skip_space()      # so that `pending` counts only what is still to come
                return event

    def _skip_space(self) -> None:
        buf = self._buf
        start = 0
        while start < len(buf) and buf[start] in _SPACE:
            start += 1
        if start:
            del buf[:start]

    def _skip_garbage(self) -> None:
        buf = self._buf
        end = 0
        while end < len(buf) and buf[end] not in _OPEN and buf[end] not in _SPACE:
            end += 1
        raw = bytes(buf[:end])
        del buf[:end]
        raise GarbageBytes(f"{len(raw)} byte(s) outside any token", raw)

    def _take_token(self) -> bytes | None:
        """Cut one complete `[…]`/`<…>` token off the buffer; None when it is still arriving."""
        buf = self._buf
        closer = _OPEN[buf[0]]
        for i in range(1, min(len(buf), MAX_TOKEN + 2)):
            b = buf[i]
            if b == closer:
                token = bytes(buf[:i + 1])
                del buf[:i + 1]
                return token
            if b in _OPEN or not 0x20 <= b <= 0x7E:
                # a new opener or a control byte: the token was cut; resync at this byte
                raw = bytes(buf[:i])
                del buf[:i]
                raise GarbageBytes("token cut short", raw)
        if len(buf) > MAX_TOKEN + 1:
            raw = bytes(buf[:MAX_TOKEN + 2])
            del buf[:MAX_TOKEN + 2]
            raise GarbageBytes(f"token longer than {MAX_TOKEN} bytes", raw)
        return None

    def _parse(self, token: bytes) -> DeviceEvent | None:
        text = token[1:-1].decode("ascii")
        if token[0] == ord("["):
            burn = _PREFIXES.get(text.strip().lower())
            if burn is None:
                raise UnknownToken(f"unknown prefix [{text}]", token)
            self._burn = burn
            return None
        burn, self._burn = self._burn, None
        name, colon, value = text.partition(":")
        kind = name.strip().lower()
        if kind == "card" and colon:
            match = _CARD.fullmatch(value.strip())
            if match is None:
                raise BadCardCode(f"impossible card <{text}>", token)
            return CardRead(code=canonical_code(match[1], match[2]), manual_burn=bool(burn),
                            raw=token)
        if kind == "game" and not colon:
            return ReadFailed(raw=token)
        if kind == "alarm" and colon:
            words = value.strip()
            head, _, rest = words.partition(" ")
            if _ALARM_CODE.fullmatch(head):
                return DeviceAlarm(code=head.upper(), text=rest.strip(), raw=token)
            return DeviceAlarm(code="", text=words, raw=token)
        if kind == "cut" and not colon:
            return CutCardSeen(raw=token)
        match = _WARNING.fullmatch(text.strip())
        if match is not None:
            return DeviceWarning(code="W0x" + match[1].upper(), raw=token)
        if kind in ("card", "game", "alarm", "cut"):
            raise MalformedFrame(f"malformed <{text}>", token)
        raise UnknownToken(f"unknown token <{text}>", token)


class BeetekEncoder:
    """Shoe actions → Bee-Tek stream bytes (for the simulator)."""

    sequenced = False

    def card(self, code: str, *, seq: int = 0, face_up: bool = False,
             manual_burn: bool = False, multiple: int = 0) -> bytes:
        rank = "10" if code[0] == "T" else code[0]
        prefix = "[Manual Burn Cards]" if manual_burn else "[Game]"
        return f"{prefix}<Card:{rank}{code[1]}>\r\n".encode("ascii")

    def failed(self, *, seq: int = 0) -> bytes:
        return b"[Game]<Game>\r\n"

    def cut(self, *, seq: int = 0) -> bytes:
        return b"<Cut>\r\n"

    def alarm(self, code: str, text: str) -> bytes:
        return f"<Alarm:{code} {text}>\r\n".encode("ascii")

    def warning(self, code: str, text: str = "") -> bytes:
        return f"<{code}>\r\n".encode("ascii")

    def noise(self) -> bytes:
        # no opener, no separator: the decoder must skip it as garbage and resync
        return b"\x00\xff\x13~#%\x7f"


class BeetekDriver(ShoeDriverBase):
    protocol = "beetek"
    encoder = BeetekEncoder

    def _make_decoder(self) -> BeetekDecoder:
        return BeetekDecoder()

