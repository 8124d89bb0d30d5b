"""What the console and the control API show of a table: its state, prompt, round and holds.

Never the identity of an undealt card (standards §9 item 68): only cards already read appear.
"""
from __future__ import annotations

from collections import deque
from typing import Any

from controller.table import Table, TableState

#: for each kind of hold, the actions that clear it (the console highlights these)
REMEDIES: dict[str, tuple[str, ...]] = {
    "unreadable_card": ("enter_card", "void_round"),
    "card_not_due": ("burn_card", "void_round"),
    "card_while_betting": ("burn_card", "void_round"),
    "foreign_card": ("remove_card", "void_round", "end_shoe"),
    "impossible_card": ("resume", "void_round"),
    "face_up_card": ("burn_card", "void_round", "resume"),
    "count_mismatch": ("accept_count", "reject_count"),
    "device_alarm": ("resume", "void_round"),
    "link_lost": ("resume", "void_round"),
    "hold": ("resume", "void_round", "end_shoe"),
    "integrity_alarm": ("end_shoe", "resume"),
    "missed_shoe_burn": ("end_shoe",),
    "false_coup": ("void_round", "resume"),
    "internal_error": ("void_round", "end_shoe"),
}


class StateView:
    """Keeps the last rounds and alarms from the event stream; answers `state` requests."""

    def __init__(self, name: str = "T1", keep: int = 10):
        self.name = name
        self.rounds: deque[dict] = deque(maxlen=keep)
        self.alarms: deque[dict] = deque(maxlen=20)
        self.overrides: deque[dict] = deque(maxlen=200)

    def publish(self, event: dict) -> None:
        kind = event["event"]
        if kind == "round_result":
            self.rounds.append(event)
        elif kind == "alarm" and event.get("severity") != "info":
            self.alarms.append({k: event.get(k) for k in ("source", "code", "text", "severity")})
        elif kind == "override":
            self.overrides.append(event)

    def state(self, table: Table) -> dict[str, Any]:
        p = table.profile
        shoe = table.shoe
        rnd = table.round
        hold = None
        if table.state == TableState.HOLD and table.hold_info:
            problems = table.hold_info["problems"]
            actions: list[str] = []
            for prob in problems:
                for a in REMEDIES.get(prob["kind"], ("resume", "void_round")):
                    if a not in actions:
                        actions.append(a)
            hold = {"resume_to": table.hold_info.get("resume_to"), "problems": problems,
                    "actions": actions}
        in_round = rnd is not None and table.round_open()
        return {
            "table": self.name, "state": table.state, "prompt": table.prompt(),
            "profile": {"name": p.name, "game": p.game, "mode": p.mode, "decks": p.decks},
            "shoe": None if shoe is None else {
                "number": shoe.number, "cards_out": shoe.inventory.cards_out,
                "cut_seen": shoe.cut_seen, "rounds": shoe.rounds},
            "round": None if not in_round else {
                "number": rnd.number, "demo": rnd.demo,
                "hands": {k: [c.code for c in v] for k, v in rnd.hands.items()},
                "decisions": dict(rnd.decisions),
                "burned_before": list(rnd.burned_before),
                "next": (f"decide:{rnd.pending}" if table.state == "dealing.decide"
                         else table.state.split(".", 1)[1] if table.state.startswith("dealing.")
                         else None)},
            "hold": hold,
            "alarms": list(self.alarms),
            "last_rounds": list(self.rounds),
        }
