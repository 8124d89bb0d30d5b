"""The table's policies as pure functions of the profile and the shoe: they decide, the table
acts. (The shoe procedures themselves — burns, cut card — are in `controller.procedures`.)"""
from __future__ import annotations

from controller.games import GameRules
from controller.procedures import between_round_burn, shoe_ends_after, start_burn_total
from controller.profile import Profile
from controller.table.model import ShoeState, cards_drawn
from controller.table.states import BURN

__all__ = ["between_round_burn", "start_burn_total", "face_up_voids", "end_after_round"]


def face_up_voids(profile: Profile, step: str | None) -> bool:
    """Whether a card out face up is kept out of the round (the profile burns and replaces it,
    or voids the round): only a card dealt to a hand; a burn card face up is still a burn."""
    return profile.face_up_card != "valid" and step is not None and step != BURN


def end_after_round(profile: Profile, rules: GameRules, shoe: ShoeState,
                    round_no: int) -> str | None:
    """Why the shoe ends once round `round_no` is over, or None if dealing goes on."""
    if shoe_ends_after(profile, round_no, shoe.cut_round):
        return "cut_card"
    per_shoe = getattr(rules, "rounds_per_shoe", 0)
    if per_shoe and shoe.rounds >= per_shoe:
        return "round_complete"
    if shoe.continuous and cards_drawn(shoe.inventory) >= profile.cards:
        # a continuous shuffler never runs out: its "shoe" is one machine load dealt
        return "cards_dealt"
    return None
