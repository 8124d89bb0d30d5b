"""Card reads at the table, in read order: with a reading shoe the read order is the truth, so each
card goes to the step that is due (the shoe-start burn, a round's burn or hand, the count-back);
a card that cannot be there, or comes when none is due, holds the table."""
from __future__ import annotations

from typing import Any, Mapping

from controller.games import procedure
from controller.shoe.cards import CARD_OF_CODE, Card, CardCodeError, parse_card
from controller.shoe.integrity import Alarm
from controller.table.desk import Desk
from controller.table.model import QueuedRead
from controller.table.states import (BETTING, BURN, BURNING, HOLD, IDLE, LOADED, SHOE_ENDED,
                                     dealing)


class Reads:
    def __init__(self, d: Desk):
        self.d = d
        proc = d.rules.procedure
        #: the step each dealing state takes a card for (step_in, looked up once per state)
        self._step_in = {dealing(s): s for s in (BURN,) + proc.steps}
        #: by the machine's state, the whole step for a common read (Rounds.common_reads)
        self.common = d.rounds.common_reads()

    def card(self, code: str, flags: Mapping[str, Any], *, kept: bool = False) -> None:
        """A card read by the shoe, in read order. `kept`: a read kept during a hold, taken
        now the hold is cleared: a card that is not due is burned as the profile says,
        rather than held again."""
        d = self.d
        if d.state == HOLD and d.hold is not None:
            # one hold per incident: what the shoe reads meanwhile waits under it
            d.holds.keep_read(code, flags, "the table is on hold: the read waits for the "
                              "supervisor")
            return
        try:
            card = CARD_OF_CODE[code]           # a canonical code, as reading shoes send
        except KeyError:
            try:
                card = parse_card(code)
            except CardCodeError as err:
                d.holds.problem("impossible_card", str(err))
                return
        shoe = d.shoe
        if shoe is None:
            if kept:        # no shoe to deal it from: it goes back
                d.emit("reads_returned", codes=[card.code])
                return
            d.holds.problem("card_without_shoe", f"{code} read with no shoe loaded",
                            code=card.code)
            return
        state = d.state
        if state == SHOE_ENDED and shoe.counting == "shoe":
            d.shoes.count_back(card)
            return
        inventory = shoe.inventory
        if inventory.seen[card.code] >= inventory.decks:
            why = inventory.problem(card)
            inventory.record(card, "removed")
            d.holds.problem("foreign_card", why or "", code=card.code)
            return
        if shoe.cut_seen and shoe.cut_round is None:
            shoe.cut_round = d.round.number if d.round is not None and \
                d.round_open() else d.rounds._next_number()
        step = self._step_in.get(state)
        if flags and self._flagged(card, flags, step):
            return
        if step is not None:
            d.rounds.deal(card, step, flags)
        elif state == LOADED or state == BURNING:
            d.shoes.start_burn(card, flags)
        elif shoe.house_burn and (state == IDLE or state == BETTING):
            d.shoes.house_burned(card, flags)
        else:
            self._not_due(card, kept=kept)
        alarms = d.integrity.feed(card.code)
        if alarms:
            self.integrity_alarms(alarms)

    def integrity_alarms(self, alarms: list[Alarm]) -> None:
        for alarm in alarms:
            # an unshuffled or replayed shoe: dealing stops until a supervisor decides
            self.d.holds.problem("integrity_alarm", alarm.detail, detector=alarm.kind,
                                 card_index=alarm.card_index)

    def _flagged(self, card: Card, flags: Mapping[str, Any], step: str | None) -> bool:
        """What a read's flags say about its card: noted, or (True) kept out of the round."""
        d = self.d
        face_up = bool(flags.get("face_up"))
        if flags.get("with_previous") or flags.get("multiple"):
            d.holds.note("multiple_cards", f"{card.code} drawn together with the card before "
                         f"it; kept in read order (top card first)", code=card.code)
        if face_up and procedure.face_up_voids(d.profile, step):
            # burn-and-replace or void: the card is not dealt; the supervisor applies the remedy
            assert d.shoe is not None
            d.shoe.inventory.record(card, "removed")
            d.holds.problem("face_up_card", f"{card.code} came out face up; profile remedy: "
                            f"{d.profile.face_up_card}", code=card.code)
            return True
        if face_up:
            d.holds.note("face_up_card", f"{card.code} came out face up; it stays valid",
                         code=card.code)
        return False

    def _not_due(self, card: Card, *, kept: bool = False) -> None:
        d = self.d
        shoe = d.shoe
        assert shoe is not None
        shoe.inventory.record(card, "removed")
        kind = "card_while_betting" if d.where() == BETTING else "card_not_due"
        if kept:
            # accepted with the reads of a hold: the procedure's remedy, no second hold
            if d.profile.card_when_none_due == "void" and d.round_open():
                d.move("round_void")
                d.rounds.void("card drawn when none was due")
                d.rounds.after()
            else:
                shoe.inventory.move(card.code, "removed", "burn")
                d.emit("burned", code=card.code, cause=kind)
            return
        if kind == "card_while_betting":
            d.holds.problem(kind, f"{card.code} drawn while bets were open", code=card.code)
        else:
            d.holds.problem(kind, f"{card.code} drawn while the table was "
                            f"{d.where()}; no card was due", code=card.code, where=d.where())

    def failed(self, reason: str, card_index: int | None) -> None:
        """A card the shoe saw but could not read (its read is counted already)."""
        d = self.d
        shoe = d.shoe
        if shoe is not None:
            shoe.inventory.unidentified += 1
            if d.state == SHOE_ENDED and shoe.counting == "shoe":
                if d.shoes.rest_accounted():
                    d.shoes.count_done()
                return
        d.holds.problem("unreadable_card", f"the shoe could not read a card "
                        f"({reason or 'no reason given'}); enter its code or void the round",
                        card_index=card_index,
                        **({"during": "burn"} if d.where() in (LOADED, BURNING) else {}))

    def deal_queued(self, reads: list[QueuedRead]) -> None:
        """Take reads kept during a hold, in read order, as the procedure says; if one of them
        holds the table again, the rest wait with that hold and are taken when it is cleared."""
        d = self.d
        for i, q in enumerate(reads):
            if q.code is None:
                self.failed(str(q.flags.get("failed", "")), q.flags.get("card_index"))
            else:
                self.card(q.code, q.flags, kept=True)
            if d.state == HOLD and d.hold is not None:
                d.hold.queued = list(reads[i + 1:]) + d.hold.queued
                return
