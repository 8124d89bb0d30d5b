"""What the table cannot see but the people at it must (a shoe waited for, software not
accepted, the journal still being checked), and the gates that keep inputs from the table
while one of them holds."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from controller.errors import CommandRefused
from controller.service.inputs import Submitted
from controller.table.inputs import Input
from controller.words import Words


@dataclass
class Gate:
    """Nothing reaches the table until a person applies `opens_on` (e.g. a manager's
    accept_software), or the service opens it itself (`opens_on` None: the journal's check
    done): device inputs wait in their order, other commands are refused with `reason`, which
    is also the service condition `name` while the gate is shut."""
    name: str
    reason: str
    opens_on: str | None
    words: Words | None = None       # the condition for people, in their language


class Conditions:
    """Service conditions, name → one line; while any holds it is the prompt, and no new shoe
    starts. Changed only on the loop's thread (or before the loop runs)."""

    def __init__(self, changed: Callable[[], None], release: Callable[[Input], None]):
        self._changed, self._release = changed, release
        self.active: dict[str, str] = {}
        self.words: dict[str, Words] = {}
        self.hooks: list[Callable[[dict[str, str]], None]] = []
        self.gates: list[Gate] = []         # shut gates, oldest first
        self._parked: list[Input] = []

    def on_change(self, hook: Callable[[dict[str, str]], None]) -> None:
        """`hook(conditions)` on the loop's thread whenever one begins or ends."""
        self.hooks.append(hook)

    def __bool__(self) -> bool:
        return bool(self.active)

    def first(self) -> tuple[str, str] | None:
        return next(iter(self.active.items()), None)

    @property
    def gate(self) -> Gate | None:
        """The gate shut first (None when every gate is open)."""
        return self.gates[0] if self.gates else None

    def set(self, name: str, text: str | None, words: Words | None = None) -> None:
        """A condition begins (its line for the log, and the words people are told) or ends
        (None)."""
        if words is not None:
            self.words[name] = words
        if text is None:
            self.words.pop(name, None)
            if self.active.pop(name, None) is None:
                return
        elif self.active.get(name) == text:
            return
        else:
            self.active[name] = text
        for hook in self.hooks:
            hook(dict(self.active))
        self._changed()

    def shut(self, gate: Gate) -> None:
        self.gates = [g for g in self.gates if g.name != gate.name] + [gate]
        self.set(gate.name, gate.reason, gate.words)

    def open(self, name: str | None = None) -> None:
        """Open the gate `name` (the first one when None); once none is shut, what came
        meanwhile is applied in its order."""
        gate = next((g for g in self.gates if name is None or g.name == name), None)
        if gate is None:
            return
        self.gates.remove(gate)
        self.set(gate.name, None)
        if self.gates:
            return
        parked, self._parked = self._parked, []
        for inp in parked:          # what came while the gate was shut, in its order
            self._release(inp)

    def opened_by(self, action: str) -> None:
        """A command was applied: the gates it opens open."""
        for gate in [g for g in self.gates if g.opens_on == action]:
            self.open(gate.name)

    def held(self, item: Input | Submitted) -> bool:
        """Whether a shut gate keeps `item` (parked, or refused with the gate's reason)."""
        inp = item.input if isinstance(item, Submitted) else item
        action = getattr(inp, "action", None)
        closed = next((g for g in self.gates if g.opens_on is None or g.opens_on != action),
                      None)
        if closed is None:
            return False            # the command every shut gate opens on
        if isinstance(item, Submitted):
            item.reply.set_exception(CommandRefused(closed.reason))
        else:
            self._parked.append(item)
        return True
