"""Small helpers for tests that drive `controller.table.Table` directly (no devices).

Every helper applies inputs with `Table.apply` and returns the events they caused, so a test
sees exactly what the table would hand to the journal.
"""
from __future__ import annotations

import random
from typing import Any, Iterable

from controller.shoe.cards import ordered_shoe
from controller.table import Table, command

#: a 2 turned: two more cards burned (the shoe-start burn of the punto banco profiles)
BURN_TWO = ("2S", "AH", "3C")


def of(events: list[dict], kind: str) -> list[dict]:
    """The events of one kind, in order."""
    return [e for e in events if e["event"] == kind]


def kinds(events: list[dict]) -> list[str]:
    """The kinds of the irregularities among `events`."""
    return [e["kind"] for e in of(events, "irregularity")]


def sup(action: str, **args: Any):
    """A supervisor's command, with the reason every override needs."""
    return command(action, user="sam", role="supervisor", reason="checked at the table", **args)


def card(t: Table, code: str, **flags: Any) -> list[dict]:
    """One card read by the shoe."""
    inp: dict[str, Any] = {"type": "card", "code": code}
    if flags:
        inp["flags"] = flags
    return t.apply(inp)


def deal(t: Table, codes: str | Iterable[str]) -> list[dict]:
    """Cards read in order (a space-separated string or a list); all their events."""
    if isinstance(codes, str):
        codes = codes.split()
    events: list[dict] = []
    for code in codes:
        events += card(t, code)
    return events


def new_shoe(t: Table, **args: Any) -> list[dict]:
    return t.apply(command("new_shoe", **args))


def burn_shoe_start(t: Table, codes: Iterable[str] = BURN_TWO) -> list[dict]:
    """The shoe-start burn; attended tables then stand idle, unattended ones deal round 1."""
    events = deal(t, codes)
    opened = any(e["event"] == "round_started" for e in events)
    assert t.state == ("dealing.P1" if opened else "idle"), t.state
    return events


def count_back(t: Table, rest: Iterable[str]) -> list[dict]:
    """The undealt rest read back through the shoe after the shoe ended."""
    assert t.state == "shoe_ended", t.state
    return deal(t, list(rest))


def rest_of(decks: int, *out: Iterable[str]) -> list[str]:
    """The cards of a `decks`-deck shoe less every code listed in `out` (one copy each)."""
    shoe = [c.code for c in ordered_shoe(decks)]
    for codes in out:
        for code in codes:
            shoe.remove(code)
    return shoe


def composition(codes: Iterable[str]) -> dict[str, int]:
    codes = list(codes)
    return {c: codes.count(c) for c in set(codes)}


def shuffled_shoe(seed: int, decks: int) -> list[str]:
    cards = [c.code for c in ordered_shoe(decks)]
    random.Random(seed).shuffle(cards)
    return cards


def without_seq(events: list[dict]) -> list[dict]:
    """Events as the table emits them, without the journal's `seq` the service adds."""
    return [{k: v for k, v in e.items() if k != "seq"} for e in events]
