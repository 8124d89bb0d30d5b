"""Writing what the feed delivered into the store: one transaction per batch of messages.

Every message is checked (`controller.feed.schema.record_problem`); one that is not a record
this store knows is kept in `floor.quarantine` with why. Records go into `floor.records` once
by (table, seq): a record already there is a duplicate (delivery is at least once) and is
dropped, unless its hash differs from the stored one, which is kept aside as a conflict.

Per table, under a row lock (several stores may share a floor): records that follow the stored
run are checked against the hash chain as they come (one that does not follow its predecessor
is kept aside); records that come early (after a missing one) are stored and checked once the
missing ones arrive. `contiguous_seq` says up to where every record is present; a hole after it
that lasts is a gap, raised as an alarm (`raise_gaps`) and cleared when it fills. Nothing here
acknowledges anything: the caller acknowledges a batch's messages once `write` has committed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable

from controller.feed.schema import record_problem
from controller.journal.chain import GENESIS
from controller.journal.codec import links as record_links

_STORED = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode


@dataclass
class Message:
    """One MQTT message as the store received it."""
    topic: str
    payload: bytes
    mid: int = 0
    generation: int = 0
    received: float = 0.0           # time.time() at arrival


@dataclass
class Row:
    table: str
    seq: int
    at: datetime
    utc: str
    mono: float
    kind: str
    data: dict
    text: str                       # the data as the journal stores it (its keys' order)
    hash: str
    pit: str | None
    message: Message


@dataclass
class Kept:
    """A payload kept aside: where it came from and why."""
    message: Message
    reason: str
    table: str | None = None
    seq: int | None = None


@dataclass
class Written:
    stored: list[Row] = field(default_factory=list)       # rows new in the store
    duplicates: int = 0
    kept: list[Kept] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)        # what the log should say
    first_seen: list[tuple[str, int]] = field(default_factory=list)


def table_of(topic: str, prefix: str) -> str | None:
    """The table a records topic names (`{prefix}/{table}/records`), else None."""
    head = prefix.strip("/") + "/"
    if not topic.startswith(head) or not topic.endswith("/records"):
        return None
    name = topic[len(head):-len("/records")]
    return name or None


def parse(message: Message, prefix: str) -> Row | Kept:
    """A message as a record to store, or as a payload to keep aside (with why)."""
    table = table_of(message.topic, prefix)
    if table is None:
        return Kept(message, f"not a records topic ({message.topic[:100]})")
    try:
        payload = json.loads(message.payload)
    except (ValueError, UnicodeDecodeError) as err:
        return Kept(message, f"not JSON ({str(err)[:120]})", table)
    why = record_problem(payload, table)
    seq = payload.get("seq") if isinstance(payload, dict) else None
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
    if why is not None:
        return Kept(message, why, table, seq)
    try:
        text = _STORED(payload["data"])
        at = datetime.fromisoformat(payload["utc"].replace("Z", "+00:00"))
    except (TypeError, ValueError) as err:
        return Kept(message, f"data or utc cannot be stored ({str(err)[:120]})", table, seq)
    return Row(table, payload["seq"], at, payload["utc"], float(payload["mono"]),
               payload["kind"], payload["data"], text, payload["hash"], payload.get("pit"),
               message)


def links(prev_hash: str, row: Row) -> bool:
    """Whether `row` follows a record whose hash is `prev_hash` in the journal's chain."""
    return record_links(prev_hash, row.seq, row.utc, row.mono, row.kind, row.data, row.hash)


@dataclass
class _Table:
    id: int
    name: str
    pit: str | None
    first_seq: int | None
    contiguous: int
    head: str | None
    last_seq: int
    hole_since: Any


_INSERT = (
    "INSERT INTO floor.records (table_id, seq, at, utc, mono, kind, data, hash, pit) "
    # binary parameters (%b): arrays of text go without quoting, the batch's main cost
    "SELECT * FROM unnest(%b::int[], %b::bigint[], %b::timestamptz[], %b::text[], "
    "%b::float8[], %b::text[], %b::text[]::json[], %b::text[], %b::text[]) "
    "ON CONFLICT (table_id, seq) DO NOTHING RETURNING table_id, seq")
_WALK = ("SELECT seq, utc, mono, kind, data::text, hash FROM floor.records "
         "WHERE table_id = %s AND seq > %s ORDER BY seq LIMIT 2000")


def write(conn: Any, messages: Iterable[Message], prefix: str) -> Written:
    """Store a batch (one transaction, committed on return); what happened to it."""
    out = Written()
    by_table: dict[str, dict[int, Row]] = {}
    for message in messages:
        got = parse(message, prefix)
        if isinstance(got, Kept):
            out.kept.append(got)
            continue
        seen = by_table.setdefault(got.table, {})
        twin = seen.get(got.seq)
        if twin is None:
            seen[got.seq] = got
        elif twin.hash == got.hash:
            out.duplicates += 1
        else:
            out.kept.append(Kept(message, f"seq {got.seq} of table {got.table} came twice "
                                          f"with different hashes", got.table, got.seq))
    with conn.transaction():
        tables = _lock_tables(conn, by_table)
        accepted: list[Row] = []
        for name, rows in by_table.items():
            accepted += _follow(tables[name], [rows[s] for s in sorted(rows)], out)
        inserted = _insert(conn, tables, accepted)
        out.stored = [r for r in accepted if (tables[r.table].id, r.seq) in inserted]
        dups = [r for r in accepted if (tables[r.table].id, r.seq) not in inserted]
        _conflicts(conn, tables, dups, out)
        for name in by_table:
            _walk(conn, tables[name], out)
        _save(conn, tables.values(), out)
        if out.kept:
            conn.cursor().executemany(
                "INSERT INTO floor.quarantine (topic, table_name, seq, reason, payload) "
                "VALUES (%s, %s, %s, %s, %s)",
                [(k.message.topic, k.table, k.seq, k.reason, k.message.payload)
                 for k in out.kept])
    return out


def _lock_tables(conn: Any, by_table: dict[str, dict[int, Row]]) -> dict[str, _Table]:
    if not by_table:
        return {}
    names = sorted(by_table)
    pits = [max(rows.values(), key=lambda r: r.seq).pit for rows in
            (by_table[n] for n in names)]
    conn.execute("INSERT INTO floor.tables (name, pit) SELECT * FROM unnest(%s::text[], "
                 "%s::text[]) ON CONFLICT (name) DO NOTHING", (names, pits))
    rows = conn.execute(
        "SELECT id, name, pit, first_seq, contiguous_seq, head_hash, last_seq, hole_since "
        "FROM floor.tables WHERE name = ANY(%s) ORDER BY id FOR UPDATE", (names,)).fetchall()
    found = {r[1]: _Table(*r) for r in rows}
    for name in names:
        newest = max(by_table[name].values(), key=lambda r: r.seq)
        if newest.seq >= found[name].last_seq:
            found[name].pit = newest.pit
    return found


def _follow(t: _Table, rows: list[Row], out: Written) -> list[Row]:
    """The rows to insert: those after the stored run checked against the chain as they come."""
    if t.first_seq is None:
        t.first_seq = rows[0].seq
        t.contiguous = rows[0].seq - 1
        t.head = GENESIS if rows[0].seq == 1 else None     # before it: not on the feed
        out.first_seen.append((t.name, rows[0].seq))
    accepted = []
    for row in rows:
        if row.seq < t.first_seq:
            # older than anything the store had: a late start, or records loaded later
            accepted.append(row)
            continue
        if row.seq == t.contiguous + 1:
            if t.head is not None and not links(t.head, row):
                out.kept.append(Kept(row.message, f"seq {row.seq} of table {t.name} does not "
                                     f"follow seq {t.contiguous} in the journal's hash chain",
                                     t.name, row.seq))
                continue
            t.contiguous, t.head = row.seq, row.hash
        accepted.append(row)
    return accepted


def _insert(conn: Any, tables: dict[str, _Table], rows: list[Row]) -> set[tuple[int, int]]:
    if not rows:
        return set()
    cols: list[list[Any]] = [[] for _ in range(9)]
    for r in rows:
        for col, value in zip(cols, (tables[r.table].id, r.seq, r.at, r.utc, r.mono, r.kind,
                                     r.text, r.hash, r.pit)):
            col.append(value)
    got = conn.execute(_INSERT, cols).fetchall()
    for r in rows:
        t = tables[r.table]
        t.last_seq = max(t.last_seq, r.seq)
    return {(int(a), int(b)) for a, b in got}


def _conflicts(conn: Any, tables: dict[str, _Table], dups: list[Row], out: Written) -> None:
    """Rows the store had already: the same record again, or another one under its seq."""
    if not dups:
        return
    ids = [tables[r.table].id for r in dups]
    stored = {(int(a), int(b)): h for a, b, h in conn.execute(
        "SELECT r.table_id, r.seq, r.hash FROM floor.records r JOIN unnest(%s::int[], "
        "%s::bigint[]) AS d(table_id, seq) USING (table_id, seq)",
        (ids, [r.seq for r in dups])).fetchall()}
    for r in dups:
        if stored.get((tables[r.table].id, r.seq), r.hash) == r.hash:
            out.duplicates += 1
        else:
            out.kept.append(Kept(r.message, f"seq {r.seq} of table {r.table} is stored with "
                                 f"another hash (another journal under the same table name?)",
                                 r.table, r.seq))


def _walk(conn: Any, t: _Table, out: Written) -> None:
    """Move `contiguous` over records that came early, now that what they waited for is in,
    checking each against the chain (a break is an alarm: the rows are evidence, kept)."""
    while t.last_seq > t.contiguous:
        rows = conn.execute(_WALK, (t.id, t.contiguous)).fetchall()
        moved = 0
        for seq, utc, mono, kind, text, digest in rows:
            if seq != t.contiguous + 1:
                break
            row = Row(t.name, seq, datetime.min, utc, float(mono), kind, json.loads(text), text,
                      digest, None, Message("", b""))
            if t.head is not None and not links(t.head, row):
                detail = (f"seq {seq} of table {t.name} does not follow seq {t.contiguous} in "
                          f"the journal's hash chain")
                conn.execute("INSERT INTO floor.alarms (table_id, kind, from_seq, to_seq, "
                             "detail) VALUES (%s, 'chain', %s, %s, %s)",
                             (t.id, seq, seq, detail))
                out.lines.append(f"alarm: {detail}")
            t.contiguous, t.head = seq, digest
            moved += 1
        if moved < len(rows) or len(rows) < 2000:
            return


def _save(conn: Any, tables: Iterable[_Table], out: Written) -> None:
    rows = list(tables)
    if not rows:
        return
    for t in rows:
        if t.last_seq <= t.contiguous:
            t.hole_since = None
    conn.cursor().executemany(
        "UPDATE floor.tables SET pit = %s, first_seq = %s, contiguous_seq = %s, head_hash = %s,"
        " last_seq = %s, hole_since = CASE WHEN %s THEN coalesce(hole_since, now()) END,"
        " updated = now() WHERE id = %s",
        [(t.pit, t.first_seq, t.contiguous, t.head, t.last_seq, t.last_seq > t.contiguous,
          t.id) for t in rows])
    cleared = conn.execute(
        "UPDATE floor.alarms a SET cleared = now() FROM unnest(%s::int[], %s::bigint[]) "
        "AS t(id, upto) WHERE a.table_id = t.id AND a.kind = 'gap' AND a.cleared IS NULL "
        "AND a.to_seq <= t.upto RETURNING a.detail",
        ([t.id for t in rows], [t.contiguous for t in rows])).fetchall()
    out.lines += [f"gap filled: {d}" for (d,) in cleared]


def raise_gaps(conn: Any, after_s: float) -> list[str]:
    """Holes older than `after_s` become alarms (one each until filled); their lines."""
    lines = []
    with conn.transaction():
        found = conn.execute(
            "SELECT t.id, t.name, t.contiguous_seq, (SELECT min(r.seq) FROM floor.records r "
            "WHERE r.table_id = t.id AND r.seq > t.contiguous_seq) FROM floor.tables t "
            "WHERE t.hole_since < now() - make_interval(secs => %s) AND NOT EXISTS ("
            "SELECT 1 FROM floor.alarms a WHERE a.table_id = t.id AND a.kind = 'gap' "
            "AND a.cleared IS NULL) FOR UPDATE OF t", (after_s,)).fetchall()
        for tid, name, upto, nxt in found:
            if nxt is None:
                continue
            first, last = upto + 1, nxt - 1
            what = f"record {first}" if first == last else f"records {first}-{last}"
            detail = (f"{what} of table {name} did not arrive (seq {nxt} and later did); "
                      f"the store waits for them and counts nothing past the gap as complete")
            conn.execute("INSERT INTO floor.alarms (table_id, kind, from_seq, to_seq, detail) "
                         "VALUES (%s, 'gap', %s, %s, %s)", (tid, first, last, detail))
            lines.append(f"alarm: {detail}")
    return lines
