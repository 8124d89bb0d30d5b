"""One module per game; each exposes a `RULES` object following `GameRules`.

A game's rules are pure: the cards of a round (by hand) decide who receives the next card, the
outcome, and the settlement of every bet of a paytable. The table machine only asks.
"""
from __future__ import annotations

from functools import cache
from typing import Mapping

from controller.shoe.cards import Card
from controller.games.rules import BankingRules, GameRules, StakesRules
# The game modules import nothing from this package's namespace, so loading them here is no cycle.
from controller.games import andar_bahar, baccarat_banque, chemin_de_fer, punto_banco

Hands = dict[str, list[Card]]


_RULES: dict[str, GameRules] = {m.RULES.game: m.RULES for m in (
    punto_banco, andar_bahar, chemin_de_fer, baccarat_banque)}


def get_rules(game: str) -> GameRules:
    """The rules object of a game named in a profile."""
    try:
        return _RULES[game]
    except KeyError:
        raise KeyError(f"game {game!r} is not implemented (known: {', '.join(_RULES)})") from None


def as_banking(rules: GameRules) -> BankingRules | None:
    """`rules` as a banking game (players decide, a seat holds the bank), or None."""
    return rules if _capable(rules.game, "banking") else None    # type: ignore[return-value]


def as_stakes(rules: GameRules) -> StakesRules | None:
    """`rules` as a game of punters' stakes against the bank, or None."""
    return rules if _capable(rules.game, "stakes") else None     # type: ignore[return-value]


@cache
def _capable(game: str, capability: str) -> bool:
    # asked once per game: an isinstance check against a protocol reads every member
    return isinstance(get_rules(game), {"banking": BankingRules, "stakes": StakesRules}[
        capability])


def known_bets(game: str) -> tuple[str, ...]:
    return get_rules(game).bets


def validate_options(game: str, options: Mapping, where: str) -> None:
    """Let the game check its own `[game_options]`; a game without options accepts none."""
    get_rules(game).validate_options(options, where)

__all__ = ["GameRules", "BankingRules", "StakesRules", "Hands", "get_rules", "as_banking",
           "as_stakes", "known_bets", "validate_options"]
