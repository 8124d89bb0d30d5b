"""Chemin de Fer's stakes at the table: punters stake or call "Banco" while bets are open, the
banker may cover only part, and when bets close the rules name who plays the hand for all
(`games.chemin_de_fer.pool_stakes`). Only that punter's draw decision counts."""
from __future__ import annotations

from typing import Any

from controller.errors import InputError
from controller.table.decisions import DecisionsMixin
from controller.table.model import Stakes
from controller.table.states import BETTING
from controller.words import refuse


class StakesMixin(DecisionsMixin):
    """Stakes and banco for `controller.table.Table` (games whose rules pool stakes)."""

    def takes_stakes(self) -> bool:
        return hasattr(self.rules, "pool_stakes")

    def _stakes_open(self, action: str) -> Stakes:
        if not self.takes_stakes():
            raise refuse("no_stakes")
        rnd = self.round
        if self.state != BETTING or rnd is None or rnd.stakes is None:
            raise refuse("bets_closed", state=self.state)
        return rnd.stakes

    def stake(self, seat: Any, amount: Any) -> None:
        """A punter's stake against the bank."""
        stakes = self._stakes_open("stake")
        seat, amount = _whole("seat", seat, 1), _whole("amount", amount, 1)
        if seat == self.round.bank_seat:            # type: ignore[union-attr]
            raise refuse("seat_has_bank", seat=seat)
        stakes.offered[seat] = amount
        self.emit("stake", seat=seat, amount=amount)

    def banco(self, seat: Any) -> None:
        """A punter calls "Banco": he plays the whole bank alone."""
        stakes = self._stakes_open("banco")
        seat = _whole("seat", seat, 1)
        if seat == self.round.bank_seat:            # type: ignore[union-attr]
            raise refuse("seat_has_bank", seat=seat)
        if seat not in stakes.banco:
            stakes.banco.append(seat)
        self.emit("banco", seat=seat)

    def accept_stakes(self, amount: Any) -> None:
        """The banker covers stakes up to `amount` and refuses the excess."""
        stakes = self._stakes_open("accept_stakes")
        stakes.limit = _whole("amount", amount, 0)
        self.emit("stakes_accepted", limit=stakes.limit)

    def pool(self) -> None:
        """Bets are closing: the bank's cover and who plays the hand, by the rules."""
        rnd = self.round
        if rnd is None or rnd.stakes is None or self.bank is None:
            return
        s = rnd.stakes
        try:
            pool = self.rules.pool_stakes(  # type: ignore[attr-defined]
                self.bank, s.offered, s.banco, s.limit)
        except InputError as err:
            raise refuse("rules_refuse") from err
        s.accepted, s.refused = dict(pool.accepted), dict(pool.refused)
        s.active, s.banco_seat = pool.active, pool.banco
        if pool.active is not None:
            rnd.decisions["active_player"] = pool.active
        self.emit("stakes_pooled", **s.result_fields(),
                  refused={str(k): v for k, v in s.refused.items()})

    def check_decider(self, name: str, seat: Any) -> None:
        """A draw decision counts only from the hand's own player: the punter playing for all
        (`player_draw`), the bank (`banker_draw`). A decision naming no seat is the dealer's
        entry of that player's call."""
        rnd = self.round
        if seat is None or rnd is None:
            return
        seat = _whole("seat", seat, 1)
        if name == "banker_draw" and seat != rnd.bank_seat:
            raise refuse("not_the_banker", seat=seat, banker=rnd.bank_seat)
        if name == "player_draw" and rnd.stakes is not None and rnd.stakes.active is not None \
                and seat != rnd.stakes.active:
            raise refuse("not_the_player", seat=seat, player=rnd.stakes.active)


def _whole(name: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise refuse("whole_number", "invalid_args", least=least)
    return value
