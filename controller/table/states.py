"""The table's states by name. Dealing states are `dealing.<step>`, one per procedure step.

On hold the machine stands in `hold.<origin>`: the hold remembers, in the machine's own state,
where it came from, so that `resume` can only go back there. The table shows the state `hold`
(and the origin as its hold's `resume_to`)."""
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

#: every state that is not a dealing step or a hold
SHOE_STATES = (CLOSED, SHUFFLING, LOADED, BURNING, IDLE, BETTING, SHOE_ENDED)
_PREFIX = DEALING + "."
_HELD = HOLD + "."


def dealing(step: str) -> str:
    return _PREFIX + step


def step_in(state: str) -> str | None:
    """The procedure step of a dealing state, None for any other state."""
    return state[len(_PREFIX):] if state.startswith(_PREFIX) else None


def held(origin: str) -> str:
    """The machine's state on a hold entered from `origin`."""
    return _HELD + origin


def origin_of(machine_state: str) -> str | None:
    """Where a hold came from (None: the machine is not on hold)."""
    return machine_state[len(_HELD):] if machine_state.startswith(_HELD) else None


def shown(machine_state: str) -> str:
    """The state the table shows for a machine state (`hold` for every hold)."""
    return HOLD if machine_state.startswith(_HELD) else machine_state
