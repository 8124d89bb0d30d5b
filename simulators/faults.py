"""A fault on demand, as the simulators take it: what goes wrong (`kind`) and when (`at`).

For the shoe `at` is the index of a card in its draw order, for the shuffler the number of a
shuffle; each model says which kinds it acts on (simulators.shoe.SHOE_FAULTS,
simulators.shuffler.SHUFFLER_FAULTS). Written `KIND@N` on command lines and in URLs.
"""
from __future__ import annotations

from dataclasses import dataclass


class FaultError(ValueError):
    """A fault text or fault that cannot be used; the message says why."""


@dataclass(frozen=True)
class Fault:
    kind: str
    at: int = 0     # the shoe: 0-based card index in draw order; the shuffler: shuffle number

    def __str__(self) -> str:
        return f"{self.kind}@{self.at}"
