"""Inputs to the table: everything that can change it, typed, and journaled before it counts.

The journal stores each input as a plain dict (`to_dict`), so replaying the journal's inputs
through a fresh table rebuilds exactly the same state. `DURABLE` is the one table of which
inputs are written with a full sync before anything they caused is published:

    {"type": "card", "code": "TD", "seq": 17, "flags": {"face_up": true}}
    {"type": "cut_card"} {"type": "read_failed", "reason": "…"} {"type": "multiple", "count": 2}
    {"type": "alarm" | "warning", "device": "shoe", "code": "E3", "text": "…"}
    {"type": "link_lost" | "link_back", "device": "shoe", "reason": "…"}
    {"type": "shuffled", "count": 416, "composition": {...}}
    {"type": "identity", "model": "…", "serial": "…", "firmware": "…"}
    {"type": "remainder", "count": 30, "composition": {"AS": 1, …}}
    {"type": "restarted", "resends": false}
    {"type": "command", "action": "void_round", "args": {…}, "user": "…", "role": "…",
     "reason": "…"}
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from controller.errors import InputError


@dataclass(frozen=True)
class Input:
    type: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True)
class CardRead(Input):
    type: ClassVar[str] = "card"
    code: str
    device: str = "shoe"
    seq: int | None = None          # the shoe's own sequence number (framed protocol)
    flags: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "code": self.code, "device": self.device}
        if self.seq is not None:
            d["seq"] = self.seq
        if self.flags:
            d["flags"] = dict(self.flags)
        return d


@dataclass(frozen=True)
class CutCard(Input):
    type: ClassVar[str] = "cut_card"
    device: str = "shoe"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device}


@dataclass(frozen=True)
class ReadFailed(Input):
    type: ClassVar[str] = "read_failed"
    reason: str = ""
    device: str = "shoe"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "reason": self.reason}


@dataclass(frozen=True)
class MultipleCards(Input):
    type: ClassVar[str] = "multiple"
    count: int = 2
    device: str = "shoe"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "count": self.count}


@dataclass(frozen=True)
class DeviceAlarm(Input):
    type: ClassVar[str] = "alarm"
    device: str = ""
    code: str = ""
    text: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "code": self.code, "text": self.text}


@dataclass(frozen=True)
class DeviceWarning(DeviceAlarm):
    type: ClassVar[str] = "warning"


@dataclass(frozen=True)
class LinkLost(Input):
    type: ClassVar[str] = "link_lost"
    device: str = "shoe"
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "reason": self.reason}


@dataclass(frozen=True)
class LinkBack(Input):
    type: ClassVar[str] = "link_back"
    device: str = "shoe"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device}


@dataclass(frozen=True)
class Shuffled(Input):
    type: ClassVar[str] = "shuffled"
    count: int = 0
    composition: Mapping[str, int] = field(default_factory=dict)
    device: str = "shuffler"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "count": self.count,
                "composition": dict(self.composition)}


@dataclass(frozen=True)
class Identity(Input):
    type: ClassVar[str] = "identity"
    model: str = ""
    serial: str = ""
    firmware: str = ""
    device: str = "shuffler"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "device": self.device, "model": self.model,
                "serial": self.serial, "firmware": self.firmware}


@dataclass(frozen=True)
class Remainder(Input):
    """The undealt rest of an ended shoe, counted by the shuffler (composition when it reads
    the cards, else only the count)."""
    type: ClassVar[str] = "remainder"
    composition: Mapping[str, int] = field(default_factory=dict)
    count: int | None = None
    device: str = "shuffler"

    @property
    def total(self) -> int:
        return self.count if self.count is not None else sum(self.composition.values())

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type, "device": self.device,
                             "composition": dict(self.composition)}
        if self.count is not None:
            d["count"] = self.count
        return d


@dataclass(frozen=True)
class Restarted(Input):
    """The controller started again on this journal; `resends`: the shoe's protocol resends
    the reads that were not acknowledged (nothing can have been lost in flight)."""
    type: ClassVar[str] = "restarted"
    resends: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "resends": self.resends}


@dataclass(frozen=True)
class Command(Input):
    type: ClassVar[str] = "command"
    action: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    user: str = "system"
    role: str = "system"
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "action": self.action, "args": dict(self.args),
                "user": self.user, "role": self.role, "reason": self.reason}


#: journaled with a full sync (on disk before anything they caused is published); a warning
#: changes nothing at the table, so losing the last one to a power cut loses nothing
DURABLE: dict[str, bool] = {cls.type: True for cls in (
    CardRead, CutCard, ReadFailed, MultipleCards, DeviceAlarm, LinkLost, LinkBack, Shuffled,
    Identity, Remainder, Restarted, Command)}
DURABLE[DeviceWarning.type] = False

_TYPES: dict[str, type[Input]] = {cls.type: cls for cls in (
    CardRead, CutCard, ReadFailed, MultipleCards, DeviceAlarm, DeviceWarning, LinkLost,
    LinkBack, Shuffled, Identity, Remainder, Restarted, Command)}
_KEYS = {"type", "refused", "error"}     # journal annotations, not fields


def is_durable(inp: Input) -> bool:
    return DURABLE[inp.type]


def parse_input(d: Mapping[str, Any]) -> Input:
    """The typed input for a journaled or submitted dict; InputError names what is wrong."""
    if not isinstance(d, Mapping):
        raise InputError(f"an input must be an object, not {type(d).__name__}")
    kind = d.get("type")
    cls = _TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise InputError(f"unknown input type {kind!r} (known: {', '.join(_TYPES)})")
    fields = {k: v for k, v in d.items() if k not in _KEYS}
    try:
        return cls(**fields)
    except TypeError as err:
        raise InputError(f"{kind} input: {err}") from None


def command(action: str, *, user: str = "system", role: str = "system", reason: str = "",
            **args: Any) -> Command:
    return Command(action=action, args=args, user=user, role=role, reason=reason)
