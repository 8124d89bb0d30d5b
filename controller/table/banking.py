"""The banking games at the table (Chemin de Fer, Baccarat en Banque): the hands' draw decisions,
the seats' choices, the bank that passes from seat to seat, and Chemin de Fer's stakes.

When the rules answer "decide:<name>" the table waits in `dealing.decide_<name>`; `decide`
records the choice through the rules, and a card read while a draw decision is pending means
the hand drew. A decision against a mandatory cell is a false coup, handled by the profile's
remedy (`[game_options] false_coup`). Punters stake or call "Banco" while bets are open, the
banker may cover only part, and when bets close the rules name who plays the hand for all.
"""
from __future__ import annotations

import logging
from typing import Any

from controller.errors import Corrected, InputError
from controller.games import BankingRules, as_stakes
from controller.games.procedure import decision_of
from controller.table.desk import Desk
from controller.table.model import Stakes
from controller.table.states import BETTING, step_in
from controller.words import Words, english, refuse

log = logging.getLogger("controller.table")


class Banking:
    def __init__(self, d: Desk, rules: BankingRules):
        self.d, self.rules = d, rules
        self.stakes_rules = as_stakes(rules)
        if d.bank is None:
            d.bank = rules.new_bank()

    # ------------------------------------------------------------------ decisions
    def due(self) -> str | None:
        """The decision the deal is waiting for, or None."""
        d = self.d
        step = step_in(d.state)
        if step is not None and decision_of(step) is not None and d.round is not None:
            return d.round.pending
        return None

    def default(self, name: str) -> Any:
        """The rules' documented default for a decision (simulation policy)."""
        return self.rules.default_decision(self.d.hands_for_rules(), name)

    def options(self, name: str) -> tuple:
        return tuple(self.rules.decision_options(self.d.hands_for_rules(), name))

    def decide(self, name: str, value: Any, user: str = "", seat: Any = None) -> None:
        """A decision by a hand (draw or stand) or a seat input (who banks, who plays).

        The decision the deal waits for is recorded and dealing goes on. A draw decision that is
        not due is checked against the tableau: against a mandatory cell it is a false coup
        (profile remedy "void": hold for the supervisor to void the coup; "correct": refused,
        with the correction, and recorded); otherwise it is refused as not due.
        """
        d = self.d
        self._check_decider(name, seat)
        if name not in self.rules.decisions:
            raise refuse("no_such_decision")
        step = step_in(d.state)
        if d.round is None or (step is None and d.state != BETTING):
            raise refuse("no_decision_due", state=d.state)
        if name not in d.rules.procedure.decisions:
            self.record(name, value, user=user)
            return
        if step is not None and decision_of(step) is not None:
            if name != d.round.pending:
                raise refuse("decision_not_due", decision=d.round.pending)
            self.record(name, value, user=user)
            d.rounds.advance(d.rounds.next_step())
            return
        self._out_of_turn(name, value, user, step or "")

    def record(self, name: str, value: Any, *, user: str, by: str = "") -> None:
        d = self.d
        rnd = d.round
        assert rnd is not None
        try:
            self.rules.decide(d.hands_for_rules(), name, value)
        except InputError as err:
            log.info("decision %s refused by the rules: %s", name, err)
            raise refuse("rules_refuse") from err
        stored = rnd.decisions[name]
        if name == "banker_seat" and d.bank is not None:
            d.bank = self.rules.bank_with_banker(d.bank, stored)
            rnd.bank_seat = stored
        shown = ("draw" if stored else "stand") if isinstance(stored, bool) else stored
        extra = {"by": by} if by else {}
        d.emit("decision", name=name, value=shown, user=user, **extra)

    def _out_of_turn(self, name: str, value: Any, user: str, step: str) -> None:
        """A draw decision while no decision is pending: a false coup, or refused as not due."""
        d = self.d
        try:
            draws = self.rules.draw_value(name, value)
        except InputError as err:
            log.info("decision %s refused by the rules: %s", name, err)
            raise refuse("rules_refuse") from err
        hand = name.removesuffix("_draw")
        if not step.endswith("_third"):
            raise refuse("decision_too_early")
        move = f"{hand}_third" if draws else f"stand:{hand}"
        coup = self.rules.check_draw(d.hands_for_rules(), move, d.profile.game_options)
        if coup is None:
            raise refuse("decision_not_now")
        fields = coup.as_fields()
        fields.update(decision=name, value="draw" if draws else "stand", user=user)
        kind, detail = fields.pop("kind"), fields.pop("detail")
        if coup.remedy == "void":
            d.holds.problem(kind, f"false coup: {detail}; the coup is void unless the "
                            f"supervisor decides otherwise", **fields)
            return
        d.holds.note(kind, f"false coup: {detail}; corrected at once", **fields)
        verb = "stands" if coup.drawn_in_error else "draws"
        words = Words("refuse.false_coup_stands" if coup.drawn_in_error
                      else "refuse.false_coup_draws")
        from controller.table.views import prompt_words
        corrected = Corrected(f"false coup: {detail}; corrected: the {coup.hand} {verb} "
                              f"— {english(prompt_words(d))}")
        corrected.words = words     # type: ignore[attr-defined]
        raise corrected

    def _check_decider(self, name: str, seat: Any) -> None:
        """A draw decision counts only from the hand's own player: the punter playing for all
        (`player_draw`), the bank (`banker_draw`). A decision naming no seat is the dealer's
        entry of that player's call."""
        rnd = self.d.round
        if seat is None or rnd is None:
            return
        seat = whole("seat", seat, 1)
        if name == "banker_draw" and seat != rnd.bank_seat:
            raise refuse("not_the_banker", seat=seat, banker=rnd.bank_seat)
        if name == "player_draw" and rnd.stakes is not None and rnd.stakes.active is not None \
                and seat != rnd.stakes.active:
            raise refuse("not_the_player", seat=seat, player=rnd.stakes.active)

    # ------------------------------------------------------------------ the bank
    def after_coup(self, *, void: bool) -> dict:
        """Who holds the bank after a coup; the result's `bank_seat` fields."""
        d = self.d
        rnd = d.round
        assert rnd is not None and d.bank is not None
        if not rnd.demo:
            misdraw = any(f.get("pass_bank") for f in rnd.flags)
            d.bank = self.rules.bank_after_coup(d.bank, d.hands_for_rules(), void=void,
                                                misdraw=misdraw)
        return {"bank_seat": rnd.bank_seat, "next_bank_seat": d.bank["banker"]}

    # ------------------------------------------------------------------ stakes
    def _stakes_open(self) -> Stakes:
        rnd = self.d.round
        if self.d.state != BETTING or rnd is None or rnd.stakes is None:
            raise refuse("bets_closed", state=self.d.state)
        return rnd.stakes

    def stake(self, seat: Any, amount: Any) -> None:
        """A punter's stake against the bank."""
        stakes = self._stakes_open()
        seat, amount = whole("seat", seat, 1), whole("amount", amount, 1)
        if self.d.round is not None and seat == self.d.round.bank_seat:
            raise refuse("seat_has_bank", seat=seat)
        stakes.offered[seat] = amount
        self.d.emit("stake", seat=seat, amount=amount)

    def banco(self, seat: Any) -> None:
        """A punter calls "Banco": he plays the whole bank alone."""
        stakes = self._stakes_open()
        seat = whole("seat", seat, 1)
        if self.d.round is not None and seat == self.d.round.bank_seat:
            raise refuse("seat_has_bank", seat=seat)
        if seat not in stakes.banco:
            stakes.banco.append(seat)
        self.d.emit("banco", seat=seat)

    def accept_stakes(self, amount: Any) -> None:
        """The banker covers stakes up to `amount` and refuses the excess."""
        stakes = self._stakes_open()
        stakes.limit = whole("amount", amount, 0)
        self.d.emit("stakes_accepted", limit=stakes.limit)

    def pool(self) -> None:
        """Bets are closing: the bank's cover and who plays the hand, by the rules."""
        d = self.d
        rnd = d.round
        if self.stakes_rules is None or rnd is None or rnd.stakes is None or d.bank is None:
            return
        s = rnd.stakes
        try:
            pool = self.stakes_rules.pool_stakes(d.bank, s.offered, s.banco, s.limit)
        except InputError as err:
            raise refuse("rules_refuse") from err
        s.accepted, s.refused = dict(pool.accepted), dict(pool.refused)
        s.active, s.banco_seat = pool.active, pool.banco
        if pool.active is not None:
            rnd.decisions["active_player"] = pool.active
        d.emit("stakes_pooled", **s.result_fields(),
               refused={str(k): v for k, v in s.refused.items()})


def whole(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise refuse("whole_number", "invalid_args", least=least)
    return value
