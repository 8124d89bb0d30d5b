"""`tablectl anchor-key FILE`: a new key that signs the journal's head (mode 0600)."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("anchor-key", help="make a new key that signs the journal's head",
                       description="Write 32 random bytes (64 hex digits) to a new FILE readable "
                       "by its owner only. Give it to run (--anchor-key or [storage] "
                       "anchor_key_file) as the service's user; keep a copy where the journal "
                       "is verified (verify-journal --key). An existing file is never "
                       "overwritten.")
    p.add_argument("file", metavar="FILE", help="the key file to create")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.journal.anchor import make_key
    key = make_key(args.file)
    print(f"anchor key written to {args.file} (mode 0600, key id {key.key_id})")
    return 0
