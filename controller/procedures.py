"""Shoe procedures from the profile (docs/rules.md): start burn, between-round burn, cut-card end."""
from __future__ import annotations

from controller.cards import Card
from controller.profile import Profile


def start_burn_total(profile: Profile, turned: Card) -> int:
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
        return profile.burn.count
    return 0


def between_round_burn(profile: Profile, rounds_dealt_in_shoe: int) -> int:
    """Cards burned before a round: the profile's count before every round but the shoe's first."""
    return profile.burn.between_rounds if rounds_dealt_in_shoe > 0 else 0


def shoe_ends_after(profile: Profile, round_no: int, cut_round: int | None) -> bool:
    """Whether the shoe ends once round `round_no` is complete (the cut card reached).

    The cut round is the round in which the card behind the cut card was drawn. `finish` and
    `no_more_coup` end the shoe after it; `one_more` plays one more round.
    """
    if cut_round is None:
        return False
    if profile.cut_card.after == "one_more":
        return round_no >= cut_round + 1
    return round_no >= cut_round


def default_cut_position(profile: Profile, shoe_cards: int) -> int | None:
    """Cards in front of the cut card when it sits the profile's default distance from the end."""
    if not profile.cut_card.enabled:
        return None
    return max(0, shoe_cards - profile.cut_card.default_from_end)
