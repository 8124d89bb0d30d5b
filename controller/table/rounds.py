"""Rounds at the table: opened (bets, or the cards dealt before them), dealt card by card as the
rules name the next step (which the machine must allow, `next_<step>`), and settled, void or
cancelled; between rounds, the shoe ends when it is due to."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from controller.games import procedure
from controller.games.deal import RoundDeal
from controller.games.procedure import RESULT, decision_of, step_of
from controller.games.rules import Numbers
from controller.shoe.cards import CARD_OF_CODE, Card
from controller.shoe.integrity import _BITS, _NUMBER, _STEP
from controller.table.desk import Desk
from controller.table.model import RoundState, Stakes
from controller.table.shoes import flag_list
from controller.table.states import BURN, IDLE, dealing

#: a round's events as Desk.emit writes them (a round is open), copied and filled in: a copy of a
#: small dict costs less than building one with the same keys
_CARD = {"event": "card", "shoe": 0, "round": 0, "n": 0, "code": "", "slot": "", "flags": []}
_STARTED = {"event": "round_started", "shoe": 0, "round": 0, "demo": False}
_BETS_OPEN = {"event": "bets_open", "shoe": 0, "round": 0, "closes_in_s": 0.0}
_BETS_CLOSED = {"event": "bets_closed", "shoe": 0, "round": 0}
_RESULT = {"event": "round_result", "shoe": 0, "round": 0}


class Rounds:
    def __init__(self, d: Desk):
        self.d = d
        self.deal_rules = RoundDeal(d.rules)
        proc = d.rules.procedure
        self._slots = frozenset(proc.slots)     # steps whose card goes to the slot itself
        self._bets_after = proc.bets_after
        self._first = f"next_{proc.first}"     # the trigger to a round's first card
        self._steps: dict[str | None, tuple[str, str | None]] = {}  # rules' answer → step
        self._triggers: dict[str, str] = {}     # step → the machine's trigger to it
        self._settled: tuple[Any, Callable[[dict], Numbers],
                             dict[str, Callable[[dict], Numbers]] | None,
                             Callable[[dict], tuple[dict, Numbers]]] | None = None

    # ------------------------------------------------------------------ between rounds
    def between(self) -> None:
        """The table is idle: end the shoe if it is due to end, else start the next round when
        the table runs by itself."""
        d = self.d
        if d.reveal_due is not None:
            return              # the hands are still face down: the dealer reveals them first
        shoe = d.shoe
        if shoe is not None and shoe.end_reason:
            d.shoes.over(shoe.end_reason)
        elif d.auto_open and d.state == IDLE:
            self.open()

    def open(self) -> None:
        """A new round: bets open, or first the cards dealt before the bets (Andar Bahar's
        game card), after which they open."""
        d = self.d
        shoe = d.shoe
        assert shoe is not None
        burn_due = procedure.between_round_burn(d.profile, shoe.rounds)
        bets_after = self._bets_after
        if bets_after:
            d.move("next_burn" if burn_due > 0 else self._first)
        else:
            try:            # as d.move("bets_open"), inline where it goes one way (Desk.move)
                d.mstate, d.state = d.direct["bets_open"][d.mstate]
            except KeyError:
                d.move("bets_open")
        demo = shoe.demo_left > 0
        if demo:
            shoe.demo_left -= 1
        hands: dict[str, Any] = d.rules.new_hands()     # a new one each call
        decisions: dict[str, Any] = hands.pop("decisions", {})
        # as _next_number, inline
        number = d.round_count + 1 if d.rules.rounds_per_shoe else shoe.rounds + 1
        d.round = rnd = RoundState.opened(number, demo, hands, burn_due, decisions,
                                          d.bank["banker"] if d.bank else None,
                                          Stakes() if d.stakes_game else None)
        shoe.rounds += 1
        d.round_count += 1
        e = _STARTED.copy()
        e["shoe"], e["round"], e["demo"] = d.shoe_no, rnd.number, demo
        d.outbox.append(e)
        if not bets_after:
            self.bets_open()

    def bets_open(self) -> None:
        d = self.d
        rnd = d.round
        assert rnd is not None
        e = _BETS_OPEN.copy()
        e["shoe"], e["round"], e["closes_in_s"] = d.shoe_no, rnd.number, d.betting_seconds
        d.outbox.append(e)
        if d.auto_open and d.betting_seconds <= 0 and not (
                d.shoe is not None and d.shoe.house_burn_announced):
            self.close_bets()

    def close_bets(self) -> None:
        d = self.d
        rnd = d.round
        assert rnd is not None
        if d.banking is not None:
            d.banking.pool()
        if rnd.after_bets:
            nxt, rnd.after_bets = rnd.after_bets, None
            d.move(f"next_{nxt}")
        else:
            trigger = "next_burn" if rnd.burn_due > 0 else self._first
            try:            # as d.move(trigger), inline where it goes one way (Desk.move)
                d.mstate, d.state = d.direct[trigger][d.mstate]
            except KeyError:
                d.move(trigger)
        e = _BETS_CLOSED.copy()
        e["shoe"], e["round"] = d.shoe_no, rnd.number
        d.outbox.append(e)

    def _next_number(self) -> int:
        """Rounds count per shoe; games whose every round has its own shoe (Andar Bahar's
        deck per round) number them across the table's shoes instead."""
        d = self.d
        assert d.shoe is not None
        if d.rules.rounds_per_shoe:
            return d.round_count + 1
        return d.shoe.rounds + 1

    # ------------------------------------------------------------------ dealing a round
    def deal(self, card: Card, step: str, flags: Mapping[str, Any]) -> None:
        """A card for the step that is due; the rules name the next one."""
        d = self.d
        rnd, shoe = d.round, d.shoe
        assert rnd is not None and shoe is not None
        inventory = shoe.inventory
        if step == BURN:
            rnd.burned_before.append(card.code)
            rnd.burn_due -= 1
            inventory.record(card, "burn")
            nxt = BURN if rnd.burn_due > 0 else self.next_step()
            slot = BURN
        else:
            hands = d.hands_for_rules() if d.banking_game else rnd.hands
            if step in self._slots:
                d.rules.place(hands, step, card)
                slot = step
            else:
                if decision_of(step) is not None:
                    # a card while a draw decision is pending: the hand drew
                    assert d.banking is not None
                    d.banking.record(rnd.pending or "", True, user="shoe", by="card")
                slot = self.deal_rules.place(hands, step, card)
            rnd.cards += 1
            if flags and flags.get("entered"):
                # typed by the supervisor, not read: the round and the console say so
                rnd.flags.append({"kind": "card_entered", "code": card.code,
                                  "detail": f"{card.code} entered by hand"})
            # as inventory.record_hand(card), inline: every card of every hand comes here
            inventory.drawn += 1
            inventory.seen[card.code] += 1
            inventory.hand.append(card.code)
            # the rules' answer, as the step due and the decision it waits for (_next_step)
            answer = d.rules.next_phase(hands)
            try:
                known = self._steps[answer]
            except KeyError:
                known = self._learn(answer)
            rnd.pending = known[1]
            nxt = known[0]
        e = _CARD.copy()
        e["shoe"] = d.shoe_no
        e["round"] = rnd.number
        e["n"] = inventory.drawn
        e["code"] = card.code
        e["slot"] = slot
        e["flags"] = flag_list(flags) if flags else []
        d.outbox.append(e)
        if slot == self._bets_after:
            # the cards shown before the bets are out: bets open, then the round goes on
            rnd.after_bets = nxt
            d.move("bets_open")
            self.bets_open()
            return
        if nxt == RESULT:       # as `advance`
            self.complete()
            return
        try:
            trigger = self._triggers[nxt]
        except KeyError:
            trigger = self._trigger(nxt)
        try:
            # as d.move(trigger), inline where the move goes one way from here (Desk.move)
            d.mstate, d.state = d.direct[trigger][d.mstate]
        except KeyError:
            d.move(trigger)

    # ------------------------------------------------------------------ the common card
    def common_reads(self) -> dict[str, Callable[[Any], bool]]:
        """For each dealing state whose step puts a card on a hand, the whole step for the
        read almost every card is: a canonical code with no flag, a copy the shoe can still
        hold, the cut card not pending. Each takes the card read (`CardRead`) and does what
        `Table._card`, `Reads.card` and `deal` would, in the same order, or (False) declines
        before changing anything, for the general path to take it. Games whose hands decide
        (the banking games) and the step after which bets open go the general way only."""
        d = self.d
        if d.banking_game:
            return {}
        proc = d.rules.procedure
        return {dealing(step): self._common_read(step) for step in proc.slots
                if step != proc.bets_after}

    def _common_read(self, step: str) -> Callable[[Any], bool]:
        d = self.d
        rules = d.rules         # its place and next_phase looked up on each card, as `deal` does
        answers = rules.place_answers   # place answers the next phase: no next_phase asked
        state = dealing(step)
        #: the rules' answer after a card of this step → (the step due, the decision it waits
        #: for, the machine's trigger to it, its one-way move from here or None), learned
        after: dict[str | None, tuple[str, str | None, str, tuple[str, str] | None]] = {}
        template = dict(_CARD, slot=step)     # the card's event, its slot filled in

        def learn(answer: str | None) -> tuple[str, str | None, str, tuple[str, str] | None]:
            nxt, pending = self._steps.get(answer) or self._learn(answer)
            trigger = self._triggers.get(nxt) or self._trigger(nxt)
            move = None if nxt == RESULT else d.machine.direct.get(trigger, {}).get(state)
            known = after[answer] = (nxt, pending, trigger, move)
            return known

        def read(inp: Any) -> bool:
            if inp.manual_burn or inp.face_up or inp.multiple or inp.with_previous:
                return False
            code = inp.code
            card = CARD_OF_CODE.get(code)
            shoe, rnd = d.shoe, d.round
            if card is None or shoe is None or rnd is None or (
                    shoe.cut_seen and shoe.cut_round is None):
                return False
            inventory = shoe.inventory
            seen = inventory.seen
            copies = seen[code]
            if copies >= inventory.decks:
                return False
            shoe.reads += 1
            hands = rnd.hands
            if answers:
                answer = rules.place(hands, step, card)
            else:
                rules.place(hands, step, card)
                answer = rules.next_phase(hands)
            rnd.cards += 1
            # as inventory.record_hand(card), inline
            n = inventory.drawn = inventory.drawn + 1
            seen[code] = copies + 1
            inventory.hand.append(code)
            try:
                nxt, rnd.pending, trigger, move = after[answer]
            except KeyError:
                nxt, rnd.pending, trigger, move = learn(answer)
            e = template.copy()
            e["shoe"] = d.shoe_no
            e["round"] = rnd.number
            e["n"] = n
            e["code"] = code
            e["flags"] = []
            d.outbox.append(e)
            if move is not None:
                d.mstate, d.state = move
            elif nxt == RESULT:
                self.complete()
            else:
                d.move(trigger)
            # as d.integrity.feed(code), inline for the card almost every card is: no step of
            # a run in one suit, no window of the shoe before; any other goes the watch's way
            w = d.integrity
            num = _NUMBER[code]
            key = ((w._key << _BITS) | num) & w._mask
            if w._row[num] or key in w._windows:
                alarms = w.feed(code)
                if alarms:
                    d.reads.integrity_alarms(alarms)
                return True
            w.current.append(code)
            w._row = _STEP[num]
            w._step = 0
            w._key = key
            w._keys.append(key)
            w._matching = False
            return True
        return read

    def next_step(self) -> str:
        """Ask the rules what comes next; a decision due is kept as the round's `pending`."""
        return self._next_step(self.d.hands_for_rules())

    def _next_step(self, hands: dict) -> str:
        d = self.d
        assert d.round is not None
        answer = d.rules.next_phase(hands)
        known = self._steps.get(answer)
        if known is None:
            known = self._learn(answer)
        d.round.pending = known[1]
        return known[0]

    def _learn(self, answer: str | None) -> tuple[str, str | None]:
        """The step a rules' answer names and the decision it waits for (remembered)."""
        step = step_of(answer)
        known = self._steps[answer] = (step, decision_of(step))
        return known

    def advance(self, nxt: str) -> None:
        """Move to the step due next, or complete the round."""
        if nxt == RESULT:
            self.complete()
        else:
            trigger = self._triggers.get(nxt)
            self.d.move(trigger if trigger is not None else self._trigger(nxt))

    def _trigger(self, step: str) -> str:
        """The machine's trigger to `step` (remembered)."""
        trigger = self._triggers[step] = f"next_{step}"
        return trigger

    # ------------------------------------------------------------------ the round's end
    def complete(self) -> None:
        d = self.d
        rnd = d.round
        assert rnd is not None
        hands = d.hands_for_rules() if d.banking_game else rnd.hands
        settled = self._settled
        if settled is None or settled[0] is not d.profile:
            self._settlers()
            settled = self._settled
            assert settled is not None
        by_mode, result = settled[2], settled[3]
        e = _RESULT.copy()
        e["shoe"] = d.shoe_no
        e["round"] = rnd.number
        if rnd.demo:
            outcome, bets = d.rules.outcome(hands), None
        else:
            outcome, bets = result(hands)
        if rnd.burned_before or rnd.stakes is not None:
            e.update(self._result_fields(outcome))
        else:                   # as _result_fields, inline: most rounds have neither
            e["game"] = d.profile.game
            e.update(outcome)
        if bets is None:
            p = d.profile
            e["bets"] = {b: 0 for b in p.paytable}
            if by_mode is not None:
                e["bets_by_mode"] = {mode: {b: 0 for b in p.paytables[mode]}
                                     for mode in by_mode}
        else:
            e["bets"] = bets
            if by_mode is not None:
                e["bets_by_mode"] = {mode: s(hands) for mode, s in by_mode.items()}
        if rnd.demo or rnd.flags:
            self._mark(e)
        if d.profile.reveal == "on_reveal":
            # known to the controller now, shown to the table only on the dealer's reveal
            e["reveal"] = "pending"
            d.reveal_due = rnd.number
        try:                # as d.move("result"), inline where it goes one way (Desk.move)
            d.mstate, d.state = d.direct["result"][d.mstate]
        except KeyError:
            d.move("result")
        if d.banking is not None:
            e.update(self._pass_bank(void=False))
        d.outbox.append(e)
        self.after()

    def cancel(self, reason: str) -> None:
        """A round opened but not a card dealt to it: it never happened (no move: the command
        that cancels it makes its own)."""
        d = self.d
        shoe = d.shoe
        assert shoe is not None
        d.holds.set_aside()
        d.hold = None
        shoe.rounds -= 1
        d.round_count -= 1
        d.round = None
        d.emit("round_cancelled", reason=reason)

    def void(self, reason: str) -> None:
        """The round in progress is void: every bet 0; the hold, if any, is over. What follows
        (the next round, or the shoe's end) is the caller's, as is the move."""
        d = self.d
        rnd = d.round
        assert rnd is not None
        d.holds.set_aside()
        d.hold = None
        outcome: dict[str, Any] = d.rules.partial_outcome(d.hands_for_rules())
        if d.banking_game:
            outcome["decisions"] = dict(rnd.decisions)
        fields = self._result_fields(outcome)
        fields.update(void=True, reason=reason, bets={b: 0 for b in d.profile.paytable})
        if self._settlers()[1] is not None:
            fields["bets_by_mode"] = {mode: {b: 0 for b in table}
                                      for mode, table in d.profile.paytables.items()}
        self._mark(fields)
        fields.update(self._pass_bank(void=True))
        d.emit("round_result", **fields)

    def after(self) -> None:
        """Return a continuous shuffler's cards; decide whether the shoe ends; carry on."""
        d = self.d
        shoe, rnd = d.shoe, d.round
        assert shoe is not None and rnd is not None
        if shoe.continuous:
            codes = shoe.inventory.return_all(  # type: ignore[attr-defined]
                list(rnd.burned_before) + [c.code for h in rnd.hands.values() for c in h])
            if codes:
                d.emit("cards_returned", cards=codes)
        p = d.profile
        if shoe.cut_round is None and not d.rules.rounds_per_shoe and not p.continuous_shuffler:
            # as procedure.end_after_round, inline for most rounds: no cut card reached, no
            # rounds to count, no shuffler's load to deal
            shoe.end_reason = None
        else:
            shoe.end_reason = procedure.end_after_round(
                p, rnd.number, shoe.cut_round, rounds_per_shoe=d.rules.rounds_per_shoe,
                rounds_in_shoe=shoe.rounds, drawn=shoe.inventory.drawn)
        self.between()

    # ------------------------------------------------------------------ settlement
    def _settlers(self) -> tuple[Callable[[dict], Numbers],
                                 dict[str, Callable[[dict], Numbers]] | None]:
        """The profile's settlement, worked out once per profile (a profile never changes;
        a new mode or profile is a new one): the live paytable's, and every mode's when each
        mode is live in every round (players choose theirs); kept with the rules' outcome
        and the live paytable's settlement in one (`resulter`)."""
        d = self.d
        p = d.profile
        cached = self._settled
        if cached is not None and cached[0] is p:
            return cached[1], cached[2]
        rules = d.rules
        modes = None
        if len(p.paytables) > 1 and p.game_options.get("modes", "both") == "both":
            modes = {mode: rules.settler(table) for mode, table in p.paytables.items()}
        self._settled = (p, rules.settler(p.paytable), modes, rules.resulter(p.paytable))
        return self._settled[1], modes

    def _result_fields(self, outcome: dict) -> dict[str, Any]:
        """A round_result's fields: the game, the burn before the round, the outcome."""
        d = self.d
        rnd = d.round
        assert rnd is not None
        fields: dict[str, Any] = {"game": d.profile.game}
        if rnd.burned_before:
            fields["burned_before"] = list(rnd.burned_before)
        fields.update(outcome)
        if rnd.stakes is not None:
            fields.update(rnd.stakes.result_fields())
        return fields

    def _mark(self, fields: dict[str, Any]) -> None:
        """A demonstration round says so; a round with irregularities names them."""
        rnd = self.d.round
        assert rnd is not None
        if rnd.demo:
            fields["demo"] = True
        if rnd.flags:
            fields["irregularities"] = [f["kind"] for f in rnd.flags]

    def _pass_bank(self, *, void: bool) -> dict:
        """Who holds the bank after a coup (banking games); the result's `bank_seat` fields."""
        d = self.d
        if d.banking is None:
            return {}
        return d.banking.after_coup(void=void)
