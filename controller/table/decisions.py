"""Draw decisions of the banking games (Chemin de Fer, Baccarat en Banque) at the table.

When the rules answer "decide:<name>" the table waits in `dealing.decide_<name>`. The `decide`
command records the choice through the rules; a card read while a draw decision is pending
means the hand drew. A decision against a mandatory cell is a false coup, handled by the
profile's remedy (`[game_options] false_coup`).
"""
from __future__ import annotations

import logging
from typing import Any

from controller.errors import Corrected, InputError
from controller.games.procedure import decision_of
from controller.table.dealing import DealingMixin
from controller.table.states import BETTING, step_in
from controller.words import Words, refuse

log = logging.getLogger("controller.table")


class DecisionsMixin(DealingMixin):
    """Decisions for `controller.table.Table`."""

    def decision_due(self) -> str | None:
        """The decision the deal is waiting for, or None."""
        step = step_in(self.state)
        if step is not None and decision_of(step) is not None and self.round is not None:
            return self.round.pending
        return None

    def default_decision(self) -> Any:
        """The rules' documented default for the pending decision (simulation policy)."""
        name = self.decision_due()
        if name is None:
            raise refuse("no_decision_due", state=self.state)
        return self.rules.default_decision(self.hands_for_rules(), name)  # type: ignore

    def decision_options(self, name: str) -> tuple:
        return tuple(self.rules.decision_options(  # type: ignore[attr-defined]
            self.hands_for_rules(), name))

    def take_decision(self, name: str, value: Any, user: str = "") -> None:
        """A decision by a hand (draw or stand) or a seat input (who banks, who plays).

        The decision the deal waits for is recorded and dealing goes on. A draw decision that is
        not due is checked against the tableau: against a mandatory cell it is a false coup
        (profile remedy "void": hold for the supervisor to void the coup; "correct": refused,
        with the correction, and recorded); otherwise it is refused as not due.
        """
        known = tuple(getattr(self.rules, "decisions", ()))
        if name not in known:
            raise refuse("no_such_decision")
        step = step_in(self.state)
        if self.round is None or (step is None and self.state != BETTING):
            raise refuse("no_decision_due", state=self.state)
        if name not in self.rules.procedure.decisions:
            self.record_decision(name, value, user=user)
            return
        if step is not None and decision_of(step) is not None:
            if name != self.round.pending:
                raise refuse("decision_not_due", decision=self.round.pending)
            self.record_decision(name, value, user=user)
            self.advance(self.next_step())
            return
        self._check_out_of_turn(name, value, user, step or "")

    def record_decision(self, name: str, value: Any, *, user: str, by: str = "") -> None:
        rnd = self.round
        assert rnd is not None
        try:
            self.rules.decide(self.hands_for_rules(), name, value)  # type: ignore
        except InputError as err:
            log.info("decision %s refused by the rules: %s", name, err)
            raise refuse("rules_refuse") from err
        stored = rnd.decisions[name]
        if name == "banker_seat" and self.bank is not None:
            self.bank = self.rules.bank_with_banker(self.bank, stored)  # type: ignore
            rnd.bank_seat = stored
        shown = ("draw" if stored else "stand") if isinstance(stored, bool) else stored
        extra = {"by": by} if by else {}
        self.emit("decision", name=name, value=shown, user=user, **extra)

    def _check_out_of_turn(self, name: str, value: Any, user: str, step: str) -> None:
        """A draw decision while no decision is pending: a false coup, or refused as not due."""
        try:
            draws = self.rules.draw_value(name, value)  # type: ignore[attr-defined]
        except InputError as err:
            log.info("decision %s refused by the rules: %s", name, err)
            raise refuse("rules_refuse") from err
        hand = name.removesuffix("_draw")
        if not step.endswith("_third"):
            raise refuse("decision_too_early")
        move = f"{hand}_third" if draws else f"stand:{hand}"
        coup = self.rules.check_draw(  # type: ignore[attr-defined]
            self.hands_for_rules(), move, self.profile.game_options)
        if coup is None:
            raise refuse("decision_not_now")
        fields = coup.as_fields()
        fields.update(decision=name, value="draw" if draws else "stand", user=user)
        kind, detail = fields.pop("kind"), fields.pop("detail")
        if coup.remedy == "void":
            self.problem(kind, f"false coup: {detail}; the coup is void unless the supervisor "
                         f"decides otherwise", **fields)
            return
        self.note(kind, f"false coup: {detail}; corrected at once", **fields)
        verb = "stands" if coup.drawn_in_error else "draws"
        words = Words("refuse.false_coup_stands" if coup.drawn_in_error
                      else "refuse.false_coup_draws")
        corrected = Corrected(f"false coup: {detail}; corrected: the {coup.hand} {verb} "
                              f"— {self.prompt()}")
        corrected.words = words     # type: ignore[attr-defined]
        raise corrected

    def prompt(self) -> str:
        raise NotImplementedError      # Table
