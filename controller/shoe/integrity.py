"""Live integrity detectors, fed one card code at a time as cards leave the shoe.

- FactoryOrderDetector: `length` (default 5) consecutive cards of one suit in rank order,
  ascending or descending (A low, no wrap) — an unshuffled or badly shuffled pack.
- RepeatDetector: `k` (default 8) consecutive cards that repeat a run of the previous shoe —
  a shoe dealt again without a shuffle, or a shuffler replaying an order.

Each `feed(code)` returns an Alarm (which the table turns into a hold) or None. An alarm is
raised once per offending stretch: a run that keeps growing does not alarm again until it
breaks. Codes that are not cards (the inventory reports those) break any run.

False alarms with the defaults on a well-shuffled 8-deck shoe of 416 cards (tests measure both):
- factory order: a window of five is one suit in ascending order when its first card's rank
  allows four more (9/13) and each next card is the one specific code (8 copies among the
  ~415 left): 9/13 · 8⁴/(415·414·413·412) ≈ 9.7e-8; twice that for both directions, over 412
  windows: ≈ 8.0e-5 per shoe, about 0.08 per 1000 shoes.
- repeat: two given windows of eight agree with probability ≈ (1/52)⁸ ≈ 1.9e-14; 409 × 409
  window pairs give ≈ 3e-9 per shoe.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from controller.shoe.cards import ALL_CARDS, CardCodeError, parse_card

#: canonical codes answered without parsing (the detectors see every card of every shoe)
_KNOWN = {c.code: (c.rank_index, c.suit) for c in ALL_CARDS}


@dataclass(frozen=True)
class Alarm:
    kind: str            # "factory_order" | "repeated_sequence"
    detail: str
    card_index: int      # 1-based index in the shoe of the card that completed the pattern


def _rank_suit(code: str) -> tuple[int, str] | None:
    known = _KNOWN.get(code)
    if known is not None:
        return known
    try:
        card = parse_card(code)
    except (CardCodeError, AttributeError):
        return None
    return card.rank_index, card.suit


def _canonical(code: str) -> str | None:
    if code in _KNOWN:
        return code
    try:
        return parse_card(code).code
    except (CardCodeError, AttributeError):
        return None


class FactoryOrderDetector:
    """Alarm on `length` consecutive cards of one suit in ascending or descending rank order."""

    kind = "factory_order"

    def __init__(self, length: int = 5):
        if length < 2:
            raise ValueError("a factory-order run is at least 2 cards long")
        self.length = length
        self.new_shoe()

    def new_shoe(self) -> None:
        self.index = 0
        self._last: tuple[int, str] | None = None
        self._run: list[str] = []
        self._step = 0                          # +1 ascending, −1 descending, 0 not yet known

    def feed(self, code: str) -> Alarm | None:
        self.index += 1
        card = _rank_suit(code)
        last, self._last = self._last, card
        if card is None:
            self._run, self._step = [], 0
            return None
        if last is not None and card[1] == last[1] and abs(card[0] - last[0]) == 1:
            step = card[0] - last[0]
            if self._step in (0, step):
                self._run.append(code)
            else:                               # turned round: the last two start a new run
                self._run = self._run[-1:] + [code]
            self._step = step
        else:
            self._run, self._step = [code], 0
        if len(self._run) == self.length:
            way = "ascending" if self._step > 0 else "descending"
            return Alarm(self.kind, f"{self.length} cards of one suit in {way} rank order: "
                         f"{' '.join(self._run)}", self.index)
        return None


class RepeatDetector:
    """Alarm when `k` consecutive cards repeat a run of `k` cards of the previous shoe."""

    kind = "repeated_sequence"

    def __init__(self, k: int = 8):
        if k < 2:
            raise ValueError("a repeated run is at least 2 cards long")
        self.k = k
        self._previous: dict[tuple[str, ...], int] = {}
        self._current: list[str] = []
        self._window: deque[str] = deque(maxlen=k)
        self._matching = False
        self.index = 0

    def set_previous(self, codes: list[str]) -> None:
        """The previous shoe's sequence (e.g. restored from the journal)."""
        canon = [c for c in map(_canonical, codes) if c is not None]
        self._previous = {}
        for i in range(len(canon) - self.k + 1):
            self._previous.setdefault(tuple(canon[i:i + self.k]), i + 1)

    def new_shoe(self) -> None:
        """The shoe being fed has ended: it becomes the previous shoe."""
        self.set_previous(self._current)
        self._current = []
        self._window.clear()
        self._matching = False
        self.index = 0

    def feed(self, code: str) -> Alarm | None:
        self.index += 1
        canon = _canonical(code)
        if canon is None:
            self._window.clear()
            self._matching = False
            return None
        self._current.append(canon)
        self._window.append(canon)
        if len(self._window) < self.k:
            return None
        start = self._previous.get(tuple(self._window))
        if start is None:
            self._matching = False
            return None
        if self._matching:
            return None
        self._matching = True
        return Alarm(self.kind, f"cards {self.index - self.k + 1}-{self.index} "
                     f"({' '.join(self._window)}) repeat cards {start}-{start + self.k - 1} of "
                     "the previous shoe", self.index)


_NONE: list[Alarm] = []       # shared, never appended to


class IntegrityWatch:
    """Both detectors over a table's card reads, kept as plain state so a restart rebuilds them."""

    def __init__(self, factory_length: int = 5, repeat_k: int = 8):
        self.factory = FactoryOrderDetector(factory_length)
        self.repeat = RepeatDetector(repeat_k)
        self.current: list[str] = []
        self.previous: list[str] = []

    def new_shoe(self) -> None:
        self.previous, self.current = self.current, []
        self.factory.new_shoe()
        self.repeat.new_shoe()

    def feed(self, code: str) -> list[Alarm]:
        self.current.append(code)
        factory, repeat = self.factory.feed(code), self.repeat.feed(code)
        if factory is None and repeat is None:
            return _NONE
        return [a for a in (factory, repeat) if a is not None]

    def to_dict(self) -> dict:
        return {"current": list(self.current), "previous": list(self.previous)}

    @classmethod
    def from_dict(cls, d: dict) -> "IntegrityWatch":
        watch = cls()
        watch.previous = list(d.get("previous", []))
        watch.repeat.set_previous(watch.previous)
        for code in d.get("current", []):     # alarms raised before the restart are journaled
            watch.feed(code)
        return watch
