"""A continuous shuffler-dealer (docs/rules.md, source 000 art. 2.3 and 7.2) as a shoe model.

It deals like the card-recognition shoe (same wire protocols, same faults, reached by the same
shoesim:// URL), has no cut card, and takes cards back: after every round the dealer returns
that round's cards (`return_cards`) and the machine puts each one back at a random place among
the cards it still holds, so it never runs out. Draw indices (`position`, `card_at`, fault
indices) keep counting every card dealt since the machine was loaded.

Randomness: where a returned card goes is drawn from the operating system's CSPRNG
(`secrets.SystemRandom`), as the shuffler's shuffles are. A `seed` switches to
`random.Random(seed)` so that a simulation is repeatable (the same seed, the same rounds); a
seeded machine is for simulations and tests, never for play.
"""
from __future__ import annotations

import random
import secrets
from typing import Any, Iterable, Sequence

from drivers.shoe.codec import check_code
from simulators.shoe import ShoeModel


class ContinuousShufflerModel(ShoeModel):
    """The ShoeModel contract (CONTRACTS.md) plus `return_cards`; `seed` makes it repeatable."""

    def __init__(self, cards: Sequence[str], *, seed: int | str | None = None, **kw: Any):
        if kw.get("cut_position") is not None:
            raise ValueError("a continuous shuffler has no cut card")
        super().__init__(cards, **kw)
        self._rng: random.Random = secrets.SystemRandom() if seed is None else random.Random(seed)
        self.seeded = seed is not None
        self.returned = 0

    def reseed(self, seed: int | str) -> None:
        """Go on from another seed (a seeded machine started again without its saved state must
        not place the returned cards as it did before); an unseeded machine stays unseeded."""
        if self.seeded:
            self._rng = random.Random(seed)

    def return_cards(self, codes: Iterable[str]) -> None:
        """The round's cards go back in, each at a uniformly random place among those held."""
        with self._lock:
            for code in codes:
                at = self._rng.randint(self._pos, len(self._cards))
                self._cards.insert(at, check_code(code))
                self.returned += 1

    @property
    def held(self) -> int:
        """Cards in the machine now."""
        return self.remaining
