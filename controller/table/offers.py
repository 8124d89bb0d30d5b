"""What the table offers now, generated from its command table and its machine: every command
the machine would take in the state the table stands in, its guard holding (`offers`); of
those, the ones that clear the hold it is on, for people (`remedies`). A console shows each
person the offers their role may take (`controller.access.roles`); an action left out may
still be sent, and the table refuses it in plain words (`refusal`)."""
from __future__ import annotations

from typing import Any

from controller.errors import CommandRefused
from controller.table import legal
from controller.words import refuse


def offers(t: Any) -> list[str]:
    """The commands the table takes now (any role's), in the command table's order."""
    return t.machine.takes(t)


def remedies(t: Any) -> list[str]:
    """On a hold: the commands people may take now that clear it (or settle part of it)."""
    if t.hold is None:
        return []
    return [name for name in offers(t) if _remedy(t.machine.commands[name])]


def _remedy(c: legal.Command) -> bool:
    return c.remedy and c.roles != (legal.SYSTEM,)


def refusal(t: Any, name: str) -> CommandRefused | None:
    """Why the table does not take command `name` now (None: it does), in plain words: a hold
    it does not clear, a state it does not apply in, or the guard that does not hold."""
    c = t.machine.commands.get(name)
    if c is None:
        known = legal.BY_NAME.get(name)
        return refuse(known.absent if known is not None else "unknown_action")
    if t.machine.may(t, name):
        return None
    hold = t.hold
    if hold is not None and not any(c.applies_on(k) for k in hold.kinds):
        return refuse("hold_needs_other", action=name, kind=hold.last.kind,
                      actions=remedies(t))
    if t.mstate not in t.machine.sources[name]:
        return refuse(c.not_here, state=t.state)
    guard = c.hold_guard if hold is not None else c.guard
    code, fields = legal.GUARDS[guard].refused(t) if guard else ("not_now", {})
    return refuse(code, **{"state": t.state, **fields})
