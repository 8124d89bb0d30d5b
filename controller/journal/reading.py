"""Reading a journal back: records in pages, the chain check, and the snapshots a restart may
trust. The functions take the Journal (controller/journal/store.py) whose connection and record
format (controller/journal/codec.py) they use."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from controller.journal.chain import VerifyResult, json_object
from controller.journal.codec import FOLD
from controller.journal.codec import unfold as unfold_data
from controller.journal.schema import RARE as RARE_WHERE
from controller.journal.schema import COLUMNS, RARE_KINDS, SNAP_COLUMNS, JournalError
from controller.journal.snapshots import SNAPSHOT_KIND, binding_problem, snapshot_problem

if TYPE_CHECKING:
    from controller.journal.store import Journal

RARE = frozenset(RARE_KINDS)
#: Rows fetched per query when reading records (keyset pages: no long-lived cursor).
PAGE = 2000
#: rows a page of the chain check (one query, hashed as they come)
CHECK_PAGE = 20_000


@dataclass(frozen=True, slots=True)
class Record:
    """One journal record as read back (whatever the schema: utc ISO text, mono seconds,
    hash hex)."""

    seq: int
    utc: str
    mono: float
    kind: str
    data: dict
    hash: str


@dataclass(frozen=True)
class Snapshot:
    """A snapshot as a restart uses it: checked against its hash and its record in the chain."""

    id: int
    upto_seq: int
    record_seq: int
    state: dict


def record(journal: "Journal", row: tuple) -> Record:
    seq, utc, mono, kind, data_text, digest = journal.codec.unpack(row)
    try:
        data = json.loads(data_text)
    except (TypeError, ValueError) as err:
        raise journal._error(f"record seq {seq} is unreadable (bad JSON; run "
                             f"tablectl verify-journal)", err) from err
    if not isinstance(data, dict):
        raise JournalError(f"journal {journal.path}: record seq {seq} is unreadable (data is "
                           f"not a JSON object; run tablectl verify-journal)")
    return Record(seq, utc, mono, kind, data, digest)


def unfold(rec: Record) -> tuple[Record, ...]:
    """A record as readers take it: a folded card read (schema 5) as its input and its card
    event, both with the record's seq, time and hash; any other record as it is."""
    if rec.kind != "input" or FOLD not in rec.data:
        return (rec,)
    pairs = unfold_data(rec.kind, rec.data)
    if len(pairs) == 1:
        return (rec,)
    return tuple(Record(rec.seq, rec.utc, rec.mono, kind, data, rec.hash)
                 for kind, data in pairs)


def stored_kinds(kinds: tuple) -> tuple:
    """The stored kinds that may hold records of `kinds` (a card event is in its input's)."""
    return kinds + ("input",) if "card" in kinds and "input" not in kinds else kinds


def records(journal: "Journal", after_seq: int = 0, kinds: Iterable[str] | None = None, *,
            stored: bool = False) -> Iterator[Record]:
    if stored or journal.version < 5:
        yield from _records(journal, after_seq, kinds)
        return
    wanted = None if kinds is None else frozenset(kinds)
    for rec in _records(journal, after_seq,
                        None if kinds is None else stored_kinds(tuple(kinds))):
        for r in unfold(rec):
            if wanted is None or r.kind in wanted:
                yield r


def last_record(journal: "Journal", kind: str) -> Record | None:
    if kind == "card" and journal.version >= 5:    # in its input's record
        return next((r for r in records_backward(journal) if r.kind == kind), None)
    row = journal._row(f"SELECT {COLUMNS} FROM records WHERE kind = ? ORDER BY seq DESC "
                       "LIMIT 1", (kind,))
    return unfold(record(journal, row))[0] if row is not None else None


def _records(journal: "Journal", after_seq: int = 0,
             kinds: Iterable[str] | None = None) -> Iterator[Record]:
    where, table = "seq > ?", "records"
    extra: tuple = ()
    if kinds is not None:
        extra = tuple(kinds)
        if not extra:
            return
        where += f" AND kind IN ({', '.join('?' * len(extra))})"
        if set(extra) <= RARE and journal.version >= 4:
            # a few records a shoe, from their own index rather than the whole file (SQLite
            # uses a partial index when the query names its condition as it is)
            where += f" AND {RARE_WHERE}"
            table = "records INDEXED BY records_rare"
    sql = f"SELECT {COLUMNS} FROM {table} WHERE {where} ORDER BY seq LIMIT {PAGE}"
    last = after_seq
    while True:
        rows = journal._rows(sql, (last, *extra))
        for row in rows:
            yield record(journal, row)
        if len(rows) < PAGE:
            return
        last = rows[-1][0]


def records_backward(journal: "Journal", before_seq: int | None = None) -> Iterator[Record]:
    sql = f"SELECT {COLUMNS} FROM records WHERE seq < ? ORDER BY seq DESC LIMIT {PAGE}"
    last = before_seq if before_seq is not None else 2 ** 62
    while True:
        rows = journal._rows(sql, (last,))
        for row in rows:
            rec = record(journal, row)
            if rec.kind == "input":
                yield from reversed(unfold(rec))
            else:
                yield rec
        if len(rows) < PAGE:
            return
        last = rows[-1][0]


def trusted_snapshot(journal: "Journal", before_seq: int | None = None) -> Snapshot | None:
    if journal.version < 3:
        return None
    sql = f"SELECT {SNAP_COLUMNS}, record_seq FROM snapshots WHERE record_seq IS NOT NULL"
    params: tuple = ()
    if before_seq is not None:
        sql += " AND record_seq < ?"
        params = (before_seq,)
    row = journal._row(sql + " ORDER BY id DESC LIMIT 1", params)
    if row is None:
        return None
    why = snapshot_problem(journal, *row[:5]) or binding_problem(journal, *row)
    if why is not None:
        raise JournalError(f"journal {journal.path}: snapshot {row[0]} (up to seq {row[1]}) "
                           f"rejected: {why}")
    return Snapshot(int(row[0]), int(row[1]), int(row[5]), json.loads(row[3]))


def verify(journal: "Journal", after_seq: int = 0, *, upto_seq: int | None = None,
           snapshots: bool = True,
           progress: Callable[[int], None] | None = None) -> VerifyResult:
    codec = journal.codec
    prev = codec.raw(journal.hash_at(after_seq)) if after_seq else codec.genesis
    sql = f"SELECT {COLUMNS} FROM records WHERE seq > ?" + (
        " AND seq <= ?" if upto_seq is not None else "") + f" ORDER BY seq LIMIT {CHECK_PAGE}"
    bound = (upto_seq,) if upto_seq is not None else ()
    expected, checked, last = after_seq + 1, 0, after_seq
    check = codec.check_chain
    while True:
        rows = journal._rows(sql, (last, *bound))
        n, prev, broken = check(rows, expected, prev)
        checked += n
        expected += n
        if broken is not None:
            return VerifyResult(checked, journal.max_seq(), broken.seq, broken.reason)
        if progress is not None:
            progress(checked)
        if len(rows) < CHECK_PAGE:
            break
        last = rows[-1][0]
    if upto_seq is not None and expected - 1 < upto_seq:
        return VerifyResult(checked, journal.max_seq(), expected,
                            f"missing seq (the chain ends at seq {expected - 1})")
    if not snapshots:
        return VerifyResult(checked, expected - 1)
    snaps = check_snapshots(journal)
    return dataclasses.replace(snaps, records_checked=checked, last_seq=expected - 1)


def check_snapshots(journal: "Journal", since: int = 0) -> VerifyResult:
    bound_col = ", record_seq" if journal.version >= 3 else ", NULL"
    snaps = journal._rows(f"SELECT {SNAP_COLUMNS}{bound_col} FROM snapshots WHERE "
                          f"coalesce({bound_col[2:]}, upto_seq) > ? ORDER BY id", (since,))
    unbound = 0
    for row in snaps:
        why = snapshot_problem(journal, *row[:5])
        if why is None and row[5] is not None:
            why = binding_problem(journal, *row)
        if why is not None:
            return VerifyResult(0, 0, snapshots_checked=len(snaps), bad_snapshot_id=row[0],
                                snapshot_reason=why)
        unbound += row[5] is None
    return VerifyResult(0, 0, snapshots_checked=len(snaps), snapshots_unbound=unbound)


def chained_cursors(journal: "Journal") -> dict[str, int]:
    from controller.journal.store import CURSORS_KIND
    row = journal._row(f"SELECT {COLUMNS} FROM records WHERE kind IN (?, ?) "
                    "ORDER BY seq DESC LIMIT 1", (SNAPSHOT_KIND, CURSORS_KIND))
    if row is None:
        return {}
    data, _ = json_object(journal.codec.unpack(row)[4], "data")
    value = (data or {}).get("cursors")
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items()
            if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)}
