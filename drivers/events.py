"""Typed device events: what the drivers hand to the controller's event queue, and what the
table takes and the journal keeps (one type for a card read from the driver to the journal).

Cards travel as canonical codes (`"TD"`); the controller turns them into its own Card type.
`t` is time.monotonic() when the event was decoded; `raw` the bytes it came from (neither is
part of the event's record, `to_dict`, nor of its equality).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class DeviceEvent:
    #: the event's name in the journal (empty: the table takes no such input)
    type: ClassVar[str] = ""
    device: str = "shoe"
    t: float = field(default_factory=time.monotonic, compare=False)
    raw: bytes = field(default=b"", compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The event as the journal keeps it."""
        return {"type": self.type, "device": self.device}


@dataclass(frozen=True)
class CardRead(DeviceEvent):
    type: ClassVar[str] = "card"
    code: str = ""               # canonical card code, e.g. "TD"
    seq: int | None = None       # the shoe's own sequence number, when the protocol has one
    manual_burn: bool = False    # the shoe marked the read as a burn (Bee-Tek `[Manual Burn Cards]`)
    face_up: bool = False        # the shoe saw the card leave face up
    multiple: int = 0            # >0: part of a multiple-card pull of that many cards
    #: drawn too soon after the read before it for a hand to pull (set by the controller's
    #: draw timer, for shoes that do not flag multiple draws themselves)
    with_previous: bool = False

    @property
    def flags(self) -> dict[str, Any]:
        """What the read says besides its card, as the journal and the card event name it."""
        d: dict[str, Any] = {}
        if self.manual_burn:
            d["manual_burn"] = True
        if self.face_up:
            d["face_up"] = True
        if self.multiple:
            d["multiple"] = self.multiple
        if self.with_previous:
            d["with_previous"] = True
        return d

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "code": self.code, "device": self.device}
        if self.seq is not None:
            d["seq"] = self.seq
        flags = self.flags
        if flags:
            d["flags"] = flags
        return d


@dataclass(frozen=True)
class ReadFailed(DeviceEvent):
    type: ClassVar[str] = "read_failed"
    reason: str = "card not read"
    seq: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "device": self.device, "reason": self.reason}
        if self.seq is not None:
            d["seq"] = self.seq     # a shoe that resends: kept, so that a restart knows it
        return d


@dataclass(frozen=True)
class ShoeSession(DeviceEvent):
    """A shoe that numbers its reads said which run of numbers they belong to (framed: its
    HELLO's session, new whenever the shoe starts): journaled, so that a restart can tell the
    shoe the journal knows from one started afresh meanwhile."""
    type: ClassVar[str] = "shoe_session"
    session: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "session": self.session}


@dataclass(frozen=True)
class CutCardSeen(DeviceEvent):
    type: ClassVar[str] = "cut_card"
    seq: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "device": self.device}
        if self.seq is not None:
            d["seq"] = self.seq
        return d


@dataclass(frozen=True)
class MultipleCards(DeviceEvent):
    type: ClassVar[str] = "multiple"
    count: int = 2

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "count": self.count}


@dataclass(frozen=True)
class DeviceAlarm(DeviceEvent):
    type: ClassVar[str] = "alarm"
    code: str = ""
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "code": self.code, "text": self.text}


@dataclass(frozen=True)
class DeviceWarning(DeviceAlarm):
    type: ClassVar[str] = "warning"


@dataclass(frozen=True)
class LinkLost(DeviceEvent):
    type: ClassVar[str] = "link_lost"
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "reason": self.reason}


@dataclass(frozen=True)
class LinkBack(DeviceEvent):
    """The link is back after a LinkLost (reported once)."""
    type: ClassVar[str] = "link_back"


@dataclass(frozen=True)
class ShufflerIdentity(DeviceEvent):
    type: ClassVar[str] = "identity"
    device: str = "shuffler"
    model: str = ""
    serial: str = ""
    firmware: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "model": self.model,
                "serial": self.serial, "firmware": self.firmware}


@dataclass(frozen=True)
class ShufflerStatus(DeviceEvent):
    device: str = "shuffler"
    state: str = "idle"          # idle | shuffling | ready | jam | door_open | error
    error_code: int = 0


@dataclass(frozen=True)
class ShuffleDone(DeviceEvent):
    type: ClassVar[str] = "shuffled"
    device: str = "shuffler"
    count: int = 0                               # cards the shuffler counted
    composition: tuple[tuple[str, int], ...] = ()  # (code, copies) when the device reads cards

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "count": self.count,
                "composition": dict(self.composition)}
