"""Cards at the table: the shoe-start burn, rounds dealt by the procedure, the shoe's end and its
count-back.

With a reading shoe the read order is the truth: each card goes to the step that is due, and
the rules name the next step, which the machine must allow (`next_<step>`). Policies (burn
counts, cut card, face-up cards) are the pure functions of `controller.games.procedure`.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from controller.shoe.cards import Card, CardCodeError, parse_card
from controller.games.procedure import RESULT, decision_of, step_of
from controller.games import procedure as policies
from controller.table.base import TableBase
from controller.words import refuse
from controller.table.model import (MachineInventory, QueuedRead, RoundState, Stakes,
                                     cards_drawn)
from controller.table.states import (BETTING, BURN, BURNING, HOLD, IDLE, LOADED, SHOE_ENDED,
                                     step_in)


_NUMBERS: dict[Fraction, int | float] = {}


def bet_number(x: Fraction) -> int | float:
    """A net result as JSON wants it: 1 not 1.0, 0.95 not 19/20 (a paytable has few)."""
    n = _NUMBERS.get(x)
    if n is None:
        n = _NUMBERS[x] = int(x) if x.denominator == 1 else float(x)
    return n


def _flag_list(flags: Mapping[str, Any]) -> list[str]:
    return sorted(k for k, v in flags.items() if v) if flags else []


class DealingMixin(TableBase):
    """Card reads, rounds and the shoe's end for `controller.table.Table`."""

    # ------------------------------------------------------------------ a card read
    def take_card(self, code: str, flags: Mapping[str, Any], *, kept: bool = False) -> None:
        """A card read by the shoe, in read order. `kept`: a read kept during a hold, taken
        now the hold is cleared: a card that is not due is burned as the profile says,
        rather than held again."""
        if self.state == HOLD and self.hold is not None:
            # one hold per incident: what the shoe reads meanwhile waits under it
            self.keep_read(code, flags, "the table is on hold: the read waits for the "
                           "supervisor")
            return
        try:
            card = parse_card(code)
        except CardCodeError as err:
            self.problem("impossible_card", str(err))
            return
        shoe = self.shoe
        if shoe is None:
            if kept:        # no shoe to deal it from: it goes back
                self.emit("reads_returned", codes=[card.code])
                return
            self.problem("card_without_shoe", f"{code} read with no shoe loaded", code=card.code)
            return
        state = self.state
        if state == SHOE_ENDED and shoe.counting == "shoe":
            self._count_back(card)
            return
        why = shoe.inventory.problem(card)
        if why is not None:
            shoe.inventory.record(card, "removed")
            self.problem("foreign_card", why, code=card.code)
            return
        if shoe.cut_seen and shoe.cut_round is None:
            shoe.cut_round = self.round.number if self.round is not None and \
                self.round_open() else self._next_round_number()
        step = step_in(state)
        face_up = bool(flags.get("face_up"))
        if flags.get("with_previous") or flags.get("multiple"):
            self.note("multiple_cards", f"{card.code} drawn together with the card before it; "
                      f"kept in read order (top card first)", code=card.code)
        if face_up and policies.face_up_voids(self.profile, step):
            # burn-and-replace or void: the card is not dealt; the supervisor applies the remedy
            shoe.inventory.record(card, "removed")
            self.problem("face_up_card", f"{card.code} came out face up; profile remedy: "
                         f"{self.profile.face_up_card}", code=card.code)
            return
        if face_up:
            self.note("face_up_card", f"{card.code} came out face up; it stays valid",
                      code=card.code)
        if state == LOADED or state == BURNING:
            self._start_burn(card, flags)
        elif step is not None:
            self._deal(card, step, flags)
        else:
            self._card_not_due(card, kept=kept)
        for alarm in self.integrity.feed(card.code):
            # an unshuffled or replayed shoe: dealing stops until a supervisor decides
            self.problem("integrity_alarm", alarm.detail, detector=alarm.kind,
                         card_index=alarm.card_index)

    def _card_not_due(self, card: Card, *, kept: bool = False) -> None:
        shoe = self.shoe
        assert shoe is not None
        shoe.inventory.record(card, "removed")
        kind = "card_while_betting" if self.where() == BETTING else "card_not_due"
        if kept:
            # accepted with the reads of a hold: the procedure's remedy, no second hold
            if self.profile.card_when_none_due == "void" and self.round_open():
                self.void_round("card drawn when none was due")
            else:
                shoe.inventory.move(card.code, "removed", "burn")
                self.emit("burned", code=card.code, cause=kind)
            return
        if kind == "card_while_betting":
            self.problem(kind, f"{card.code} drawn while bets were open", code=card.code)
        else:
            self.problem(kind, f"{card.code} drawn while the table was "
                         f"{self.where()}; no card was due", code=card.code, where=self.where())

    def take_failed(self, reason: str, card_index: int | None) -> None:
        """A card the shoe saw but could not read (its read is counted already)."""
        shoe = self.shoe
        if shoe is not None:
            shoe.inventory.unidentified += 1
            if self.state == SHOE_ENDED and shoe.counting == "shoe":
                if self._rest_accounted():
                    self.count_done()
                return
        self.problem("unreadable_card", f"the shoe could not read a card "
                     f"({reason or 'no reason given'}); enter its code or void the round",
                     card_index=card_index,
                     **({"during": "burn"} if self.where() in (LOADED, BURNING) else {}))

    def deal_queued(self, reads: list[QueuedRead]) -> None:
        """Take reads kept during a hold, in read order, as the procedure says; if one of them
        holds the table again, the rest wait with that hold and are taken when it is cleared."""
        for i, q in enumerate(reads):
            if q.code is None:
                self.take_failed(str(q.flags.get("failed", "")), q.flags.get("card_index"))
            else:
                self.take_card(q.code, q.flags, kept=True)
            if self.state == HOLD and self.hold is not None:
                self.hold.queued = list(reads[i + 1:]) + self.hold.queued
                return

    def leave_hold(self, dest: str | None = None) -> None:
        hold = self.hold
        super().leave_hold(dest)
        if hold is not None and hold.queued and "link_lost" not in hold.kinds:
            self.deal_queued(hold.queued)

    def set_aside_queued(self) -> None:
        """Reads kept during a hold that will never be dealt (the round is void or the shoe
        ends): out of play, in the record and the inventory."""
        hold, shoe = self.hold, self.shoe
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
        self.emit("reads_discarded", codes=[q.code for q in hold.queued])
        hold.queued = []

    # ------------------------------------------------------------------ the shoe-start burn
    def _start_burn(self, card: Card, flags: Mapping[str, Any]) -> None:
        shoe = self.shoe
        assert shoe is not None
        if not shoe.start_burn:
            shoe.start_burn_total = policies.start_burn_total(self.profile, card)
        done = len(shoe.start_burn) + 1 >= (shoe.start_burn_total or 0)
        self.trigger_to("burn_done" if done else "burn_more")
        shoe.start_burn.append(card.code)
        shoe.inventory.record(card, "burn")
        self.emit("card", n=shoe.inventory.cards_out, code=card.code, slot=BURN,
                  flags=_flag_list(flags))
        if done:
            self.emit("burn", cards=list(shoe.start_burn))
            self.between_rounds()

    # ------------------------------------------------------------------ dealing a round
    def _deal(self, card: Card, step: str, flags: Mapping[str, Any]) -> None:
        rnd, shoe = self.round, self.shoe
        assert rnd is not None and shoe is not None
        if step == BURN:
            rnd.burned_before.append(card.code)
            rnd.burn_due -= 1
            shoe.inventory.record(card, "burn")
            nxt = BURN if rnd.burn_due > 0 else self.next_step()
            slot = BURN
        else:
            if decision_of(step) is not None:
                # a card while a draw decision is pending: the hand drew
                self.record_decision(rnd.pending or "", True, user="shoe", by="card")
                slot = self.rules.next_phase(self.hands_for_rules()) or ""
                if slot not in self.rules.phases:
                    raise ValueError(f"{self.profile.game}: a draw decision led to {slot!r}, "
                                     f"not to a card")
            else:
                slot = step
            self.rules.place(self.hands_for_rules(), slot, card)
            rnd.cards += 1
            if flags.get("entered"):
                # typed by the supervisor, not read: the round and the console say so
                rnd.flags.append({"kind": "card_entered", "code": card.code,
                                  "detail": f"{card.code} entered by hand"})
            shoe.inventory.record(card, "hand")
            nxt = self.next_step()
        self.emit("card", n=cards_drawn(shoe.inventory), code=card.code, slot=slot,
                  flags=_flag_list(flags))
        if slot == self.rules.procedure.bets_after:
            # the cards shown before the bets are out: bets open, then the round goes on
            rnd.after_bets = nxt
            self.trigger_to("open_bets")
            self._bets_open()
            return
        self.advance(nxt)

    def next_step(self) -> str:
        """Ask the rules what comes next; a decision due is kept as the round's `pending`."""
        assert self.round is not None
        nxt = step_of(self.rules.next_phase(self.hands_for_rules()))
        self.round.pending = decision_of(nxt)
        return nxt

    def advance(self, nxt: str) -> None:
        """Move to the step due next, or complete the round."""
        if nxt == RESULT:
            self.complete_round()
        else:
            self.trigger_to(f"next_{nxt}")

    def hands_for_rules(self) -> dict:
        """The round's hands as the rules see them: the cards, plus the decisions if the game
        has any (the same lists and dict, so the rules' updates land in the round state)."""
        rnd = self.round
        assert rnd is not None
        if self.decisions_game:
            return {**rnd.hands, "decisions": rnd.decisions}
        return rnd.hands

    def record_decision(self, name: str, value: Any, *, user: str, by: str = "") -> None:
        raise NotImplementedError      # DecisionsMixin

    # ------------------------------------------------------------------ between rounds
    def between_rounds(self) -> None:
        """The table is idle: end the shoe if it is due to end, else start the next round when
        the table runs by itself."""
        if self.reveal_due is not None:
            return              # the hands are still face down: the dealer reveals them first
        shoe = self.shoe
        if shoe is not None and shoe.end_reason:
            self.finish_shoe(shoe.end_reason)
        elif self.auto_open and self.state == IDLE:
            self.open_round()

    def open_round(self) -> None:
        """A new round: bets open, or first the cards dealt before the bets (Andar Bahar's
        game card), after which they open."""
        shoe = self.shoe
        assert shoe is not None
        proc = self.rules.procedure
        burn_due = policies.between_round_burn(self.profile, shoe.rounds)
        if proc.bets_after:
            self.trigger_to("next_burn" if burn_due > 0 else f"next_{proc.first}")
        else:
            self.trigger_to("open_bets")
        demo = shoe.demo_left > 0
        if demo:
            shoe.demo_left -= 1
        hands: dict[str, Any] = dict(self.rules.new_hands())
        decisions: dict[str, Any] = hands.pop("decisions", {})
        self.round = RoundState(number=self._next_round_number(), demo=demo, hands=hands,
                                burn_due=burn_due, decisions=decisions,
                                bank_seat=self.bank["banker"] if self.bank else None,
                                stakes=Stakes() if hasattr(self.rules, "pool_stakes") else None)
        shoe.rounds += 1
        self.round_count += 1
        self.emit("round_started", demo=demo)
        if not proc.bets_after:
            self._bets_open()

    def pool(self) -> None:
        """Bets are closing: games with stakes against a bank settle who plays (StakesMixin)."""

    def _bets_open(self) -> None:
        self.emit("bets_open", closes_in_s=self.betting_seconds)
        if self.auto_open and self.betting_seconds <= 0:
            self.close_bets()

    def close_bets(self) -> None:
        rnd = self.round
        assert rnd is not None
        self.pool()
        if rnd.after_bets:
            nxt, rnd.after_bets = rnd.after_bets, None
            self.trigger_to(f"next_{nxt}")
        else:
            self.trigger_to("next_burn" if rnd.burn_due > 0
                            else f"next_{self.rules.procedure.first}")
        self.emit("bets_closed")

    def _next_round_number(self) -> int:
        """Rounds count per shoe; games whose every round has its own shoe (Andar Bahar's
        deck per round) number them across the table's shoes instead."""
        assert self.shoe is not None
        if getattr(self.rules, "rounds_per_shoe", 0):
            return self.round_count + 1
        return self.shoe.rounds + 1

    def complete_round(self) -> None:
        rnd, shoe = self.round, self.shoe
        assert rnd is not None and shoe is not None
        hands = self.hands_for_rules()
        fields = self._result_fields(self.rules.outcome(hands))
        fields["bets"] = self._bets(hands, self.profile.paytable)
        if self._all_modes():
            fields["bets_by_mode"] = {mode: self._bets(hands, table)
                                      for mode, table in self.profile.paytables.items()}
        self._mark(fields)
        if self.profile.reveal == "on_reveal":
            # known to the controller now, shown to the table only on the dealer's reveal
            fields["reveal"] = "pending"
            self.reveal_due = rnd.number
        self.trigger_to("result")
        fields.update(self._pass_bank(void=False))
        self.emit("round_result", **fields)
        self._after_round()

    def cancel_round(self, reason: str) -> None:
        """A round opened but not a card dealt to it: it never happened."""
        shoe = self.shoe
        assert shoe is not None
        self.trigger_to("cancel_round")
        self.set_aside_queued()
        self.hold = None
        shoe.rounds -= 1
        self.round_count -= 1
        self.round = None
        self.emit("round_cancelled", reason=reason)

    def void_round(self, reason: str, *, end_shoe: str | None = None) -> None:
        """The round in progress is void: every bet 0; the hold, if any, is over."""
        rnd = self.round
        assert rnd is not None
        self.trigger_to("void_round")
        self.set_aside_queued()
        self.hold = None
        partial = getattr(self.rules, "partial_outcome", None)
        outcome: dict[str, Any] = partial(self.hands_for_rules()) if partial else rnd.layout()
        if self.decisions_game:
            outcome["decisions"] = dict(rnd.decisions)
        fields = self._result_fields(outcome)
        fields.update(void=True, reason=reason, bets={b: 0 for b in self.profile.paytable})
        if self._all_modes():
            fields["bets_by_mode"] = {mode: {b: 0 for b in table}
                                      for mode, table in self.profile.paytables.items()}
        self._mark(fields)
        fields.update(self._pass_bank(void=True))
        self.emit("round_result", **fields)
        if end_shoe and self.shoe is not None:
            self.shoe.end_reason = end_shoe
            self.finish_shoe(end_shoe)
        else:
            self._after_round()

    def _bets(self, hands: dict, paytable: Any) -> dict[str, int | float]:
        """Net result per unit of every bet of `paytable` (every bet 0 in a demonstration)."""
        assert self.round is not None
        if self.round.demo:
            return {b: 0 for b in paytable}
        return {b: bet_number(x) for b, x in self.rules.settle(hands, paytable).items()}

    def _all_modes(self) -> bool:
        """Every mode of the profile is live in each round (players choose theirs)."""
        p = self.profile
        return len(p.paytables) > 1 and p.game_options.get("modes", "both") == "both"

    def _result_fields(self, outcome: dict) -> dict[str, Any]:
        """A round_result's fields: the game, the burn before the round, the outcome."""
        rnd = self.round
        assert rnd is not None
        fields: dict[str, Any] = {"game": self.profile.game}
        if rnd.burned_before:
            fields["burned_before"] = list(rnd.burned_before)
        fields.update(outcome)
        if rnd.stakes is not None:
            fields.update(rnd.stakes.result_fields())
        return fields

    def _mark(self, fields: dict[str, Any]) -> None:
        """A demonstration round says so; a round with irregularities names them."""
        rnd = self.round
        assert rnd is not None
        if rnd.demo:
            fields["demo"] = True
        if rnd.flags:
            fields["irregularities"] = [f["kind"] for f in rnd.flags]

    def _pass_bank(self, *, void: bool) -> dict:
        """Who holds the bank after a coup (banking games); the result's `bank_seat` fields."""
        rnd = self.round
        assert rnd is not None
        if self.bank is None:
            return {}
        if not rnd.demo:
            misdraw = any(f.get("pass_bank") for f in rnd.flags)
            self.bank = self.rules.bank_after_coup(  # type: ignore[attr-defined]
                self.bank, self.hands_for_rules(), void=void, misdraw=misdraw)
        return {"bank_seat": rnd.bank_seat, "next_bank_seat": self.bank["banker"]}

    def _after_round(self) -> None:
        """Return a continuous shuffler's cards; decide whether the shoe ends; carry on."""
        shoe, rnd = self.shoe, self.round
        assert shoe is not None and rnd is not None
        if shoe.continuous:
            codes = shoe.inventory.return_all(  # type: ignore[attr-defined]
                list(rnd.burned_before) + [c.code for h in rnd.hands.values() for c in h])
            if codes:
                self.emit("cards_returned", cards=codes)
        shoe.end_reason = policies.end_after_round(
            self.profile, rnd.number, shoe.cut_round,
            rounds_per_shoe=getattr(self.rules, "rounds_per_shoe", 0), rounds_in_shoe=shoe.rounds,
            drawn=cards_drawn(shoe.inventory))
        self.between_rounds()

    # ------------------------------------------------------------------ the shoe's end
    def finish_shoe(self, reason: str) -> None:
        """End the shoe (from between rounds), then ask for its rest to be counted back."""
        shoe = self.shoe
        assert shoe is not None
        self.trigger_to("end_shoe")
        self.set_aside_queued()
        self.hold = None
        self.reveal_due = None      # a result never revealed stays off the scoreboard
        shoe.end_reason = reason
        self.emit("shoe_ended", rounds=shoe.rounds, reason=reason)
        if reason == "devices_lost":
            return      # the shoe's cards went with its devices: nothing is left to count
        if shoe.continuous:
            self._reconcile(rest=[], method="ledger")
        elif shoe.shuffler and self._rest_accounted():
            self._reconcile(rest=[], method="shuffler")     # nothing left to count
        elif shoe.shuffler:
            shoe.counting = "shuffler"
            self.emit("device_request", device="shuffler", action="count_rest")
        else:
            shoe.counting = "shoe"
            if self._rest_accounted():
                self._reconcile(rest=[], method="shoe")

    def _count_back(self, card: Card) -> None:
        """A card of the rest, read back through the shoe after it ended."""
        shoe = self.shoe
        assert shoe is not None
        shoe.rest.append(card.code)
        self.emit("count_back", n=len(shoe.rest))
        if self._rest_accounted():
            self._reconcile(rest=list(shoe.rest), method="shoe")

    def _rest_accounted(self) -> bool:
        shoe = self.shoe
        assert shoe is not None
        return shoe.inventory.cards_out + len(shoe.rest) >= self.profile.cards

    def count_done(self, rest: list[str] | None = None, count: int | None = None,
                   method: str = "shoe") -> None:
        """The rest of the shoe is counted: reconcile now (also when cards are missing)."""
        shoe = self.shoe
        if shoe is None or self.state != SHOE_ENDED or shoe.reconciled:
            raise refuse("count_once")
        self._reconcile(rest=list(shoe.rest) if rest is None else rest, method=method,
                        count=count)

    def _reconcile(self, rest: list[str], method: str, count: int | None = None) -> None:
        """Burns + dealt + removed + rest must be the shoe exactly; a difference is an alarm
        (counts only: the identities of cards never dealt are not published)."""
        shoe = self.shoe
        assert shoe is not None
        inv = shoe.inventory
        if isinstance(inv, MachineInventory):
            problems = [] if inv.cards_out == len(inv.by_place["removed"]) else \
                [f"{inv.cards_out} card(s) out of the machine at the end"]
            remainder = self.profile.cards - inv.cards_out
        elif count is not None and not rest:
            expected = self.profile.cards - inv.cards_out
            problems = [] if count == expected else \
                [f"the shuffler counted {count} card(s) in the rest; {expected} expected"]
            remainder = count
        else:
            problems = inv.reconcile(rest)
            remainder = len(rest)
        shoe.counting = None
        shoe.reconciled = True
        self.emit("reconciliation", ok=not problems, method=method,
                  burned=len(inv.by_place["burn"]), dealt=len(inv.by_place["hand"]),
                  removed=len(inv.by_place["removed"]), remainder=remainder,
                  differences=len(problems))
        if problems:
            self.emit("alarm", source="inventory", code="reconciliation",
                      text=f"{len(problems)} card(s) do not reconcile: " + "; ".join(problems[:5]),
                      severity="error")

    def shoe_empty(self) -> None:
        """The shoe has no card left: a round in progress is void, and the shoe ends; during
        the count-back, the rest is all read."""
        shoe = self.shoe
        if shoe is None:
            return
        if self.state == SHOE_ENDED:
            if shoe.counting == "shoe":
                self._reconcile(rest=list(shoe.rest), method="shoe")
            return
        if self.round_open():
            self.void_round("exhausted", end_shoe="exhausted")
            return
        if self.state in (LOADED, BURNING):
            shoe.invalid = True
        if self.state != SHOE_ENDED:
            self.finish_shoe("exhausted")
