"""`tablectl new-journal`: a manager retires a journal (one that does not verify, say) and starts
a new one. Nothing is deleted: the old files are renamed beside it, and the new journal's first
record says who did it, why, and what the old one held and how it checked. The table must be
stopped first (a controller answering on the control socket is refused)."""
from __future__ import annotations

from typing import Any
import argparse
import os
import sys
from datetime import datetime, timezone


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("new-journal", help="retire the journal and start a new one (a manager)",
                       description="A manager retires the journal (one that does not verify, "
                       "say) and starts a new one, with the table stopped. Nothing is deleted: "
                       "the old files are renamed JOURNAL.retired-<UTC>, and the new journal's "
                       "first record says who, why, and what the old one held and how it "
                       "checked.")
    p.add_argument("--journal", help="the journal (default: [storage] journal in the config)")
    p.add_argument("--as", dest="actor", metavar="MANAGER", required=True,
                   help="the manager doing it (PIN from a prompt or TABLECTL_PIN)")
    p.add_argument("--reason", required=True, help="why, for the record")
    p.add_argument("--anchor-key", metavar="FILE", help="the anchor key: the old journal is "
                   "checked with it and the new one anchored")
    p.add_argument("--db", help="user store (default: [console] users_db in the config)")
    p.add_argument("--config", help="table config (default $TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one)")
    p.set_defaults(func=run)


def _answers(path: str) -> bool:
    import socket
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
        return True
    except OSError:
        return False
    finally:
        probe.close()


def run(args: argparse.Namespace) -> int:
    from controller.settings.config import load_config
    from controller.errors import InputError
    from controller.journal.anchor import load_key
    from controller.journal.store import claimed

    if not args.reason.strip():
        raise InputError("--reason: say why the journal is retired")
    path = args.journal or load_config(args.config).storage.journal
    if not os.path.isfile(path):
        raise InputError(f"journal {path}: no such file (tablectl run starts a new journal "
                         "by itself)")
    key = load_key(args.anchor_key) if args.anchor_key else None
    # a writer: no table may be writing it meanwhile (held until this command ends)
    with claimed(path):
        return _retire(args, path, key)


def _retire(args: argparse.Namespace, path: str, key: Any) -> int:
    from controller.access.accounts import AccountStore
    from controller.commands.users import _sign_in
    from controller.access.client import console_setting
    from controller.errors import InputError
    from controller.journal import Journal, JournalError
    from controller.journal.anchor import Anchoring, verify_anchors
    from controller.logsetup import get_logger
    sock = console_setting("socket", None, args.config)
    if _answers(sock):
        raise InputError(f"a controller is running (it answers on {sock}); stop the table "
                         "before retiring its journal")
    store = AccountStore(console_setting("users_db", args.db, args.config))
    if _sign_in(store, args.actor, ("manager",), "new-journal") is None:
        return 1
    old: dict = {"previous": path}
    try:
        with Journal.open_readonly(path) as journal:
            old.update(previous_last_seq=journal.last_seq,
                       previous_head=journal.record_hash(journal.last_seq))
            result = journal.verify()
            check = str(result)
            if key is not None and result.ok:
                check += f"; {verify_anchors(journal, key)}"
    except JournalError as err:
        check = str(err)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    retired = f"{path}.retired-{stamp}"
    if os.path.exists(retired):
        raise InputError(f"{retired} exists already; try again in a second")
    for side in ("", "-wal", "-shm"):
        if os.path.exists(path + side):
            os.rename(path + side, retired + side)
    old.update(previous=retired, previous_check=check)
    with Journal(path) as journal:
        journal.append("note", {"event": "new_journal", "by": args.actor,
                                "reason": args.reason.strip(), **old}, durable=True)
        if key is not None:
            Anchoring(journal, key).sign("new_journal")
    get_logger("controller.journal").warning("journal retired; a new one started", by=args.actor,
                                             journal=path, retired=retired, check=check)
    print(f"journal {path} retired to {retired} (it checked: {check}); a new journal started "
          f"by {args.actor!r}", file=sys.stderr)
    return 0
