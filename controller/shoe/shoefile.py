"""Shoe files: one card code per line in draw order, `#` comments, a line `CUT` for the cut card.

Errors name the file and line: `shoe.txt:17: 'XZ' is not a card code (rank A23456789TJQK + suit SHDC)`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from controller.shoe.cards import Card, CardCodeError, parse_card
from controller.errors import InputError


@dataclass(frozen=True)
class ShoeFile:
    path: str
    cards: tuple[Card, ...]
    cut_position: int | None      # cards in front of the cut card; None when no CUT line

    @property
    def codes(self) -> list[str]:
        return [c.code for c in self.cards]


def read_shoe_file(path: str | Path) -> ShoeFile:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")     # a byte-order mark is harmless
    except FileNotFoundError:
        raise InputError(f"{p}: no such shoe file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{p}: cannot read shoe file ({err})") from err
    cards: list[Card] = []
    cut: int | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        item = line.split("#", 1)[0].strip()
        if not item:
            continue
        if item.upper() == "CUT":
            if cut is not None:
                raise InputError(f"{p}:{lineno}: a second CUT line (a shoe has one cut card)")
            cut = len(cards)
            continue
        try:
            cards.append(parse_card(item))
        except CardCodeError as err:
            raise InputError(f"{p}:{lineno}: {err}") from None
    if not cards:
        raise InputError(f"{p}: no cards in the shoe file")
    return ShoeFile(str(p), tuple(cards), cut)


def check_against_decks(shoe: ShoeFile, decks: int) -> None:
    """A card may appear at most `decks` times; more is impossible in that shoe."""
    seen: Counter[Card] = Counter()
    for i, c in enumerate(shoe.cards):
        seen[c] += 1
        if seen[c] > decks:
            raise InputError(f"{shoe.path}: card {i + 1} {c.code!r} appears {seen[c]} times, "
                             f"more than the {decks} deck(s) of the profile hold")
    if len(shoe.cards) > 52 * decks:
        raise InputError(f"{shoe.path}: {len(shoe.cards)} cards, more than {decks} deck(s) hold")


def check_cut(shoe: ShoeFile, min_from_end: int, max_from_end: int | None, total: int) -> None:
    """The cut card must leave at least `min_from_end` of the shoe's `total` cards behind it,
    and at most `max_from_end` when the house sets a limit (None: the shoe's own)."""
    if shoe.cut_position is None:
        return
    behind = total - shoe.cut_position
    if behind < min_from_end:
        raise InputError(f"{shoe.path}: CUT after card {shoe.cut_position} leaves {behind} cards "
                         f"behind it; the profile needs at least {min_from_end} "
                         f"([cut_card] min_from_end)")
    if max_from_end is not None and behind > max_from_end:
        raise InputError(f"{shoe.path}: CUT after card {shoe.cut_position} leaves {behind} cards "
                         f"behind it; the profile allows at most {max_from_end} "
                         f"([cut_card] max_from_end)")
