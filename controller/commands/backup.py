"""`tablectl backup --journal J DEST`: a consistent copy of a journal, even one a running table
is writing (SQLite's online backup API), checked before it is given its name.

DEST is a new file, or a folder (the copy is then named after the journal and the UTC time).
Prints one line: the copy, its seq range, size, SHA-256 and what verified. Exit 0 done, 2 the
journal cannot be read, the destination exists, or the copy does not verify (nothing left).
"""
from __future__ import annotations

from typing import Any
import argparse

from controller.commands.recall import DEFAULT_JOURNAL


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("backup", help="a verified copy of the journal, safe while a "
                              "table writes it", description=__doc__.split("\n\n")[0])
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="PATH",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.add_argument("dest", metavar="DEST", help="a new file, or a folder to put the copy in")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.journal.archive import backup
    copied = backup(args.journal, args.dest)
    print(f"backup {copied.line()}")
    return 0
