"""Questions across the floor: a table's records in the store read as a journal is read, so that
recall, audit and report give from the store what they give from the table's own journal.

`StoredJournal` offers the reading side of `controller.journal.Journal` (records in seq order or
newest first, by kind, a record's hash, the last record of a kind) over one table's rows, each
record as the table journaled it (its data's keys in their order). `tables()` chooses the
tables a question is about: one (`--table`), those of a pit (`--pit`, where the store last
heard the table), or every table; `open_store()` connects and checks the schema, every
failure one line.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Iterator

from controller.errors import InputError
from controller.journal.chain import GENESIS
from controller.journal.reading import stored_kinds, unfold
from controller.journal.store import Record

PAGE = 2000
_COLUMNS = "seq, utc, mono, kind, data::text, hash"


@dataclass(frozen=True)
class TableInfo:
    id: int
    name: str
    pit: str | None


@contextmanager
def open_store(url: str | None, option: str = "--store") -> Iterator[tuple[Any, str]]:
    """(a read-only connection, where it is) to the floor store at `url`; InputError (one
    line) when it cannot be reached or holds no floor store."""
    from controller.floor.store import schema
    from controller.floor.store.db import database, psycopg, refusal
    db = database(url, option)
    pg = psycopg()
    try:
        conn = db.connect()
    except pg.Error as err:
        raise InputError(f"{option}: {refusal(db, err).text}") from None
    try:
        conn.read_only = True
        try:
            schema.require(conn, where=db.where)
        except schema.SchemaError as err:
            raise InputError(f"{option}: {err}") from None
        yield conn, db.where
    except pg.Error as err:
        raise InputError(f"{option}: {refusal(db, err).text}") from None
    finally:
        conn.close()


def tables(conn: Any, *, table: str | None = None, pit: str | None = None) -> list[TableInfo]:
    """The tables a question covers, by name; InputError when none is there."""
    rows = [TableInfo(*r) for r in conn.execute(
        "SELECT id, name, pit FROM floor.tables ORDER BY name").fetchall()]
    if not rows:
        raise InputError("the floor store holds no table yet")
    known = ", ".join(r.name for r in rows[:20]) + (", …" if len(rows) > 20 else "")
    if table is not None:
        rows = [r for r in rows if r.name == table]
        if not rows:
            raise InputError(f"--table {table}: the floor store has no such table ({known})")
    if pit is not None:
        pits = sorted({r.pit for r in rows if r.pit})
        rows = [r for r in rows if r.pit == pit]
        if not rows:
            raise InputError(f"--pit {pit}: no table of the floor store stands in that pit "
                             f"(pits: {', '.join(pits) or 'none given'})")
    return rows


class StoredJournal:
    """One table's records in the store, read like a journal (`start`/`end`: only the records
    journaled from `start` and before `end`)."""

    def __init__(self, conn: Any, info: TableInfo, where: str, *,
                 start: datetime | None = None, end: datetime | None = None):
        self.conn, self.info = conn, info
        self.path = f"{where} table {info.name}"
        self.readonly = True
        self._where = "table_id = %s"
        self._args: list[object] = [info.id]
        if start is not None:
            self._where += " AND at >= %s"
            self._args.append(start)
        if end is not None:
            self._where += " AND at < %s"
            self._args.append(end)

    def _page(self, sql: str, args: list) -> list[tuple]:
        return self.conn.execute(sql, args).fetchall()

    @staticmethod
    def _record(row: tuple) -> Record:
        seq, utc, mono, kind, text, digest = row
        return Record(int(seq), utc, float(mono), kind, json.loads(text), digest)

    def records(self, after_seq: int = 0, kinds: Iterable[str] | None = None) -> Iterator[Record]:
        """As a journal reads them: a folded card read as its input and its card event."""
        wanted = None if kinds is None else frozenset(kinds)
        for rec in self._stored(after_seq, None if kinds is None
                                else stored_kinds(tuple(kinds))):
            for r in unfold(rec):
                if wanted is None or r.kind in wanted:
                    yield r

    def _stored(self, after_seq: int, kinds: Iterable[str] | None) -> Iterator[Record]:
        where, args = self._where + " AND seq > %s", list(self._args)
        if kinds is not None:
            chosen = list(kinds)
            if not chosen:
                return
            where += " AND kind = ANY(%s)"
        last = after_seq
        while True:
            extra = [chosen] if kinds is not None else []
            rows = self._page(f"SELECT {_COLUMNS} FROM floor.records WHERE {where} "
                              f"ORDER BY seq LIMIT {PAGE}", [*args, last, *extra])
            for row in rows:
                yield self._record(row)
            if len(rows) < PAGE:
                return
            last = rows[-1][0]

    def records_backward(self, before_seq: int | None = None) -> Iterator[Record]:
        last = before_seq if before_seq is not None else 2 ** 62
        while True:
            rows = self._page(f"SELECT {_COLUMNS} FROM floor.records WHERE {self._where} "
                              f"AND seq < %s ORDER BY seq DESC LIMIT {PAGE}",
                              [*self._args, last])
            for row in rows:
                yield from reversed(unfold(self._record(row)))
            if len(rows) < PAGE:
                return
            last = rows[-1][0]

    def last_record(self, kind: str) -> Record | None:
        if kind == "card":      # in its input's record, or one of its own (schema 1-4)
            return next((r for r in self.records_backward() if r.kind == kind), None)
        rows = self._page(f"SELECT {_COLUMNS} FROM floor.records WHERE {self._where} "
                          f"AND kind = %s ORDER BY seq DESC LIMIT 1", [*self._args, kind])
        return unfold(self._record(rows[0]))[0] if rows else None

    def record_hash(self, seq: int) -> str | None:
        if seq == 0:
            return GENESIS
        rows = self._page("SELECT hash FROM floor.records WHERE table_id = %s AND seq = %s",
                          [self.info.id, seq])
        return str(rows[0][0]) if rows else None

    def hashes(self) -> Iterator[tuple[int, str]]:
        """(seq, hash) of every record, in seq order."""
        last = 0
        while True:
            rows = self._page(f"SELECT seq, hash FROM floor.records WHERE {self._where} "
                              f"AND seq > %s ORDER BY seq LIMIT {PAGE * 10}",
                              [*self._args, last])
            yield from ((int(s), h) for s, h in rows)
            if len(rows) < PAGE * 10:
                return
            last = rows[-1][0]

    @property
    def last_seq(self) -> int:
        row = self._page(f"SELECT max(seq) FROM floor.records WHERE {self._where}", self._args)
        return int(row[0][0] or 0)

    def count(self, after_seq: int = 0, exclude_kinds: Iterable[str] = ()) -> int:
        extra = list(exclude_kinds)
        row = self._page(f"SELECT count(*) FROM floor.records WHERE {self._where} AND seq > %s"
                         + (" AND NOT kind = ANY(%s)" if extra else ""),
                         [*self._args, after_seq, *([extra] if extra else [])])
        return int(row[0][0])

    def close(self) -> None:
        """The connection belongs to the caller."""

    def __enter__(self) -> "StoredJournal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def shift_records(conn: Any, since: datetime, kinds: Iterable[str]) -> list[tuple]:
    """(table, at, kind, data) of every record of `kinds` journaled since `since`, in seq order
    per table (the pit view's figures)."""
    rows = conn.execute(
        "SELECT t.name, r.at, r.kind, r.data::text FROM floor.records r JOIN floor.tables t "
        "ON t.id = r.table_id WHERE r.kind = ANY(%s) AND r.at >= %s ORDER BY r.table_id, r.seq",
        (list(kinds), since)).fetchall()
    return [(name, at, kind, json.loads(text)) for name, at, kind, text in rows]


def open_alarms(conn: Any) -> list[tuple[str, str, int | None, int | None]]:
    """(table, kind, from_seq, to_seq) of every alarm not yet cleared, oldest first."""
    return [tuple(r) for r in conn.execute(
        "SELECT t.name, a.kind, a.from_seq, a.to_seq FROM floor.alarms a LEFT JOIN floor.tables t "
        "ON t.id = a.table_id WHERE a.cleared IS NULL ORDER BY a.raised").fetchall()]


def pits(conn: Any) -> dict[str, str | None]:
    """Each table's pit as the store last heard it."""
    return {name: pit for name, pit in conn.execute(
        "SELECT name, pit FROM floor.tables").fetchall()}
