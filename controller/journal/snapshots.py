"""A snapshot's own checks: its hash (tied to the chain head it was taken at) and the record
that binds it into the chain (controller/journal/store.py, schema 3)."""
from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Mapping

from controller.journal.chain import (GENESIS, canonical, json_object, snapshot_hash,
                                      stored_and_canonical)
from controller.journal.schema import JournalError

if TYPE_CHECKING:
    from controller.journal.store import Journal

SNAPSHOT_KIND = "snapshot"
_COLUMNS = "seq, utc, mono, kind, data, hash"


def binding_problem(journal: "Journal", sid: int, upto: object, utc: object,
                    state_text: object, stored: object, record_seq: object) -> str | None:
    """Why a snapshot does not match the record that binds it into the chain, or None."""
    if not isinstance(record_seq, int) or isinstance(record_seq, bool):
        return "bad snapshot row (its record's seq is not a number)"
    rows = journal._rows(f"SELECT {_COLUMNS} FROM records WHERE seq = ?", (record_seq,))
    if not rows:
        return f"its record (seq {record_seq}) is not in the journal"
    _, _, _, kind, data_text, _ = journal.codec.unpack(rows[0])
    if kind != SNAPSHOT_KIND:
        return f"seq {record_seq}, named as its record, is a {kind!r} record"
    data, problem = json_object(data_text, "data")
    if problem or data is None:
        return f"its record (seq {record_seq}) is unreadable: {problem}"
    if [data.get(k) for k in ("id", "upto_seq", "utc", "hash")] != [sid, upto, utc, stored]:
        return (f"it is not the snapshot its record in the chain (seq {record_seq}) "
                "describes: it was changed after it was taken")
    return None


def snapshot_problem(journal: "Journal", sid: int, upto: object, utc: object,
                     state_text: object, stored: object) -> str | None:
    """Why a snapshot does not match its hash and the record it covers up to, or None."""
    if not isinstance(upto, int) or upto < 0 or not isinstance(utc, str) \
            or not isinstance(state_text, str):
        return "bad snapshot row"
    state, problem = json_object(state_text, "state")
    if problem:
        return problem
    if upto == 0:
        head = GENESIS
    else:
        rows = journal._rows(f"SELECT {_COLUMNS} FROM records WHERE seq BETWEEN ? AND ? "
                          "ORDER BY seq", (upto - 1, upto))
        if not rows or rows[-1][0] != upto:
            return f"it covers seq {upto}, which is not in the journal"
        codec = journal.codec
        prev = codec.genesis if upto == 1 else rows[0][5] if len(rows) == 2 else None
        if prev is None:
            return f"record seq {upto - 1} before its anchor is missing"
        broken = codec.check_chain(rows[-1:], upto, prev)[2]
        if broken is not None:
            return f"its anchor record seq {upto} is broken: {broken.reason}"
        head = codec.hex(rows[-1][5])
    try:
        state_json = canonical(state)
    except ValueError as err:
        return f"bad JSON: {err}"
    if snapshot_hash(head, upto, utc, state_json) != stored:
        return "hash mismatch (state or anchor changed since it was taken)"
    return None


def take(journal: "Journal", state: dict, upto_seq: int,
         cursors: Mapping[str, int] | None = None) -> int:
    """Journal.snapshot: the snapshot stored with its record in the chain, one transaction."""
    if journal.readonly:
        raise JournalError(f"journal {journal.path}: opened read-only, cannot snapshot")
    if not isinstance(state, dict):
        raise ValueError(f"journal: snapshot state must be a dict, not {type(state).__name__}")
    if not isinstance(upto_seq, int) or isinstance(upto_seq, bool) \
            or not 0 <= upto_seq <= journal._last_seq:
        raise ValueError(f"journal: snapshot upto_seq must be 0..{journal._last_seq}, "
                         f"not {upto_seq!r}")
    try:
        state_text, state_json = stored_and_canonical(state)
    except (TypeError, ValueError) as err:
        raise ValueError(f"journal: snapshot state is not JSON-ready: {err}") from err
    given = dict(cursors or {})
    journal.commit()                   # what was staged comes first, as it was numbered
    codec = journal.codec
    with journal._write_lock, journal._lock:
        conn = journal._live()
        head = journal.hash_at(upto_seq)
        utc_v, mono = codec.times(*journal._clock())
        utc = codec.iso(utc_v)
        digest = snapshot_hash(head, upto_seq, utc, state_json)
        seq = journal._last_seq + 1
        sid = int(journal._rows("SELECT coalesce(max(id), 0) + 1 FROM snapshots")[0][0])
        data = {"event": SNAPSHOT_KIND, "id": sid, "upto_seq": upto_seq,
                "utc": utc, "hash": digest, "cursors": given}
        row = codec.row(journal._head, seq, utc_v, mono, SNAPSHOT_KIND,
                        codec.prepare(SNAPSHOT_KIND, data))
        try:
            with journal._full_sync():
                journal._write(conn, [row], given, more=(
                    ("INSERT INTO snapshots (id, upto_seq, utc, state, hash, record_seq) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     (sid, upto_seq, utc, state_text, digest, seq)),))
        except sqlite3.Error as err:
            journal.sealer = None       # as after any write that failed (store.py)
            raise journal._error("cannot store snapshot", err) from err
        if journal._files is not None:
            journal._written(3 + len(state_text) // 4096, locked=True)
        journal._last_seq, journal._head = seq, row[5]
        journal._committed = (seq, row[5])
        journal._cursors_written.update(given)
        return sid
