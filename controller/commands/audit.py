"""`tablectl audit`: the override trail from the journal: who did what, when and why.

Every record of kind "override" (a supervisor's or manager's action) with its journal time and
seq, oldest first and newest last: shoe, round, user, role, action, arguments, reason, and what
changed (the table before and after). `--json` prints one JSON object per override.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, Iterable

from controller.commands._store import add_store_options, per_table, period, store_url
from controller.errors import InputError

DEFAULT_JOURNAL = os.path.join("var", "journal.db")
COLUMNS = ("SEQ", "TIME (UTC)", "SHOE", "ROUND", "USER", "ROLE", "ACTION", "ARGS", "REASON",
           "CHANGE")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "audit", help="print the override trail from the journal (who did what and why)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="PATH",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.add_argument("--last", type=int, metavar="N", help="only the newest N overrides")
    p.add_argument("--user", metavar="U", help="only the overrides of user U")
    add_store_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object per override (from "
                   "--store with its \"table\" and \"pit\")")
    p.set_defaults(func=run)


def _clean(value: Any) -> str:
    """One table cell: no control characters (a reason could hold escapes or newlines)."""
    if value is None:
        return "-"
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _CONTROL.sub(" ", value).strip() or "-"


def _args_cell(args: Any) -> str:
    if isinstance(args, dict):
        return " ".join(f"{k}={_clean(v)}" for k, v in args.items()) or "-"
    return _clean(args)


def change(before: Any, after: Any) -> str:
    """What an override changed: `key: old -> new` for each field that differs."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return f"{_clean(before)} -> {_clean(after)}"
    parts = [f"{k}: {_clean(before.get(k))} -> {_clean(after.get(k))}"
             for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k)]
    return "; ".join(parts) or "no change"


def rows(entries: Iterable[dict]) -> list[tuple[str, ...]]:
    """The table cells of each override."""
    out = []
    for e in entries:
        utc = str(e.get("utc") or "")
        out.append((str(e["seq"]), _clean(utc[:19].replace("T", " ")), _clean(e.get("shoe")),
                    _clean(e.get("round")), _clean(e.get("user")), _clean(e.get("role")),
                    _clean(e.get("action")), _args_cell(e.get("args")), _clean(e.get("reason")),
                    change(e.get("before"), e.get("after"))))
    return out


def format_table(entries: list[dict]) -> str:
    """The trail as aligned columns under a header (the last column is not padded); with a
    TABLE column first when the entries come from several tables (the floor store)."""
    cells = [COLUMNS, *rows(entries)]
    if entries and "table" in entries[0]:
        cells = [("TABLE", *COLUMNS), *[(_clean(e.get("table")), *r)
                                         for e, r in zip(entries, rows(entries))]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(row, widths)), row[-1]]).rstrip()
             for row in cells]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.commands._unproven import warn
    from controller.journal import JournalError
    from controller.journal.archive import open_with_archives
    from controller.journal.recall import overrides

    if args.last is not None and args.last < 1:
        raise InputError(f"--last must be at least 1, not {args.last}")
    start, end = period(args)
    url = store_url(args)
    if url is not None:
        with per_table(args, url, start=start, end=end) as (where, chosen):
            entries = [{"table": info.name, "pit": info.pit, **e} for info, journal in chosen
                       for e in overrides(journal, user=args.user)]
        entries.sort(key=lambda e: (str(e.get("utc")), e["table"], e["seq"]))
        return _print(args, entries[-args.last:] if args.last else entries, where)
    if not os.path.isfile(args.journal):
        raise InputError(f"journal {args.journal}: no such file (give --journal PATH)")
    try:
        status = warn(args.journal, "audit")
        with open_with_archives(args.journal) as journal:      # archived days included
            entries = overrides(journal, user=args.user)
    except JournalError as err:
        print(f"tablectl audit: {err}", file=sys.stderr)
        return 2
    if start is not None or end is not None:
        entries = [e for e in entries if _within(e.get("utc"), start, end)]
    return _print(args, entries[-args.last:] if args.last else entries, args.journal, status)


def _within(utc: Any, start: Any, end: Any) -> bool:
    from controller.report.collect import utc as when
    t = when(str(utc))
    return (start is None or t >= start) and (end is None or t < end)


def _print(args: argparse.Namespace, entries: list[dict], source: str, status: int = 0) -> int:
    if args.json:
        for entry in entries:
            print(json.dumps(entry, ensure_ascii=False))
        return status
    who = f" by {args.user}" if args.user else ""
    if not entries:
        print(f"No overrides{who} in {source}.")
        return status
    count = len(entries)
    print(f"OVERRIDES{who} in {source}: {count} shown, oldest first, newest last")
    print(format_table(entries))
    return status
