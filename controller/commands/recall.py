"""`tablectl recall`: the last rounds from the journal, told for a supervisor (or as JSON)."""
from __future__ import annotations

from typing import Any
import argparse
import os
import sys

from controller.commands._store import add_store_options, per_table, period, store_url
from controller.errors import InputError

DEFAULT_JOURNAL = os.path.join("var", "journal.db")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "recall", help="show the last rounds from the journal (game recall)",
        description="Show the last rounds recorded in the journal, oldest first: cards with "
                    "their slots, totals, winner, bets, irregularities and supervisor actions.")
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="PATH",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.add_argument("--last", type=int, metavar="N",
                   help="how many rounds (default 10: the last round and the nine before it; "
                   "with --from/--to every round of the period)")
    p.add_argument("--user", metavar="U", help="only the rounds in which user U made an "
                   "override or entered a command")
    p.add_argument("--language", metavar="LANG", help="the recall's language: en, zh_Hant, hi, "
                   "bn or th (default: [table] language of the config, env "
                   "TABLECTL_TABLE_LANGUAGE; --json stays language-neutral)")
    add_store_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object per round (from "
                   "--store with its \"table\")")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.commands._unproven import warn
    from controller.journal import JournalError
    from controller.journal.archive import open_with_archives
    from controller.commands.audit import reader_language
    from controller.journal.recall import format_json_lines, select_rounds
    from controller.journal.recall_text import format_text

    if args.last is not None and args.last < 1:
        raise InputError(f"--last must be at least 1, not {args.last}")
    start, end = period(args)
    args.language = reader_language(args)
    url = store_url(args)
    if url is not None:
        return _from_store(args, url, start, end)
    if not os.path.isfile(args.journal):
        raise InputError(f"journal {args.journal}: no such file (give --journal PATH)")
    try:
        status = warn(args.journal, "recall")
        # rounds of archived gaming days are read from the archives beside the journal
        with open_with_archives(args.journal) as journal:
            stories = select_rounds(journal, last=args.last, start=start, end=end,
                                    user=args.user)
    except JournalError as err:
        print(f"tablectl recall: {err}", file=sys.stderr)
        return 2
    if args.json:
        if stories:
            print(format_json_lines(stories))
    else:
        print(format_text(stories, source=args.journal, asked=_asked(args),
                          language=args.language))
    return status


def _asked(args: argparse.Namespace) -> int | None:
    return args.last if args.last is not None or args.start or args.end else 10


def _from_store(args: argparse.Namespace, url: str, start: Any, end: Any) -> int:
    """The same rounds from the floor store, table after table."""
    import json

    from controller.journal.recall import select_rounds
    from controller.journal.recall_text import format_text
    texts = []
    with per_table(args, url, start=start, end=end) as (where, chosen):
        for info, journal in chosen:
            stories = select_rounds(journal, last=args.last, start=start, end=end,
                                    user=args.user)
            if args.json:
                for story in stories:
                    print(json.dumps({"table": info.name, **story}, ensure_ascii=False))
            else:
                texts.append(format_text(stories, source=journal.path, asked=_asked(args),
                                         language=args.language))
    if texts:
        print("\n\n".join(texts))
    return 0
