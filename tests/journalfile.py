"""What someone holding a journal's file (and no key) can do to it, in the file's own format
(controller/journal/codec.py): read a record's data, write it back, recompute the chain."""
from __future__ import annotations

import json
import sqlite3

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
