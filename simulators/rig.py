"""A simulated table rig: the shuffler and shoe models registered behind their URLs.

The controller reaches both only through those URLs (shoesim://NAME, usb://VID:PID?sim=NAME),
with its real drivers; the rig also hands out the virtual dealer and supervisor.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Sequence

from simulators import registry
from simulators.dealer import VirtualDealer, VirtualSupervisor
from simulators.shoe import Fault, ShoeModel
from simulators.shuffler import SHUFFLER_FAULTS, ShufflerModel

SIM_VID, SIM_PID = 0x7A5C, 0x5348
_names = itertools.count(1)


class VirtualClock:
    """Simulated time: silences and link drops end when the run advances it, not by waiting."""

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
    clock: VirtualClock = field(default_factory=VirtualClock)

    def __post_init__(self) -> None:
        shuffler_faults = [f for f in self.faults if f.kind in SHUFFLER_FAULTS]
        self.shuffler = ShufflerModel(seed=self.seed, decks=self.decks,
                                      faults=[_shuffle_fault(f) for f in shuffler_faults])
        registry.register(self.shuffler_name, self.shuffler)
        self.shoe: ShoeModel | None = None

    @property
    def shuffler_name(self) -> str:
        return f"{self.name}-shuffler"

    @property
    def shuffler_url(self) -> str:
        return f"usb://{SIM_VID:04x}:{SIM_PID:04x}?sim={self.shuffler_name}"

    @property
    def shoe_url(self) -> str:
        return f"shoesim://{self.name}?protocol={self.protocol}"

    def load_shoe(self, cards: Sequence[str], cut_position: int | None, *,
                  continuous: bool = False) -> ShoeModel:
        """The dealer puts the delivered (or hand-shuffled) cards in the shoe with the cut card;
        `continuous`: they go into a continuous shuffler-dealer instead (simulators.csm)."""
        shoe_faults = [f for f in self.faults if f.kind not in SHUFFLER_FAULTS]
        kw = dict(protocol=self.protocol, cut_position=cut_position,
                  faults=[f for f in shoe_faults if f.kind != "skip_burn"], clock=self.clock)
        if continuous:
            from simulators.csm import ContinuousShufflerModel
            self.shoe = ContinuousShufflerModel(list(cards), seed=self.seed, **kw)
        else:
            self.shoe = ShoeModel(list(cards), **kw)
        registry.register(self.name, self.shoe)
        return self.shoe

    def dealer(self) -> VirtualDealer:
        return VirtualDealer(self.shoe, tuple(f for f in self.faults if f.kind == "skip_burn"),
                             clock=self.clock)

    def supervisor(self, card_when_none_due: str, face_up_card: str = "valid") -> VirtualSupervisor:
        def true_code(index: int) -> str | None:
            if self.shoe is None or not 0 <= index < len(self.shoe.undealt()) + self.shoe.position:
                return None
            return self.shoe.card_at(index)
        return VirtualSupervisor(card_when_none_due=card_when_none_due,
                                 face_up_card=face_up_card, true_code=true_code)

    def close(self) -> None:
        registry.unregister(self.name)
        registry.unregister(self.shuffler_name)


def _shuffle_fault(f: Fault):
    from simulators.shuffler import ShufflerFault
    return ShufflerFault(f.kind, 0 if f.at < 0 else f.at)
