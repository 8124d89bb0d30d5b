"""Holds: one per incident. A hold records its problems, the reads and device inputs that came
while it was open, and (in the machine's own state) where it came from. What clears it is the
command table's (`controller.table.legal`); this part does what holding and leaving mean."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from controller.shoe.cards import CardCodeError, parse_card
from controller.table import offers
from controller.table.desk import Desk
from controller.table.legal import BY_NAME
from controller.table.model import Hold, Problem, QueuedRead
from controller.table.states import HOLD, held, origin_of


class Holds:
    def __init__(self, d: Desk):
        self.d = d
        #: applies a device input a hold kept, once the hold is left (the table's way in)
        self.replay: Callable[[dict], None] = lambda data: None

    def remedies(self) -> list[str]:
        return offers.remedies(self.d)

    # ------------------------------------------------------------------ raising
    def note(self, kind: str, detail: str, **extra: Any) -> None:
        """An irregularity the read order corrects by itself: recorded, no hold."""
        d = self.d
        info = {"kind": kind, "detail": detail, **extra}
        if d.round is not None and d.round_open():
            d.round.flags.append(info)
        d.emit("irregularity", kind=kind, detail=detail, **extra)

    def problem(self, kind: str, detail: str, **extra: Any) -> None:
        """Stop dealing: hold (or add to the hold) with a named problem."""
        d = self.d
        if d.state != HOLD:
            origin = d.state
            d.move("held")
            d.hold = Hold(origin)
        elif d.hold is None:            # the supervisor's hold: the command made the move
            d.hold = Hold(origin_of(d.mstate) or d.state)
        hold = d.hold
        info = Problem(kind, detail, dict(extra))
        if d.round is not None and d.round_open():
            d.round.flags.append(info.as_dict())
        hold.problems.append(info)
        d.emit("irregularity", kind=kind, detail=detail, **extra)
        d.emit("hold", reason=kind, detail=detail, resume_to=hold.resume_to,
               actions=self.remedies(), **extra)

    def defect(self, err: Exception) -> None:
        """A defect met while applying a device's input: the table holds where it stands (the
        machine may be half-way through a move), until a person looks."""
        d = self.d
        if d.state != HOLD:
            origin = d.state
            d.stand(held(origin))
            d.hold = Hold(origin)
        assert d.hold is not None
        d.hold.problems.append(Problem("internal_error", repr(err)))
        d.emit("irregularity", kind="internal_error", detail=repr(err))
        d.emit("hold", reason="internal_error", detail=repr(err),
               resume_to=d.hold.resume_to, actions=self.remedies())

    # ------------------------------------------------------------------ what a hold keeps
    def keep_read(self, code: str | None, flags: Mapping[str, Any], reason: str) -> None:
        """On hold, a read is kept under the hold in read order (one record a read, never a
        hold a read) for the supervisor to accept, give back or set aside with the hold."""
        hold = self.d.hold
        assert hold is not None
        hold.queued.append(QueuedRead(code, dict(flags, held=True)))
        self.d.emit("card_queued", code=code, queued=len(hold.queued), reason=reason)
        if hold.link_back and "link_lost" in hold.kinds:
            self.link_review()          # the review lists what it asks about, as it grows

    def keep_input(self, data: dict, needs: str) -> bool:
        """A device input that needs the state a hold came from waits under the hold."""
        hold = self.d.hold
        if self.d.state != HOLD or hold is None or hold.resume_to != needs:
            return False
        hold.kept.append(data)
        return True

    def link_review(self, device: str = "shoe") -> None:
        """The reads kept while a lost link was down, for the supervisor to accept or discard."""
        hold = self.d.hold
        assert hold is not None
        codes = [q.code for q in hold.queued]
        self.d.emit("link_review", device=device, queued=len(codes), codes=codes,
                    actions=self.remedies())

    def target(self, action: str) -> Problem:
        """The problem `action` clears: the hold's latest of a kind it applies on, else its
        latest."""
        hold = self.d.hold
        assert hold is not None
        c = BY_NAME[action]
        return next((p for p in reversed(hold.problems) if c.applies_on(p.kind)), hold.last)

    # ------------------------------------------------------------------ leaving
    def left(self, hold: Hold, *, back: bool) -> None:
        """After a command's move off `hold`: the hold is over; the reads it kept are taken as
        the procedure says, then (back where it came from) the device inputs it kept, in their
        order; a new hold keeps what is left."""
        d = self.d
        d.hold = None
        d.emit("resume", state=d.state)
        if hold.queued:
            d.reads.deal_queued(list(hold.queued))
        if not back or not hold.kept:
            return
        kept = list(hold.kept)
        for i, data in enumerate(kept):
            if d.state == HOLD and d.hold is not None:
                d.hold.kept = kept[i:] + d.hold.kept
                return
            self.replay(data)

    def set_aside(self) -> None:
        """Reads kept during a hold that will never be dealt (the round is void or the shoe
        ends): out of play, in the record and the inventory."""
        hold, shoe = self.d.hold, self.d.shoe
        if hold is None or not hold.queued or shoe is None:
            return
        for q in hold.queued:
            if q.code is None:
                shoe.inventory.unidentified += 1
                continue
            try:
                shoe.inventory.record(parse_card(q.code), "removed")
            except CardCodeError:
                continue                    # a read that names no card: nothing to record
        self.d.emit("reads_discarded", codes=[q.code for q in hold.queued])
        hold.queued = []


def shuffler_stopped(hold: Hold) -> bool:
    """A hold the shuffler itself raised (a jam, the door): it stopped, so it is asked again."""
    return any(p.kind == "device_alarm" and p.extra.get("device") == "shuffler"
               for p in hold.problems)


def shuffler_answered(hold: Hold) -> bool:
    """A hold the shuffler's answer to the table's request raised (it stopped, or the shoe it
    counted is held): the shuffler owes nothing more until the hold's remedy asks again."""
    return shuffler_stopped(hold) or any(p.kind == "count_mismatch" for p in hold.problems)
