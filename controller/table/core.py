"""The table: one model that owns its state, moved only by inputs through its machine.

    closed → shuffling → loaded → burning → idle ⇄ betting → dealing.<step>… → idle … → shoe_ended
                          any state → hold.<state> → (resume) → that state

`Table.apply(input)` is the only way in: it returns the events the input caused (for the caller
to journal, then publish) or raises CommandRefused, in which case nothing changed. A defect
while applying a device's input holds the table (`internal_error`) instead of leaving it
half-moved; a defect while applying a person's command refuses it and leaves the table as it
was. The table is composed of its parts (`controller.table.desk`: what they share; holds,
shoes, rounds, reads, banking), which only it holds.
"""
from __future__ import annotations

import hashlib
import logging
import math
import tomllib
from types import MappingProxyType
from typing import Any, Callable, Mapping, cast

from controller.errors import CommandRefused, Corrected, InputError, ProfileError
from controller.games import as_banking
from controller.settings.profile import Profile, parse_profile
from controller.shoe.integrity import IntegrityWatch
from controller.table import offers, views
from controller.table.banking import Banking
from controller.table.desk import Desk
from controller.table.handlers import HANDLERS
from controller.table.holds import Holds
from controller.table.inputs import (INPUT_TYPES, CardRead, Command, CutCardSeen,
                                     DeviceAlarm, DeviceWarning, Input, LinkBack, LinkLost,
                                     MultipleCards, ReadFailed, Remainder, Restarted,
                                     ShoeSession, ShuffleDone, ShufflerIdentity,
                                     parse_input)
from controller.table.legal import BY_NAME
from controller.table.machine import MoveRefused
from controller.table.model import Hold, RoundState, ShoeState
from controller.table.reads import Reads
from controller.table.rounds import Rounds
from controller.table.shoes import Shoes
from controller.table.states import (CLOSED, HOLD, LOADED, BURNING, SHOE_ENDED, SHUFFLING,
                                     held)
from controller.words import Words, english, refuse

log = logging.getLogger("controller.table")
_NO_FLAGS: Mapping[str, Any] = MappingProxyType({})


class Outcome:
    """What one input did: its events, or why it was refused, or the defect it met.

    A small slotted object (one is made for every card read, and its three fields are read
    for every input): a named tuple's fields are descriptors that every read looks up."""
    __slots__ = ("events", "refused", "error")

    def __init__(self, events: list[dict], refused: CommandRefused | None = None,
                 error: Exception | None = None):
        self.events, self.refused, self.error = events, refused, error

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Outcome) and (self.events, self.refused, self.error) == \
            (other.events, other.refused, other.error)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Outcome(events={self.events!r}, refused={self.refused!r}, error={self.error!r})"


#: a bare Outcome, its fields then set: no Python frame of an __init__
_blank = object.__new__


#: the commands whose handler records who gave them
_WITH_USER = frozenset({"decide", "call_supervisor", "house_burn", "confirm_house_burn",
                        "withdraw_house_burn"})



def _holds_alarm(hold: Any, inp: DeviceAlarm) -> bool:
    """The hold already holds this device's alarm of this code (said again: nothing new)."""
    return hold is not None and any(
        p.kind == "device_alarm" and p.extra.get("device") == inp.device
        and p.extra.get("code") == inp.code for p in hold.problems)


def _moved_on(d: Any, expect: Any) -> CommandRefused | None:
    """A person's command may name the shoe and the round they saw when they chose it (the
    console does): when the table is no longer there it is refused, not done to a round they
    never saw (a second supervisor's void_round, sent as the first one's voided the round on
    hold, voided the next round; a script's retry likewise)."""
    if not isinstance(expect, dict):
        return refuse("bad_value", "invalid_args", action="expect")
    shoe = d.shoe.number if d.shoe is not None else None
    rnd = d.round.number if d.round is not None and d.round_open() else None
    seen = (expect.get("shoe", shoe), expect.get("round", rnd))
    if seen == (shoe, rnd):
        return None
    if seen[0] is not None and seen[1] is not None:
        return refuse("moved_on", shoe=seen[0], round=seen[1])
    return refuse("moved_on_table")


class Table:
    """The table model: its state as typed data, its parts, and the one way in."""

    def __init__(self, profile: Profile, *, auto_open: bool = True,
                 betting_seconds: float = 0.0, initial: str = CLOSED):
        # the config checks its range; the table itself refuses what no clock could time
        if not (isinstance(betting_seconds, (int, float)) and math.isfinite(betting_seconds)
                and betting_seconds >= 0):
            raise InputError(f"betting_seconds {betting_seconds!r}: give a number of seconds, "
                             f"0 or more")
        d = self._d = Desk(profile, auto_open=auto_open,
                           betting_seconds=float(betting_seconds), initial=initial)
        d.holds, d.shoes, d.rounds = Holds(d), Shoes(d), Rounds(d)
        d.reads = Reads(d)          # after the rounds: it takes their common reads
        self._common = d.reads.common
        banking = as_banking(d.rules)
        d.banking = Banking(d, banking) if banking is not None else None
        d.holds.replay = self._replay

    # ------------------------------------------------------------------ what others see
    @property
    def state(self) -> str:
        """The state the table shows: a name from `controller.table.states` (`hold` on any
        hold; the hold's `resume_to` says where it came from)."""
        return self._d.state

    @property
    def profile(self) -> Profile:
        return self._d.profile

    @property
    def shoe(self) -> ShoeState | None:
        return self._d.shoe

    @property
    def round(self) -> RoundState | None:
        return self._d.round

    @property
    def hold(self) -> Hold | None:
        return self._d.hold

    @property
    def shoe_no(self) -> int:
        return self._d.shoe_no

    @property
    def reveal_due(self) -> int | None:
        return self._d.reveal_due

    def expects(self) -> str | None:
        """What the table waits for: "card", "decision", "count_back", "bets", "open",
        "reveal" or None."""
        return views.expects(self._d)

    def decision(self) -> tuple[str, Any, tuple] | None:
        """The decision the deal waits for: (its name, the rules' default, the choices)."""
        return views.decision(self._d)

    def offers(self) -> list[str]:
        """The commands the table takes now, in the command table's order."""
        return offers.offers(self._d)

    def status(self) -> dict[str, Any]:
        return views.status(self._d)

    def view(self) -> dict[str, Any]:
        return views.view(self._d)

    def prompt_words(self) -> Words:
        """What the dealer should do now, as Words."""
        return views.prompt_words(self._d)

    def prompt(self) -> str:
        """What the dealer should do now, in English (the log's words; people read
        `prompt_words()` in their own language)."""
        return english(views.prompt_words(self._d))

    # ------------------------------------------------------------------ the way in
    def apply(self, inp: Input | Mapping[str, Any]) -> list[dict]:
        """Apply one input; its events. CommandRefused: refused, nothing changed."""
        out = self.apply_safely(inp)
        if out.refused is not None:
            raise out.refused
        if out.error is not None:
            raise out.error
        return out.events

    def apply_safely(self, inp: Input | Mapping[str, Any]) -> Outcome:
        """Apply one input and say what happened; never raises."""
        if type(inp) is CardRead:       # most inputs by far: straight to the read, no snapshot
            d = self._d
            try:
                # the common read's whole step for this state (Rounds.common_reads), if it
                # takes it; else the general way
                common = self._common.get(d.mstate)
                if common is None or not common(inp):
                    self._general_card(inp)
            except Exception as err:
                return self._defect(err, inp, None)
            done = _blank(Outcome)
            done.events, d.outbox = d.outbox, []
            done.refused = done.error = None
            return done
        kind = type(inp)
        apply = _APPLY.get(kind)
        if apply is None:
            try:
                if not isinstance(inp, INPUT_TYPES):
                    inp = parse_input(inp)          # type: ignore[arg-type]
                kind = type(inp)
                apply = _APPLY[kind]
            except Exception as err:        # a malformed input is refused, not applied
                return Outcome([], refused=CommandRefused(str(err), code="invalid_args"))
        saved = self.snapshot() if kind is Command else None
        try:
            apply(self, inp)
        except Exception as err:        # refused, corrected, or a defect
            return self._defect(err, cast(Input, inp), saved)
        d = self._d
        out, d.outbox = d.outbox, []
        return Outcome(out)

    def _defect(self, err: Exception, inp: Input, saved: dict | None) -> Outcome:
        """What a defect while applying `inp` leaves (`saved`: the table before a command)."""
        d = self._d
        if isinstance(err, Corrected):
            return Outcome(self._drain(), refused=err)
        if isinstance(err, (CommandRefused, MoveRefused)):
            if saved is not None:
                self._load(saved)
            d.outbox.clear()
            return Outcome([], refused=err if isinstance(err, CommandRefused)
                           else refuse("not_now", state=d.state))
        d.outbox.clear()
        if saved is not None:
            # a person's command: refused, the table exactly as it was (a hold stays the
            # hold it was, with its remedies); the technician finds the defect in the log
            self._load(saved)
            return Outcome([], refused=refuse("internal_error", "internal",
                                          action=getattr(inp, "action", "")),
                           error=err)
        d.holds.defect(err)         # a device's input: the table holds until a person looks
        return Outcome(self._drain(), error=err)

    def _drain(self) -> list[dict]:
        d = self._d
        out, d.outbox = d.outbox, []
        return out

    def _replay(self, data: dict) -> None:
        """A device input a hold kept, applied now the hold is left."""
        inp = parse_input(data)
        try:
            _APPLY[type(inp)](self, inp)
        except CommandRefused as err:   # it no longer applies: the journal has it
            log.info("kept %s not applied: %s", inp.type, err)

    # ------------------------------------------------------------------ commands
    def _command(self, cmd: Command) -> None:
        d = self._d
        spec = BY_NAME.get(cmd.action)
        handler = HANDLERS.get(cmd.action)
        if spec is None or handler is None:
            raise refuse("unknown_action")
        if cmd.expect is not None:
            stale = _moved_on(d, cmd.expect)
            if stale is not None:
                raise stale
        if spec.override and not str(cmd.reason).strip():
            raise refuse("needs_reason")
        why = offers.refusal(d, cmd.action)
        if why is not None:
            raise why
        before = d.summary()
        args = dict(cmd.args)
        if cmd.action in _WITH_USER:
            args.setdefault("user", cmd.user)
        moved: list[bool] = []

        def move() -> None:
            if moved:
                raise RuntimeError(f"{cmd.action}: its handler moved twice")
            moved.append(True)
            d.moved = False
            d.move(cmd.action)
            if not d.moved:         # its guard no longer held: the handler changed it first
                raise RuntimeError(f"{cmd.action}: the machine did not make its move")
        try:
            handler(d, move, **args)
        except TypeError as err:
            if moved:
                raise
            log.info("command %s: arguments refused: %s", cmd.action, err)
            raise refuse("bad_value", "invalid_args", action=cmd.action) from None
        if not moved:
            raise RuntimeError(f"{cmd.action}: its handler made no move")
        if spec.override:
            d.emit("override", user=cmd.user, role=cmd.role, action=cmd.action,
                   args=dict(cmd.args), reason=cmd.reason, before=before, after=d.summary())

    # ------------------------------------------------------------------ device inputs
    def _card(self, inp: CardRead) -> None:
        d = self._d
        common = self._common.get(d.mstate)
        if common is None or not common(inp):
            self._general_card(inp)

    def _general_card(self, inp: CardRead) -> None:
        d = self._d
        if d.shoe is not None:
            d.shoe.reads += 1
        # most reads carry no flag: they share one empty, read-only set of flags
        flagged = inp.manual_burn or inp.face_up or inp.multiple or inp.with_previous
        d.reads.card(inp.code, inp.flags if flagged else _NO_FLAGS)

    def _cut(self, _: CutCardSeen) -> None:
        self._d.shoes.cut_card()

    def _read_failed(self, inp: ReadFailed) -> None:
        d = self._d
        shoe = d.shoe
        index = None
        if shoe is not None:
            shoe.reads += 1
            index = shoe.reads - 1
        if d.state == HOLD and d.hold is not None:
            d.holds.keep_read(None, {"failed": inp.reason or "", "card_index": index},
                              "the table is on hold: the failed read waits for the supervisor")
            return
        d.reads.failed(inp.reason, index)

    def _multiple(self, inp: MultipleCards) -> None:
        self._d.emit("irregularity", kind="multiple_cards",
                     detail=f"{inp.count} cards drawn together; assigned top first in read "
                     f"order")

    def _alarm(self, inp: DeviceAlarm) -> None:
        d = self._d
        d.emit("alarm", source=inp.device, code=inp.code, text=inp.text, severity="error")
        if inp.code.upper() == "EMPTY":
            d.shoes.empty()
        elif d.state != HOLD or not _holds_alarm(d.hold, inp):
            # on hold for something else, the alarm joins that hold (its remedy sees it, and
            # a shuffler that stopped is asked again): one hold, every problem in it
            d.holds.problem("device_alarm", f"{inp.device or 'device'} alarm {inp.code}: "
                            f"{inp.text}", device=inp.device, code=inp.code)

    def _warning(self, inp: DeviceWarning) -> None:
        self._d.emit("alarm", source=inp.device, code=inp.code, text=inp.text,
                     severity="warning")

    def _link_lost(self, inp: LinkLost) -> None:
        d = self._d
        d.emit("alarm", source=inp.device, code="link_lost", text=inp.reason, severity="error")
        d.holds.problem("link_lost", f"{inp.device or 'device'} link lost: {inp.reason}; reads "
                        f"that arrive are kept for the supervisor", device=inp.device)

    def _link_back(self, inp: LinkBack) -> None:
        d = self._d
        d.emit("alarm", source=inp.device, code="link_back", text="", severity="info")
        hold = d.hold
        if hold is not None and "link_lost" in hold.kinds:
            hold.link_back = True
            d.holds.link_review(inp.device)

    def _shuffled(self, inp: ShuffleDone) -> None:
        d = self._d
        if d.holds.keep_input(inp.to_dict(), SHUFFLING):
            return
        d.shoes.shuffled(inp.count, inp.composition)

    def _identity(self, inp: ShufflerIdentity) -> None:
        # the device's own word on what it is: kept with the shoe's record
        self._d.emit("device_identity", device=inp.device, model=inp.model, serial=inp.serial,
                     firmware=inp.firmware)

    def _remainder(self, inp: Remainder) -> None:
        d = self._d
        if d.holds.keep_input(inp.to_dict(), SHOE_ENDED):
            return
        rest = [code for code, n in inp.composition.items() for _ in range(int(n))]
        d.shoes.count_done(rest=rest, count=None if rest else inp.total, method="shuffler")

    def _shoe_session(self, inp: ShoeSession) -> None:
        """The shoe's run of read numbers, on record for a restart (controller/service/runtime):
        nothing changes at the table."""

    def _restarted(self, inp: Restarted) -> None:
        """After a restart, a read in flight may be lost when the shoe cannot resend: whenever
        cards come out of the shoe (the shoe-start burn, a round, between rounds, the
        count-back) the table is held for the dealer or supervisor to check the cards."""
        d = self._d
        d.emit("restarted", resends=inp.resends, state=d.state)
        shown = None if inp.resends else self._review_layout()
        if shown is None:
            return
        what = "count-back" if "count_back" in shown else \
            "burn" if "start_burn" in shown else "round"
        d.holds.problem("restart_review", f"the controller restarted during the {what}; a "
                        f"card read just before may be lost. Check the cards against {shown}: "
                        f"confirm_layout, enter_card or void_round", layout=shown)

    def _review_layout(self) -> dict | None:
        """What a restart review shows: the burn so far, the round's (or the last round's)
        cards, or the count-back so far; None when no card can be out of the shoe unseen."""
        d = self._d
        shoe, state = d.shoe, d.state
        if shoe is None or state in (CLOSED, SHUFFLING, HOLD):
            return None
        if state in (LOADED, BURNING):
            return {"start_burn": list(shoe.start_burn)}
        if state == SHOE_ENDED:
            return {"count_back": len(shoe.rest)} if shoe.counting == "shoe" else None
        if shoe.end_reason:
            return None
        return d.round.layout() if d.round is not None else {}

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict:
        d = self._d
        return {"state": d.state, "shoe_no": d.shoe_no,
                "shoe": d.shoe.to_dict() if d.shoe else None,
                "round": d.round.to_dict() if d.round else None,
                "hold": d.hold.to_dict() if d.hold else None,
                "round_count": d.round_count, "reveal_due": d.reveal_due,
                "integrity": d.integrity.to_dict(),
                "bank": dict(d.bank) if d.bank is not None else None,
                "profile_text": d.profile_text, "profile_name": d.profile.name,
                "mode": d.profile.mode}

    def _load(self, snap: Mapping[str, Any]) -> None:
        """Stand exactly where `snap` says (no entry callbacks run)."""
        d = self._d
        if snap.get("profile_text"):
            self._set_profile_text(snap["profile_name"], snap["profile_text"])
        if snap.get("mode") and snap["mode"] != d.profile.mode:
            d.profile = d.profile.with_mode(snap["mode"])
        d.shoe_no = snap["shoe_no"]
        d.shoe = ShoeState.from_dict(snap["shoe"]) if snap["shoe"] else None
        d.round = RoundState.from_dict(snap["round"]) if snap["round"] else None
        d.hold = Hold.from_dict(snap["hold"]) if snap.get("hold") else None
        state = snap["state"]
        d.stand(held(d.hold.resume_to) if state == HOLD and d.hold is not None else state)
        d.round_count = snap.get("round_count", d.shoe.rounds if d.shoe else 0)
        d.reveal_due = snap.get("reveal_due")
        if snap.get("bank") is not None:
            d.bank = dict(snap["bank"])
        d.integrity = IntegrityWatch.from_dict(snap["integrity"]) if snap.get("integrity") \
            else IntegrityWatch()

    def _set_profile_text(self, name: str, text: str) -> None:
        try:
            self._d.profile = parse_profile(tomllib.loads(text), name,
                                            hashlib.sha256(text.encode("utf-8")).hexdigest())
        except (tomllib.TOMLDecodeError, ProfileError) as err:
            raise CommandRefused(str(err), code="invalid_args") from err
        self._d.profile_text = text

    @classmethod
    def restore(cls, profile: Profile, snap: Mapping[str, Any], **kw: Any) -> "Table":
        """A table standing where a snapshot says, without running any entry callbacks."""
        t = cls(profile, **kw)
        t._load(snap)
        return t


_APPLY: dict[type, Callable[[Table, Any], None]] = {
    CardRead: Table._card, CutCardSeen: Table._cut, ReadFailed: Table._read_failed,
    MultipleCards: Table._multiple, DeviceAlarm: Table._alarm, DeviceWarning: Table._warning,
    LinkLost: Table._link_lost, LinkBack: Table._link_back, ShuffleDone: Table._shuffled,
    ShufflerIdentity: Table._identity, ShoeSession: Table._shoe_session,
    Remainder: Table._remainder,
    Restarted: Table._restarted,
    Command: Table._command,
}

__all__ = ["Table", "Outcome", "Corrected"]
