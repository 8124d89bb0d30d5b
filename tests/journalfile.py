"""What someone holding a journal's file (and no key) can do to it, in the file's own format
(controller/journal/codec.py): read a record's data, write it back, recompute the chain."""
from __future__ import annotations

import json
import sqlite3
import time

from controller.journal.codec import V4, for_version


def codec_of(db: sqlite3.Connection):
    return for_version(db.execute("SELECT version FROM schema_version").fetchone()[0])


def data_of(kind: str, stored: str) -> dict:
    """A record's data from its column (either schema)."""
    return json.loads(V4.unpack((0, 0, 0, kind, stored, b""))[4])


def stored_of(db: sqlite3.Connection, kind: str, data: dict) -> str:
    """The column text of `data` as the journal's writer stores it."""
    return codec_of(db).prepare(kind, data)[0]


def rehash(db: sqlite3.Connection, rows: list, prev=None) -> None:
    """Write `rows` ([seq, utc, mono, kind, data column]) with every hash recomputed after
    `prev` (the raw hash of the record before the first; the genesis when None)."""
    codec = codec_of(db)
    head = codec.genesis if prev is None else prev
    for seq, utc, mono, kind, text in rows:
        full = V4.unpack((0, 0, 0, kind, text, b""))[4] if codec.version >= 4 else text
        prepared = (text, full) if codec.version >= 4 else codec.prepare(kind, json.loads(text))
        row = codec.row(head, seq, utc, mono, kind, prepared)
        head = row[5]
        db.execute("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?)", row)


def write_over_in_place(journal, path) -> None:
    """The journal's file as it is now, written back over it in place (a copy put over it)
    after 600 more records: the next commit's look finds it."""
    with open(path, "rb") as f:
        old = f.read()
    for i in range(600):
        journal.append("note", {"i": i, "text": "y" * 200})
    time.sleep(0.05)        # (a later modification time than the writer's own)
    with open(path, "r+b") as f:
        f.write(old[:8192])
