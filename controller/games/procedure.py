"""A game's dealing procedure as data: the steps of a round and which step may follow which.

A step is a card slot (a phase the rules name, e.g. "P1", "banker_third"), a decision the
deal waits for ("decide_<name>", e.g. "decide_player_draw"), or the end of the round
(`RESULT`). The table builds its machine from this table, so the machine allows exactly
these moves and its diagram draws the procedure itself. A test walks every reachable hand of
each game through its rules and checks that they name no move outside the table, and that
every move in the table happens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

#: the step after the round's last card or decision: the result
RESULT = "result"
#: the prefix of a decision step ("decide_player_draw") and of the rules' answer for it
DECIDE = "decide_"
RULES_DECIDE = "decide:"


def step_of(next_phase: str | None) -> str:
    """The procedure step for a rules answer: a phase, "decide:<name>", or None (result)."""
    if next_phase is None:
        return RESULT
    if next_phase.startswith(RULES_DECIDE):
        return DECIDE + next_phase[len(RULES_DECIDE):]
    return next_phase


def decision_of(step: str) -> str | None:
    """The decision name of a decision step, or None for a card slot."""
    return step[len(DECIDE):] if step.startswith(DECIDE) else None


@dataclass(frozen=True)
class Procedure:
    """Card slots, decision points and the legal successors of each step of a round.

    Bets are taken before the round's first card, or — `bets_after` — once that step's card is
    dealt (Andar Bahar's game card is shown first, then bets are taken)."""
    game: str
    slots: tuple[str, ...]
    decisions: tuple[str, ...]
    successors: Mapping[str, tuple[str, ...]]
    bets_after: str | None = None

    def __post_init__(self) -> None:
        steps = set(self.steps)
        for src, dests in self.successors.items():
            if src not in steps:
                raise ValueError(f"{self.game}: successor table names unknown step {src!r}")
            for d in dests:
                if d != RESULT and d not in steps:
                    raise ValueError(f"{self.game}: {src} -> {d!r}: unknown step")
        missing = steps - set(self.successors)
        if missing:
            raise ValueError(f"{self.game}: no successors for {', '.join(sorted(missing))}")
        if self.bets_after is not None and (self.bets_after not in self.slots
                                            or RESULT in self.successors[self.bets_after]):
            raise ValueError(f"{self.game}: bets_after {self.bets_after!r} must be a card slot "
                             f"that a round goes on from")

    @property
    def first(self) -> str:
        """The first card slot of a round."""
        return self.slots[0]

    @property
    def steps(self) -> tuple[str, ...]:
        """Every step of a round: card slots, then decision points."""
        return self.slots + tuple(DECIDE + d for d in self.decisions)

    def ends(self) -> tuple[str, ...]:
        """The steps after which the round may be over."""
        return tuple(s for s in self.steps if RESULT in self.successors[s])

    def moves(self) -> list[tuple[str, str]]:
        """Every (step, next step) pair the procedure allows, the result included."""
        return [(s, d) for s in self.steps for d in self.successors[s]]
