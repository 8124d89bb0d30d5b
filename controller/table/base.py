"""The table's state, its events, and holds: what the other parts of the table build on.

Events go to `outbox` as plain dicts; `Table.apply` hands them to the caller, who journals
them before anyone sees them. A hold records its problems (the latest decides the remedies
offered) and the state to return to.
"""
from __future__ import annotations

import logging
import sys
from functools import partial
from typing import Any, Callable

from transitions import Machine, MachineError

from controller.errors import CommandRefused
from controller.games import GameRules
from controller.integrity import IntegrityWatch
from controller.profile import Profile
from controller.table.machine import HOLD_OVERRIDES
from controller.table.model import Hold, Problem, RoundState, ShoeState
from controller.table.states import BETTING, DEALING, HOLD, trigger_name
from controller.words import refuse

log = logging.getLogger("controller.table")
ROUND_EVENTS_WITHOUT_ROUND = frozenset({"shoe_started", "shoe_ended", "burn", "reconciliation"})


class TableBase:
    """State and plumbing shared by the table's parts. One thread drives a table."""

    profile: Profile
    rules: GameRules
    machine: Machine
    machine_model: "MachineModel"
    shoe: ShoeState | None
    round: RoundState | None
    hold: Hold | None
    shoe_no: int
    round_count: int
    reveal_due: int | None         # the round whose result waits for the dealer's reveal
    bank: dict | None
    integrity: IntegrityWatch
    auto_open: bool
    decisions_game: bool           # the game's deal waits for decisions (banking games)
    betting_seconds: float
    outbox: list[dict]
    _profile_text: str | None
    _fire: dict[str, Callable[..., Any]]

    @property
    def state(self) -> str:
        """The machine's state: a name from `controller.table.states`."""
        return self.machine_model.state

    # ------------------------------------------------------------------ events
    def emit(self, event: str, **fields: Any) -> None:
        if self.round is not None and event not in ROUND_EVENTS_WITHOUT_ROUND:
            self.outbox.append({"event": event, "shoe": self.shoe_no,
                                "round": self.round.number, **fields})
        else:
            self.outbox.append({"event": event, "shoe": self.shoe_no, **fields})

    def trigger_to(self, name: str, **kw: Any) -> None:
        """Fire one machine trigger; a move the machine does not allow raises MachineError,
        which `on_machine_error` turns into a refusal."""
        self._fire[name](**kw)

    def on_machine_error(self, *_: Any, **__: Any) -> None:
        """A move the machine does not allow is refused; anything else goes on up."""
        err = sys.exc_info()[1]
        if isinstance(err, MachineError):
            # the library's own words name triggers and states: the log keeps them
            log.info("move refused by the table machine in state %s: %s", self.state, err.value)
            raise refuse("not_now", state=self.state) from err
        if err is not None:
            raise err

    # ------------------------------------------------------------------ rounds
    def where(self) -> str:
        """The state that counts for rules: the one a hold will return to, if on hold."""
        if self.state == HOLD and self.hold is not None:
            return self.hold.resume_to
        return self.state

    def round_open(self) -> bool:
        """A round is in progress (bets open or cards being dealt), possibly on hold."""
        return self.round is not None and self.where().startswith((DEALING, BETTING))

    # ------------------------------------------------------------------ holds
    def note(self, kind: str, detail: str, **extra: Any) -> None:
        """An irregularity the read order corrects by itself: recorded, no hold."""
        info = {"kind": kind, "detail": detail, **extra}
        if self.round is not None and self.round_open():
            self.round.flags.append(info)
        self.emit("irregularity", kind=kind, detail=detail, **extra)

    def problem(self, kind: str, detail: str, **extra: Any) -> None:
        """Stop dealing: hold (or add to the hold) with a named problem."""
        if self.state != HOLD:
            resume_to = self.state
            self.trigger_to("hold")
            self.hold = Hold(resume_to)
        assert self.hold is not None
        info = Problem(kind, detail, dict(extra))
        if self.round is not None and self.round_open():
            self.round.flags.append(info.as_dict())
        self.hold.problems.append(info)
        self.emit("irregularity", kind=kind, detail=detail, **extra)
        self.emit("hold", reason=kind, detail=detail, resume_to=self.hold.resume_to,
                  actions=self.hold_remedies(), **extra)

    def leave_hold(self, dest: str | None = None) -> None:
        """Back to the state the hold was entered from (or `dest`)."""
        if self.hold is None:
            raise refuse("not_on_hold", state=self.state)
        target = dest or self.hold.resume_to
        self.trigger_to(f"resume_{trigger_name(target)}")
        self.hold = None
        self.emit("resume", state=self.state)

    def need_hold(self, action: str) -> Problem:
        """The hold's latest problem, if `action` may clear it (the machine's guard)."""
        self.trigger_to(action)
        assert self.hold is not None
        return self.hold.last

    def allows(self, action: str) -> bool:
        """The machine's guard for a hold override: the hold's kind must be one it clears."""
        if self.hold is None:
            raise refuse("not_on_hold", state=self.state)
        kind = self.hold.last.kind
        if kind not in HOLD_OVERRIDES[action]:
            raise refuse("hold_needs_other", action=action, kind=kind,
                         actions=self.hold_remedies())
        return True

    def hold_remedies(self) -> list[str]:
        """The actions that may clear the hold now: its kinds' remedies, less voiding a round
        when none is open, and less ending the shoe while a round with cards is in progress
        when voiding it is offered."""
        hold = self.hold
        if hold is None:
            return []
        in_round = self.round_open()
        dealt = in_round and self.round is not None and bool(self.round.cards
                                                             or self.round.burned_before)
        offered = [a for a in remedies(hold) if not (a == "void_round" and not in_round)]
        # with a round dealt, the shoe ends only once the round is void
        return [a for a in offered if not (a == "end_shoe" and dealt and "void_round" in offered)]


#: for each kind of hold, the actions that clear it (the console offers these)
REMEDIES: dict[str, tuple[str, ...]] = {
    "unreadable_card": ("enter_card", "void_round"),
    "card_not_due": ("burn_card", "void_round"),
    "card_while_betting": ("burn_card", "void_round"),
    "foreign_card": ("remove_card", "void_round", "end_shoe"),
    "impossible_card": ("resume", "void_round"),
    "card_without_shoe": ("resume",),
    "face_up_card": ("burn_card", "void_round", "resume"),
    "count_mismatch": ("accept_count", "reject_count"),
    "device_alarm": ("resume", "void_round"),
    "link_lost": ("accept_reads", "discard_reads", "resume", "void_round"),
    "restart_review": ("confirm_layout", "enter_card", "void_round"),
    "hold": ("resume", "void_round", "end_shoe"),
    "integrity_alarm": ("end_shoe", "resume"),
    "missed_shoe_burn": ("end_shoe",),
    "false_coup": ("void_round", "resume"),
    "internal_error": ("void_round", "end_shoe"),
}


def remedies(hold: Hold) -> tuple[str, ...]:
    actions: list[str] = []
    for prob in hold.problems:
        for a in REMEDIES.get(prob.kind, ("resume", "void_round")):
            if a not in actions:
                actions.append(a)
    return tuple(actions)


class MachineModel:
    """The machine's own model: the state, and guards and error handling that ask the table.
    Kept apart from the table so the machine's trigger methods never shadow the table's."""

    def __init__(self, table: TableBase):
        self.state = ""
        self.on_machine_error = table.on_machine_error
        for action in HOLD_OVERRIDES:
            setattr(self, f"allows_{action}", partial(table.allows, action))
