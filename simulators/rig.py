"""A simulated table rig: one shuffler and one shoe, registered behind their URLs.

The controller reaches both only through those URLs (shoesim://NAME, usb://VID:PID?sim=NAME),
with its real drivers. The rig also plays the table's physical side: the cards the shuffler
delivers go into the shoe, the rest of an ended shoe goes back into the shuffler, and a
dealer's hand shuffle is seeded like the shuffler.
"""
from __future__ import annotations

import itertools
import json
import os
import random
from dataclasses import dataclass, field
from typing import Callable, Sequence

from drivers.cardcodes import CARD_CODES
from simulators import registry
from simulators.csm import ContinuousShufflerModel
from simulators.shoe import Fault, ShoeModel
from simulators.shuffler import SHUFFLER_FAULTS, ShufflerModel

SIM_VID, SIM_PID = 0x7A5C, 0x5348
_names = itertools.count(1)


class DeviceClock:
    """The devices' own time (silences, link drops); advanced by whoever drives the rig, and
    with `real` (a monotonic clock) by the time that passes too: a rig beside a live table,
    whose dealer stops while the table waits for a dropped link to come back."""

    def __init__(self, real: Callable[[], float] | None = None) -> None:
        self.ticks = 0.0
        self._real = real
        self._began = real() if real is not None else 0.0

    @property
    def now(self) -> float:
        if self._real is None:
            return self.ticks
        return self.ticks + self._real() - self._began

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.ticks += seconds


@dataclass
class SimRig:
    decks: int
    protocol: str = "beetek"
    seed: int | None = None
    faults: tuple[Fault, ...] = ()
    name: str = field(default_factory=lambda: f"sim{next(_names)}")
    clock: Callable[[], float] = field(default_factory=DeviceClock)
    continuous: bool = False
    shuffle_time_s: float = 0.0

    def __post_init__(self) -> None:
        shuffler_faults = [Fault(f.kind, max(0, f.at)) for f in self.faults
                           if f.kind in SHUFFLER_FAULTS]
        # a table's shuffler: what it delivers leaves it, and it shuffles what is put back in
        self.shuffler = ShufflerModel(seed=self.seed, decks=self.decks, faults=shuffler_faults,
                                      restock=False, shuffle_time_s=self.shuffle_time_s,
                                      clock=self.clock)
        self.shuffler.on_deliver = self._delivered
        #: the continuous shuffler when the rig deals from one (it is then the rig's shoe)
        self.machine: ContinuousShufflerModel | None = None
        self.shoe: ShoeModel
        if self.continuous:
            self.shoe = self.machine = ContinuousShufflerModel(
                [], protocol=self.protocol, clock=self.clock, seed=self.seed)
        else:
            self.shoe = ShoeModel([], protocol=self.protocol, clock=self.clock)
        self.cut_position: int | None = None
        self._loads = 0
        #: the table's shoe the cards in the shoe were loaded for, and the one to load next
        self.loaded_for: int | None = None
        self.next_for: int | None = None
        #: the table's [shoe, round] whose cards went back into the continuous shuffler last:
        #: the same round told again (a restart republishes what nobody saw) puts none back
        self.returned_for: list | None = None
        #: the card indexes of the skip_burn faults the dealer has made (a restart makes none
        #: of them again: the devices and the dealer outlive the controller)
        self.skips_done: list[int] = []
        self._hand = random.Random(self.seed) if self.seed is not None else random.SystemRandom()
        #: told once, on whatever thread loads it, when the shoe is next loaded
        self.on_loaded: Callable[[], None] | None = None
        self._rng_texts = _RngTexts()
        registry.register(self.shuffler_name, self.shuffler)
        registry.register(self.name, self.shoe)

    @property
    def shuffler_name(self) -> str:
        return f"{self.name}-shuffler"

    @property
    def shuffler_url(self) -> str:
        return f"usb://{SIM_VID:04x}:{SIM_PID:04x}?sim={self.shuffler_name}"

    @property
    def shoe_url(self) -> str:
        return f"shoesim://{self.name}?protocol={self.protocol}"

    @property
    def shoe_faults(self) -> list[Fault]:
        """The faults the shoe model acts on (skip_burn is the virtual dealer's)."""
        return [f for f in self.faults if f.kind not in SHUFFLER_FAULTS and f.kind != "skip_burn"]

    def load_shoe(self, cards: Sequence[str], cut_position: int | None = None) -> ShoeModel:
        """The dealer puts cards in the shoe, with the cut card where the table said."""
        self.shoe.load(cards, cut_position=None if self.continuous else cut_position,
                       faults=self.shoe_faults)
        self._loads += 1
        self.loaded_for = self.next_for
        told, self.on_loaded = self.on_loaded, None
        if told is not None:
            told()
        return self.shoe

    def unread(self, shoe: int | None, reads: int) -> int:
        """Cards out of the shoe for the table's shoe `shoe` beyond the `reads` the table has
        of it: cards on their way (or lost). 0 while the shoe holds another shoe's cards."""
        if shoe is None or shoe != self.loaded_for:
            return 0
        return self.shoe.position - reads

    def _delivered(self, order: list[str]) -> None:
        self.load_shoe(order, self.cut_position)

    def hand_shuffle(self) -> list[str]:
        """A shoe shuffled by hand (no shuffler): the decks in a seeded random order."""
        cards = [c for _ in range(self.decks) for c in CARD_CODES]
        self._hand.shuffle(cards)
        return cards

    def rest_to_shuffler(self) -> None:
        """At a shoe's end the dealer puts its undealt rest into the shuffler to be counted
        (asked again after a jam, the rest is in the shuffler's tray already)."""
        rest = self.shoe.take_rest()
        if rest:
            self.shuffler.load(rest)

    def gather(self) -> None:
        """Every card back into the shuffler for the next shoe."""
        self.shuffler.unload()

    # -- the devices outlive a controller that crashes -----------------------------------------

    def save(self, path: str) -> None:
        """Keep what the physical devices would still hold after the controller died: the
        shoe's cards, how far it has dealt and (framed) the reads it never had acknowledged,
        and where the shuffler's and the dealer's shuffles stand. What changes with every card
        goes to a small file of its own (`path`.shoe), the rest only when it changes."""
        shuffler = self.shuffler
        mark = (self._loads, shuffler.shuffles, shuffler.state, len(shuffler._order),
                shuffler._door_left, shuffler.tray, self.cut_position, self.next_for,
                getattr(self.shoe, "returned", 0), len(self.skips_done))
        if mark != getattr(self, "_saved_mark", None):
            self._saved_mark = mark
            memory = self.shoe.memory()
            head = {"loads": self._loads, "shoe": memory, "rig_cut": self.cut_position,
                    "loaded_for": self.loaded_for, "next_for": self.next_for,
                    "returned_for": self.returned_for, "skips_done": self.skips_done,
                    "shuffler": shuffler.to_state(rng=False)}
            # the generators' states, as `to_state` and `_rng_state` give them, close each
            # object: the shuffler's, then the dealer's hand and the continuous machine's
            texts = self._rng_texts
            machine = texts.of("machine", self.machine._rng) if self.machine is not None \
                else "null"
            _write_text(path, f'{_dumps(head)[:-2]},"rng":{texts.of("shuffler", shuffler._rng)}'
                        f'}},"hand":{texts.of("hand", self._hand)},"machine":{machine}}}')
        progress = {"loads": self._loads, **self.shoe.progress()}
        if progress != getattr(self, "_saved_progress", None):
            self._saved_progress = progress
            _write_json(f"{path}.shoe", progress)

    def restore(self, path: str) -> bool:
        """Stand where a saved rig stood: the same cards out of the shoe, the same reads
        waiting for an acknowledgement. False when nothing was saved."""
        try:
            with open(path, encoding="utf-8") as f:
                state = json.load(f)
        except FileNotFoundError:
            return False
        self.shuffler.load_state(state["shuffler"])
        self.cut_position = state["rig_cut"]
        _set_rng_state(self._hand, state["hand"])
        self._loads, self.next_for = state["loads"], state["next_for"]
        self.loaded_for = state["loaded_for"]
        self.returned_for = state.get("returned_for")
        self.skips_done = list(state.get("skips_done", []))
        self.shoe.recall(state["shoe"])
        if self.machine is not None and state.get("machine") is not None:
            _set_rng_state(self.machine._rng, state["machine"])
        try:
            with open(f"{path}.shoe", encoding="utf-8") as f:
                progress = json.load(f)
        except FileNotFoundError:
            progress = None
        if progress is not None and progress.get("loads") == self._loads:
            self.shoe.recall(progress)
        return True

    def reseed(self, salt: int) -> None:
        """A seeded rig started again on a journal that has dealt shoes already: without its
        saved state it must not shuffle the same shoes again (the table would rightly see a
        replayed shoe), so its shuffles go on from a seed of their own."""
        if self.seed is not None:
            self.shuffler._rng = random.Random(f"{self.seed}:{salt}")
            self._hand = random.Random(f"{self.seed}:hand:{salt}")
            if isinstance(self.shoe, ContinuousShufflerModel):
                self.shoe.reseed(f"{self.seed}:machine:{salt}")

    def true_code(self, index: int) -> str | None:
        """The code of the card at draw index `index`, as a person reads it off the card."""
        return self.shoe.card_at(index)

    def close(self) -> None:
        registry.unregister(self.name)
        registry.unregister(self.shuffler_name)


def _dumps(data: object) -> str:
    return json.dumps(data, separators=(",", ":"))      # one C pass (json.dump: Python)


def _write_json(path: str, data: dict) -> None:
    _write_text(path, _dumps(data))


def _write_text(path: str, text: str) -> None:
    tmp = f"{path}.tmp"
    # owner-only: it holds the whole shoe's order, which nobody at the table may learn
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


class _RngTexts:
    """A generator's state as JSON (`_rng_state`'s), kept while the generator has not moved:
    a state is 625 large integers, and encoding them was most of a save, though the dealer's
    hand and the machine's generator move only when they shuffle."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple, str]] = {}

    def of(self, name: str, rng: random.Random) -> str:
        if isinstance(rng, random.SystemRandom):
            return "null"
        state = rng.getstate()
        kept = self._kept.get(name)
        if kept is None or kept[0] != state:
            kept = self._kept[name] = (state, _dumps(_rng_state(rng)))
        return kept[1]


def _rng_state(rng: random.Random) -> list | None:
    """A seeded generator's state as JSON (None for the OS's, which cannot be saved)."""
    if isinstance(rng, random.SystemRandom):
        return None
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def _set_rng_state(rng: random.Random, state: list | None) -> None:
    if state is not None and not isinstance(rng, random.SystemRandom):
        rng.setstate((state[0], tuple(state[1]), state[2]))
