"""Result at reveal: what a public output may show of a round, from the table's events alone.

The shoe reads cards face down, so the controller knows a result before anyone at the table has
seen it. With the profile's `[display] reveal = "on_reveal"` (carried by `shoe_started` as
`reveal`) a round's result is journaled with `reveal: "pending"` and shown only with the dealer's
`reveal` event for that round. Every public output (the web display, the floor feed, reports of
what the scoreboard showed) applies the same rule through this module (pure, no I/O):

- `RevealGate` gives the round results to show now;
- `RevealMask` hides the card codes of a round not yet revealed in any other event (a card, a
  queued read, a hold's layout) while the round is open.

The supervisor's console, the `--json` output and the journal see everything at once.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

#: a card code as the table writes it (rank A23456789TJQK, suit SHDC)
_CODE = re.compile(r"\b[A2-9TJQK][SHDC]\b")
#: fields that name people or steps, never cards: left as they are
_NOT_CARDS = frozenset({"event", "slot", "user", "role", "source", "kind", "reason", "action",
                        "name", "state", "resume_to"})
#: what a pending result says of itself on a public output before its reveal
PENDING_FIELDS = ("event", "shoe", "round", "game", "demo", "reveal")


class RevealGate:
    """The reveal rule for results: `publish(event)` gives the round results to show now — a
    result at once, or a `reveal: "pending"` one with the dealer's `reveal` event for its
    round; a shoe's end drops what was never revealed."""

    def __init__(self) -> None:
        self.pending: dict[tuple[Any, Any], Mapping[str, Any]] = {}

    def publish(self, e: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        kind = e.get("event")
        if kind == "round_result":
            if e.get("reveal") == "pending":
                self.pending[(e.get("shoe"), e.get("round"))] = e
                return []
            return [e]
        if kind == "reveal":
            result = self.pending.pop((e.get("shoe"), e.get("round")), None)
            return [] if result is None else [result]
        if kind in ("shoe_started", "shoe_ended"):
            self.pending.clear()
        return []


class RevealMask:
    """Which rounds are still face down, and their cards hidden in other events.

    `note(event)` follows the table's events in order: under `on_reveal` a round is hidden from
    its `round_started` until its `reveal` (or a result that is not pending: a void round is
    shown at once, or the shoe's end). `mask(event)` gives the event as a public output may
    show it: unchanged when nothing is hidden; else every card code in it replaced (a field
    that is one card becomes null, a code inside a text becomes `??`), and a pending result cut
    to `PENDING_FIELDS`."""

    def __init__(self, mode: str = "on_read") -> None:
        self.mode = mode
        self.hidden = False

    def note(self, e: Mapping[str, Any]) -> None:
        kind = e.get("event")
        if kind == "shoe_started":
            self.mode, self.hidden = str(e.get("reveal", "on_read")), False
        elif kind == "round_started":
            self.hidden = self.mode == "on_reveal"
        elif kind in ("reveal", "shoe_ended"):
            self.hidden = False
        elif kind == "round_result" and e.get("reveal") != "pending":
            self.hidden = False

    def mask(self, e: Mapping[str, Any]) -> dict[str, Any]:
        if e.get("event") == "round_result" and e.get("reveal") == "pending":
            return {k: e[k] for k in PENDING_FIELDS if k in e}
        if not self.hidden:
            return dict(e)
        return {k: v if k in _NOT_CARDS else _hide(v) for k, v in e.items()}


def _hide(value: Any) -> Any:
    if isinstance(value, str):
        if _CODE.fullmatch(value):
            return None
        return _CODE.sub("??", value)
    if isinstance(value, Mapping):
        return {k: v if k in _NOT_CARDS else _hide(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_hide(v) for v in value]
    return value
