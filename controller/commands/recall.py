"""`tablectl recall`: the last rounds from the journal, told for a supervisor (or as JSON)."""
from __future__ import annotations

import argparse
import os
import sys

from controller.errors import InputError

DEFAULT_JOURNAL = os.path.join("var", "journal.db")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "recall", help="show the last rounds from the journal (game recall)",
        description="Show the last rounds recorded in the journal, oldest first: cards with "
                    "their slots, totals, winner, bets, irregularities and supervisor actions.")
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="PATH",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.add_argument("--last", type=int, default=10, metavar="N",
                   help="how many rounds (default 10: the last round and the nine before it)")
    p.add_argument("--json", action="store_true", help="one JSON object per round")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.commands._unproven import warn
    from controller.journal import JournalError
    from controller.journal.archive import open_with_archives
    from controller.recall import format_json_lines, format_text, last_rounds

    if args.last < 1:
        raise InputError(f"--last must be at least 1, not {args.last}")
    if not os.path.isfile(args.journal):
        raise InputError(f"journal {args.journal}: no such file (give --journal PATH)")
    try:
        status = warn(args.journal, "recall")
        # rounds of archived gaming days are read from the archives beside the journal
        with open_with_archives(args.journal) as journal:
            stories = last_rounds(journal, args.last)
    except JournalError as err:
        print(f"tablectl recall: {err}", file=sys.stderr)
        return 2
    if args.json:
        if stories:
            print(format_json_lines(stories))
    else:
        print(format_text(stories, source=args.journal, asked=args.last))
    return status
