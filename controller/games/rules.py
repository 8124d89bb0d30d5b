"""What a game is, as protocols: every game's rules (`GameRules`), and the capabilities some games
add (`BankingRules`: players' decisions and a bank that passes from seat to seat; `StakesRules`:
punters' stakes against that bank). The table asks a game what it is with isinstance, never by
probing for attributes."""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Protocol, runtime_checkable

from controller.games.procedure import Procedure
from controller.shoe.cards import Card

Hands = dict[str, Any]
#: every bet's net result per unit as JSON numbers (1 not 1.0, 0.95 not 19/20)
Numbers = dict[str, int | float]


def bet_number(x: Fraction) -> int | float:
    """A net result as JSON wants it: 1 not 1.0, 0.95 not 19/20."""
    return int(x) if x.denominator == 1 else float(x)


#: a settlement as JSON numbers, by its bets and the identities of its Fractions (the rules'
#: settlement tables share them between rounds, so no Fraction is hashed or converted again);
#: each entry holds its Fractions, so no other object can take their identities meanwhile
_SETTLED: dict[tuple, tuple[list[Fraction], Numbers]] = {}


def bet_numbers(settled: Mapping[str, Fraction]) -> Numbers:
    """Every bet's net result as JSON numbers (1 not 1.0, 0.95 not 19/20), as the table writes
    them; a new dict each time."""
    key = (*settled, *map(id, settled.values()))
    hit = _SETTLED.get(key)
    if hit is None:
        if len(_SETTLED) >= 4096:
            _SETTLED.clear()
        hit = _SETTLED[key] = (list(settled.values()),
                               {b: bet_number(x) for b, x in settled.items()})
    return dict(hit[1])


@runtime_checkable
class GameRules(Protocol):
    game: str
    bets: tuple[str, ...]
    #: the dealing phases (card slots) in the order they can occur
    phases: tuple[str, ...]
    #: the round's procedure as data: which step may follow which (the table's machine)
    procedure: Procedure
    #: rounds dealt from one shoe before it ends by itself (0: until the cut card)
    rounds_per_shoe: int

    def new_hands(self) -> Hands:
        """A round's empty hands (and, in the games with decisions, their "decisions"): a new
        dict each call, which the round keeps as its own."""

    def next_phase(self, hands: Hands) -> str | None:
        """The phase whose card is due next, or None when the round is complete."""

    #: whether `place` answers the phase due next (else it answers None)
    place_answers: bool

    def place(self, hands: Hands, phase: str, card: Card) -> str | None:
        """Put a card read in `phase` on its hand; with `place_answers`, the phase due next
        (`next_phase` of the hands it leaves), else None."""

    def outcome(self, hands: Hands) -> dict:
        """Result fields of a complete round (JSON-ready, no bets)."""

    def partial_outcome(self, hands: Hands) -> dict:
        """The fields of a round stopped before its end (void), shaped as a complete round's."""

    def settle(self, hands: Hands, paytable: Mapping) -> dict[str, Fraction]:
        """Net result per unit staked for every bet of the paytable."""

    def settler(self, paytable: Mapping) -> Callable[[Hands], Numbers]:
        """`settle` for one paytable as JSON numbers (a new dict each round), made once per
        paytable for a table to keep: what it can work out ahead, it does once."""

    def resulter(self, paytable: Mapping) -> Callable[[Hands], tuple[dict, Numbers]]:
        """`outcome` and `settler(paytable)` of a complete round in one: (its result fields,
        its bets as JSON numbers), made once per paytable; a game may work out both from
        one look at the hands."""

    def validate_options(self, options: Mapping, where: str) -> None:
        """ProfileError for a `[game_options]` entry the game does not take."""

    def validate_paytable(self, paytable: Mapping, where: str) -> None:
        """ProfileError for a paytable the game cannot settle."""


@runtime_checkable
class BankingRules(GameRules, Protocol):
    """A game whose hands decide (draw or stand where the tableau leaves a choice) and whose
    bank is held by a seat (Chemin de Fer, Baccarat en Banque)."""
    decisions: tuple[str, ...]
    draw_decisions: tuple[str, ...]
    seat_decisions: tuple[str, ...]

    def decision_options(self, hands: Hands, name: str) -> tuple: ...
    def decide(self, hands: Hands, name: str, value: Any) -> None: ...
    def default_decision(self, hands: Hands, name: str) -> Any: ...
    def draw_value(self, name: str, value: Any) -> bool: ...
    def check_draw(self, hands: Hands, move: str, options: Mapping | None = None) -> Any: ...
    def new_bank(self) -> dict: ...
    def bank_with_banker(self, bank: Mapping, seat: int) -> dict: ...
    def bank_after_coup(self, bank: Mapping, hands: Hands, *, void: bool = False,
                        misdraw: bool = False) -> dict: ...


@runtime_checkable
class StakesRules(BankingRules, Protocol):
    """A banking game where punters stake against the bank, or call banco (Chemin de Fer)."""

    def pool_stakes(self, bank: Mapping, stakes: Mapping[int, int], banco: Iterable[int] = (),
                    limit: int | None = None) -> Any: ...


class Rules:
    """What a game's rules class inherits unless it says otherwise: no rounds-per-shoe limit, a
    `place` that leaves the next phase to `next_phase`, a void round shows its hands as they
    were, no game options, any paytable of its bets."""
    rounds_per_shoe = 0
    place_answers = False

    # every game's rules class defines it; the default settler below builds on it
    settle: Callable[[Hands, Mapping], dict[str, Fraction]]

    def settler(self, paytable: Mapping) -> Callable[[Hands], Numbers]:
        settle = self.settle
        return lambda hands: bet_numbers(settle(hands, paytable))

    outcome: Callable[[Hands], dict]

    def resulter(self, paytable: Mapping) -> Callable[[Hands], tuple[dict, Numbers]]:
        settle = self.settler(paytable)
        return lambda hands: (self.outcome(hands), settle(hands))

    def partial_outcome(self, hands: Hands) -> dict:
        return {k: [c.code for c in v] for k, v in hands.items() if isinstance(v, list)}

    def validate_options(self, options: Mapping, where: str) -> None:
        if options:
            from controller.errors import ProfileError
            key = next(iter(options))
            raise ProfileError(where, f"game_options.{key}",
                               f"{getattr(self, 'game', 'this game')} takes no game options",
                               "remove [game_options]")

    def validate_paytable(self, paytable: Mapping, where: str) -> None:
        return None
