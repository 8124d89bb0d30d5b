"""The table machine as data, generated from a game's procedure, and the flat machine built on it.

One trigger per destination: a card moves the table to the step the rules name next with the
trigger `next_<step>`, and the machine allows only the moves of the game's successor table, so
a step out of order is refused by the machine itself. `hold` is entered from any state;
`resume_<state>` leaves it for one named state. Supervisor overrides on a hold are internal
transitions of `hold`, each guarded by what the hold is for (`controller.table.remedies`).
The diagram (`controller.table.diagram`) is drawn from the same data.
"""
from __future__ import annotations

from typing import Any

from transitions import Machine

from controller.games.procedure import RESULT, Procedure
from controller.table.remedies import HOLD_OVERRIDES
from controller.table.states import (BETTING, BURN, BURNING, CLOSED, HOLD, IDLE, LOADED,
                                     SHOE_ENDED, SHOE_STATES, SHUFFLING, dealing,
                                     trigger_name)

def allows(action: str) -> str:
    """The name of the model's guard for a hold override."""
    return f"allows_{action}"


def transitions_for(proc: Procedure) -> list[dict[str, Any]]:
    """Every legal move of a table dealing this game, as `transitions` transition dicts."""
    steps = (BURN,) + proc.steps
    dealing_states = [dealing(s) for s in steps]
    every = list(SHOE_STATES) + dealing_states
    t: list[dict[str, Any]] = [
        dict(trigger="shuffle", source=[CLOSED, SHOE_ENDED], dest=SHUFFLING),
        dict(trigger="load", source=[CLOSED, SHOE_ENDED], dest=LOADED),
        dict(trigger="count_ok", source=SHUFFLING, dest=LOADED),
        # the shoe-start burn: the turned card decides how many follow it
        dict(trigger="burn_more", source=[LOADED, BURNING], dest=BURNING),
        dict(trigger="burn_done", source=[LOADED, BURNING], dest=IDLE),
        dict(trigger="no_burn", source=LOADED, dest=IDLE),
    ]
    # the round starts with bets (they close onto the between-round burn or its first card),
    # or with the cards dealt before the bets (Andar Bahar's game card), which open them
    start = IDLE if proc.bets_after else BETTING
    nexts: dict[str, list[str]] = {BURN: [start, dealing(BURN)],
                                   proc.first: [start, dealing(BURN)]}
    t.append(dict(trigger="open_bets", dest=BETTING,
                  source=dealing(proc.bets_after) if proc.bets_after else IDLE))
    for src in proc.steps:
        for dst in proc.successors[src]:
            if dst != RESULT:
                nexts.setdefault(dst, []).append(BETTING if src == proc.bets_after
                                                 else dealing(src))
    for dst, sources in nexts.items():
        t.append(dict(trigger=f"next_{dst}", source=sources, dest=dealing(dst)))
    t += [
        dict(trigger="result", source=[dealing(s) for s in proc.ends()], dest=IDLE),
        dict(trigger="void_round", source=[BETTING, HOLD] + dealing_states, dest=IDLE),
        # a round opened but not a card dealt (bets open, or its first card or burn due)
        dict(trigger="cancel_round", source=[BETTING, HOLD, dealing(BURN), dealing(proc.first)],
             dest=IDLE),
        dict(trigger="end_shoe", source=[SHUFFLING, LOADED, BURNING, IDLE, BETTING, HOLD],
             dest=SHOE_ENDED),
        dict(trigger="hold", source=every, dest=HOLD),
    ]
    for dest in every:
        t.append(dict(trigger=f"resume_{trigger_name(dest)}", source=HOLD, dest=dest))
    for action in HOLD_OVERRIDES:
        t.append(dict(trigger=action, source=HOLD, dest=None, conditions=allows(action)))
    return t


class TableMachine(Machine):
    """The table's flat machine: the library's own event path for every move (no private
    parts of `transitions` are patched, so any release in the tested range behaves alike)."""


def state_names(proc: Procedure) -> list[str]:
    return list(SHOE_STATES) + [dealing(s) for s in (BURN,) + proc.steps] + [HOLD]


def build_machine(model: Any, proc: Procedure, initial: str) -> Machine:
    """The flat machine for a table model; the model's `state` attribute holds the state."""
    return TableMachine(model=model, states=state_names(proc), initial=initial,
                   transitions=transitions_for(proc), auto_transitions=False, queued=True,
                   ignore_invalid_triggers=False, on_exception="on_machine_error",
                   model_attribute="state")
