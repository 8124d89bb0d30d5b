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
    if isinstance(event, ev.ShufflerStatus) and event.state in ("jam", "door_open", "error"):
        return {"type": "alarm", "device": event.device, "code": event.state,
                "text": f"shuffler {event.state.replace('_', ' ')} (code {event.error_code})"}
    return None


def command(action: str, *, user: str = "system", role: str = "system", reason: str = "",
            **args: Any) -> dict:
    return {"type": "command", "action": action, "args": args, "user": user, "role": role,
            "reason": reason}
