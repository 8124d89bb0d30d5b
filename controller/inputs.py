"""Inputs to the table: device events and commands as plain dicts, journaled before they act.

Everything that can change the table arrives as one of these, so the journal's inputs replayed
through a fresh table rebuild exactly the same state (crash recovery).

    {"type": "card", "code": "TD", "seq": 17, "flags": {"face_up": true}}
    {"type": "cut_card"} {"type": "read_failed", "reason": "…"} {"type": "multiple", "count": 2}
    {"type": "alarm" | "warning", "device": "shoe", "code": "E3", "text": "…"}
    {"type": "link_lost" | "link_back", "device": "shoe", "reason": "…"}
    {"type": "shuffled", "count": 416, "composition": {...}}
    {"type": "command", "action": "void_round", "args": {…}, "user": "…", "role": "…", "reason": "…"}
"""
from __future__ import annotations

from typing import Any

from drivers import events as ev

#: inputs whose loss would lose a card or a decision: journaled with a full sync
DURABLE = frozenset({"card", "read_failed", "command", "shuffled", "cut_card", "multiple"})


def from_device(event: ev.DeviceEvent) -> dict | None:
    """The input for a typed device event (None for events that change nothing)."""
    if isinstance(event, ev.CardRead):
        flags = {k: True for k in ("manual_burn", "face_up") if getattr(event, k)}
        if event.multiple:
            flags["multiple"] = event.multiple
        d: dict[str, Any] = {"type": "card", "code": event.code, "device": event.device}
        if event.seq is not None:
            d["seq"] = event.seq
        if flags:
            d["flags"] = flags
        return d
    if isinstance(event, ev.CutCardSeen):
        return {"type": "cut_card", "device": event.device}
    if isinstance(event, ev.ReadFailed):
        return {"type": "read_failed", "device": event.device, "reason": event.reason}
    if isinstance(event, ev.MultipleCards):
        return {"type": "multiple", "device": event.device, "count": event.count}
    if isinstance(event, ev.DeviceAlarm):
        return {"type": "alarm", "device": event.device, "code": event.code, "text": event.text}
    if isinstance(event, ev.DeviceWarning):
        return {"type": "warning", "device": event.device, "code": event.code, "text": event.text}
    if isinstance(event, ev.LinkLost):
        return {"type": "link_lost", "device": event.device, "reason": event.reason}
    if isinstance(event, ev.LinkBack):
        return {"type": "link_back", "device": event.device}
    if isinstance(event, ev.ShuffleDone):
        return {"type": "shuffled", "device": event.device, "count": event.count,
                "composition": dict(event.composition)}
    if isinstance(event, ev.ShufflerIdentity):
        return {"type": "identity", "device": event.device, "model": event.model,
                "serial": event.serial, "firmware": event.firmware}
    if isinstance(event, ev.ShufflerStatus) and event.state in ("jam", "door_open", "error"):
        return {"type": "alarm", "device": event.device, "code": event.state,
                "text": f"shuffler {event.state.replace('_', ' ')} (code {event.error_code})"}
    return None


class DrawTimer:
    """Marks a card read that came too soon after the previous one for a hand to pull.

    Reads that arrive in one burst, or closer than `min_pull_interval_s`, were drawn together
    (a double or triple draw): they keep their read order (top card first) and are flagged.
    The flag is decided here, once, and journaled with the input, so a replay agrees.
    """

    def __init__(self, min_pull_interval_s: float = 0.15):
        self.min_pull_interval_s = min_pull_interval_s
        self.last_t: float | None = None

    @classmethod
    def for_protocol(cls, protocol: str, min_pull_interval_s: float = 0.15) -> "DrawTimer":
        """A protocol that flags multiple draws itself (framed) needs no timing guess."""
        return cls(0.0 if protocol == "framed" else min_pull_interval_s)

    def annotate(self, inp: dict | None, event: ev.DeviceEvent) -> dict | None:
        if inp is None or inp["type"] not in ("card", "read_failed"):
            return inp
        t = event.t
        close = self.last_t is not None and t - self.last_t < self.min_pull_interval_s
        self.last_t = t
        if close and inp["type"] == "card":
            inp.setdefault("flags", {})["with_previous"] = True
        return inp


def command(action: str, *, user: str = "system", role: str = "system", reason: str = "",
            **args: Any) -> dict:
    return {"type": "command", "action": action, "args": args, "user": user, "role": role,
            "reason": reason}
