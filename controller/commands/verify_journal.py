"""`tablectl verify-journal`: check the journal's hash chain and snapshots.

Exit 0 when intact, 1 when broken (the first broken record is named), 2 when the journal cannot
be read at all (missing, not SQLite, corrupted, unknown schema).
"""
from __future__ import annotations

import argparse
import os
import sys

from controller.commands.recall import DEFAULT_JOURNAL


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "verify-journal", help="check the journal's hash chain and snapshots",
        description="Check every record's hash chain link and every snapshot. Exit 0 intact, "
                    "1 broken (names the first broken record), 2 unreadable.")
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="PATH",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.journal import Journal, JournalError

    if not os.path.isfile(args.journal):
        print(f"tablectl verify-journal: journal {args.journal}: no such file", file=sys.stderr)
        return 2
    try:
        with Journal.open_readonly(args.journal) as journal:
            result = journal.verify()
    except JournalError as err:
        print(f"tablectl verify-journal: {err}", file=sys.stderr)
        return 2
    print(f"journal {args.journal}: {result}")
    return 0 if result.ok else 1
