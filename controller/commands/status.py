"""`tablectl status`: the running table's health at a glance, from the controller itself.

Asks the controller on its control socket (a read action: any role may ask; the PIN from a
prompt or TABLECTL_PIN): each device's link and when the shoe last read a card, the shoe
driver's counters, reads kept under a hold, the journal's size and last seq, the floor
feed's lag, the clock, the software and its approval. Lines marked `!` need attention.
Exit 0 answered, 1 refused, 2 no controller or bad input.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from controller.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("status", help="the running table's health: devices, counters, "
                              "journal, feed, clock, software",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--user", help="who you are (default: env TABLECTL_USER)")
    p.add_argument("--socket", help="control socket (default: [console] socket in the config, "
                   "else var/tablectl.sock; env TABLECTL_CONSOLE_SOCKET)")
    p.add_argument("--config", help="table config (default $TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one)")
    p.add_argument("--timeout", type=float, default=15.0, metavar="SECONDS",
                   help="how long to wait for the answer (default 15)")
    p.add_argument("--json", action="store_true", help="print the health view as one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.commands.users import read_pin
    from controller.console.health import health_lines
    from controller.access.client import ControllerUnavailable, console_setting, request
    user = args.user or os.environ.get("TABLECTL_USER")
    if not user:
        raise InputError("say who you are: --user NAME (or set TABLECTL_USER)")
    socket_path = console_setting("socket", args.socket, args.config)
    if not os.path.exists(socket_path):     # say so before asking for a PIN
        raise ControllerUnavailable(f"no controller listening on {socket_path}; start "
                                    "`tablectl run` or give --socket")
    payload: dict[str, Any] = {"user": user, "action": "health", "args": {}, "reason": "",
               "pin": read_pin(f"PIN for {user}: ")}
    response = request(socket_path, payload, timeout=args.timeout)
    if not response.get("ok"):
        print(f"tablectl status: refused ({response.get('error')}): {response.get('message')}",
              file=sys.stderr)
        return 1
    health = response.get("result") or {}
    if args.json:
        print(json.dumps(health, ensure_ascii=False))
    else:
        print("\n".join(health_lines(health)))
    return 0
