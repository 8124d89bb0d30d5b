"""The table machine, generated from a game's procedure and its command table.

Two kinds of moves, one trigger per destination:

- the procedure's own (`PROCEDURE_MOVES`): a card moves the table to the step the rules name
  next with `next_<step>`, the machine allowing only the moves of the game's successor table,
  so a step out of order is refused by the machine itself; the shoe-start burn, the result,
  the end of a shoe, and `held` (the table holds itself, from any state, onto `hold.<state>`);
- every command of the command table (`controller.table.legal`): a trigger of its own name,
  from each state it applies in to its destination, guarded by its named predicate, and on a
  hold by the kinds of hold it applies on. `resume` leaves `hold.<state>` for `<state>` only.

`moves_for(game)` is the data; `GameMachine` the flat `transitions` machine built from it, once
per game and thread, with one cursor model that stands for whichever table fires a trigger (a
table is only a state name for the machine, so a new table costs no machine).
"""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from transitions import Machine, MachineError

from controller.games import GameRules, get_rules
from controller.games.procedure import RESULT, Procedure
from controller.table import legal
from controller.table.states import (BETTING, BURN, BURNING, CLOSED, HOLD, IDLE, LOADED,
                                     SHOE_ENDED, SHOE_STATES, SHUFFLING, dealing, held,
                                     origin_of, shown)

#: the procedure's own moves (never a person's command), by trigger
PROCEDURE_MOVES = ("shuffle", "load", "count_ok", "burn_more", "burn_done", "no_burn",
                   "bets_open", "result", "round_void", "shoe_over", "held")


@dataclass(frozen=True)
class Move:
    """One transition: `dest` None stays in `source` (an internal move)."""
    trigger: str
    source: str
    dest: str | None
    conditions: tuple[str, ...] = ()
    command: bool = False


def plain_states(proc: Procedure) -> list[str]:
    """The states a table can stand in off a hold."""
    return list(SHOE_STATES) + [dealing(s) for s in (BURN,) + proc.steps]


def state_names(proc: Procedure) -> list[str]:
    """Every state of the machine: the plain ones, then a hold from each."""
    plain = plain_states(proc)
    return plain + [held(s) for s in plain]


def procedure_moves(proc: Procedure) -> list[Move]:
    """The moves the table makes by itself: the shoe's procedure and the round's."""
    plain = plain_states(proc)
    deal_states = [dealing(s) for s in (BURN,) + proc.steps]
    in_play = [SHUFFLING, LOADED, BURNING, IDLE, BETTING] + deal_states
    out = [Move("shuffle", s, SHUFFLING) for s in (CLOSED, SHOE_ENDED)]
    out += [Move("load", s, LOADED) for s in (CLOSED, SHOE_ENDED)]
    out += [Move("count_ok", SHUFFLING, LOADED)]
    # the shoe-start burn: the turned card decides how many follow it
    out += [Move("burn_more", s, BURNING) for s in (LOADED, BURNING)]
    out += [Move("burn_done", s, IDLE) for s in (LOADED, BURNING)]
    out += [Move("no_burn", LOADED, IDLE)]
    # the round starts with bets (they close onto the between-round burn or its first card),
    # or with the cards dealt before the bets (Andar Bahar's game card), which open them
    start = IDLE if proc.bets_after else BETTING
    out += [Move("bets_open", dealing(proc.bets_after) if proc.bets_after else IDLE, BETTING)]
    nexts: dict[str, list[str]] = {BURN: [start, dealing(BURN)],
                                   proc.first: [start, dealing(BURN)]}
    for src in proc.steps:
        for dst in proc.successors[src]:
            if dst != RESULT:
                nexts.setdefault(dst, []).append(BETTING if src == proc.bets_after
                                                 else dealing(src))
    for dst, sources in nexts.items():
        out += [Move(f"next_{dst}", s, dealing(dst)) for s in dict.fromkeys(sources)]
    out += [Move("result", dealing(s), IDLE) for s in proc.ends()]
    # a round void by the procedure (a card when none was due, the profile voiding)
    out += [Move("round_void", s, IDLE) for s in [BETTING] + deal_states]
    # the shoe ends by itself: the cut card reached, the shoe empty (also while on hold)
    out += [Move("shoe_over", s, SHOE_ENDED) for s in in_play]
    out += [Move("shoe_over", held(s), SHOE_ENDED) for s in in_play]
    out += [Move("held", s, held(s)) for s in plain]
    return out


def command_moves(rules: GameRules) -> list[Move]:
    """Every command of the game's command table as transitions (legal.uses_for)."""
    out: list[Move] = []
    for use in legal.uses_for(rules):
        c = use.command
        for source, on_hold in [(s, False) for s in use.states] + \
                [(held(s), True) for s in use.held_from]:
            guard = c.hold_guard if on_hold else c.guard
            base = ((f"holds_{c.name}",) if on_hold else ()) + \
                ((f"guard_{guard}",) if guard else ())
            for route_guard, dest in c.routes:
                out.append(Move(c.name, source, _dest(dest, source),
                                base + (f"guard_{route_guard}",), True))
            out.append(Move(c.name, source, _dest(c.dest, source), base, True))
    return out


def _dest(dest: str, source: str) -> str | None:
    origin = origin_of(source)
    if dest == legal.STAY or (dest == legal.BACK and origin is None):
        return None
    if dest == legal.BACK:
        return origin
    if dest == legal.HOLD:
        return held(source)
    return dest


def moves_for(game: str) -> list[Move]:
    """The table machine of `game` as data: the procedure's moves, then the commands'."""
    rules = get_rules(game)
    return procedure_moves(rules.procedure) + command_moves(rules)


# ---- the machine --------------------------------------------------------------------------
class Cursor:
    """The machine's one model: it stands for the table that fires a trigger (`at`), so that
    its state, guards and error handling are that table's. Kept apart from the table so the
    machine's trigger methods never shadow the table's."""

    def __init__(self, game_commands: Mapping[str, legal.Command]):
        self.at: Any = None
        self._commands = game_commands

    @property
    def state(self) -> str:
        return self.at.mstate if self.at is not None else CLOSED

    @state.setter
    def state(self, value: str) -> None:
        at = self.at
        if at is not None:
            at.mstate, at.state = value, shown(value)

    def __getattr__(self, name: str) -> Callable[..., bool]:
        if name.startswith("guard_"):
            test = legal.GUARDS[name[len("guard_"):]].test
            return lambda *_, **__: test(self.at)
        if name.startswith("holds_"):
            command = self._commands[name[len("holds_"):]]
            return lambda *_, **__: self.at.hold is not None and any(
                command.applies_on(k) for k in self.at.hold.kinds)
        raise AttributeError(name)

    def moved(self, *_: Any, **__: Any) -> None:
        self.at.moved = True

    def on_machine_error(self, *_: Any, **__: Any) -> None:
        """A move the machine does not allow is refused (`MoveRefused`); anything else goes
        on up, for the table to hold on it."""
        err = sys.exc_info()[1]
        if isinstance(err, MachineError):
            raise MoveRefused(err.value) from err
        if err is not None:
            raise err


class MoveRefused(Exception):
    """The machine has no such move from the state it stands in."""


class GameMachine:
    """The flat machine of one game (states, the procedure's moves and the commands'), with
    its cursor. `fire[trigger]()` makes a move for the table the cursor stands for."""

    def __init__(self, game: str):
        rules = get_rules(game)
        self.game = game
        self.moves = moves_for(game)
        self.commands = {u.command.name: u.command for u in legal.uses_for(rules)}
        self.cursor = Cursor(self.commands)
        self.machine = Machine(
            model=self.cursor, states=state_names(rules.procedure), initial=CLOSED,
            transitions=[_as_dict(m) for m in self.moves], auto_transitions=False,
            queued=True, ignore_invalid_triggers=False, on_exception="on_machine_error",
            model_attribute="state")
        self.fire: dict[str, Callable[..., bool]] = {
            name: getattr(self.cursor, name) for name in self.machine.events}
        #: the procedure's moves that have no guard, no callback and no rival from their
        #: source, by trigger and source: (the machine's state after, the state shown). The
        #: machine makes exactly these moves; taken from this table on the hot path (a card),
        #: they cost a dict lookup instead of a pass through `transitions`
        self.direct: dict[str, dict[str, tuple[str, str]]] = direct_moves(self.moves)
        #: for each command, the states it has a move from (whatever its guard says)
        self.sources: dict[str, frozenset[str]] = {
            name: frozenset(m.source for m in self.moves if m.trigger == name)
            for name in self.commands}
        # the same moves by source state, their conditions resolved once: what the machine
        # would take from a state is asked on every view, so it is not asked of `may_<name>`
        order = {name: i for i, name in enumerate(self.commands)}
        by_state: dict[str, dict[str, list[tuple[Callable[[Any], bool], ...]]]] = {}
        for m in self.moves:
            if m.command:
                tests = tuple(self._condition(c) for c in m.conditions)
                by_state.setdefault(m.source, {}).setdefault(m.trigger, []).append(tests)
        self._from: dict[str, list[tuple[str, list[tuple[Callable[[Any], bool], ...]]]]] = {
            state: sorted(moves.items(), key=lambda kv: order[kv[0]])
            for state, moves in by_state.items()}

    def _condition(self, name: str) -> Callable[[Any], bool]:
        if name.startswith("guard_"):
            return legal.GUARDS[name[len("guard_"):]].test
        command = self.commands[name[len("holds_"):]]
        return lambda at: at.hold is not None and any(command.applies_on(k)
                                                      for k in at.hold.kinds)

    def takes(self, at: Any) -> list[str]:
        """The commands the machine would take from where `at` stands, in the command
        table's order (a command's move exists and its conditions hold)."""
        return [name for name, moves in self._from.get(at.mstate, ())
                if any(all(test(at) for test in tests) for tests in moves)]

    def may(self, at: Any, name: str) -> bool:
        """Whether the machine would take command `name` from where `at` stands."""
        return name in self.takes(at)

    def set_state(self, at: Any, state: str) -> None:
        """Stand `at` in `state` without any move (a restore, or a defect's hold)."""
        self.cursor.at = at
        self.machine.set_state(state, model=self.cursor)


def direct_moves(moves: list[Move]) -> dict[str, dict[str, tuple[str, str]]]:
    """The moves whose trigger from their source can only go one way, whatever the table
    holds: by trigger, then source, (the destination, the state shown there)."""
    count: dict[tuple[str, str], int] = {}
    for m in moves:
        count[m.trigger, m.source] = count.get((m.trigger, m.source), 0) + 1
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for m in moves:
        if (m.command or m.conditions or m.dest is None
                or count[m.trigger, m.source] != 1):
            continue
        out.setdefault(m.trigger, {})[m.source] = (m.dest, shown(m.dest))
    return out


def _as_dict(m: Move) -> dict[str, Any]:
    d: dict[str, Any] = dict(trigger=m.trigger, source=m.source, dest=m.dest)
    if m.conditions:
        d["conditions"] = list(m.conditions)
    if m.command:
        d["after"] = "moved"        # the table checks that a command's move was made
    return d


_LOCAL = threading.local()


def machine_for(game: str) -> GameMachine:
    """The machine of `game` for this thread (built at its first use)."""
    machines = getattr(_LOCAL, "machines", None)
    if machines is None:
        machines = _LOCAL.machines = {}
    m = machines.get(game)
    if m is None:
        m = machines[game] = GameMachine(game)
    return m


__all__ = ["Move", "GameMachine", "MoveRefused", "machine_for", "moves_for", "state_names",
           "plain_states", "PROCEDURE_MOVES", "HOLD"]
