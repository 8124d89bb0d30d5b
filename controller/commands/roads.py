"""`tablectl roads`: a shoe's roads from the journal, drawn in the terminal or as JSON."""
from __future__ import annotations

from typing import Any
import argparse
import json
import os
import shutil

from controller.errors import InputError

DEFAULT_JOURNAL = os.path.join("var", "journal.db")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "roads", help="show a shoe's roads (bead plate, big road, derived roads) from the journal",
        description="Show the roads of a shoe as the table's scoreboard showed them: bead "
                    "plate, big road, big eye boy, small road, cockroach pig, the counts and "
                    "the ask-Banker / ask-Player predictions. Void and demonstration rounds, "
                    "and results never revealed, are not on the roads.")
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="J",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.add_argument("--shoe", type=int, metavar="N", help="the shoe (default: the latest)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object, the same as the display's /api/roads")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.display.history import shoe_events
    from controller.display.public import PublicView
    from controller.journal import Journal

    if not os.path.isfile(args.journal):
        raise InputError(f"journal {args.journal}: no such file (give --journal J)")
    from controller.commands._unproven import warn
    status = warn(args.journal, "roads")
    view = PublicView()
    with Journal.open_readonly(args.journal) as journal:
        shoe, events = shoe_events(journal, args.shoe)
        for e in events:
            view.publish(e)
    roads = view.roads_json()
    if args.json:
        from controller.schema import stamped
        print(json.dumps(stamped(roads), separators=(",", ":")))
        return status
    from rich.console import Console
    console = Console(highlight=False)
    if shoe is None:
        console.print(f"journal {args.journal}: no shoe has started yet")
        return status
    width = max(10, (shutil.get_terminal_size().columns - 2) // 2)
    from controller.display.terminal import roads_text
    console.print(f"Shoe {shoe} ({roads.get('game')}), journal {args.journal}", style="bold")
    console.print(roads_text(roads, width))
    return status
