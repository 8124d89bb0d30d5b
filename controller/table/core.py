"""The table: one model that owns its state, moved only by inputs through its machine.

    closed → shuffling → loaded → burning → idle ⇄ betting → dealing.<step>… → idle … → shoe_ended
                                        any state → hold → (resume_<state>) → that state

`Table.apply(input)` is the only way in: it returns the events the input caused (for the caller
to journal, then publish) or raises CommandRefused, in which case nothing changed. A defect
while applying a device's input holds the table (`internal_error`) instead of leaving it
half-moved; a defect while applying a person's command refuses it and leaves the table as it
was.
"""
from __future__ import annotations

import hashlib
import logging
import math
import tomllib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from transitions import MachineError

from controller.errors import CommandRefused, Corrected, InputError, ProfileError
from controller.games import get_rules
from controller.games.procedure import decision_of
from controller.shoe.integrity import IntegrityWatch
from controller.settings.profile import Profile, parse_profile
from controller.table.base import MachineModel
from controller.table.commands import CommandsMixin
from controller.table.inputs import (CardRead, Command, CutCard, DeviceAlarm, DeviceWarning,
                                     Identity, Input, LinkBack, LinkLost, MultipleCards,
                                     ReadFailed, Remainder, Restarted, Shuffled, parse_input)
from controller.table.machine import build_machine
from controller.table.model import Hold, Problem, RoundState, ShoeState
from controller.table.states import (BETTING, BURN, BURNING, CLOSED, HOLD, IDLE, LOADED,
                                     SHOE_ENDED, SHUFFLING, step_in)
from controller.table.offers import actions_now
from controller.table.words import (burn_words, choice_words, deal_words, hold_words,
                                    kept_words, link_back_words)
from controller.words import Words, english, refuse


log = logging.getLogger("controller.table")


@dataclass
class Outcome:
    """What one input did: its events, or why it was refused, or the defect it met."""
    events: list[dict] = field(default_factory=list)
    refused: CommandRefused | None = None
    error: Exception | None = None


class Table(CommandsMixin):
    """The table model: plain state plus the logic the machine's moves stand for."""

    def __init__(self, profile: Profile, *, auto_open: bool = True,
                 betting_seconds: float = 0.0, initial: str = CLOSED):
        self.profile = profile
        self.rules = get_rules(profile.game)
        self.decisions_game = bool(self.rules.procedure.decisions)
        self.auto_open = auto_open
        # the config checks its range; the table itself refuses what no clock could time
        if not (isinstance(betting_seconds, (int, float)) and math.isfinite(betting_seconds)
                and betting_seconds >= 0):
            raise InputError(f"betting_seconds {betting_seconds!r}: give a number of seconds, "
                             f"0 or more")
        self.betting_seconds = float(betting_seconds)
        self.outbox = []
        self.shoe = None
        self.round = None
        self.hold = None
        self.shoe_no = 0
        self.round_count = 0
        self.reveal_due = None
        self.integrity = IntegrityWatch()
        self._profile_text: str | None = None
        new_bank = getattr(self.rules, "new_bank", None)
        self.bank = new_bank() if new_bank else None
        self.machine_model = MachineModel(self)
        self.machine = build_machine(self.machine_model, self.rules.procedure, initial)
        self._fire = {name: getattr(self.machine_model, name) for name in self.machine.events}

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
        try:
            if not isinstance(inp, Input):
                inp = parse_input(inp)
        except Exception as err:        # a malformed input is refused, not applied
            return Outcome(refused=CommandRefused(str(err), code="invalid_args"))
        saved = self.snapshot() if isinstance(inp, Command) else None
        try:
            _APPLY[type(inp)](self, inp)
        except Corrected as err:
            return Outcome(self.drain(), refused=err)
        except CommandRefused as err:
            if saved is not None:
                self._load(saved)
            self.outbox.clear()
            return Outcome(refused=err)
        except Exception as err:        # a defect: report it, keep the input
            self.outbox.clear()
            if saved is not None:
                # a person's command: refused, the table exactly as it was (a hold stays the
                # hold it was, with its remedies); the technician finds the defect in the log
                self._load(saved)
                return Outcome(refused=refuse("internal_error", "internal",
                                              action=getattr(inp, "action", "")),
                               error=err)
            self._internal_error(err)   # a device's input: the table holds until a person looks
            return Outcome(self.drain(), error=err)
        return Outcome(self.drain())

    def drain(self) -> list[dict]:
        out, self.outbox = self.outbox, []
        return out

    def _internal_error(self, err: Exception) -> None:
        if self.state != HOLD:
            resume_to = self.state
            self.machine.set_state(HOLD, model=self.machine_model)
            self.hold = Hold(resume_to)
        assert self.hold is not None
        self.hold.problems.append(Problem("internal_error", repr(err)))
        self.emit("irregularity", kind="internal_error", detail=repr(err))
        self.emit("hold", reason="internal_error", detail=repr(err),
                  resume_to=self.hold.resume_to, actions=self.hold_remedies())

    # ------------------------------------------------------------------ device inputs
    def _card(self, inp: CardRead) -> None:
        if self.shoe is not None:
            self.shoe.reads += 1
        self.take_card(inp.code, inp.flags)

    def _cut(self, _: CutCard) -> None:
        if self.shoe is not None:
            self.cut_card()

    def _read_failed(self, inp: ReadFailed) -> None:
        shoe = self.shoe
        index = None
        if shoe is not None:
            shoe.reads += 1
            index = shoe.reads - 1
        if self.state == HOLD and self.hold is not None:
            self.keep_read(None, {"failed": inp.reason or "", "card_index": index},
                           "the table is on hold: the failed read waits for the supervisor")
            return
        self.take_failed(inp.reason, index)

    def _multiple(self, inp: MultipleCards) -> None:
        self.emit("irregularity", kind="multiple_cards",
                  detail=f"{inp.count} cards drawn together; assigned top first in read order")

    def _alarm(self, inp: DeviceAlarm) -> None:
        self.emit("alarm", source=inp.device, code=inp.code, text=inp.text, severity="error")
        if inp.code.upper() == "EMPTY":
            self.shoe_empty()
        elif self.state != HOLD:
            self.problem("device_alarm", f"{inp.device or 'device'} alarm {inp.code}: {inp.text}",
                         device=inp.device, code=inp.code)

    def _warning(self, inp: DeviceWarning) -> None:
        self.emit("alarm", source=inp.device, code=inp.code, text=inp.text, severity="warning")

    def _link_lost(self, inp: LinkLost) -> None:
        self.emit("alarm", source=inp.device, code="link_lost", text=inp.reason,
                  severity="error")
        self.problem("link_lost", f"{inp.device or 'device'} link lost: {inp.reason}; reads "
                     f"that arrive are kept for the supervisor", device=inp.device)

    def _link_back(self, inp: LinkBack) -> None:
        self.emit("alarm", source=inp.device, code="link_back", text="", severity="info")
        hold = self.hold
        if hold is not None and "link_lost" in hold.kinds:
            hold.link_back = True
            self.link_review(inp.device)

    def _shuffled(self, inp: Shuffled) -> None:
        if self._keep(inp, SHUFFLING):
            return
        self.shuffled(inp.count)

    def _keep(self, inp: Input, needs: str) -> bool:
        """A device input that needs the state a hold came from waits under the hold."""
        hold = self.hold
        if self.state != HOLD or hold is None or hold.resume_to != needs:
            return False
        hold.kept.append(inp.to_dict())
        return True

    def leave_hold(self, dest: str | None = None) -> None:
        """Back to where the hold came from, the reads kept taken, then the device inputs kept
        (a shoe shuffled meanwhile), in their order; a new hold keeps what is left. A remedy
        that sends the table elsewhere (`dest`) has settled what they were for."""
        hold = self.hold
        super().leave_hold(dest)
        if hold is None or not hold.kept or (dest is not None and dest != hold.resume_to):
            return
        kept = list(hold.kept)
        for i, data in enumerate(kept):
            if self.state == HOLD and self.hold is not None:
                self.hold.kept = kept[i:] + self.hold.kept
                return
            inp = parse_input(data)
            try:
                _APPLY[type(inp)](self, inp)
            except CommandRefused as err:   # it no longer applies: the journal has it
                log.info("kept %s not applied: %s", inp.type, err)

    def _identity(self, inp: Identity) -> None:
        # the device's own word on what it is: kept with the shoe's record
        self.emit("device_identity", device=inp.device, model=inp.model, serial=inp.serial,
                  firmware=inp.firmware)

    def _remainder(self, inp: Remainder) -> None:
        if self._keep(inp, SHOE_ENDED):
            return
        rest = [code for code, n in inp.composition.items() for _ in range(int(n))]
        self.count_done(rest=rest, count=None if rest else inp.total, method="shuffler")

    def _restarted(self, inp: Restarted) -> None:
        """After a restart, a read in flight may be lost when the shoe cannot resend: whenever
        cards come out of the shoe (the shoe-start burn, a round, between rounds, the
        count-back) the table is held for the dealer or supervisor to check the cards."""
        self.emit("restarted", resends=inp.resends, state=self.state)
        shown = None if inp.resends else self._review_layout()
        if shown is None:
            return
        what = "count-back" if "count_back" in shown else \
            "burn" if "start_burn" in shown else "round"
        self.problem("restart_review", f"the controller restarted during the {what}; a card "
                     f"read just before may be lost. Check the cards against {shown}: "
                     f"confirm_layout, enter_card or void_round", layout=shown)

    def _review_layout(self) -> dict | None:
        """What a restart review shows: the burn so far, the round's (or the last round's)
        cards, or the count-back so far; None when no card can be out of the shoe unseen."""
        shoe, state = self.shoe, self.state
        if shoe is None or state in (CLOSED, SHUFFLING, HOLD):
            return None
        if state in (LOADED, BURNING):
            return {"start_burn": list(shoe.start_burn)}
        if state == SHOE_ENDED:
            return {"count_back": len(shoe.rest)} if shoe.counting == "shoe" else None
        if shoe.end_reason:
            return None
        return self.round.layout() if self.round is not None else {}

    def _command(self, cmd: Command) -> None:
        self.run_command(cmd)

    # ------------------------------------------------------------------ views
    def expects(self) -> str | None:
        """What the table waits for: "card", "decision", "count_back", "bets", "open" or None."""
        s = self.state
        step = step_in(s)
        if step is not None:
            return "decision" if decision_of(step) else "card"
        if s in (LOADED, BURNING):
            return "card"
        if s == SHOE_ENDED and self.shoe is not None and self.shoe.counting == "shoe":
            return "count_back"
        if s == IDLE and self.reveal_due is not None:
            return "reveal"
        return {BETTING: "bets", IDLE: "open"}.get(s)

    def status(self) -> dict[str, Any]:
        """A small summary for the actors that react to the table (published, not journaled)."""
        shoe, rnd, hold = self.shoe, self.round, self.hold
        d: dict[str, Any] = {
            "event": "status", "state": self.state, "expects": self.expects(),
            "shoe": self.shoe_no, "reads": shoe.reads if shoe is not None else 0,
            "round": rnd.number if rnd is not None else None, "step": step_in(self.state),
            "round_open": self.round_open(),
            "counting": shoe.counting if shoe is not None else None}
        name = self.decision_due()
        if name is not None:
            d["decision"], d["default"] = name, self.default_decision()
        if self.reveal_due is not None:
            d["reveal_due"] = self.reveal_due
        if hold is not None:
            d["hold"] = {"kind": hold.last.kind, "detail": hold.last.detail, **hold.last.extra,
                         "kinds": sorted(hold.kinds), "link_back": hold.link_back,
                         "queued": len(hold.queued), "actions": self.hold_remedies()}
        return d

    def prompt(self) -> str:
        """What the dealer should do now, in English (the log's words; people read
        `prompt_words()` in their own language)."""
        return english(self.prompt_words())

    def prompt_words(self) -> Words:
        """What the dealer should do now, as Words."""
        s = self.state
        shoe = self.shoe
        if s == CLOSED:
            return Words("prompt.load_shoe")
        if s == SHOE_ENDED:
            if shoe is not None and shoe.counting == "shoe":
                return Words("prompt.count_back_reader")
            if shoe is not None and shoe.counting == "shuffler":
                return Words("prompt.count_back_shuffler")
            return Words("prompt.load_shoe")
        if s == SHUFFLING:
            return Words("prompt.shuffling")
        if s == LOADED:
            return Words("prompt.turn_burn_card")
        if s == BURNING:
            assert shoe is not None
            return burn_words((shoe.start_burn_total or 0) - len(shoe.start_burn))
        if s == IDLE and self.reveal_due is not None:
            return Words("prompt.reveal")
        if s == IDLE:
            return Words("prompt.open_bets")
        if s == BETTING:
            return Words("prompt.bets_open")
        if s == HOLD:
            hold = self.hold
            if hold is None or not hold.problems:
                return Words("prompt.hold_plain")
            codes = [q.code for q in hold.queued]
            if hold.link_back and codes:
                return link_back_words([c for c in codes if c])
            if codes:
                return kept_words(hold.last.as_dict(), len(codes))
            return hold_words(hold.last.as_dict())
        step = step_in(s) or ""
        name = decision_of(step)
        if name is not None and self.round is not None:
            return choice_words(name, self.decision_options(name))
        if step == BURN:
            return Words("prompt.burn_one")
        return deal_words(step, self.profile.game)

    def view(self) -> dict[str, Any]:
        """The table as the console and the state request show it. Never the identity of an
        undealt card: only cards already read appear."""
        p, shoe, rnd, hold = self.profile, self.shoe, self.round, self.hold
        step = step_in(self.state)
        return {
            "state": self.state, "prompt": self.prompt(), "expects": self.expects(),
            "prompt_words": self.prompt_words().as_dict(), "actions": actions_now(self),
            "profile": {"name": p.name, "game": p.game, "mode": p.mode, "decks": p.decks},
            "shoe": None if shoe is None else {
                "number": shoe.number, "cards_out": shoe.inventory.cards_out,
                "cut_seen": shoe.cut_seen, "rounds": shoe.rounds,
                "counting": shoe.counting, "reconciled": shoe.reconciled},
            "round": None if rnd is None or not self.round_open() else {
                "number": rnd.number, "demo": rnd.demo, "hands": rnd.layout(),
                "decisions": dict(rnd.decisions), "burned_before": list(rnd.burned_before),
                "entered": [f["code"] for f in rnd.flags if f.get("kind") == "card_entered"],
                "next": (f"decide:{rnd.pending}" if step and decision_of(step) else step)},
            "hold": None if hold is None else {
                "resume_to": hold.resume_to, "problems": [x.as_dict() for x in hold.problems],
                "actions": self.hold_remedies(), "link_back": hold.link_back,
                "queued": [q.code for q in hold.queued]},
            "reveal_due": self.reveal_due,
        }

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict:
        return {"state": self.state, "shoe_no": self.shoe_no,
                "shoe": self.shoe.to_dict() if self.shoe else None,
                "round": self.round.to_dict() if self.round else None,
                "hold": self.hold.to_dict() if self.hold else None,
                "round_count": self.round_count, "reveal_due": self.reveal_due,
                "integrity": self.integrity.to_dict(),
                "bank": dict(self.bank) if self.bank is not None else None,
                "profile_text": self._profile_text, "profile_name": self.profile.name,
                "mode": self.profile.mode}

    def _load(self, snap: Mapping[str, Any]) -> None:
        """Stand exactly where `snap` says (no entry callbacks run)."""
        if snap.get("profile_text"):
            self._set_profile_text(snap["profile_name"], snap["profile_text"])
        if snap.get("mode") and snap["mode"] != self.profile.mode:
            self.profile = self.profile.with_mode(snap["mode"])
        self.machine.set_state(snap["state"], model=self.machine_model)
        self.shoe_no = snap["shoe_no"]
        self.shoe = ShoeState.from_dict(snap["shoe"]) if snap["shoe"] else None
        self.round = RoundState.from_dict(snap["round"]) if snap["round"] else None
        self.hold = Hold.from_dict(snap["hold"]) if snap.get("hold") else None
        self.round_count = snap.get("round_count", self.shoe.rounds if self.shoe else 0)
        self.reveal_due = snap.get("reveal_due")
        if snap.get("bank") is not None:
            self.bank = dict(snap["bank"])
        self.integrity = IntegrityWatch.from_dict(snap["integrity"]) if snap.get("integrity") \
            else IntegrityWatch()

    def _set_profile_text(self, name: str, text: str) -> None:
        try:
            self.profile = parse_profile(tomllib.loads(text), name,
                                         hashlib.sha256(text.encode("utf-8")).hexdigest())
        except (tomllib.TOMLDecodeError, ProfileError) as err:
            raise CommandRefused(str(err), code="invalid_args") from err
        self._profile_text = text

    @classmethod
    def restore(cls, profile: Profile, snap: Mapping[str, Any], **kw: Any) -> "Table":
        """A table standing where a snapshot says, without running any entry callbacks."""
        t = cls(profile, initial=snap["state"], **kw)
        t._load(snap)
        return t


_APPLY: dict[type, Callable[[Table, Any], None]] = {
    CardRead: Table._card, CutCard: Table._cut, ReadFailed: Table._read_failed,
    MultipleCards: Table._multiple, DeviceAlarm: Table._alarm, DeviceWarning: Table._warning,
    LinkLost: Table._link_lost, LinkBack: Table._link_back, Shuffled: Table._shuffled,
    Identity: Table._identity, Remainder: Table._remainder, Restarted: Table._restarted,
    Command: Table._command,
}

__all__ = ["Table", "Outcome", "Corrected", "MachineError"]
