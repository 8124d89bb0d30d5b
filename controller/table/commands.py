"""Dealer, supervisor and system commands at the table.

A command that does not apply raises CommandRefused with the reason, and `Table.apply` puts the
table back exactly as it was. On a hold, an action that clears holds is taken only if it is one
of this hold's remedies now (`TableBase.remedy_refusal`, the one judge); overrides that act on
the hold are moves of the machine, guarded by the same judge. Every supervisor or manager action is
recorded as an `override` event with user, role, reason, and the table before and after.
"""
from __future__ import annotations

import hashlib
import logging
import tomllib
from typing import Any, Callable

from controller.shoe.cards import CardCodeError, parse_card
from controller.errors import CommandRefused, ProfileError
from controller.settings.profile import parse_profile
from controller.access.roles import OVERRIDE_ACTIONS
from controller.table.stakes import StakesMixin
from controller.table.inputs import Command
from controller.table.model import QueuedRead, ShoeState
from controller.table.remedies import STRAY
from controller.table.states import (BURNING, CLOSED, HOLD, IDLE, LOADED, SHOE_ENDED,
                                     SHUFFLING)
from controller.words import refuse

log = logging.getLogger("controller.table")


class CommandsMixin(StakesMixin):
    """The commands of `controller.table.Table`, one method each (`HANDLERS`)."""

    def run_command(self, cmd: Command) -> None:
        handler = HANDLERS.get(cmd.action)
        if handler is None:
            raise refuse("unknown_action")
        if cmd.action in OVERRIDE_ACTIONS and not str(cmd.reason).strip():
            raise refuse("needs_reason")
        self.check_remedy(cmd.action)
        before = self.summary()
        args = dict(cmd.args)
        if cmd.action in ("decide", "call_supervisor"):
            args.setdefault("user", cmd.user)
        try:
            handler(self, **args)
        except TypeError as err:
            log.info("command %s: arguments refused: %s", cmd.action, err)
            raise refuse("bad_value", "invalid_args", action=cmd.action) from None
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
            raise refuse("new_shoe_not_now", state=self.state)
        p = self.profile
        if not isinstance(demo_rounds, int) or demo_rounds < 0:
            raise refuse("demo_whole_number", "invalid_args")
        if demo_rounds > p.demo_rounds_max:
            raise refuse("demo_too_many", n=p.demo_rounds_max)
        if p.continuous_shuffler and cut_position is not None:
            raise refuse("no_cut_card")
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
            raise refuse("shuffled_not_now", state=self.state)
        if count != self.profile.cards:
            self.problem("count_mismatch", f"the shuffler counted {count} cards; the shoe "
                         f"must hold {self.profile.cards}", counted=count,
                         expected=self.profile.cards)
            return
        self.trigger_to("count_ok")
        self.emit("device_request", device="shuffler", action="deliver")
        self.shoe_loaded()

    def end_shoe(self, void: Any = False) -> None:
        """End the shoe between rounds; with `void`, a round in progress is voided first."""
        rnd, shoe = self.round, self.shoe
        if shoe is None or self.state in (CLOSED, SHOE_ENDED):
            raise refuse("no_shoe_to_end", state=self.state)
        if self.hold is not None and self.hold.last.kind == "integrity_alarm":
            shoe.invalid = True      # dealt unshuffled or replayed: not an authorised game
        reason = "invalid" if shoe.invalid else "supervisor"
        if self.round_open() and rnd is not None and (rnd.cards or rnd.burned_before):
            if void is not True:
                raise refuse("round_in_progress")
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
            raise refuse("no_shoe")
        if not self.shoe.cut_seen and self.state != SHOE_ENDED:
            self.shoe.cut_seen = True
            self.emit("cut_card", cards_out=self.shoe.inventory.cards_out)

    # ---------------------------------------------------------------- rounds
    def open_bets(self) -> None:
        if self.reveal_due is not None:
            raise refuse("reveal_first", n=self.reveal_due)
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
            raise refuse("nothing_to_reveal")
        self.reveal_due = None
        self.emit("reveal", round=number)
        if self.state == IDLE:
            self.between_rounds()

    def confirm_result(self) -> None:
        """The dealer confirms the result shown for the last round (recorded, changes nothing)."""
        if self.round is None or self.round_open():
            raise refuse("nothing_to_confirm")
        self.emit("result_confirmed")

    def report_misplaced(self, detail: str = "") -> None:
        """The dealer put cards on the wrong boxes: the shoe order stands; show the layout."""
        if self.round is None:
            raise refuse("no_round")
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
                     card_index=shoe.reads - 1 if shoe is not None else None, unread=True)

    def report_face_up(self, code: str | None = None) -> None:
        """The dealer saw a card come out face up, on a shoe that cannot tell (Bee-Tek,
        barcode): by default the round's last card. A profile that keeps face-up cards notes
        it; any other remedy holds the table for the supervisor (void, or resume with it)."""
        rnd = self.round
        if rnd is None or not self.round_open() or not rnd.cards:
            raise refuse("no_face_up_sensor_needed")
        dealt = [c.code for hand in rnd.hands.values() for c in hand]
        try:
            card = parse_card(code).code if code else dealt[-1]
        except CardCodeError as err:
            raise refuse("not_a_card", "invalid_args") from err
        if self.profile.face_up_card == "valid":
            self.note("face_up_card", f"{card} came out face up (reported by the dealer); it "
                      f"stays valid", code=card, reported=True)
            return
        self.problem("face_up_card", f"{card} came out face up (reported by the dealer); "
                     f"profile remedy: {self.profile.face_up_card}", code=card, reported=True)

    def call_supervisor(self, user: str = "") -> None:
        """The dealer asks for a supervisor at the table; dealing goes on. The alarm's text is
        who called."""
        self.emit("alarm", source="dealer", code="supervisor_called", text=user,
                  severity="warning")

    def demo_round(self) -> None:
        shoe = self.shoe
        if shoe is None or shoe.rounds - shoe.demo_left > 0 and shoe.rounds > 0:
            raise refuse("demo_only_at_start")
        if shoe.demo_left + shoe.rounds >= self.profile.demo_rounds_max:
            raise refuse("demo_too_many", n=self.profile.demo_rounds_max)
        shoe.demo_left += 1

    def switch_mode(self, mode: str) -> None:
        if self.round_open():
            raise refuse("mode_between_rounds")
        try:
            self.profile = self.profile.with_mode(mode)
        except (ValueError, ProfileError) as err:
            log.info("mode %s refused: %s", mode, err)
            raise refuse("no_such_mode") from err
        self.emit("mode_changed", mode=mode)

    def change_profile(self, profile: str, text: str | None = None) -> None:
        """A new profile, only between shoes; the command carries the profile's text, so the
        journal keeps exactly what was loaded."""
        if self.state not in (CLOSED, SHOE_ENDED):
            raise refuse("profile_between_shoes")
        if not text:
            raise refuse("profile_unreadable", "invalid_args")
        try:
            new = parse_profile(tomllib.loads(text), profile,
                                hashlib.sha256(text.encode("utf-8")).hexdigest())
        except (tomllib.TOMLDecodeError, ProfileError) as err:
            log.info("profile %s refused: %s", profile, err)
            raise refuse("profile_unreadable", "invalid_args") from err
        if new.game != self.profile.game:
            log.info("profile %s refused: it is for %s", new.name, new.game)
            raise refuse("profile_other_game", "invalid_args")
        self.profile = new
        self._profile_text = text           # snapshots keep it: a restart deals the same rules
        self.emit("profile_changed", profile=new.name, profile_sha256=new.sha256)

    def accept_software(self, software: str = "") -> None:
        """A manager accepts software that is not on the approved list; the service held the
        table until then. Nothing at the table changes: the override records who, why and
        which software (its SHA-256)."""
        if not software:
            raise CommandRefused("accept_software: the software's SHA-256 did not come with the "
                                 "command", code="invalid_args")

    def decide(self, name: Any, value: Any, user: str = "", seat: Any = None) -> None:
        """A hand's draw/stand decision or a seat input (chemin de fer, baccarat en banque);
        with `seat`, only the hand's own player may give a draw decision."""
        self.check_decider(str(name), seat)
        self.take_decision(str(name), value, user=user)

    # ---------------------------------------------------------------- supervisor
    def hold_cmd(self, note: str = "") -> None:
        self.problem("hold", note or "supervisor hold", **({"note": note} if note else {}))

    def resume_cmd(self) -> None:
        hold = self.hold
        if hold is None:
            raise refuse("not_on_hold", state=self.state)
        self.leave_hold()
        self._after_resume(reshuffle=shuffler_stopped(hold))

    def _after_resume(self, reshuffle: bool = False) -> None:
        """Carry on from the state a hold returned to: between rounds, the next round; a
        shuffler that stopped (or a shoe to be shuffled again), a new shuffle; a count-back
        the shuffler broke off, counted again."""
        if self.state == SHUFFLING and reshuffle:
            assert self.shoe is not None
            self.emit("device_request", device="shuffler", action="shuffle",
                      decks=self.profile.decks)
        elif self.state == IDLE:
            self.between_rounds()
        elif (self.state == SHOE_ENDED and self.shoe is not None
              and self.shoe.counting == "shuffler" and not self.shoe.reconciled and reshuffle):
            # the shuffler stopped while counting the rest back (a jam): it counts again
            self.emit("device_request", device="shuffler", action="count_rest")

    def void_round_cmd(self) -> None:
        if not self.round_open():
            raise refuse("no_round_to_void")
        self.void_round("supervisor")

    def enter_card(self, code: str) -> None:
        """The code of a card the shoe could not read (or never saw), entered by hand."""
        last = self.need_hold("enter_card")
        try:
            card = parse_card(code)
        except CardCodeError as err:
            raise refuse("not_a_card", "invalid_args") from err
        shoe = self.shoe
        assert shoe is not None
        why = shoe.inventory.problem(card)
        if why:
            log.info("entered card %s refused: %s", card.code, why)
            raise refuse("card_not_in_shoe", card=card.code)
        if last.kind == "unreadable_card":
            shoe.inventory.unidentified = max(0, shoe.inventory.unidentified - 1)
        else:
            shoe.reads += 1     # after a restart: a card out of the shoe whose read was lost
        hold = self.hold
        assert hold is not None
        if "link_lost" in hold.kinds or hold.queued:
            # the card was drawn before the reads kept during the hold: it goes first; after a
            # lost link they wait, all together, for the supervisor to accept or discard them
            hold.problems = [p for p in hold.problems if p is not last]
            hold.queued.insert(0, QueuedRead(card.code, {"entered": True}))
            self.emit("card_queued", code=card.code, queued=len(hold.queued),
                      reason="entered by hand; it was drawn before the reads kept meanwhile")
            if "link_lost" in hold.kinds:
                if hold.link_back:
                    self.link_review()
                return
        else:
            hold.queued = [QueuedRead(card.code, {"entered": True})]
        self.leave_hold()           # deals what the hold kept, in order
        self._after_resume()

    def burn_card(self) -> None:
        """Burn the card that caused the hold (drawn when none was due, foreign, face up); the
        reads kept meanwhile are then taken as the procedure says."""
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

    def return_reads(self) -> None:
        """The reads kept under the hold (and a card that came when none was due) were not
        this shoe's cards in play: they go back, and nothing of them stays in the shoe's
        count. The hold is over unless something else holds it."""
        self.need_hold("return_reads")
        hold, shoe = self.hold, self.shoe
        assert hold is not None
        codes: list[str | None] = []
        for p in hold.problems:
            if p.kind in STRAY and p.extra.get("code"):
                code = str(p.extra["code"])
                if shoe is not None and code in shoe.inventory.by_place["removed"]:
                    shoe.inventory.unrecord(code, "removed")
                codes.append(code)
        codes += [q.code for q in hold.queued]
        hold.queued = []
        hold.problems = [p for p in hold.problems if p.kind not in STRAY]
        self.emit("reads_returned", codes=codes)
        if hold.problems:
            return                  # the hold goes on for what else it is for
        self.leave_hold()
        self._after_resume()

    def confirm_layout(self) -> None:
        """The layout on the table matches the record: after a restart, dealing goes on."""
        if self.state == HOLD:
            problem = self.need_hold("confirm_layout")
            layout = problem.extra.get("layout")
            self.emit("layout_confirmed", hands=dict(layout) if isinstance(layout, dict)
                      else {})
            self.leave_hold()
            self._after_resume()
            return
        if self.round is None:
            raise refuse("no_layout")
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
        self._after_resume(reshuffle=True)

    def accept_reads(self) -> None:
        """The reads that arrived while the link was down are the cards dealt: deal them in
        read order, each recorded."""
        self.need_hold("accept_reads")
        hold = self.hold
        assert hold is not None
        queued = list(hold.queued)
        self.leave_hold()
        self.deal_queued(queued)
        self._after_resume()

    def discard_reads(self) -> None:
        """The reads from the outage are not trusted: they are out of play, the round is void
        and the shoe ends."""
        self.need_hold("discard_reads")
        self.set_aside_queued()
        if self.round_open():
            self.void_round("reads after a lost link discarded", end_shoe="link_lost")
        else:
            self.finish_shoe("link_lost")


def shuffler_stopped(hold: Any) -> bool:
    """A hold the shuffler itself raised (a jam, the door): it stopped, so it is asked again."""
    return any(p.kind == "device_alarm" and p.extra.get("device") == "shuffler"
               for p in hold.problems)


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
    "report_face_up": CommandsMixin.report_face_up,
    "call_supervisor": CommandsMixin.call_supervisor,
    "accept_software": CommandsMixin.accept_software,
    "return_reads": CommandsMixin.return_reads,
}
