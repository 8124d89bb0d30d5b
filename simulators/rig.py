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
from simulators.shuffler import SHUFFLER_FAULTS, ShufflerFault, ShufflerModel

SIM_VID, SIM_PID = 0x7A5C, 0x5348
_names = itertools.count(1)


class DeviceClock:
    """The devices' own time (silences, link drops); advanced by whoever drives the rig."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class SimRig:
    decks: int
    protocol: str = "beetek"
    seed: int | None = None
    faults: tuple[Fault, ...] = ()
    name: str = field(default_factory=lambda: f"sim{next(_names)}")
    clock: Callable[[], float] = field(default_factory=DeviceClock)
    continuous: bool = False

    def __post_init__(self) -> None:
        shuffler_faults = [ShufflerFault(f.kind, max(0, f.at)) for f in self.faults
                           if f.kind in SHUFFLER_FAULTS]
        self.shuffler = ShufflerModel(seed=self.seed, decks=self.decks, faults=shuffler_faults)
        self.shuffler.on_deliver = self._delivered
        kind = ContinuousShufflerModel if self.continuous else ShoeModel
        extra = {"seed": self.seed} if self.continuous else {}
        self.shoe: ShoeModel = kind([], protocol=self.protocol, clock=self.clock, **extra)
        self.cut_position: int | None = None
        self._loads = 0
        self._hand = random.Random(self.seed) if self.seed is not None else random.SystemRandom()
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
        return self.shoe

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
        shoe's cards and cut card, and where the shuffler's and the dealer's shuffles stand.
        (Cards dealt are not kept: the journal's reads say how far the shoe got.) Written only
        when something kept has changed since the last time."""
        shuffler = self.shuffler
        mark = (self._loads, shuffler.shuffles, shuffler.state, len(shuffler._order),
                shuffler._door_left, shuffler._tray is None, self.cut_position,
                getattr(self.shoe, "returned", 0))
        if mark == getattr(self, "_saved_mark", None):
            return
        self._saved_mark = mark
        state = {"cards": self.shoe.cards(), "cut_position": self.shoe.cut_position,
                 "rig_cut": self.cut_position, "shuffler": self.shuffler.to_state(),
                 "hand": _rng_state(self._hand),
                 "machine": _rng_state(self.shoe._rng) if self.continuous else None}
        tmp = f"{path}.tmp"
        # owner-only: it holds the whole shoe's order, which nobody at the table may learn
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state, f)
        os.replace(tmp, path)

    def restore(self, path: str, dealt: int) -> bool:
        """Stand where a saved rig stood, with `dealt` cards out of the shoe (as many as the
        journal holds reads for: a read lost with the crash is dealt again). False when
        nothing was saved."""
        try:
            with open(path, encoding="utf-8") as f:
                state = json.load(f)
        except FileNotFoundError:
            return False
        self.shuffler.load_state(state["shuffler"])
        self.cut_position = state["rig_cut"]
        _set_rng_state(self._hand, state["hand"])
        self.load_shoe(state["cards"], state["cut_position"])
        if self.continuous and state.get("machine") is not None:
            _set_rng_state(self.shoe._rng, state["machine"])
        self.shoe.skip(dealt)
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


def _rng_state(rng: random.Random) -> list | None:
    """A seeded generator's state as JSON (None for the OS's, which cannot be saved)."""
    if isinstance(rng, random.SystemRandom):
        return None
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def _set_rng_state(rng: random.Random, state: list | None) -> None:
    if state is not None and not isinstance(rng, random.SystemRandom):
        rng.setstate((state[0], tuple(state[1]), state[2]))
