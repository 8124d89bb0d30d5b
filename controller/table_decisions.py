"""Draw decisions of the banking games (Chemin de Fer, Baccarat en Banque) on the table.

When the rules answer "decide:<name>" the table waits in `dealing.decide` with the name in
`round.pending`. The `decide` command records the choice through the rules; a card read while
a draw decision is pending means the hand drew. A decision against a mandatory cell is a false
coup, handled by the profile's remedy (`[game_options] false_coup`).
"""
from __future__ import annotations

from typing import Any

from controller.errors import CommandRefused, InputError
from controller.table_machine import DECIDE, dealing


class DecisionsMixin:
    """Decision handling for `controller.table.Table` (uses its rules, round and emit)."""

    def hands_for_rules(self) -> dict:
        """The round's hands as the rules see them: the cards, plus the decisions if the game
        has any (the same lists and dict, so the rules' updates land in the round state)."""
        rnd = self.round
        if "decisions" in self._new_hands_keys:
            return {**rnd.hands, "decisions": rnd.decisions}
        return rnd.hands

    def _set_next(self) -> None:
        """Ask the rules what comes next; a decision due is kept as the round's `pending`."""
        nxt = self.rules.next_phase(self.hands_for_rules())
        if nxt is not None and nxt.startswith(f"{DECIDE}:"):
            self.round.pending = nxt[len(DECIDE) + 1:]
            self._next = DECIDE
        else:
            self.round.pending = None
            self._next = nxt

    def decision_due(self) -> str | None:
        """The decision the deal is waiting for, or None."""
        if self.state == dealing(DECIDE) and self.round is not None:
            return self.round.pending
        return None

    def default_decision(self) -> Any:
        """The rules' documented default for the pending decision (simulation policy)."""
        name = self.decision_due()
        if name is None:
            raise CommandRefused(f"no decision is due (the table is {self.state})")
        return self.rules.default_decision(self.hands_for_rules(), name)

    def take_decision(self, name: str, value: Any, user: str = "") -> None:
        """A decision by a hand (draw or stand) or a seat input (who banks, who plays).

        The decision the deal waits for is recorded and dealing goes on. A draw decision that is
        not due is checked against the tableau: against a mandatory cell it is a false coup
        (profile remedy "void": hold for the supervisor to void the coup; "correct": refused,
        with the correction, and recorded); otherwise it is refused as not due.
        """
        known = tuple(getattr(self.rules, "decisions", ()))
        if name not in known:
            raise CommandRefused(f"{self.profile.game} has no decision {name!r}"
                                 + (f" (decisions: {', '.join(known)})" if known
                                    else "; this game takes no decisions"))
        if self.round is None or not self.state.startswith(("betting", dealing(""))):
            raise CommandRefused(f"no decision is due: the table is {self.state}")
        if name not in self.rules.draw_decisions:
            self._record_decision(name, value, user=user)
            return
        if self.state == dealing(DECIDE):
            if name != self.round.pending:
                raise CommandRefused(f"{name} is not due: the table waits for "
                                     f"{self.round.pending} (draw/stand)")
            self._record_decision(name, value, user=user)
            self._set_next()
            self.decided()
            return
        self._check_out_of_turn(name, value, user)

    def _record_decision(self, name: str, value: Any, *, user: str, by: str = "") -> None:
        rnd = self.round
        try:
            self.rules.decide(self.hands_for_rules(), name, value)
        except InputError as err:
            raise CommandRefused(str(err)) from err
        stored = rnd.decisions[name]
        if name == "banker_seat" and self.bank is not None:
            self.bank = self.rules.bank_with_banker(self.bank, stored)
            rnd.bank_seat = stored
        shown = ("draw" if stored else "stand") if isinstance(stored, bool) else stored
        extra = {"by": by} if by else {}
        self.emit("decision", name=name, value=shown, user=user, **extra)

    def _check_out_of_turn(self, name: str, value: Any, user: str) -> None:
        """A draw decision while no decision is pending: a false coup, or refused as not due."""
        try:
            draws = self.rules.draw_value(name, value)
        except InputError as err:
            raise CommandRefused(str(err)) from err
        phase = self.state[len(dealing("")):]
        hand = name.removesuffix("_draw")
        hands = self.hands_for_rules()
        if not phase.endswith("_third"):
            raise CommandRefused(f"{name} is not due: the first cards are not dealt yet "
                                 f"({self.prompt()})")
        move = f"{hand}_third" if draws else f"stand:{hand}"
        coup = self.rules.check_draw(hands, move, self.profile.game_options)
        if coup is None:
            raise CommandRefused(f"{name} is not due: {self.prompt()}")
        fields = coup.as_fields()
        fields.update(decision=name, value="draw" if draws else "stand", user=user)
        kind, detail = fields.pop("kind"), fields.pop("detail")
        if coup.remedy == "void":
            self.irregular(kind=kind, detail=f"false coup: {detail}; the coup is void unless "
                           f"the supervisor decides otherwise", **fields)
            return
        self._note(kind, f"false coup: {detail}; corrected at once", **fields)
        verb = "stands" if coup.drawn_in_error else "draws"
        raise CommandRefused(f"false coup: {detail}; corrected: the {coup.hand} {verb} "
                             f"— {self.prompt()}")
