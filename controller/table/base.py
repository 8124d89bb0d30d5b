"""The table's state, its events, and holds: what the other parts of the table build on.

Events go to `outbox` as plain dicts; `Table.apply` hands them to the caller, who journals
them before anyone sees them. A hold records its problems, the reads and device inputs that
came while it was open, and the state to return to; what clears it is judged in one place
(`remedy_refusal`, from `controller.table.remedies`).
"""
from __future__ import annotations

import logging
import sys
from functools import partial
from typing import Any, Callable, Mapping

from transitions import Machine, MachineError

from controller.errors import CommandRefused
from controller.games import GameRules
from controller.shoe.integrity import IntegrityWatch
from controller.settings.profile import Profile
from controller.table import remedies
from controller.table.model import Hold, Problem, QueuedRead, RoundState, ShoeState
from controller.table.remedies import HOLD_OVERRIDES
from controller.table.states import (BETTING, CLOSED, DEALING, HOLD, SHOE_ENDED,
                                     trigger_name)
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

    def keep_read(self, code: str | None, flags: Mapping[str, Any], reason: str) -> None:
        """On hold, a read is kept under the hold in read order (one record a read, never a
        hold a read) for the supervisor to accept, give back or set aside with the hold."""
        hold = self.hold
        assert hold is not None
        hold.queued.append(QueuedRead(code, dict(flags, held=True)))
        self.emit("card_queued", code=code, queued=len(hold.queued), reason=reason)
        if hold.link_back and "link_lost" in hold.kinds:
            self.link_review()          # the review lists what it asks about, as it grows

    def link_review(self, device: str = "shoe") -> None:
        """The reads kept while a lost link was down, for the supervisor to accept or discard."""
        hold = self.hold
        assert hold is not None
        codes = [q.code for q in hold.queued]
        self.emit("link_review", device=device, queued=len(codes), codes=codes,
                  actions=self.hold_remedies())

    def need_hold(self, action: str) -> Problem:
        """The problem `action` clears (the machine's guard checks that it may): the hold's
        latest problem of a kind `action` is a remedy for, else its latest."""
        self.trigger_to(action)
        assert self.hold is not None
        kinds = remedies.clears(action)
        return next((p for p in reversed(self.hold.problems) if p.kind in kinds), self.hold.last)

    def allows(self, action: str) -> bool:
        """The machine's guard for a hold override: the hold must be one it clears, now."""
        why = self.remedy_refusal(action)
        if why is not None:
            raise why
        return True

    def check_remedy(self, action: str) -> None:
        """On hold, an action that clears holds is taken only if it clears this one, now."""
        if self.state == HOLD and action in remedies.CLEARING:
            why = self.remedy_refusal(action)      # (a shoe on hold is ended, not changed)
            if why is not None:
                raise why

    def remedy_candidates(self) -> list[str]:
        """The remedies of the hold's problems, and giving back the reads it keeps."""
        hold = self.hold
        if hold is None:
            return []
        acts = remedies.union(p.kind for p in hold.problems)
        if hold.queued and not hold.kinds & remedies.REVIEWED and "return_reads" not in acts:
            acts.append("return_reads")
        return acts

    def remedy_refusal(self, action: str) -> CommandRefused | None:
        """Why `action` cannot clear the hold now (None: it can). The one judge of a hold's
        remedies: the hold event, the console's offers and the commands all ask it."""
        hold = self.hold
        if hold is None:
            return refuse("not_on_hold", state=self.state)
        if action not in self.remedy_candidates():
            return refuse("hold_needs_other", action=action, kind=hold.last.kind,
                          actions=self.hold_remedies())
        kinds, last = hold.kinds, hold.last.kind
        if action in ("resume", "accept_reads") and "link_lost" in kinds and not hold.link_back:
            return refuse("link_down")
        if action == "resume":
            if hold.queued and kinds & remedies.REVIEWED:
                return refuse("reads_waiting", n=len(hold.queued))
            if last == "count_mismatch":
                return refuse("count_mismatch")
            if last == "restart_review":
                return refuse("check_layout")
        if action in ("accept_reads", "discard_reads") and not hold.queued:
            return refuse("no_reads_kept")
        if action == "return_reads" and not hold.queued and not kinds & remedies.STRAY:
            return refuse("no_reads_kept")
        if action == "void_round" and not self.round_open():
            return refuse("no_round_to_void")
        if action == "end_shoe" and (self.shoe is None or self.where() in (CLOSED, SHOE_ENDED)):
            return refuse("no_shoe_to_end", state=self.state)
        return None

    def hold_remedies(self) -> list[str]:
        """The actions that clear the hold now (each one the table accepts)."""
        return [a for a in self.remedy_candidates() if self.remedy_refusal(a) is None]


class MachineModel:
    """The machine's own model: the state, and guards and error handling that ask the table.
    Kept apart from the table so the machine's trigger methods never shadow the table's."""

    def __init__(self, table: TableBase):
        self.state = ""
        self.on_machine_error = table.on_machine_error
        for action in HOLD_OVERRIDES:
            setattr(self, f"allows_{action}", partial(table.allows, action))
