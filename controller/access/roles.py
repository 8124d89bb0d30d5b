"""Roles, the actions each may take, and the arguments each action accepts, as data.

Segregation of duties: a dealer runs the round, a supervisor
overrides, a manager administers accounts and profiles, an auditor only reads. A supervisor
may also run the round (a supervisor relieves a dealer; every action is journaled with the
supervisor's own name). Every role may read state, recall and audit. Every override (a
supervisor or manager action) needs a non-empty reason, journaled with it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

ROLES = ("dealer", "supervisor", "manager", "auditor")

DEALER_ACTIONS = ("open_bets", "close_bets", "start_round", "confirm_result", "report_misplaced",
                  "cut_card", "shoe_empty", "report_unread", "decide", "count_done", "reveal",
                  "stake", "banco", "accept_stakes", "report_face_up", "call_supervisor")
SUPERVISOR_ACTIONS = (
    "hold", "resume", "void_round", "enter_card", "burn_card", "remove_card", "confirm_layout",
    "end_shoe", "change_shoe", "accept_count", "reject_count", "demo_round", "switch_mode",
    "accept_reads", "discard_reads", "return_reads",
)
MANAGER_ACTIONS = ("change_profile", "users", "accept_software")
READ_ACTIONS = ("state", "recall", "audit", "health")

ACTIONS: tuple[str, ...] = DEALER_ACTIONS + SUPERVISOR_ACTIONS + MANAGER_ACTIONS + READ_ACTIONS

#: role → the actions it may take
PERMISSIONS: Mapping[str, frozenset[str]] = {
    "dealer": frozenset(DEALER_ACTIONS + READ_ACTIONS),
    "supervisor": frozenset(SUPERVISOR_ACTIONS + DEALER_ACTIONS + READ_ACTIONS),
    "manager": frozenset(MANAGER_ACTIONS + READ_ACTIONS),
    "auditor": frozenset(READ_ACTIONS),
}

#: actions that change the record or the table outside the normal procedure: reason required
OVERRIDE_ACTIONS = frozenset(SUPERVISOR_ACTIONS + MANAGER_ACTIONS)

REASON_MAX_CHARS = 500
#: the most rounds (recall) or overrides (audit) one socket request may ask for: a console shows
#: ten; a longer story is `tablectl recall --journal` on the journal file itself
READ_LIMIT = 100


@dataclass(frozen=True)
class Arg:
    """One argument of an action: its name, its kind and whether it must be given.

    kind: "str" (non-empty text), "card" (a card code), "int" (a whole number ≥ 0),
    "scalar" (text, number or true/false).
    """
    name: str
    kind: str
    required: bool = True


#: action → its arguments, in the order `tablectl override ACTION VALUE…` maps bare values
ACTION_ARGS: Mapping[str, tuple[Arg, ...]] = {
    "report_misplaced": (Arg("detail", "str", required=False),),
    "report_unread": (Arg("detail", "str", required=False),),
    "report_face_up": (Arg("code", "card", required=False),),   # default: the last card dealt
    "hold": (Arg("note", "str", required=False),),
    "enter_card": (Arg("code", "card"),),
    "remove_card": (Arg("code", "card", required=False),),   # default: the card held
    "switch_mode": (Arg("mode", "str"),),
    "end_shoe": (Arg("void", "scalar", required=False),),
    "decide": (Arg("name", "str"), Arg("value", "scalar"), Arg("seat", "int", required=False)),
    "stake": (Arg("seat", "int"), Arg("amount", "int")),
    "banco": (Arg("seat", "int"),),
    "accept_stakes": (Arg("amount", "int"),),
    "change_profile": (Arg("profile", "str"),),
    "users": (Arg("op", "str"), Arg("name", "str", required=False)),
    "accept_software": (),      # the controller adds the software SHA-256 it runs
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
