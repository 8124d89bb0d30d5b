"""Inputs to the table: everything that can change it, typed, and journaled before it counts.

What a device says is the drivers' own event (`drivers.events`: one type for a card read from
the driver to the journal); what only the controller says — a shuffler's count of an ended
shoe's rest, a restart, a person's or the service's command — is typed here. The journal stores
each input as a plain dict (`to_dict`), so replaying the journal's inputs through a fresh table
rebuilds exactly the same state. `DURABLE` is the one table of which inputs are written with a
full sync before anything they caused is published:

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
from typing import Any, Callable, ClassVar, Mapping, Union

from controller.errors import InputError
from drivers.events import (CardRead, CutCardSeen, DeviceAlarm, DeviceEvent, DeviceWarning,
                            LinkBack, LinkLost, MultipleCards, ReadFailed, ShoeSession,
                            ShuffleDone, ShufflerIdentity)


@dataclass(frozen=True)
class Remainder:
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
class Restarted:
    """The controller started again on this journal; `resends`: the shoe's protocol resends
    the reads that were not acknowledged (nothing can have been lost in flight)."""
    type: ClassVar[str] = "restarted"
    resends: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "resends": self.resends}


@dataclass(frozen=True)
class Command:
    type: ClassVar[str] = "command"
    action: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    user: str = "system"
    role: str = "system"
    reason: str = ""
    #: where the person saw the table when they chose the command ({"shoe": N, "round": M},
    #: either None when there was none): refused if the table has moved on since
    expect: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"type": self.type, "action": self.action, "args": dict(self.args),
             "user": self.user, "role": self.role, "reason": self.reason}
        if self.expect is not None:
            d["expect"] = dict(self.expect)
        return d


Input = Union[DeviceEvent, Remainder, Restarted, Command]
INPUT_TYPES: tuple[type, ...] = (DeviceEvent, Remainder, Restarted, Command)

#: journaled with a full sync (on disk before anything they caused is published); a warning
#: changes nothing at the table, so losing the last one to a power cut loses nothing
DURABLE: dict[str, bool] = {cls.type: True for cls in (
    CardRead, CutCardSeen, ReadFailed, MultipleCards, DeviceAlarm, LinkLost, LinkBack,
    ShuffleDone, ShufflerIdentity, ShoeSession, Remainder, Restarted, Command)}
DURABLE[DeviceWarning.type] = False
#: the inputs that are the shoe's reads, each numbered by a shoe that resends what is not
#: acknowledged (framed): each is acknowledged once journaled, and a restart resumes after
#: the last one journaled, so that none is applied twice (a failed read or the cut card no
#: less than a card)
SHOE_READS = frozenset({CardRead.type, ReadFailed.type, CutCardSeen.type})


def _card(d: Mapping[str, Any]) -> CardRead:
    flags = d.get("flags") or {}
    if not isinstance(flags, Mapping):
        raise TypeError(f"flags must be an object, not {type(flags).__name__}")
    unknown = set(flags) - {"manual_burn", "face_up", "multiple", "with_previous"}
    if unknown:
        raise TypeError(f"unknown flags {', '.join(sorted(unknown))}")
    return CardRead(code=d["code"], device=d.get("device", "shoe"), seq=d.get("seq"),
                    manual_burn=bool(flags.get("manual_burn")),
                    face_up=bool(flags.get("face_up")),
                    multiple=int(flags.get("multiple") or 0),
                    with_previous=bool(flags.get("with_previous")))


def _shuffled(d: Mapping[str, Any]) -> ShuffleDone:
    comp = d.get("composition") or {}
    return ShuffleDone(device=d.get("device", "shuffler"), count=d.get("count", 0),
                       composition=tuple(dict(comp).items()))


def _plain(cls: type, keys: tuple[str, ...]) -> Callable[[Mapping[str, Any]], Any]:
    def make(d: Mapping[str, Any]) -> Any:
        extra = set(d) - set(keys) - _KEYS
        if extra:
            raise TypeError(f"unexpected field(s) {', '.join(sorted(extra))}")
        return cls(**{k: d[k] for k in keys if k in d})
    return make


_PARSERS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "card": _card, "shuffled": _shuffled,
    "cut_card": _plain(CutCardSeen, ("device", "seq")),
    "read_failed": _plain(ReadFailed, ("device", "reason", "seq")),
    "multiple": _plain(MultipleCards, ("device", "count")),
    "alarm": _plain(DeviceAlarm, ("device", "code", "text")),
    "warning": _plain(DeviceWarning, ("device", "code", "text")),
    "link_lost": _plain(LinkLost, ("device", "reason")),
    "link_back": _plain(LinkBack, ("device",)),
    "shoe_session": _plain(ShoeSession, ("device", "session")),
    "identity": _plain(ShufflerIdentity, ("device", "model", "serial", "firmware")),
    "remainder": _plain(Remainder, ("device", "composition", "count")),
    "restarted": _plain(Restarted, ("resends",)),
    "command": _plain(Command, ("action", "args", "user", "role", "reason", "expect")),
}
_KEYS = {"type", "refused", "error"}     # journal annotations, not fields


def is_durable(inp: Input) -> bool:
    return DURABLE[inp.type]


def parse_input(d: Mapping[str, Any]) -> Input:
    """The typed input for a journaled or submitted dict; InputError names what is wrong."""
    if not isinstance(d, Mapping):
        raise InputError(f"an input must be an object, not {type(d).__name__}")
    kind = d.get("type")
    parse = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parse is None:
        raise InputError(f"unknown input type {kind!r} (known: {', '.join(_PARSERS)})")
    try:
        return parse(d)
    except (TypeError, KeyError, ValueError) as err:
        raise InputError(f"{kind} input: {err}") from None


def command(action: str, *, user: str = "system", role: str = "system", reason: str = "",
            **args: Any) -> Command:
    return Command(action=action, args=args, user=user, role=role, reason=reason)


__all__ = ["Input", "INPUT_TYPES", "CardRead", "CutCardSeen", "ReadFailed", "MultipleCards",
           "DeviceAlarm", "DeviceWarning", "LinkLost", "LinkBack", "ShuffleDone", "ShufflerIdentity",
           "ShoeSession", "Remainder", "Restarted", "Command", "DURABLE", "is_durable", "parse_input",
           "command"]
