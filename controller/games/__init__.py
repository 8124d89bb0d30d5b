"""One module per game; each exposes a `RULES` object following `GameRules`.

A game's rules are pure: the cards of a round (by hand) decide who receives the next card, the
outcome, and the settlement of every bet of a paytable. The table machine only asks.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping, Protocol

from controller.shoe.cards import Card
from controller.errors import ProfileError
from controller.games.procedure import Procedure
# The game modules import nothing from this package's namespace, so loading them here is no cycle.
from controller.games import andar_bahar, baccarat_banque, chemin_de_fer, punto_banco

Hands = dict[str, list[Card]]


class GameRules(Protocol):
    game: str
    bets: tuple[str, ...]
    #: the dealing phases (card slots) in the order they can occur
    phases: tuple[str, ...]
    #: the round's procedure as data: which step may follow which (the table's machine)
    procedure: Procedure

    def new_hands(self) -> Hands: ...

    def next_phase(self, hands: Hands) -> str | None:
        """The phase whose card is due next, or None when the round is complete."""

    def place(self, hands: Hands, phase: str, card: Card) -> None:
        """Put a card read in `phase` on its hand."""

    def outcome(self, hands: Hands) -> dict:
        """Result fields of a complete round (JSON-ready, no bets)."""

    def settle(self, hands: Hands, paytable: Mapping) -> dict[str, Fraction]:
        """Net result per unit staked for every bet of the paytable."""


_RULES: dict[str, GameRules] = {m.RULES.game: m.RULES for m in (
    punto_banco, andar_bahar, chemin_de_fer, baccarat_banque)}


def get_rules(game: str) -> GameRules:
    """The rules object of a game named in a profile."""
    try:
        return _RULES[game]
    except KeyError:
        raise KeyError(f"game {game!r} is not implemented (known: {', '.join(_RULES)})") from None


def known_bets(game: str) -> tuple[str, ...]:
    return get_rules(game).bets


def validate_options(game: str, options: Mapping, where: str) -> None:
    """Let the game check its own `[game_options]`; a game without options accepts none."""
    rules = get_rules(game)
    check = getattr(rules, "validate_options", None)
    if check is not None:
        check(options, where)
    elif options:
        key = next(iter(options))
        raise ProfileError(where, f"game_options.{key}", f"{game} takes no game options",
                           "remove [game_options]")
