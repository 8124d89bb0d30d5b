"""The options that turn recall, audit and report into questions across the floor: `--store URL`
(the floor store, instead of one table's journal) with `--table`, `--pit`, and the period and
user filters they share with a journal (`--from`, `--to`, `--user`)."""
from __future__ import annotations

import argparse
import os
from datetime import datetime
from typing import Any

from controller.errors import InputError


def add_store_options(p: argparse.ArgumentParser, *, period: bool = True) -> None:
    p.add_argument("--store", metavar="URL", help="ask the floor store (postgresql://…, "
                   "default $TABLECTL_FLOOR_DB when --table or --pit is given) instead of a "
                   "journal")
    p.add_argument("--table", metavar="T", help="with --store: only table T")
    p.add_argument("--pit", metavar="P", help="with --store: only the tables of pit P")
    if period:
        p.add_argument("--from", dest="start", metavar="T",
                       help="only what was journaled from this time (ISO 8601, UTC unless it "
                       "says)")
        p.add_argument("--to", dest="end", metavar="T", help="… and before this time")


def store_url(args: argparse.Namespace) -> str | None:
    """The store the question goes to, or None for a journal."""
    url = args.store
    if url is None and (args.table is not None or args.pit is not None):
        url = os.environ.get("TABLECTL_FLOOR_DB")
        if not url:
            raise InputError("--table and --pit ask the floor store: give --store "
                             "postgresql://… (or set TABLECTL_FLOOR_DB)")
    return url


def period(args: argparse.Namespace) -> tuple[datetime | None, datetime | None]:
    from controller.report.collect import parse_time
    start = parse_time(args.start, "--from") if getattr(args, "start", None) else None
    end = parse_time(args.end, "--to") if getattr(args, "end", None) else None
    if start is not None and end is not None and end <= start:
        raise InputError(f"--to {args.end} is not after --from {args.start}")
    return start, end


def per_table(args: argparse.Namespace, url: str, *, start: datetime | None = None,
              end: datetime | None = None) -> Any:
    """(where, [(TableInfo, StoredJournal)]) for the tables asked, inside the open store (a
    context manager)."""
    from contextlib import contextmanager

    from controller.floor.store.reader import StoredJournal, open_store, tables

    @contextmanager
    def opened() -> Any:
        with open_store(url) as (conn, where):
            chosen = tables(conn, table=args.table, pit=args.pit)
            yield where, [(t, StoredJournal(conn, t, where, start=start, end=end))
                          for t in chosen]
    return opened()
