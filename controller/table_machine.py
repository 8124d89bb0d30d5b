"""The table machine as data: its states, the transitions between them, and the nested
`transitions` machine built from them (the model is `controller.table.Table`).

Dealing sub-states are `dealing.<phase>`, one per phase the game's rules can name, plus `burn`
and, for games with draw decisions, `decide`. `hold` is entered from any state; `resume`
returns to the state it was entered from.
"""
from __future__ import annotations

from enum import Enum
from typing import Any

from transitions.extensions import HierarchicalMachine
from transitions.extensions.nesting import NestedState

DECIDE = "decide"       # the dealing sub-state of a table waiting for a decision


class TableState(str, Enum):
    CLOSED = "closed"
    SHUFFLING = "shuffling"
    LOADED = "loaded"
    BURNING = "burning"
    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    HOLD = "hold"
    SHOE_ENDED = "shoe_ended"


SEP = "."   # nested state separator: phase names such as player_third hold underscores


def dealing(phase: str) -> str:
    return f"{TableState.DEALING.value}{SEP}{phase}"


NOT_DUE = (TableState.IDLE, TableState.BETTING, TableState.SHOE_ENDED, TableState.CLOSED,
           TableState.SHUFFLING)


def dealing_children(phases: tuple[str, ...], decisions: bool = False) -> list[str]:
    """Dealing sub-states: `burn`, `decide` for games with decisions, then the game's phases."""
    return ["burn", *([DECIDE] if decisions else []), *phases]


def transitions_for(phases: tuple[str, ...], first: str, decisions: bool = False) -> list[dict]:
    """The machine's transitions as data. Dealing sub-states: `dealing_children`."""
    S = TableState
    children = dealing_children(phases, decisions)
    dealing_states = [dealing(p) for p in children]
    every = [s.value for s in S if s not in (S.DEALING, S.HOLD)] + dealing_states
    t: list[dict] = [
        dict(trigger="shuffle", source=[S.CLOSED, S.SHOE_ENDED], dest=S.SHUFFLING),
        dict(trigger="shuffled", source=S.SHUFFLING, dest=S.LOADED, conditions="count_ok"),
        dict(trigger="shuffled", source=S.SHUFFLING, dest=S.HOLD, before="save_resume",
             after="count_mismatch"),
        dict(trigger="load", source=[S.CLOSED, S.SHOE_ENDED], dest=S.LOADED),
        dict(trigger="no_burn", source=S.LOADED, dest=S.IDLE),
        # the shoe-start burn: the turned card decides how many follow it
        dict(trigger="card", source=[S.LOADED, S.BURNING], dest=S.IDLE,
             conditions="burn_completes", before="take_start_burn"),
        dict(trigger="card", source=[S.LOADED, S.BURNING], dest=S.BURNING,
             before="take_start_burn"),
        dict(trigger="open_bets", source=S.IDLE, dest=S.BETTING, before="open_round"),
        dict(trigger="close_bets", source=S.BETTING, dest=dealing("burn"), conditions="burn_due"),
        dict(trigger="close_bets", source=S.BETTING, dest=dealing(first)),
    ]
    # a dealing card: the model placed it (prepare_event); the rules named the next phase
    for nxt in children:
        t.append(dict(trigger="card", source=dealing_states, dest=dealing(nxt),
                      conditions=f"next_is_{nxt}"))
    t.append(dict(trigger="card", source=dealing_states, dest=S.IDLE, before="complete_round"))
    if decisions:
        # a decision recorded (take_decision named what follows): a card, another decision, done
        for nxt in (DECIDE,) + phases:
            t.append(dict(trigger="decided", source=dealing(DECIDE), dest=dealing(nxt),
                          conditions=f"next_is_{nxt}"))
        t.append(dict(trigger="decided", source=dealing(DECIDE), dest=S.IDLE,
                      before="complete_round"))
    t += [
        # a card when none is due, or a failed read while dealing: hold with a named irregularity
        dict(trigger="card", source=[s.value for s in NOT_DUE], dest=S.HOLD,
             before="save_resume", after="card_not_due"),
        dict(trigger="card", source=S.HOLD, dest=None, after="card_while_held"),
        dict(trigger="irregular", source=every, dest=S.HOLD, before="save_resume",
             after="record_irregularity"),
        dict(trigger="irregular", source=S.HOLD, dest=None, after="record_irregularity"),
        dict(trigger="hold", source=every, dest=S.HOLD, before="save_resume", after="held"),
        dict(trigger="void_round", source=[S.HOLD, S.BETTING] + dealing_states, dest=S.IDLE,
             conditions="round_open", before="void_current_round"),
        dict(trigger="end_shoe", source=[S.IDLE, S.BETTING, S.HOLD, S.LOADED, S.BURNING]
             + dealing_states, dest=S.SHOE_ENDED, after="finish_shoe"),
    ]
    for dest in every:
        t.append(dict(trigger="resume", source=S.HOLD, dest=dest,
                      conditions=f"resume_to_{dest.replace(SEP, '_')}", after="resumed"))
    return [_plain(x) for x in t]


def _plain(tr: dict) -> dict:
    """State names as plain strings (the nested machine resolves names, not Enum members)."""
    def name(s: Any) -> Any:
        return s.value if isinstance(s, TableState) else s
    out = dict(tr)
    src = tr["source"]
    out["source"] = [name(x) for x in src] if isinstance(src, list) else name(src)
    out["dest"] = name(tr["dest"])
    return out


class _DotState(NestedState):
    separator = SEP


class TableMachine(HierarchicalMachine):
    state_cls = _DotState


def build_machine(model: Any, initial: str) -> HierarchicalMachine:
    """The nested machine for a Table model (its callbacks are the model's methods)."""
    phases = model.rules.phases
    decisions = bool(getattr(model.rules, "draw_decisions", ()))
    states: list[Any] = []
    for st in TableState:
        if st != TableState.DEALING:
            enter = f"on_enter_{st.value}"
            states.append({"name": st.value, "on_enter": enter} if hasattr(model, enter)
                          else st.value)
    states.append({"name": TableState.DEALING.value,
                   "children": dealing_children(phases, decisions)})
    return TableMachine(
        model=model, states=states, initial=initial,
        transitions=transitions_for(phases, phases[0], decisions),
        auto_transitions=False, queued=True, ignore_invalid_triggers=False,
        prepare_event="prepare_card", on_exception="on_machine_error",
        model_attribute="state")
