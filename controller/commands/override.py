"""`tablectl override ACTION [ARGS] --reason "…"`: one authenticated command to the running table.

ARGS are KEY=VALUE pairs or bare values taken in the action's argument order, e.g.
`tablectl override enter_card AS --reason "reader missed it"` or
`tablectl override decide name=punter_on_5 value=true --reason "…"`.
The PIN is read with getpass, or from TABLECTL_PIN for scripts; never from the command line.
Prints the controller's response as JSON. Exit 0 done, 1 refused, 2 bad input or no controller.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from controller.access import roles
from controller.commands.users import read_pin
from controller.access.client import ControllerUnavailable, console_setting, request
from controller.errors import InputError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "override", help="send an authenticated command (dealer, supervisor, manager, auditor) "
        "to the running controller", description=__doc__,
        # the reason is asked of every override (a supervisor's or manager's action), so the
        # synopsis shows it as the README does; a dealer's action may leave it out
        usage="tablectl override [-h] ACTION [ARG ...] --reason REASON [--user USER] "
              "[--socket SOCKET] [--config CONFIG] [--timeout SECONDS]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="actions: " + ", ".join(roles.ACTIONS))
    parser.add_argument("action", metavar="ACTION")
    parser.add_argument("args", nargs="*", metavar="ARG", help="KEY=VALUE or a bare value")
    parser.add_argument("--reason", default="", help="why: required for every override (a "
                        "supervisor's or manager's action) and kept in the journal with your "
                        "name; a dealer's action may leave it out")
    parser.add_argument("--user", help="who you are (default: env TABLECTL_USER)")
    parser.add_argument("--socket", help="control socket (default: [console] socket in the "
                        "config, else var/tablectl.sock; env TABLECTL_CONSOLE_SOCKET)")
    parser.add_argument("--config", help="table config (default $TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one)")
    parser.add_argument("--timeout", type=float, default=15.0, metavar="SECONDS",
                        help="how long to wait for the answer (default 15)")
    parser.set_defaults(func=run)


def parse_args(action: str, words: list[str]) -> dict[str, Any]:
    """KEY=VALUE words and bare values (in the action's argument order) → the args object."""
    spec = roles.ACTION_ARGS.get(action, ())
    by_name = {arg.name: arg for arg in spec}
    out: dict[str, Any] = {}
    for word in words:
        key, eq, text = word.partition("=")
        if eq and key.isidentifier():
            if key in out:
                raise InputError(f"argument {key} given twice")
            arg = by_name.get(key)
            out[key] = roles.coerce(arg, text) if arg else text
            continue
        free = [arg for arg in spec if arg.name not in out]
        if not free:
            takes = ", ".join(by_name) or "no arguments"
            raise InputError(f"{action}: unexpected argument {word!r} ({action} takes {takes})")
        out[free[0].name] = roles.coerce(free[0], word)
    return out


def run(args: argparse.Namespace) -> int:
    user = args.user or os.environ.get("TABLECTL_USER")
    if not user:
        raise InputError("say who you are: --user NAME (or set TABLECTL_USER)")
    if roles.needs_reason(args.action) and not args.reason.strip():
        raise InputError(f"{args.action} is an override: give --reason \"why\" (it is kept in "
                         "the journal with your name)")
    payload = {"user": user, "action": args.action, "args": parse_args(args.action, args.args),
               "reason": args.reason}
    socket_path = console_setting("socket", args.socket, args.config)
    if not os.path.exists(socket_path):     # say so before asking for a PIN
        raise ControllerUnavailable(f"no controller listening on {socket_path}; start "
                                    "`tablectl run` or give --socket")
    payload["pin"] = read_pin(f"PIN for {user}: ")
    response = request(socket_path, payload, timeout=args.timeout)
    print(json.dumps(response, ensure_ascii=False))
    if response.get("ok"):
        return 0
    print(f"tablectl override: refused ({response.get('error')}): {response.get('message')}",
          file=sys.stderr)
    return 1
