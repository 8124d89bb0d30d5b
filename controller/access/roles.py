"""Roles and their rights, generated from the table's command table (`controller.table.legal`),
plus the requests that read or administer rather than act on the table.

Segregation of duties: a dealer runs the round, a supervisor overrides, a manager administers
accounts and profiles, an auditor only reads. A supervisor may also run the round (a supervisor
relieves a dealer; every action is journaled with the supervisor's own name), though not call
a supervisor. Every role may read state, recall and audit. Every override (a supervisor or
manager action) needs a non-empty reason, journaled with it.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from controller.table.legal import COMMANDS, DEALER, MANAGER, SUPERVISOR, Arg

ROLES = ("dealer", "supervisor", "manager", "auditor")

#: requests that read the table or its journal (every role), and the manager's own
READ_ACTIONS = ("state", "recall", "audit", "health")
ADMIN_ACTIONS = ("users",)

DEALER_ACTIONS: tuple[str, ...] = tuple(c.name for c in COMMANDS if DEALER in c.roles)
SUPERVISOR_ACTIONS: tuple[str, ...] = tuple(
    c.name for c in COMMANDS if SUPERVISOR in c.roles and DEALER not in c.roles)
MANAGER_ACTIONS: tuple[str, ...] = tuple(
    c.name for c in COMMANDS if MANAGER in c.roles) + ADMIN_ACTIONS

ACTIONS: tuple[str, ...] = DEALER_ACTIONS + SUPERVISOR_ACTIONS + MANAGER_ACTIONS + READ_ACTIONS


def _rights(role: str, *more: str) -> frozenset[str]:
    return frozenset([c.name for c in COMMANDS if role in c.roles] + list(more))


#: role → the actions it may take: the command table's roles, and the reads for every one
PERMISSIONS: Mapping[str, frozenset[str]] = {
    "dealer": _rights(DEALER, *READ_ACTIONS),
    "supervisor": _rights(SUPERVISOR, *READ_ACTIONS),
    "manager": _rights(MANAGER, *ADMIN_ACTIONS, *READ_ACTIONS),
    "auditor": frozenset(READ_ACTIONS),
}

#: actions that change the record or the table outside the normal procedure: reason required
OVERRIDE_ACTIONS = frozenset([c.name for c in COMMANDS if c.override] + list(ADMIN_ACTIONS))

REASON_MAX_CHARS = 500
#: the most rounds (recall) or overrides (audit) one socket request may ask for: a console shows
#: ten; a longer story is `tablectl recall --journal` on the journal file itself
READ_LIMIT = 100


#: action → the arguments a person gives it, in the order `tablectl override ACTION VALUE…`
#: maps bare values (what the controller adds itself is not asked)
ACTION_ARGS: Mapping[str, tuple[Arg, ...]] = {
    **{c.name: tuple(a for a in c.args if a.person) for c in COMMANDS
       if c.args and set(c.roles) & set(ROLES)},
    "users": (Arg("op", "str"), Arg("name", "str", required=False)),
    "recall": (Arg("count", "int", required=False),),
    "audit": (Arg("limit", "int", required=False),),
}


def allowed(role: str, action: str) -> bool:
    """True when `role` may take `action`."""
    return action in PERMISSIONS.get(role, frozenset())


def roles_for(action: str) -> list[str]:
    """The roles that may take `action` (for refusal messages)."""
    return [role for role in ROLES if action in PERMISSIONS[role]]


def needs_reason(action: str) -> bool:
    return action in OVERRIDE_ACTIONS


def check_args(action: str, args: Mapping[str, Any]) -> str | None:
    """Return None when `args` fit `action`, else a one-line problem."""
    spec = {arg.name: arg for arg in ACTION_ARGS.get(action, ())}
    extra = sorted(set(args) - set(spec))
    if extra:
        takes = ", ".join(spec) or "no arguments"
        return f"{action} does not take {', '.join(extra)} (it takes {takes})"
    for arg in spec.values():
        if arg.name not in args:
            if arg.required:
                return f"{action} needs {arg.name} ({_KIND_HELP[arg.kind]})"
            continue
        problem = _check_value(arg, args[arg.name])
        if problem:
            return f"{action}: {arg.name}: {problem}"
    return None


_KIND_HELP = {
    "str": "text",
    "card": "a card code such as AS, TD, 10h",
    "int": "a whole number",
    "scalar": "text, a number, or true/false",
}


def _check_value(arg: Arg, value: Any) -> str | None:
    if arg.kind in ("str", "card"):
        if not isinstance(value, str) or not value.strip():
            return f"expected {_KIND_HELP[arg.kind]}, got {value!r}"
        if arg.kind == "card":
            from controller.shoe.cards import CardCodeError, parse_card
            try:
                parse_card(value)
            except CardCodeError as err:
                return str(err)
        return None
    if arg.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"expected a whole number ≥ 0, got {value!r}"
        if arg.name in ("count", "limit") and value > READ_LIMIT:
            return (f"at most {READ_LIMIT} at a time, not {value} (for more, run tablectl "
                    f"recall or tablectl audit on the journal)")
        return None
    if value is None or not isinstance(value, (str, int, float, bool)):
        return f"expected {_KIND_HELP['scalar']}, got {value!r}"
    return None


def coerce(arg: Arg, text: str) -> Any:
    """Turn a command-line word into the value `arg` expects (bad words are left to check_args)."""
    if arg.kind == "int":
        return int(text) if text.isdigit() else text
    if arg.kind == "scalar":
        lowered = text.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            return text
        # nan and inf are not JSON; keep them as text so the table refuses them by name
        return number if math.isfinite(number) else text
    return text
