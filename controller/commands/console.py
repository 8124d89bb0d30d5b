"""`tablectl console`: the full-screen terminal console for the running table.

Shows the table state and profile, the dealer's prompt, the round being dealt with each card
in its hand, holds with what clears them, alarms and the last 10 rounds, and sends actions
(each with your name and your PIN; an override also with a reason). Each person sees only the
actions their role may take, and only those that apply now: a dealer signs in to the dealer's
screen (the prompt large, the round, the dealer's own actions). F2 chooses the language, kept
for that person on this machine. From scripts use `tablectl override`.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from controller.access.client import console_setting
from controller.errors import InputError

MIN_REFRESH_S = 0.1
MAX_REFRESH_S = 60.0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "console", help="the supervisor's full-screen console (state, holds, overrides)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--socket", help="control socket (default: [console] socket in the "
                        "config, else var/tablectl.sock; env TABLECTL_CONSOLE_SOCKET)")
    parser.add_argument("--config", help="table config (default $TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one)")
    parser.add_argument("--user", help="your user name, filled in for you (default: env "
                        "TABLECTL_USER)")
    parser.add_argument("--refresh-s", type=float, default=1.0, metavar="SECONDS",
                        help="how often the state is read (default 1.0)")
    parser.add_argument("--language", metavar="LANG",
                        help="the console's language: en, zh_Hant, hi, bn or th (default: the "
                        "one you chose last with F2, else en)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not MIN_REFRESH_S <= args.refresh_s <= MAX_REFRESH_S:
        raise InputError(f"--refresh-s must be between {MIN_REFRESH_S:g} and "
                         f"{MAX_REFRESH_S:g} seconds, not {args.refresh_s:g}")
    socket_path = console_setting("socket", args.socket, args.config)
    from controller.words import normalise
    try:
        language = normalise(args.language) if args.language else None
    except ValueError as err:
        raise InputError(f"--language: {err}") from None
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InputError("the console needs a terminal; from scripts use `tablectl override` "
                         "and `tablectl audit`")
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.console.app import ConsoleApp
    from controller.console.client import ConsoleClient
    user = args.user or os.environ.get("TABLECTL_USER", "")
    app = ConsoleApp(ConsoleClient(socket_path), user=user, refresh_s=args.refresh_s,
                     language=language)
    app.run()
    return int(app.return_code or 0)
