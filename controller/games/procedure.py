"""The procedures of a game, as data and pure functions: the steps of a round and which step may
follow which, and the shoe's own procedures (the burns, the cut card, the end of a shoe).

A step is a card slot (a phase the rules name, e.g. "P1", "banker_third"), a decision the
deal waits for ("decide_<name>", e.g. "decide_player_draw"), or the end of the round
(`RESULT`). The table builds its machine from this table, so the machine allows exactly
these moves and its diagram draws the procedure itself. A test walks every reachable hand of
each game through its rules and checks that they name no move outside the table, and that
every move in the table happens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Protocol

if TYPE_CHECKING:
    from controller.shoe.cards import Card

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


# ---- the shoe's procedures ------------------------------------------------------------------
# What they read of a profile (controller.settings.profile.Profile is one): the games' rules
# stay free of the settings that load them.

class BurnSettings(Protocol):
    rule: str
    count: int
    between_rounds: int


class CutSettings(Protocol):
    after: str
    enabled: bool
    default_from_end: int


class ShoeSettings(Protocol):
    """The parts of a profile the shoe's procedures follow."""
    @property
    def decks(self) -> int: ...
    @property
    def burn(self) -> Any: ...          # BurnSettings
    @property
    def cut_card(self) -> Any: ...      # CutSettings
    @property
    def face_up_card(self) -> str: ...
    @property
    def cards(self) -> int: ...
    @property
    def continuous_shuffler(self) -> bool: ...


def start_burn_total(profile: ShoeSettings, turned: "Card") -> int:
    """How many cards the shoe-start burn takes in all, the turned card included.

    first_card: the turned card, then as many as its burn value (faces count 10, not 0);
    decks: as many cards as there are decks; fixed: the house's fixed number; none: no burn.
    """
    rule = profile.burn.rule
    if rule == "first_card":
        return 1 + turned.burn_value
    if rule == "decks":
        return profile.decks
    if rule == "fixed":
        return int(profile.burn.count)
    return 0


def between_round_burn(profile: ShoeSettings, rounds_dealt_in_shoe: int) -> int:
    """Cards burned before a round: the profile's count before every round but the shoe's first."""
    return int(profile.burn.between_rounds) if rounds_dealt_in_shoe > 0 else 0


def shoe_ends_after(profile: ShoeSettings, round_no: int, cut_round: int | None) -> bool:
    """Whether the shoe ends once round `round_no` is complete (the cut card reached).

    The cut round is the round in which the card behind the cut card was drawn. `finish` and
    `no_more_coup` end the shoe after it; `one_more` plays one more round.
    """
    if cut_round is None:
        return False
    if profile.cut_card.after == "one_more":
        return round_no >= cut_round + 1
    return round_no >= cut_round


def end_after_round(profile: ShoeSettings, round_no: int, cut_round: int | None, *,
                    rounds_per_shoe: int, rounds_in_shoe: int, drawn: int) -> str | None:
    """Why the shoe ends once round `round_no` is over, or None if dealing goes on: the cut
    card reached, the game's rounds per shoe dealt, or a continuous shuffler's load dealt."""
    if shoe_ends_after(profile, round_no, cut_round):
        return "cut_card"
    if rounds_per_shoe and rounds_in_shoe >= rounds_per_shoe:
        return "round_complete"
    if profile.continuous_shuffler and drawn >= profile.cards:
        # a continuous shuffler never runs out: its "shoe" is one machine load dealt
        return "cards_dealt"
    return None


def default_cut_position(profile: ShoeSettings, shoe_cards: int) -> int | None:
    """Cards in front of the cut card when it sits the profile's default distance from the end."""
    if not profile.cut_card.enabled:
        return None
    return max(0, shoe_cards - int(profile.cut_card.default_from_end))


def face_up_voids(profile: ShoeSettings, step: str | None) -> bool:
    """Whether a card out face up is kept out of the round (the profile burns and replaces it,
    or voids the round): only a card dealt to a hand; a burn card face up is still a burn."""
    return profile.face_up_card != "valid" and step is not None and step != "burn"
