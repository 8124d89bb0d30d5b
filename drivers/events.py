"""Typed device events: what the drivers hand to the controller's event queue.

Cards travel as canonical codes (`"TD"`); the controller turns them into its own Card type.
`t` is time.monotonic() when the event was decoded; `raw` the bytes it came from.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DeviceEvent:
    device: str = "shoe"
    t: float = field(default_factory=time.monotonic, compare=False)
    raw: bytes = field(default=b"", compare=False)


@dataclass(frozen=True)
class CardRead(DeviceEvent):
    code: str = ""               # canonical card code, e.g. "TD"
    seq: int | None = None       # the shoe's own sequence number, when the protocol has one
    manual_burn: bool = False    # the shoe marked the read as a burn (Bee-Tek `[Manual Burn Cards]`)
    face_up: bool = False        # the shoe saw the card leave face up
    multiple: int = 0            # >0: part of a multiple-card pull of that many cards


@dataclass(frozen=True)
class ReadFailed(DeviceEvent):
    reason: str = "card not read"
    seq: int | None = None


@dataclass(frozen=True)
class CutCardSeen(DeviceEvent):
    seq: int | None = None


@dataclass(frozen=True)
class MultipleCards(DeviceEvent):
    count: int = 2


@dataclass(frozen=True)
class DeviceAlarm(DeviceEvent):
    code: str = ""
    text: str = ""


@dataclass(frozen=True)
class DeviceWarning(DeviceEvent):
    code: str = ""
    text: str = ""


@dataclass(frozen=True)
class LinkLost(DeviceEvent):
    reason: str = ""


@dataclass(frozen=True)
class LinkBack(DeviceEvent):
    """The link is back after a LinkLost (reported once)."""


@dataclass(frozen=True)
class ShufflerIdentity(DeviceEvent):
    model: str = ""
    serial: str = ""
    firmware: str = ""


@dataclass(frozen=True)
class ShufflerStatus(DeviceEvent):
    state: str = "idle"          # idle | shuffling | ready | jam | door_open | error
    error_code: int = 0


@dataclass(frozen=True)
class ShuffleDone(DeviceEvent):
    count: int = 0                               # cards the shuffler counted
    composition: tuple[tuple[str, int], ...] = ()  # (code, copies) when the device reads cards
