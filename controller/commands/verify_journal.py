"""`tablectl verify-journal`: check the journal's hash chain and snapshots, and with the anchor
key its anchors (controller/journal/anchor.py): a chain rewritten, records removed and
renumbered, or (given the last anchor kept off the table PC) a tail cut; and its tail replayed
as a restart replays it (a cut between an input and the events it caused).

Exit 0 when intact, 1 when broken (the first broken record is named), 2 when the journal cannot
be read at all (missing, not SQLite, corrupted, unknown schema) or the key cannot be used.
"""
from __future__ import annotations

from typing import Any, NamedTuple
import argparse
import os
import sys

from controller.commands.recall import DEFAULT_JOURNAL


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "verify-journal", help="check the journal's hash chain and snapshots",
        description="Check every record's hash chain link and every snapshot, replay the "
                    "inputs after the latest snapshot as a restart does, and with --key check "
                    "every anchor. Exit 0 intact, 1 broken (names the first broken record), 2 "
                    "unreadable.")
    p.add_argument("--journal", default=DEFAULT_JOURNAL, metavar="PATH",
                   help=f"journal file (default {DEFAULT_JOURNAL})")
    p.add_argument("--key", metavar="FILE", help="the anchor key: every anchor must verify "
                   "(a journal with none fails)")
    p.add_argument("--last-anchor", metavar="FILE", help="with --key: a file of JSON lines "
                   "kept off the table PC (the floor feed's, run --json): the journal must hold "
                   "its last anchor event")
    p.add_argument("--store", metavar="URL", help="with --table: hold the journal to the "
                   "records and anchors the floor store received from that table "
                   "(postgresql://…)")
    p.add_argument("--table", metavar="T", help="with --store: the table whose journal this "
                   "is")
    p.add_argument("--json", action="store_true", help="print one JSON object (ok, records, "
                   "last_seq, first_bad_seq, snapshots, anchors, archives) instead of a line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.journal import Journal, JournalError

    from controller.errors import InputError
    from controller.journal.anchor import load_key, read_kept, verify_anchors
    from controller.journal.archive import check_archives, verify

    if not os.path.isfile(args.journal):
        print(f"tablectl verify-journal: journal {args.journal}: no such file", file=sys.stderr)
        return 2
    if args.last_anchor and not args.key:
        raise InputError("--last-anchor needs --key (the anchor is checked with it)")
    if bool(args.store) != bool(args.table):
        raise InputError("--store and --table go together (the store, and which table's "
                         "journal this is)")
    if args.store and args.last_anchor:
        raise InputError("give --last-anchor or --store, not both (the store keeps the "
                         "anchors)")
    key = load_key(args.key, "--key") if args.key else None
    kept = read_kept(args.last_anchor) if args.last_anchor else None
    try:
        with Journal.open_readonly(args.journal) as journal:
            # from its first record when its older gaming days were archived
            result = verify(journal)
            anchors = verify_anchors(journal, key, kept) if key and result.ok else None
            store = None
            if args.store and result.ok:
                from controller.floor.store.verify import against_store
                store = against_store(journal, args.store, args.table, key)
            # without the key the anchors prove nothing: say so, rather than "intact" alone
            unchecked = (sum(1 for _ in journal.records(kinds=("anchor",)))
                         if key is None else 0)
            # what a restart replays, once the chain, the anchors and the store hold (each of
            # them names what is wrong more closely than a replay that disagrees)
            tail = _tail(journal) if result.ok and (anchors is None or anchors.ok) and (
                store is None or store.ok) else None
        archives = check_archives(args.journal)
    except JournalError as err:
        print(f"tablectl verify-journal: {err}", file=sys.stderr)
        return 2
    if getattr(args, "json", False):
        return _print_json(args.journal, result, anchors, archives, unchecked, store, tail)
    if tail is not None and tail.problem is not None:
        print(tail.problem)            # (it names the journal)
        return 1
    also = f"; {archives}" if archives.parts or not archives.ok else ""
    if tail is not None:
        also += f"; {tail.text}"
    if store is not None:
        also += f"; {store.text}"
        if not store.ok:
            print(f"journal {args.journal}: {result}{also}")
            return 1
    if unchecked:
        also += (f"; {unchecked} anchor{'s' if unchecked != 1 else ''} not checked (give the "
                 f"anchor key: --key FILE)")
    if anchors is None:
        print(f"journal {args.journal}: {result}{also}")
        return 0 if result.ok and archives.ok else 1
    print(f"journal {args.journal}: {result}; {anchors}{also}")
    return 0 if anchors.ok and archives.ok else 1


class Tail(NamedTuple):
    """The inputs after the latest snapshot replayed as a restart replays them."""
    text: str                       # what was found, in words
    problem: str | None = None      # the line that says the journal is broken, or None
    replayed: int | None = None     # inputs replayed (None: not replayed, `text` says why)


def _tail(journal: Any) -> Tail:
    """The journal's tail held to what a restart holds it to: the inputs after the latest
    snapshot replayed with the profile the last shoe was dealt with, each giving the events
    journaled with it. The chain cannot show a tail cut between an input's record and the
    events it caused (one transaction: no crash ends a journal there); this does."""
    from controller.errors import InputError
    from controller.journal import JournalError
    from controller.service.recovery import open_table
    from controller.settings.profile import load_profile

    if journal.last_record("input") is None:
        return Tail("no input to replay", replayed=0)
    started = journal.last_record("shoe_started")
    name = str(started.data.get("profile", "")) if started is not None else ""
    if not name:
        return Tail("its tail not replayed (no shoe was started: no profile to replay with)")
    try:
        profile = load_profile(name)
    except (InputError, OSError, ValueError) as err:
        return Tail(f"its tail not replayed (the profile {name} cannot be loaded here: "
                    f"{str(err).splitlines()[0] if str(err) else type(err).__name__})")
    if started is not None and started.data.get("profile_sha256") not in (None, profile.sha256):
        return Tail(f"its tail not replayed (the profile {name} here is not the one the shoe "
                    "was dealt with)")
    try:
        _, recovery = open_table(profile, journal, auto_open=True, betting_seconds=0.0)
    except JournalError as err:
        return Tail("", problem=str(err))
    except Exception as err:        # what a restart would stop on too: never a traceback here
        return Tail("", problem=f"journal {journal.path}: its tail cannot be replayed as a "
                                f"restart replays it ({type(err).__name__}: {err})")
    n = recovery.inputs_replayed
    return Tail(f"its last {n} input(s) replayed as journaled" if n else
                "no input after its latest snapshot to replay", replayed=n)


def _print_json(path: str, result: Any, anchors: Any, archives: Any, unchecked: int,
                store: Any = None, tail: Tail | None = None) -> int:
    """The check as one JSON object; the exit status as without --json."""
    import json
    ok = (result.ok and archives.ok and (anchors is None or anchors.ok)
          and (store is None or store.ok) and (tail is None or tail.problem is None))
    out = {"journal": path, "ok": ok, "records": result.records_checked,
           "last_seq": result.last_seq, "first_bad_seq": result.first_bad_seq,
           "reason": result.reason, "snapshots": result.snapshots_checked,
           "bad_snapshot": result.bad_snapshot_id, "summary": str(result),
           "anchors": None if anchors is None else {
               "ok": anchors.ok, "count": anchors.anchors, "last_seq": anchors.last_seq,
               "unanchored": anchors.unanchored, "problem": anchors.problem},
           "anchors_unchecked": unchecked,
           "archives": {"ok": archives.ok, "parts": archives.parts,
                        "problems": list(archives.problems)},
           "store": None if store is None else {"ok": store.ok, "summary": store.text},
           "tail": None if tail is None else {"ok": tail.problem is None,
                                              "replayed": tail.replayed,
                                              "summary": tail.problem or tail.text}}
    print(json.dumps(out))
    return 0 if ok else 1
