"""The table's states by name. Dealing states are `dealing.<step>`, one per procedure step."""
from __future__ import annotations

CLOSED = "closed"           # no shoe
SHUFFLING = "shuffling"     # the shuffler is shuffling and counting the new shoe
LOADED = "loaded"           # the shoe is in: the first card is turned for the burn
BURNING = "burning"         # the shoe-start burn
IDLE = "idle"               # between rounds
BETTING = "betting"         # bets open
HOLD = "hold"               # dealing stopped until a person decides
SHOE_ENDED = "shoe_ended"   # the shoe is over; its rest is counted back
DEALING = "dealing"
BURN = "burn"               # the between-round burn step

#: every state that is not a dealing step or the hold
SHOE_STATES = (CLOSED, SHUFFLING, LOADED, BURNING, IDLE, BETTING, SHOE_ENDED)
_PREFIX = DEALING + "."


def dealing(step: str) -> str:
    return _PREFIX + step


def step_in(state: str) -> str | None:
    """The procedure step of a dealing state, None for any other state."""
    return state[len(_PREFIX):] if state.startswith(_PREFIX) else None


def trigger_name(state: str) -> str:
    """A state name as part of a trigger name (`resume_dealing_P1`)."""
    return state.replace(".", "_")
