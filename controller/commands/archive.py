"""`tablectl archive --before DATE`: move the closed gaming days before DATE out of the journal
into a dated archive file beside it (`archive/<journal>.<first day>_to_<last day>.db`).

A gaming day starts at --day-start (local time, default 06:00). The archive is written and
verified before anything leaves the journal; the journal keeps the archive's last record, so
the hash chain runs on across the files. `tablectl recall`, `audit` and `verify-journal` read
the archives together with the journal. Safe while a table writes the journal. Exit 0 done,
2 nothing can be archived now (the line says why) or the journal cannot be read.
"""
from __future__ import annotations

from typing import Any
import argparse
import re
from datetime import date, time

from controller.commands.recall import DEFAULT_JOURNAL
from controller.errors import InputError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("archive", help="move closed gaming days into a dated, verified "
                              "archive file", description=__doc__.split("\n\n")[0])
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="PATH",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.add_argument("--before", required=True, metavar="DATE",
                   help="archive the gaming days before this one (YYYY-MM-DD)")
    p.add_argument("--day-start", default="06:00", metavar="HH:MM",
                   help="when a gaming day begins, local time (default 06:00)")
    p.add_argument("--dest", metavar="DIR",
                   help="where the archive goes (default: archive/ beside the journal; recall "
                   "and verify-journal look there)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.journal.archive import archive
    try:
        before = date.fromisoformat(args.before)
    except ValueError:
        raise InputError(f"--before {args.before!r}: give a date as YYYY-MM-DD") from None
    m = re.fullmatch(r"(\d{1,2}):(\d{2})", args.day_start)
    if not m or int(m[1]) > 23 or int(m[2]) > 59:
        raise InputError(f"--day-start {args.day_start!r}: give a time as HH:MM, e.g. 06:00")
    if before > date.today():
        raise InputError(f"--before {before}: that gaming day has not begun; give today or "
                         f"an earlier date")
    done = archive(args.journal, before, day_start=time(int(m[1]), int(m[2])),
                   dest_dir=args.dest)
    print(f"archived gaming days {done.first_day} to {done.last_day}: {done.copied.line()}")
    print(f"journal {args.journal}: {done.deleted} records moved out; it now begins at seq "
          f"{done.cut_seq} (the archive's last record)")
    return 0
