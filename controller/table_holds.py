"""Holds and irregularities on the table: what stops dealing, and how it resumes.

A card that is not due, an unreadable card, a foreign card, a device alarm or a supervisor's
hold moves the table to `hold` with a named irregularity; `resume` returns to the state it
left. On a hold for a lost link, reads that arrive are kept and dealt on resume.
"""
from __future__ import annotations

import sys
from typing import Any

from transitions import MachineError

from controller.cards import Card
from controller.errors import CommandRefused
from controller.table_machine import TableState


class HoldsMixin:
    """Hold handling for `controller.table.Table` (uses its machine, round, shoe and emit)."""

    def _note(self, kind: str, detail: str, **extra: Any) -> None:
        """An irregularity that the read order corrects by itself: recorded, no hold."""
        info = {"kind": kind, "detail": detail, **extra}
        rnd = self.round
        if rnd is not None and self.round_open():
            rnd.flags.append(info)
        self.emit("irregularity", kind=kind, detail=detail, **extra)

    def on_machine_error(self, *a: Any, **k: Any) -> None:
        """A trigger that does not apply is refused; anything unknown holds the table, then raises."""
        err = sys.exc_info()[1]
        if isinstance(err, MachineError):
            raise CommandRefused(f"not possible while the table is {self.state}: {err.value}") from err
        if isinstance(err, CommandRefused):
            raise err
        if self.state != TableState.HOLD:
            self.resume_state = self.state
        self.machine.set_state(TableState.HOLD.value, self)
        self.hold_info = {"resume_to": self.resume_state,
                          "problems": [{"kind": "internal_error", "detail": repr(err)}]}
        self.emit("irregularity", kind="internal_error", detail=repr(err))
        raise err

    def save_resume(self, *a: Any, **k: Any) -> None:
        self.resume_state = self.state

    def card_not_due(self, card: Card, **kw: Any) -> None:
        self.shoe.inventory.record(card, "removed")
        was = self.resume_state
        if was == TableState.BETTING:
            self._hold("card_while_betting", f"{card.code} drawn while bets were open",
                       code=card.code)
        else:
            self._hold("card_not_due", f"{card.code} drawn while the table was {was}; "
                       f"no card was due", code=card.code)

    def card_while_held(self, card: Card, **kw: Any) -> None:
        """On a link hold, reads are kept in order and dealt on resume (a link outage delays
        reads, it does not make them wrong); on any other hold a card is not due."""
        problems = self.hold_info["problems"] if self.hold_info else []
        if problems and all(p["kind"] == "link_lost" for p in problems):
            self.hold_info.setdefault("queued", []).append(
                {"code": card.code, "flags": dict(kw.get("flags") or {})})
            self.emit("card_queued", code=card.code, reason="table on hold for a lost link")
            return
        self.card_not_due(card, **kw)

    def record_irregularity(self, kind: str, detail: str, **extra: Any) -> None:
        self._hold(kind, detail, **extra)

    def held(self, reason: str = "supervisor", **extra: Any) -> None:
        self._hold("hold", reason, **extra)

    def _hold(self, kind: str, detail: str, **extra: Any) -> None:
        info = {"kind": kind, "detail": detail, **extra}
        if self.round is not None and self.resume_state and \
                self.resume_state.startswith(("dealing", "betting")):
            self.round.flags.append(info)
        if self.hold_info is None:
            self.hold_info = {"resume_to": self.resume_state, "problems": [info]}
        else:
            self.hold_info["problems"].append(info)
        self.emit("irregularity", kind=kind, detail=detail, **extra)
        self.emit("hold", reason=kind, resume_to=self.resume_state)

    def count_mismatch(self, count: int, **_: Any) -> None:
        self._hold("count_mismatch", f"the shuffler counted {count} cards; the shoe must hold "
                   f"{self.profile.cards}")

    def resume_table(self) -> None:
        if self.state != TableState.HOLD:
            raise CommandRefused(f"the table is not on hold (it is {self.state})")
        self.resume()

    def resumed(self, *a: Any, **k: Any) -> None:
        queued = (self.hold_info or {}).get("queued", [])
        self.hold_info = None
        self.emit("resume", state=self.state)
        for item in queued:
            self.on_card(item["code"], **item["flags"])
