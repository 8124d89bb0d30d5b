"""Dealer, supervisor and system commands at the table.

A command that does not apply raises CommandRefused with the reason, and `Table.apply` puts the
table back exactly as it was. Overrides on a hold are first offered to the machine, whose
guard checks the kind of hold (`HOLD_OVERRIDES`). Every supervisor or manager action is
recorded as an `override` event with user, role, reason, and the table before and after.
"""
from __future__ import annotations

import hashlib
import tomllib
from typing import Any, Callable

from controller.cards import CardCodeError, parse_card
from controller.errors import CommandRefused, ProfileError
from controller.profile import parse_profile
from controller.roles import OVERRIDE_ACTIONS
from controller.table.stakes import StakesMixin
from controller.table.inputs import Command
from controller.table.model import QueuedRead, ShoeState
from controller.table.states import (BURNING, CLOSED, HOLD, IDLE, LOADED, SHOE_ENDED,
                                     SHUFFLING)


class CommandsMixin(StakesMixin):
    """The commands of `controller.table.Table`, one method each (`HANDLERS`)."""

    def run_command(self, cmd: Command) -> None:
        handler = HANDLERS.get(cmd.action)
        if handler is None:
            raise CommandRefused(f"unknown action {cmd.action!r}")
        if cmd.action in OVERRIDE_ACTIONS and not str(cmd.reason).strip():
            raise CommandRefused(f"{cmd.action} needs a reason")
        before = self.summary()
        args = dict(cmd.args)
        if cmd.action == "decide":
            args.setdefault("user", cmd.user)
        try:
            handler(self, **args)
        except TypeError as err:
            raise CommandRefused(f"{cmd.action}: {err}", code="invalid_args") from None
        if cmd.action in OVERRIDE_ACTIONS:
            self.emit("override", user=cmd.user, role=cmd.role, action=cmd.action,
                      args=dict(cmd.args), reason=cmd.reason, before=before,
                      after=self.summary())

    def summary(self) -> dict:
        d: dict[str, Any] = {"state": self.state}
        if self.round is not None:
            d["round"] = self.round.number
            d["hands"] = self.round.layout()
        if self.hold is not None:
            d["hold"] = self.hold.last.kind
        return d

    # ---------------------------------------------------------------- shoes
    def new_shoe(self, cut_position: int | None = None, demo_rounds: int = 0,
                 shuffler: bool = False, software: str = "") -> None:
        if self.state not in (CLOSED, SHOE_ENDED):
            raise CommandRefused(f"a new shoe cannot start while the table is {self.state}")
        p = self.profile
        if not isinstance(demo_rounds, int) or demo_rounds < 0:
            raise CommandRefused(f"demo_rounds must be a whole number ≥ 0, not {demo_rounds!r}",
                                 code="invalid_args")
        if demo_rounds > p.demo_rounds_max:
            raise CommandRefused(f"{demo_rounds} demonstration rounds asked; the profile allows "
                                 f"at most {p.demo_rounds_max}")
        if p.continuous_shuffler and cut_position is not None:
            raise CommandRefused("a continuous shuffler deals without a cut card")
        old = self.shoe
        if old is not None and not old.reconciled and not old.continuous:
            self.emit("alarm", source="inventory", code="not_counted",
                      text=f"shoe {old.number} ended without its rest counted back",
                      severity="warning")
        self.trigger_to("shuffle" if shuffler else "load")
        self.shoe_no += 1
        self.integrity.new_shoe()
        self.round = None
        self.hold = None
        self.shoe = ShoeState(self.shoe_no, p.decks, cut_position=cut_position,
                              demo_left=demo_rounds, continuous=p.continuous_shuffler,
                              shuffler=bool(shuffler))
        self.emit("shoe_started", decks=p.decks, cards=p.cards, cut_card_position=cut_position,
                  profile=p.name, profile_sha256=p.sha256, game=p.game,
                  **({"software_sha256": software} if software else {}),
                  **({"reveal": p.reveal} if p.reveal != "on_read" else {}))
        if shuffler:
            self.emit("device_request", device="shuffler", action="shuffle", decks=p.decks)
        else:
            self.shoe_loaded()

    def shoe_loaded(self) -> None:
        """The shoe is in the shoe: the burn starts, or without one, the first round."""
        if self.profile.burn.rule == "none":
            self.trigger_to("no_burn")
            self.between_rounds()

    def shuffled(self, count: int) -> None:
        if self.state != SHUFFLING:
            raise CommandRefused(f"a shuffled shoe arrived while the table is {self.state}")
        if count != self.profile.cards:
            self.problem("count_mismatch", f"the shuffler counted {count} cards; the shoe "
                         f"must hold {self.profile.cards}")
            return
        self.trigger_to("count_ok")
        self.emit("device_request", device="shuffler", action="deliver")
        self.shoe_loaded()

    def end_shoe(self, void: Any = False) -> None:
        """End the shoe between rounds; with `void`, a round in progress is voided first."""
        rnd, shoe = self.round, self.shoe
        if shoe is None or self.state in (CLOSED, SHOE_ENDED):
            raise CommandRefused(f"no shoe in play to end (the table is {self.state})")
        if self.hold is not None and self.hold.last.kind == "integrity_alarm":
            shoe.invalid = True      # dealt unshuffled or replayed: not an authorised game
        reason = "invalid" if shoe.invalid else "supervisor"
        if self.round_open() and rnd is not None and (rnd.cards or rnd.burned_before):
            if void is not True:
                raise CommandRefused("a round is in progress: finish or void it first "
                                     "(or end the shoe with void=true)")
            self.void_round("shoe ended by the supervisor", end_shoe=reason)
            return
        if self.round_open():
            self.cancel_round("shoe ended before its first card")
        self.finish_shoe(reason)

    def abandon_shoe(self) -> None:
        """The shoe's devices are gone (e.g. the embedded simulator after a restart): a round in
        progress cannot be reconciled, so it is void, and the shoe ends."""
        if self.round_open():
            self.void_round("devices_lost", end_shoe="devices_lost")
        elif self.shoe is not None and self.state not in (SHOE_ENDED, CLOSED):
            self.finish_shoe("devices_lost")

    def shoe_empty_cmd(self) -> None:
        self.shoe_empty()

    def count_done_cmd(self) -> None:
        """The dealer has read the whole rest back through the shoe."""
        self.count_done()

    def cut_card(self) -> None:
        """The cut card is out (the shoe saw it, or the dealer reports it)."""
        if self.shoe is None:
            raise CommandRefused("no shoe is loaded")
        if not self.shoe.cut_seen and self.state != SHOE_ENDED:
            self.shoe.cut_seen = True
            self.emit("cut_card", cards_out=self.shoe.inventory.cards_out)

    # ---------------------------------------------------------------- rounds
    def open_bets(self) -> None:
        if self.reveal_due is not None:
            raise CommandRefused(f"round {self.reveal_due} is not revealed yet: reveal it first")
        if self.state in (LOADED, BURNING):
            assert self.shoe is not None
            self.shoe.invalid = True
            self.problem("missed_shoe_burn", "a round was started before the shoe-start burn "
                         "was done: the shoe is invalid and must be replaced; everything read "
                         "so far stays in the record")
            return
        self.open_round()

    def close_bets_cmd(self) -> None:
        self.close_bets()

    def reveal(self) -> None:
        """The dealer turns the hands over (profile `[display] reveal = "on_reveal"`): the
        result read earlier is shown to the table, and dealing goes on."""
        number = self.reveal_due
        if number is None:
            raise CommandRefused("no result is waiting to be revealed")
        self.reveal_due = None
        self.emit("reveal", round=number)
        if self.state == IDLE:
            self.between_rounds()

    def confirm_result(self) -> None:
        """The dealer confirms the result shown for the last round (recorded, changes nothing)."""
        if self.round is None or self.round_open():
            raise CommandRefused("no finished round to confirm")
        self.emit("result_confirmed")

    def report_misplaced(self, detail: str = "") -> None:
        """The dealer put cards on the wrong boxes: the shoe order stands; show the layout."""
        if self.round is None:
            raise CommandRefused("no round in progress")
        layout = self.round.layout()
        self.round.flags.append({"kind": "misplaced_cards", "detail": detail})
        self.emit("irregularity", kind="misplaced_cards",
                  detail=f"cards restored to the shoe order {layout}; supervisor to confirm",
                  layout=layout)

    def report_unread(self, detail: str = "") -> None:
        """The dealer saw a card leave the shoe that was never read."""
        shoe = self.shoe
        if shoe is not None:
            shoe.reads += 1
            shoe.inventory.unidentified += 1
        self.problem("unreadable_card", "a card left the shoe without a read"
                     + (f" ({detail})" if detail else "") + "; enter its code or void the round",
                     card_index=shoe.reads - 1 if shoe is not None else None)

    def demo_round(self) -> None:
        shoe = self.shoe
        if shoe is None or shoe.rounds - shoe.demo_left > 0 and shoe.rounds > 0:
            raise CommandRefused("demonstration rounds are played only when a shoe starts")
        if shoe.demo_left + shoe.rounds >= self.profile.demo_rounds_max:
            raise CommandRefused(f"at most {self.profile.demo_rounds_max} demonstration rounds")
        shoe.demo_left += 1

    def switch_mode(self, mode: str) -> None:
        if self.round_open():
            raise CommandRefused("the mode changes only between rounds")
        try:
            self.profile = self.profile.with_mode(mode)
        except (ValueError, ProfileError) as err:
            raise CommandRefused(str(err)) from err
        self.emit("mode_changed", mode=mode)

    def change_profile(self, profile: str, text: str | None = None) -> None:
        """A new profile, only between shoes; the command carries the profile's text, so the
        journal keeps exactly what was loaded."""
        if self.state not in (CLOSED, SHOE_ENDED):
            raise CommandRefused("the profile changes only between shoes")
        if not text:
            raise CommandRefused(f"change_profile {profile}: the profile's text did not come "
                                 f"with the command", code="invalid_args")
        try:
            new = parse_profile(tomllib.loads(text), profile,
                                hashlib.sha256(text.encode("utf-8")).hexdigest())
        except (tomllib.TOMLDecodeError, ProfileError) as err:
            raise CommandRefused(str(err), code="invalid_args") from err
        if new.game != self.profile.game:
            raise CommandRefused(f"{new.name} is a {new.game} profile; this table deals "
                                 f"{self.profile.game}", code="invalid_args")
        self.profile = new
        self._profile_text = text           # snapshots keep it: a restart deals the same rules
        self.emit("profile_changed", profile=new.name, profile_sha256=new.sha256)

    def decide(self, name: Any, value: Any, user: str = "", seat: Any = None) -> None:
        """A hand's draw/stand decision or a seat input (chemin de fer, baccarat en banque);
        with `seat`, only the hand's own player may give a draw decision."""
        self.check_decider(str(name), seat)
        self.take_decision(str(name), value, user=user)

    # ---------------------------------------------------------------- supervisor
    def hold_cmd(self, note: str = "") -> None:
        self.problem("hold", note or "supervisor hold")

    def resume_cmd(self) -> None:
        hold = self.hold
        if hold is None:
            raise CommandRefused(f"the table is not on hold (it is {self.state})")
        if "link_lost" in hold.kinds:
            if not hold.link_back:
                raise CommandRefused("the shoe's link is still down: wait for it to come back, "
                                     "or void the round")
            if hold.queued:
                raise CommandRefused(f"{len(hold.queued)} read(s) arrived while the link was "
                                     f"down: accept_reads or discard_reads")
        if hold.last.kind == "count_mismatch":
            raise CommandRefused("the shoe's count does not match: accept_count or "
                                 "reject_count")
        if hold.last.kind == "restart_review":
            raise CommandRefused("check the round's layout against the table first: "
                                 "confirm_layout, enter_card or void_round")
        self.leave_hold()
        self._after_resume()

    def _after_resume(self) -> None:
        if self.state == SHUFFLING:
            assert self.shoe is not None
            self.emit("device_request", device="shuffler", action="shuffle",
                      decks=self.profile.decks)
        elif self.state == IDLE:
            self.between_rounds()

    def void_round_cmd(self) -> None:
        if not self.round_open():
            raise CommandRefused("no round in progress to void")
        self.void_round("supervisor")

    def enter_card(self, code: str) -> None:
        """The code of a card the shoe could not read (or never saw), entered by hand."""
        last = self.need_hold("enter_card")
        try:
            card = parse_card(code)
        except CardCodeError as err:
            raise CommandRefused(str(err), code="invalid_args") from err
        shoe = self.shoe
        assert shoe is not None
        why = shoe.inventory.problem(card)
        if why:
            raise CommandRefused(why)
        if last.kind == "unreadable_card":
            shoe.inventory.unidentified = max(0, shoe.inventory.unidentified - 1)
        hold = self.hold
        assert hold is not None
        if "link_lost" in hold.kinds or hold.queued:
            # the card was drawn before the reads kept during the hold: it goes first; after a
            # lost link they wait, all together, for the supervisor to accept or discard them
            hold.problems = [p for p in hold.problems
                             if p.kind not in ("unreadable_card", "restart_review")]
            hold.queued.insert(0, QueuedRead(card.code, {"entered": True}))
            self.emit("card_queued", code=card.code, queued=len(hold.queued),
                      reason="entered by hand; it was drawn before the reads kept meanwhile")
            if "link_lost" in hold.kinds:
                return
        else:
            hold.queued = [QueuedRead(card.code, {"entered": True})]
        self.leave_hold()           # deals what the hold kept, in order

    def burn_card(self) -> None:
        """Burn the card that caused the hold (drawn when none was due, foreign, face up)."""
        last = self.need_hold("burn_card")
        code = last.extra.get("code")
        if code and last.kind != "foreign_card":
            assert self.shoe is not None
            self.shoe.inventory.move(code, "removed", "burn")
        self.emit("burned", code=code, cause=last.kind)
        self.leave_hold()
        self._after_resume()

    def remove_card(self, code: str | None = None) -> None:
        last = self.need_hold("remove_card")
        self.emit("removed", code=code or last.extra.get("code"), cause="foreign_card")
        self.leave_hold()
        self._after_resume()

    def confirm_layout(self) -> None:
        """The layout on the table matches the record: after a restart, dealing goes on."""
        if self.hold is not None and self.hold.last.kind == "restart_review":
            self.need_hold("confirm_layout")
            self.leave_hold()
        elif self.round is None:
            raise CommandRefused("no round whose layout could be confirmed")
        assert self.round is not None
        self.emit("layout_confirmed", hands=self.round.layout())

    def accept_count(self) -> None:
        self.need_hold("accept_count")
        self.leave_hold(LOADED)
        self.emit("device_request", device="shuffler", action="deliver")
        self.shoe_loaded()

    def reject_count(self) -> None:
        """The shoe is not accepted: shuffle and count it again."""
        self.need_hold("reject_count")
        self.leave_hold(SHUFFLING)
        self._after_resume()

    def accept_reads(self) -> None:
        """The reads that arrived while the link was down are the cards dealt: deal them in
        read order, each recorded."""
        self.need_hold("accept_reads")
        hold = self.hold
        assert hold is not None
        if not hold.link_back:
            raise CommandRefused("the shoe's link is still down")
        queued = list(hold.queued)
        self.leave_hold()
        self.deal_queued(queued)

    def discard_reads(self) -> None:
        """The reads from the outage are not trusted: they are out of play, the round is void
        and the shoe ends."""
        self.need_hold("discard_reads")
        self.set_aside_queued()
        if self.round_open():
            self.void_round("reads after a lost link discarded", end_shoe="link_lost")
        else:
            self.finish_shoe("link_lost")


HANDLERS: dict[str, Callable[..., None]] = {
    "new_shoe": CommandsMixin.new_shoe, "open_bets": CommandsMixin.open_bets,
    "start_round": CommandsMixin.open_bets, "close_bets": CommandsMixin.close_bets_cmd,
    "shoe_empty": CommandsMixin.shoe_empty_cmd, "cut_card": CommandsMixin.cut_card,
    "report_unread": CommandsMixin.report_unread, "abandon_shoe": CommandsMixin.abandon_shoe,
    "confirm_result": CommandsMixin.confirm_result, "reveal": CommandsMixin.reveal,
    "change_profile": CommandsMixin.change_profile,
    "report_misplaced": CommandsMixin.report_misplaced, "hold": CommandsMixin.hold_cmd,
    "resume": CommandsMixin.resume_cmd, "void_round": CommandsMixin.void_round_cmd,
    "enter_card": CommandsMixin.enter_card, "burn_card": CommandsMixin.burn_card,
    "remove_card": CommandsMixin.remove_card, "confirm_layout": CommandsMixin.confirm_layout,
    "end_shoe": CommandsMixin.end_shoe, "change_shoe": CommandsMixin.end_shoe,
    "accept_count": CommandsMixin.accept_count, "reject_count": CommandsMixin.reject_count,
    "demo_round": CommandsMixin.demo_round, "switch_mode": CommandsMixin.switch_mode,
    "decide": CommandsMixin.decide, "accept_reads": CommandsMixin.accept_reads,
    "discard_reads": CommandsMixin.discard_reads, "count_done": CommandsMixin.count_done_cmd,
    "stake": CommandsMixin.stake, "banco": CommandsMixin.banco,
    "accept_stakes": CommandsMixin.accept_stakes,
}
