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

from transitions import Event, Machine

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


class LeanEvent(Event):
    """`transitions`' Event, with a short way for the moves that have nothing to run: no
    condition, no callback on the transition, its states or the machine, one transition from
    the current state, and no other event being processed. Such a move is exactly the state
    change, so it is made directly; every other trigger — an invalid one included, which the
    machine refuses — takes the library's full path. (Measured: a plain move costs a tenth.)"""

    def trigger(self, model: Any, *args: Any, **kwargs: Any) -> bool:
        machine = self.machine
        if not machine._transition_queue:
            attr = machine.model_attribute
            here = getattr(model, attr)
            moves = self.transitions.get(here)
            if moves is not None and len(moves) == 1:
                move, plain = moves[0], _plain_moves(machine)
                if _is_plain(move) and here in plain and move.dest in plain:
                    setattr(model, attr, move.dest)
                    return True
        return super().trigger(model, *args, **kwargs)


def _is_plain(t: Any) -> bool:
    plain = getattr(t, "_plain", None)
    if plain is None:
        plain = not (t.conditions or t.prepare or t.before or t.after) and t.dest is not None
        t._plain = plain
    return plain


def _plain_moves(machine: Any) -> frozenset[str]:
    """States whose entering and leaving run nothing, on a machine with no global callbacks."""
    cached = getattr(machine, "_plain_states", None)
    if cached is None:
        if (machine.prepare_event or machine.before_state_change or machine.after_state_change
                or machine.finalize_event or machine.on_final):
            cached = frozenset()
        else:
            cached = frozenset(name for name, st in machine.states.items()
                               if not (st.on_enter or st.on_exit or st.final))
        machine._plain_states = cached
    return cached


class TableMachine(Machine):
    event_cls = LeanEvent


def state_names(proc: Procedure) -> list[str]:
    return list(SHOE_STATES) + [dealing(s) for s in (BURN,) + proc.steps] + [HOLD]


def build_machine(model: Any, proc: Procedure, initial: str) -> Machine:
    """The flat machine for a table model; the model's `state` attribute holds the state."""
    return TableMachine(model=model, states=state_names(proc), initial=initial,
                   transitions=transitions_for(proc), auto_transitions=False, queued=True,
                   ignore_invalid_triggers=False, on_exception="on_machine_error",
                   model_attribute="state")
