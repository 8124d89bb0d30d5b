"""Cards: codes, baccarat points, burn values and deck composition.

Canonical code: rank `A23456789TJQK` + suit `SHDC` (e.g. `AS`, `TD`). Parsers also accept
`10D` and lower case; output is always canonical.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from drivers.cardcodes import CARD_CODES, RANKS, SUITS

CODE_HELP = f"rank {RANKS} + suit {SUITS}"


class CardCodeError(ValueError):
    """A text that is not a card code."""

    def __init__(self, text: str):
        super().__init__(f"{text!r} is not a card code ({CODE_HELP})")
        self.text = text


@dataclass(frozen=True, slots=True, order=True)
class Card:
    rank: str
    suit: str
    #: the canonical code ("TD") and the baccarat point value (A = 1, 2–9 pip, T/J/Q/K = 0),
    #: kept with the card: both are read for every card dealt
    code: str = field(init=False, compare=False, repr=False)
    point: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.rank not in RANKS or self.suit not in SUITS or len(self.rank) != 1:
            raise CardCodeError(f"{self.rank}{self.suit}")
        object.__setattr__(self, "code", self.rank + self.suit)
        object.__setattr__(self, "point", _POINT[self.rank])

    @property
    def burn_value(self) -> int:
        """How many cards a turned card orders burned: A = 1, 2–9 pip, T/J/Q/K = 10."""
        return _BURN[self.rank]

    @property
    def rank_index(self) -> int:
        """1 for an ace up to 13 for a king (for straights and factory order)."""
        return RANKS.index(self.rank) + 1

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"


#: the point value of each rank in the baccarat games (A = 1, 2-9 their pips, T/J/Q/K = 0)
POINT_OF_RANK = {r: (i + 1 if i < 9 else 0) for i, r in enumerate(RANKS)}
_POINT = POINT_OF_RANK
_BURN = {r: (i + 1 if i < 9 else 10) for i, r in enumerate(RANKS)}

ALL_CARDS: tuple[Card, ...] = tuple(Card(code[0], code[1]) for code in CARD_CODES)
_BY_CODE = {c.code: c for c in ALL_CARDS}
#: the card of each canonical code: what a reading shoe sends, taken without parsing
CARD_OF_CODE: dict[str, Card] = dict(_BY_CODE)


def parse_card(text: str) -> Card:
    """Parse `AS`, `td`, `10D` into a Card; raise CardCodeError otherwise."""
    card = _BY_CODE.get(text) if type(text) is str else None
    if card is not None:
        return card
    t = text.strip().upper()
    if t.startswith("10") and len(t) == 3:
        t = "T" + t[2]
    card = _BY_CODE.get(t)
    if card is None:
        raise CardCodeError(text.strip())
    return card


def card(code: str) -> Card:
    """Shorthand for parse_card, for tests and literals."""
    return parse_card(code)


def cards(codes: str | Iterable[str]) -> list[Card]:
    """Parse a space-separated string or an iterable of codes."""
    items = codes.split() if isinstance(codes, str) else codes
    return [parse_card(c) for c in items]


def codes(hand: Iterable[Card]) -> list[str]:
    return [c.code for c in hand]


def deck_composition(decks: int) -> Counter[Card]:
    """The expected contents of a shoe of `decks` standard 52-card decks."""
    return Counter({c: decks for c in ALL_CARDS})


def ordered_shoe(decks: int) -> list[Card]:
    """`decks` decks in factory order (for building test shoes; never dealt unshuffled)."""
    return [c for _ in range(decks) for c in ALL_CARDS]


def hand_total(hand: Iterable[Card]) -> int:
    return sum(c.point for c in hand) % 10
