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
#: the columns of the trail, by their words (report.col.*, audit.col.*)
COLUMNS = ("audit.col.seq", "report.col.time", "report.col.shoe", "report.col.round",
           "report.col.who", "report.col.role", "report.col.action", "audit.col.args",
           "report.col.why", "audit.col.change")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "audit", help="print the override trail from the journal (who did what and why)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="PATH",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.add_argument("--last", type=int, metavar="N", help="only the newest N overrides")
    p.add_argument("--user", metavar="U", help="only the overrides of user U")
    p.add_argument("--language", metavar="LANG", help="the trail's language: en, zh_Hant, hi, "
                   "bn or th (default: [table] language of the config, env "
                   "TABLECTL_TABLE_LANGUAGE; --json stays language-neutral)")
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


def change(before: Any, after: Any, language: str = "en") -> str:
    """What an override changed, in words: `state: on hold → a round is being dealt`."""
    from controller.words import record
    return _clean(record.change(before, after, language))


def rows(entries: Iterable[dict], language: str = "en") -> list[tuple[str, ...]]:
    """The table cells of each override, in `language`."""
    from controller.words import record
    from controller.words.fields import number
    out: list[tuple[str, ...]] = []
    for e in entries:
        utc = str(e.get("utc") or "")

        def num(v: Any) -> str:
            return number(v, language) if isinstance(v, int) else _clean(v)
        out.append((str(e["seq"]), _clean(utc[:19].replace("T", " ")), num(e.get("shoe")),
                    num(e.get("round")), _clean(e.get("user")),
                    _clean(record.role(e.get("role"), language)),
                    _clean(record.action(e.get("action"), language)),
                    _clean(record.args(e.get("args"), language)), _clean(e.get("reason")),
                    change(e.get("before"), e.get("after"), language)))
    return out


def format_table(entries: list[dict], language: str = "en") -> str:
    """The trail as aligned columns under a header (the last column is not padded); with a
    TABLE column first when the entries come from several tables (the floor store). Columns
    are as wide as the terminal shows their letters (a Chinese one takes two cells)."""
    from rich.cells import cell_len

    from controller.words.fields import word
    head = tuple(word(c, language) for c in COLUMNS)
    cells = [head, *rows(entries, language)]
    if entries and "table" in entries[0]:
        cells = [(word("report.col.table", language), *head),
                 *[(_clean(e.get("table")), *r) for e, r in zip(entries, cells[1:])]]
    widths = [max(cell_len(row[i]) for row in cells) for i in range(len(cells[0]) - 1)]
    lines = ["  ".join([*(c + " " * (w - cell_len(c)) for c, w in zip(row, widths)),
                        row[-1]]).rstrip() for row in cells]
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
    args.language = reader_language(args)
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


def reader_language(args: argparse.Namespace) -> str:
    """--language, else the table's ([table] language; TABLECTL_TABLE_LANGUAGE over it)."""
    from controller.settings.config import load_config
    from controller.words import normalise
    try:
        return normalise(args.language or load_config(getattr(args, "config", None))
                         .table.language)
    except ValueError as err:
        raise InputError(f"--language: {err}") from None


def _print(args: argparse.Namespace, entries: list[dict], source: str, status: int = 0) -> int:
    from controller.words.fields import word
    if args.json:
        for entry in entries:
            print(json.dumps(entry, ensure_ascii=False))
        return status
    lang, who = args.language, {"user": args.user} if args.user else {}
    if not entries:
        print(word("audit.none_user" if who else "audit.none", lang, source=source, **who))
        return status
    print(word("audit.head_user" if who else "audit.head", lang, source=source,
               n=len(entries), **who))
    print(format_table(entries, lang))
    return status
