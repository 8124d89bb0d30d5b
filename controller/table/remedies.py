"""What clears a hold, as data: for each kind of problem, the supervisor's actions that clear it.

This is the one place that says which action clears which kind of hold. The machine's guarded
hold overrides (`controller.table.machine`), the remedies a hold event lists, the console's
offers and the commands' own checks are all read from it (`TableBase.remedy_refusal` then
adds what the moment decides: a link still down, no round to void, no reads kept).
"""
from __future__ import annotations

from typing import Iterable

#: for each kind of hold, the actions that clear it (the console offers these)
REMEDIES: dict[str, tuple[str, ...]] = {
    "unreadable_card": ("enter_card", "void_round"),
    "card_not_due": ("burn_card", "return_reads", "void_round"),
    "card_while_betting": ("burn_card", "return_reads", "void_round"),
    "foreign_card": ("remove_card", "void_round", "end_shoe"),
    "impossible_card": ("resume", "void_round"),
    "card_without_shoe": ("return_reads", "resume"),
    "face_up_card": ("burn_card", "void_round", "resume"),
    "count_mismatch": ("accept_count", "reject_count"),
    "device_alarm": ("resume", "void_round"),
    "link_lost": ("accept_reads", "discard_reads", "resume", "void_round"),
    "restart_review": ("confirm_layout", "enter_card", "void_round"),
    "hold": ("resume", "void_round", "end_shoe"),
    "integrity_alarm": ("end_shoe", "resume"),
    "missed_shoe_burn": ("end_shoe",),
    "false_coup": ("void_round", "resume"),
    "internal_error": ("resume", "void_round", "end_shoe"),
}
#: a kind this release does not know (a journal from a newer one): the plain way out
FALLBACK: tuple[str, ...] = ("resume", "void_round")

#: holds during which reads are the shoe's own cards, kept for the supervisor to accept
#: (a lost link, a restart): every other hold keeps reads too, and may give them back
REVIEWED = frozenset({"link_lost", "restart_review"})
#: holds caused by a card drawn when none was due (or with no shoe at all): the card is the
#: first of the reads, and may be given back with them
STRAY = frozenset({"card_not_due", "card_while_betting", "card_without_shoe"})

#: the overrides that act on what a hold is for: transitions of the machine's `hold` state,
#: each guarded by the hold it finds (`allows_<action>`)
HOLD_OVERRIDES: tuple[str, ...] = ("enter_card", "burn_card", "remove_card", "accept_count",
                                   "reject_count", "accept_reads", "discard_reads",
                                   "confirm_layout", "return_reads")
#: every action that may clear a hold
ALL: tuple[str, ...] = tuple(dict.fromkeys(
    [a for acts in REMEDIES.values() for a in acts] + list(HOLD_OVERRIDES)))
#: actions that, sent while the table is on hold, must be one of its remedies (changing the
#: shoe is ending it)
CLEARING = frozenset(ALL) | {"change_shoe"}


def for_kind(kind: str) -> tuple[str, ...]:
    return REMEDIES.get(kind, FALLBACK)


def clears(action: str) -> frozenset[str]:
    """The kinds of hold `action` clears."""
    return frozenset(k for k, acts in REMEDIES.items() if action in acts)


def union(kinds: Iterable[str]) -> list[str]:
    """The remedies of every problem of a hold, each once, in the order the problems came."""
    out: list[str] = []
    for kind in kinds:
        for a in for_kind(kind):
            if a not in out:
                out.append(a)
    return out
