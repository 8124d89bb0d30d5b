"""`tablectl users add|disable|enable|passwd|list|log`: the accounts of the table's staff.

The first account is a manager created on an empty store (`users add NAME --role manager`).
Every later change names the manager who makes it (`--as MANAGER`) and needs that manager's
PIN. PINs are read with getpass, or from TABLECTL_PIN (the acting person's) and
TABLECTL_NEW_PIN (the new secret) for scripts; never from the command line.
"""
from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from typing import Any

from controller.access.accounts import AccountStore, AuthResult, check_name
from controller.access.client import console_setting
from controller.errors import InputError
from controller.logsetup import secret
from controller.access.roles import ROLES

PIN_ENV = "TABLECTL_PIN"
NEW_PIN_ENV = "TABLECTL_NEW_PIN"


def register(subparsers: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", help="user store (default: [console] users_db in the config, "
                        "else var/users.db; env TABLECTL_CONSOLE_USERS_DB)")
    common.add_argument("--config", help="table config (default $TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one)")
    parser = subparsers.add_parser("users", help="manage the accounts of dealers, supervisors, "
                                   "managers and auditors", description=__doc__)
    sub = parser.add_subparsers(dest="users_command", metavar="ACTION")
    sub.required = True

    add = sub.add_parser("add", parents=[common], help="add an account (the first: a manager)")
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=ROLES)
    add.add_argument("--as", dest="actor", metavar="MANAGER", help="the manager making the "
                     "change (not for the first account)")
    for action, what in (("disable", "disable an account"),
                         ("enable", "enable an account and clear its lockout")):
        p = sub.add_parser(action, parents=[common], help=what)
        p.add_argument("name")
        p.add_argument("--as", dest="actor", metavar="MANAGER", required=True)
    passwd = sub.add_parser("passwd", parents=[common], help="change a PIN (your own, or any "
                            "as a manager)")
    passwd.add_argument("name")
    passwd.add_argument("--as", dest="actor", metavar="USER",
                        help="who makes the change (default: NAME, with the current PIN)")
    for action, what in (("list", "list the accounts"), ("log", "show the account changes")):
        p = sub.add_parser(action, parents=[common], help=what)
        p.add_argument("--as", dest="actor", metavar="USER", required=True,
                       help="a manager or auditor")
        p.add_argument("--json", action="store_true", help="JSON Lines output")
        if action == "log":
            p.add_argument("--limit", type=int, default=100)
    parser.set_defaults(func=run)


def terminal_available() -> bool:
    """True when a controlling terminal can take a PIN without echo."""
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


def read_pin(prompt: str, env: str = PIN_ENV) -> str:
    """A PIN from the environment (scripts) or typed at the terminal without echo (and kept
    out of every log line from now on)."""
    if os.environ.get(env):
        return secret(os.environ[env])
    # without a terminal getpass would read stdin and might echo the PIN: refuse instead
    if not terminal_available():
        raise InputError(f"no PIN given; type it at a terminal or set {env}")
    try:
        return secret(getpass.getpass(prompt))
    except EOFError:
        raise InputError(f"no PIN given; type it at a terminal or set {env}") from None


def read_new_pin(name: str) -> str:
    if os.environ.get(NEW_PIN_ENV):
        return secret(os.environ[NEW_PIN_ENV])
    first = read_pin(f"New PIN for {name}: ", NEW_PIN_ENV)
    if read_pin(f"Repeat the new PIN for {name}: ", NEW_PIN_ENV) != first:
        raise InputError(f"the two PINs for {name!r} differ; try again")
    return first


def _refuse(message: str) -> int:
    print(f"tablectl users: refused: {message}", file=sys.stderr)
    return 1


def _sign_in(store: AccountStore, actor: str, roles: tuple[str, ...],
             context: str) -> AuthResult | None:
    """Authenticate `actor`; None (after printing why) unless they hold one of `roles`."""
    auth = store.authenticate(actor, read_pin(f"PIN for {actor}: "), context=context)
    if not auth.ok:
        _refuse(auth.message)
        return None
    if auth.role not in roles:
        _refuse(f"{actor!r} is a {auth.role}; {context} needs {' or '.join(roles)}")
        return None
    return auth


def run(args: argparse.Namespace) -> int:
    store = AccountStore(console_setting("users_db", args.db, args.config))
    command = args.users_command
    if command == "add":
        return _add(store, args)
    if command in ("list", "log") and store.is_empty():
        print("no accounts yet; create the first manager with "
              "`tablectl users add NAME --role manager`")
        return 0
    if command == "passwd":
        actor = args.actor or args.name
        allowed = ROLES if actor == args.name else ("manager",)
        if _sign_in(store, actor, allowed, f"users passwd {args.name}") is None:
            return 1
        store.set_secret(args.name, read_new_pin(args.name), by=actor)
        print(f"PIN of {args.name!r} changed")
        return 0
    needed = ("manager",) if command in ("disable", "enable") else ("manager", "auditor")
    if _sign_in(store, args.actor, needed, f"users {command}") is None:
        return 1
    if command in ("disable", "enable"):
        getattr(store, command)(args.name, by=args.actor)
        print(f"{args.name!r} {command}d")
    elif command == "list":
        _print_users(store, args.json)
    else:
        for change in store.changes(args.limit):
            print(json.dumps(change) if args.json else
                  f"{change['at']}  {change['actor']:<12} {change['action']:<9} "
                  f"{change['name']:<12} {change['detail']}")
    return 0


def _add(store: AccountStore, args: argparse.Namespace) -> int:
    check_name(args.name)
    if store.is_empty():
        if args.role != "manager":
            raise InputError("the user store is empty: the first account must be a manager "
                             "(--role manager)")
        store.bootstrap(args.name, read_new_pin(args.name))
        print(f"created the first account: {args.name!r} (manager)")
        return 0
    if not args.actor:
        raise InputError(f"adding {args.name!r} needs the manager who adds it: --as MANAGER")
    if _sign_in(store, args.actor, ("manager",), f"users add {args.name}") is None:
        return 1
    store.add(args.name, args.role, read_new_pin(args.name), by=args.actor)
    print(f"added {args.name!r} ({args.role})")
    return 0


def _print_users(store: AccountStore, as_json: bool) -> None:
    now = store.clock()
    for info in store.users():
        rec = info.record(now)
        if as_json:
            print(json.dumps(rec))
            continue
        status = "disabled" if rec["disabled"] else "locked" if rec["locked"] else "enabled"
        print(f"{rec['name']:<16} {rec['role']:<10} {status:<8} failures={rec['failures']} "
              f"changed={rec['changed']}")
