"""The shoe's card ledger: expected composition, every card seen and where it went.

At shoe end, burns + dealt + removed + the undealt remainder must equal the shoe exactly.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from controller.cards import Card, deck_composition, parse_card

PLACES = ("burn", "hand", "removed")


@dataclass
class Inventory:
    decks: int
    seen: Counter = field(default_factory=Counter)          # code -> copies seen
    by_place: dict = field(default_factory=lambda: {p: [] for p in PLACES})

    @property
    def expected(self) -> Counter:
        return Counter({c.code: n for c, n in deck_composition(self.decks).items()})

    @property
    def cards_out(self) -> int:
        return sum(self.seen.values())

    def problem(self, card: Card) -> str | None:
        """Why this card cannot come out of this shoe next, or None if it can."""
        if self.seen[card.code] >= self.decks:
            return (f"{card.code} would be copy {self.seen[card.code] + 1} of a card the "
                    f"{self.decks}-deck shoe holds {self.decks} times")
        return None

    def record(self, card: Card, place: str) -> None:
        self.seen[card.code] += 1
        self.by_place[place].append(card.code)

    def move(self, code: str, src: str, dst: str) -> None:
        """Re-file a card already out (e.g. a stray card burned); the count does not change."""
        self.by_place[src].remove(code)
        self.by_place[dst].append(code)

    def reconcile(self, undealt: list[str]) -> list[str]:
        """Differences between the shoe and burns + hands + removed + undealt; [] when exact."""
        total = Counter(self.seen) + Counter(undealt)
        problems = []
        exp = self.expected
        for code in sorted(set(exp) | set(total)):
            if total[code] != exp[code]:
                problems.append(f"{code}: expected {exp[code]}, accounted {total[code]}")
        return problems

    def to_dict(self) -> dict:
        return {"decks": self.decks, "by_place": {k: list(v) for k, v in self.by_place.items()}}

    @classmethod
    def from_dict(cls, d: dict) -> "Inventory":
        inv = cls(d["decks"])
        for place, codes in d["by_place"].items():
            for code in codes:
                inv.record(parse_card(code), place)
        return inv
