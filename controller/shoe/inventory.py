"""The shoe's card ledger: expected composition, every card seen and where it went.

At shoe end, burns + dealt + removed + the undealt remainder must equal the shoe exactly.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from controller.shoe.cards import Card, deck_composition, parse_card

PLACES = ("burn", "hand", "removed")


class Tally(Counter):
    """A Counter whose item assignment is dict's own: Counter's forgiving `__delitem__`
    shares its slot with assignment, so every `seen[code] += 1` of a plain Counter takes a
    lookup through Python; nothing deletes from a shoe's tally."""
    __delitem__ = dict.__delitem__


@dataclass
class Inventory:
    decks: int
    seen: Counter = field(default_factory=Tally)            # code -> copies seen
    by_place: dict = field(default_factory=lambda: {p: [] for p in PLACES})
    unidentified: int = 0      # cards known to have left the shoe whose code was never read
    drawn: int = 0             # cards recorded (burns, hands, removed), whatever went back since

    def __post_init__(self) -> None:
        #: by_place["hand"], kept at hand: every card of every round's hand goes there
        self.hand: list[str] = self.by_place["hand"]

    @property
    def expected(self) -> Counter:
        return Counter({c.code: n for c, n in deck_composition(self.decks).items()})

    @property
    def cards_out(self) -> int:
        return sum(self.seen.values()) + self.unidentified

    def problem(self, card: Card) -> str | None:
        """Why this card cannot come out of this shoe next, or None if it can."""
        if self.seen[card.code] >= self.decks:
            return (f"{card.code} would be copy {self.seen[card.code] + 1} of a card the "
                    f"{self.decks}-deck shoe holds {self.decks} times")
        return None

    def record(self, card: Card, place: str) -> None:
        self.drawn += 1
        self.seen[card.code] += 1
        self.by_place[place].append(card.code)

    def record_hand(self, card: Card) -> None:
        """`record(card, "hand")`, for the card of every round's hand."""
        self.drawn += 1
        self.seen[card.code] += 1
        self.hand.append(card.code)

    def unrecord(self, code: str, place: str) -> None:
        """Take back a card recorded by mistake (a read given back: it was never in play)."""
        self.by_place[place].remove(code)
        self.seen[code] -= 1
        self.drawn -= 1

    def move(self, code: str, src: str, dst: str) -> None:
        """Re-file a card already out (e.g. a stray card burned); the count does not change."""
        self.by_place[src].remove(code)
        self.by_place[dst].append(code)

    def reconcile(self, undealt: list[str]) -> list[str]:
        """Differences between the shoe and burns + hands + removed + undealt; [] when exact.

        Cards that left the shoe unread (and were never identified) explain as many missing
        cards, no more: a surplus of any card is always a difference.
        """
        total = Counter(self.seen) + Counter(undealt)
        exp = self.expected
        short = {c: exp[c] - total[c] for c in exp if total[c] < exp[c]}
        over = {c: total[c] - exp[c] for c in total if total[c] > exp[c]}
        if not over and sum(short.values()) == self.unidentified:
            return []
        problems = [f"{code}: expected {exp[code]}, accounted {exp[code] - n}"
                    for code, n in sorted(short.items())]
        problems += [f"{code}: expected {exp[code]}, accounted {exp[code] + n}"
                     for code, n in sorted(over.items())]
        if self.unidentified:
            problems.append(f"{self.unidentified} card(s) left the shoe unread")
        return sorted(problems)

    def to_dict(self) -> dict:
        return {"decks": self.decks, "unidentified": self.unidentified,
                "by_place": {k: list(v) for k, v in self.by_place.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> "Inventory":
        inv = cls(d["decks"], unidentified=d.get("unidentified", 0))
        for place, codes in d["by_place"].items():
            for code in codes:
                inv.record(parse_card(code), place)
        return inv
