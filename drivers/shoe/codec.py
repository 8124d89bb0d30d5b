"""What every shoe codec shares: card-code checks, decode errors, the decoder and encoder shapes.

A decoder is incremental: `feed(bytes)` appends, `next()` returns one typed event, `None` when no
complete frame is buffered, or raises a `ProtocolError` subclass after consuming the bad bytes (so
the next call carries on behind them). An encoder turns shoe actions into the protocol's bytes;
the simulator speaks through it, so the simulator and the driver cannot drift apart.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Protocol

from drivers.cardcodes import RANKS, SUITS
from drivers.errors import ProtocolError
from drivers.events import CardRead, DeviceEvent


class GarbageBytes(ProtocolError):
    """Bytes outside any frame (line noise, a partial frame cut by a reconnect)."""


class MalformedFrame(ProtocolError):
    """A delimited frame whose contents do not follow the protocol."""


class ChecksumMismatch(ProtocolError):
    """A frame whose checksum does not match its contents."""


class BadCardCode(ProtocolError):
    """A well-formed frame that names a card no deck holds."""


class UnknownToken(ProtocolError):
    """A well-formed token or frame type this driver does not know; ignored."""


def canonical_code(rank: str, suit: str) -> str:
    """Return the canonical code ("TD") for a rank ("10", "t", "A") and suit ("d").

    Raises ValueError for anything that is not one of the 52 cards.
    """
    r = rank.upper()
    if r == "10":
        r = "T"
    s = suit.upper()
    if len(r) != 1 or r not in RANKS or len(s) != 1 or s not in SUITS:
        raise ValueError(f"{rank}{suit!s} is not a card (rank {RANKS} or 10, suit {SUITS})")
    return r + s


#: the codes checked so far → their canonical form (a few hundred spellings at most: only
#: valid ones are kept): a simulated shoe checks every card it is loaded with
_CHECKED: dict[str, str] = {}


def check_code(code: str) -> str:
    """Validate a canonical or loose card code ("AS", "10d") and return it canonical."""
    known = _CHECKED.get(code)
    if known is not None:
        return known
    if len(code) < 2:
        raise ValueError(f"{code!r} is not a card code")
    canonical = canonical_code(code[:-1], code[-1])
    if len(_CHECKED) < 1024:
        _CHECKED[code] = canonical
    return canonical


#: a CardRead's fields in their order, each with its default (the time: see `card_read`)
_READ_FIELDS = {f.name: f.default if f.default is not dataclasses.MISSING else None
                for f in dataclasses.fields(CardRead)}
assert [f.name for f in dataclasses.fields(CardRead) if f.default is dataclasses.MISSING] \
    == ["t"] and not hasattr(CardRead, "__post_init__"), "card_read no longer makes a CardRead"
_new = object.__new__


def card_read(code: str, manual_burn: bool, raw: bytes) -> CardRead:
    """`CardRead(code=code, manual_burn=manual_burn, raw=raw)`, made without the dataclass's
    `__init__`: a frozen dataclass sets each of its nine fields through `object.__setattr__`,
    which was most of the time a read took to decode. The same object, field for field."""
    read = _new(CardRead)
    fields = read.__dict__
    fields.update(_READ_FIELDS)
    fields["t"] = time.monotonic()          # (the field's default factory)
    fields["code"], fields["manual_burn"], fields["raw"] = code, manual_burn, raw
    return read


class Decoder(Protocol):
    """Incremental bytes → events decoder of one shoe protocol."""

    def feed(self, data: bytes) -> None: ...

    def next(self) -> DeviceEvent | None: ...

    @property
    def pending(self) -> int:
        """Bytes buffered but not yet consumed (0 after a complete script)."""
        ...

    def reset(self) -> None:
        """Forget buffered bytes (after a reconnect, a partial frame is noise)."""
        ...


class BufferedDecoder:
    """The byte buffer every protocol's decoder keeps; subclasses parse it in `next()`."""

    def __init__(self) -> None:
        self._buf = bytearray()

    @property
    def pending(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> None:
        self._buf += data

    def reset(self) -> None:
        self._buf.clear()


class Encoder(Protocol):
    """Shoe actions → protocol bytes (the simulator's side of a codec)."""

    sequenced: bool   # frames carry sequence numbers that the controller acknowledges

    def card(self, code: str, *, seq: int = 0, face_up: bool = False,
             manual_burn: bool = False, multiple: int = 0) -> bytes: ...

    def failed(self, *, seq: int = 0) -> bytes: ...

    def cut(self, *, seq: int = 0) -> bytes: ...

    def alarm(self, code: str, text: str) -> bytes: ...

    def warning(self, code: str, text: str = "") -> bytes: ...

    def noise(self) -> bytes: ...
