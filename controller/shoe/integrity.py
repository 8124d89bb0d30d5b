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

#: canonical codes answered without parsing (the detectors see every card of every shoe): the
#: rank (1-13), the suit, the card's small number (0-51) and the code itself
_KNOWN = {c.code: (c.rank_index, c.suit, i, c.code) for i, c in enumerate(ALL_CARDS)}
#: the small number alone, by canonical code: all the watch looks up for a card
_NUMBER = {code: known[2] for code, known in _KNOWN.items()}
_BITS = 6                   # a card's small number fits in 6 bits; a window of k is 6k bits
_NONE_YET = len(ALL_CARDS)  # the "last card" before any, or after what is no card
#: by the last card's small number, then this card's: +1 the next rank up in the same suit, -1
#: the next down, 0 neither (a run of one suit in rank order steps by one each card); a card's
#: own row is what the next card is looked up in
_STEP = tuple(tuple(0 if a == _NONE_YET or b == _NONE_YET
                    or ALL_CARDS[a].suit != ALL_CARDS[b].suit
                    or abs(ALL_CARDS[a].rank_index - ALL_CARDS[b].rank_index) != 1
                    else ALL_CARDS[b].rank_index - ALL_CARDS[a].rank_index
                    for b in range(_NONE_YET + 1))
              for a in range(_NONE_YET + 1))


@dataclass(frozen=True)
class Alarm:
    kind: str            # "factory_order" | "repeated_sequence"
    detail: str
    card_index: int      # 1-based index in the shoe of the card that completed the pattern


def _known(code: str) -> tuple[int, str, int, str] | None:
    """(rank, suit, small number, canonical code) of a card code; None for what is no card."""
    known = _KNOWN.get(code)
    if known is not None:
        return known
    try:
        return _KNOWN[parse_card(code).code]
    except (CardCodeError, AttributeError):
        return None


def _canonical(code: str) -> str | None:
    known = _known(code)
    return None if known is None else known[3]


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
        self._rank = 0                          # the last card's rank and suit (0: none)
        self._suit = ""
        self._len = 0                           # the run so far, in cards
        self._step = 0                          # +1 ascending, −1 descending, 0 not yet known
        self._recent: deque[str] = deque(maxlen=self.length)   # the run's codes, as read

    def feed(self, code: str) -> Alarm | None:
        return self._feed(code, _known(code))

    def _feed(self, code: str, card: tuple[int, str, int, str] | None) -> Alarm | None:
        self.index += 1
        self._recent.append(code)
        if card is None:
            self._rank, self._suit, self._len, self._step = 0, "", 0, 0
            return None
        rank, suit = card[0], card[1]
        step = rank - self._rank
        if suit == self._suit and (step == 1 or step == -1):
            if self._step == 0 or self._step == step:
                self._len += 1
            else:                               # turned round: the last two start a new run
                self._len = 2
            self._step = step
        else:
            self._len, self._step = 1, 0
        self._rank, self._suit = rank, suit
        if self._len == self.length:
            way = "ascending" if self._step > 0 else "descending"
            return Alarm(self.kind, f"{self.length} cards of one suit in {way} rank order: "
                         f"{' '.join(self._recent)}", self.index)
        return None


def _window_keys(codes: list[str], k: int) -> list[int]:
    """Every window of `k` cards of a shoe's sequence, as one integer each (a card's small number
    in 6 bits), in order of where they start; what is no card is left out."""
    get = _KNOWN.get
    numbers = [c[2] for c in (get(code) or _known(code) for code in codes) if c is not None]
    keys, key, mask = [], 0, (1 << (_BITS * k)) - 1
    for n in numbers:
        key = ((key << _BITS) | n) & mask
        keys.append(key)
    return keys[k - 1:]


def _windows(codes: list[str], k: int) -> dict[int, int]:
    """`_window_keys` by where each window first starts (1-based)."""
    windows = _window_keys(codes, k)
    # filled from the end, the earliest written last
    return dict(zip(reversed(windows), range(len(windows), 0, -1)))


class RepeatDetector:
    """Alarm when `k` consecutive cards repeat a run of `k` cards of the previous shoe.

    A window of k cards is kept as one integer (each card's small number in 6 bits), rolled on
    by a shift per card; the previous shoe's windows are a dict of those integers."""

    kind = "repeated_sequence"

    def __init__(self, k: int = 8):
        if k < 2:
            raise ValueError("a repeated run is at least 2 cards long")
        self.k = k
        self._mask = (1 << (_BITS * k)) - 1
        self._previous: dict[int, int] = {}
        self._current: list[str] = []
        self._key = 0                           # the last k cards (fewer: `_filled` says)
        self._filled = 0
        self._matching = False
        self.index = 0

    def set_previous(self, codes: list[str]) -> None:
        """The previous shoe's sequence (e.g. restored from the journal)."""
        self._previous = _windows(codes, self.k)

    def new_shoe(self) -> None:
        """The shoe being fed has ended: it becomes the previous shoe."""
        self.set_previous(self._current)
        self._current = []
        self._key = self._filled = 0
        self._matching = False
        self.index = 0

    def feed(self, code: str) -> Alarm | None:
        return self._feed(_known(code))

    def _feed(self, card: tuple[int, str, int, str] | None) -> Alarm | None:
        self.index += 1
        if card is None:
            self._key = self._filled = 0
            self._matching = False
            return None
        self._current.append(card[3])
        self._key = ((self._key << _BITS) | card[2]) & self._mask
        if self._filled < self.k:
            self._filled += 1
            if self._filled < self.k:
                return None
        start = self._previous.get(self._key)
        if start is None:
            self._matching = False
            return None
        if self._matching:
            return None
        self._matching = True
        window = " ".join(self._current[-self.k:])
        return Alarm(self.kind, f"cards {self.index - self.k + 1}-{self.index} "
                     f"({window}) repeat cards {start}-{start + self.k - 1} of "
                     "the previous shoe", self.index)


_NONE: list[Alarm] = []       # shared, never appended to


class IntegrityWatch:
    """Both detectors over a table's card reads, kept as plain state so a restart rebuilds them.

    The table feeds it every card it reads, so both detectors run in one pass a card on state
    of its own: the same alarms, in the same order, as a FactoryOrderDetector and a
    RepeatDetector fed the same codes (the tests hold them equal). The table's common card
    read (`controller.table.rounds`) takes `feed`'s step inline for a card that is no step of
    a run and no window of the shoe before: `feed` and it change the same fields alike."""

    def __init__(self, factory_length: int = 5, repeat_k: int = 8):
        if factory_length < 2:
            raise ValueError("a factory-order run is at least 2 cards long")
        if repeat_k < 2:
            raise ValueError("a repeated run is at least 2 cards long")
        self.length, self.k = factory_length, repeat_k
        self._mask = (1 << (_BITS * repeat_k)) - 1
        self._before: list[int] = []            # the previous shoe's windows (_window_keys)
        self._windows: frozenset[int] = frozenset()     # … as a set, for a look a card
        self._keys: list[int] = []              # this shoe's windows, as they are fed
        self._clean = True                      # … each card after the one before: no gap
        self.current: list[str] = []            # this shoe's codes as fed (a card's index: 1-based)
        self.previous: list[str] = []
        self._runs_broken()

    def _runs_broken(self) -> None:
        """No run so far: a new shoe, or what is no card."""
        self._row = _STEP[_NONE_YET]            # factory order: the last card's row of _STEP,
        self._len = 0                           # the run's length and its way (0: a card of
        self._step = 0                          # its own)
        # repeat: the last k cards; before k cards, the missing ones are no card's number
        # (all ones), so that no window of the previous shoe can match until k cards are in
        self._key = self._mask
        self._matching = False

    def new_shoe(self) -> None:
        self.previous, self.current = self.current, []
        # the windows the shoe was fed are its windows (_window_keys), unless what was no
        # card broke them (_window_keys leaves it out and joins the cards either side); the
        # first k - 1 keys were not whole windows yet
        self._before = self._keys[self.k - 1:] if self._clean \
            else _window_keys(self.previous, self.k)
        self._windows = frozenset(self._before)
        self._keys, self._clean = [], True
        self._runs_broken()

    def feed(self, code: str) -> list[Alarm]:
        current = self.current
        current.append(code)
        n = _NUMBER.get(code)
        if n is None:
            known = _known(code)
            if known is None:
                self._runs_broken()
                self._clean = False
                return _NONE
            n = known[2]
        # factory order (FactoryOrderDetector._feed): most cards are no step of a run
        step = self._row[n]
        self._row = _STEP[n]
        alarms = self._run(step, current) if step else _NONE
        if self._step and not step:
            self._step = 0
        # a repeat of the previous shoe (RepeatDetector._feed)
        key = self._key = ((self._key << _BITS) | n) & self._mask
        self._keys.append(key)
        if key not in self._windows:
            if self._matching:
                self._matching = False
            return alarms
        if self._matching:
            return alarms
        self._matching = True
        start = self._before.index(key) + 1     # where the window first starts
        index = len(current)
        k = self.k
        window = " ".join(_canonical(c) or c for c in current[-k:])
        repeat = Alarm(RepeatDetector.kind, f"cards {index - k + 1}-{index} ({window}) repeat "
                       f"cards {start}-{start + k - 1} of the previous shoe", index)
        return [repeat] if alarms is _NONE else alarms + [repeat]

    def _run(self, step: int, current: list[str]) -> list[Alarm]:
        """A card one rank on from the last in its suit: the run grows, or turns round."""
        if self._step == step or self._step == 0:
            # a run's length counts from its first card: a card of its own is a run of one
            self._len = self._len + 1 if self._step else 2
        else:                                   # turned round: the last two start a new run
            self._len = 2
        self._step = step
        if self._len == self.length:
            way = "ascending" if step > 0 else "descending"
            return [Alarm(FactoryOrderDetector.kind, f"{self.length} cards of one suit in "
                          f"{way} rank order: {' '.join(current[-self.length:])}",
                          len(current))]
        return _NONE

    def to_dict(self) -> dict:
        return {"current": list(self.current), "previous": list(self.previous)}

    @classmethod
    def from_dict(cls, d: dict) -> "IntegrityWatch":
        watch = cls()
        watch.previous = list(d.get("previous", []))
        watch._before = _window_keys(watch.previous, watch.k)
        watch._windows = frozenset(watch._before)
        for code in d.get("current", []):     # alarms raised before the restart are journaled
            watch.feed(code)
        return watch
