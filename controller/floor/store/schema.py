"""The floor store's schema (PostgreSQL schema `floor`), created and migrated by the store itself.

`MIGRATIONS[n]` takes a database from version n-1 to n, in one transaction with an advisory
lock (several stores starting at once migrate once). A database of a newer version than this
code knows is refused in one line: an older store must not write into a schema it does not
know. What the schema guarantees:

- `records`: one row per journal record of a table, `PRIMARY KEY (table_id, seq)` (so a record
  is stored once, whoever delivers it and however often), the record as journaled (utc, mono,
  kind, data with its keys in their order, hash), append-only (a trigger refuses UPDATE, DELETE
  and TRUNCATE); the anchors are records like any other;
- `tables`: per table its pit, the first seq the store got, how far every record is present
  (`contiguous_seq`, with the hash there) and the highest seq stored (a hole in between is a
  gap the store reports);
- `quarantine`: every payload that was not a record this store knows, with why, as received;
- `alarms`: gaps and chain breaks, raised and cleared.
"""
from __future__ import annotations

from typing import Any

SCHEMA = "floor"
#: a constant of our own for pg_advisory_xact_lock: migrations run one at a time
LOCK = 0x7AB1EC71

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE SCHEMA IF NOT EXISTS floor",
        "CREATE TABLE floor.schema_version (version integer NOT NULL,"
        " migrated timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE floor.tables (id serial PRIMARY KEY, name text NOT NULL UNIQUE, pit text,"
        " first_seq bigint, contiguous_seq bigint NOT NULL DEFAULT 0, head_hash text,"
        " last_seq bigint NOT NULL DEFAULT 0, hole_since timestamptz, last_utc text,"
        " updated timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE floor.records (table_id integer NOT NULL REFERENCES floor.tables (id),"
        " seq bigint NOT NULL, at timestamptz NOT NULL, utc text NOT NULL,"
        " mono double precision NOT NULL, kind text NOT NULL, data json NOT NULL,"
        " hash text NOT NULL, pit text, PRIMARY KEY (table_id, seq))",
        "CREATE INDEX records_kind_at ON floor.records (kind, at)",
        "CREATE INDEX records_table_at ON floor.records (table_id, at)",
        "CREATE TABLE floor.quarantine (id bigserial PRIMARY KEY,"
        " received timestamptz NOT NULL DEFAULT now(), topic text NOT NULL, table_name text,"
        " seq bigint, reason text NOT NULL, payload bytea NOT NULL)",
        "CREATE TABLE floor.alarms (id bigserial PRIMARY KEY,"
        " table_id integer REFERENCES floor.tables (id), kind text NOT NULL, from_seq bigint,"
        " to_seq bigint, detail text NOT NULL, raised timestamptz NOT NULL DEFAULT now(),"
        " cleared timestamptz)",
        "CREATE FUNCTION floor.append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        " RAISE EXCEPTION 'floor.% is append-only: its rows are never changed or removed',"
        " TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege'; END $$",
        "CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON floor.records"
        " FOR EACH ROW EXECUTE FUNCTION floor.append_only()",
        "CREATE TRIGGER records_no_truncate BEFORE TRUNCATE ON floor.records"
        " FOR EACH STATEMENT EXECUTE FUNCTION floor.append_only()",
        "CREATE TRIGGER quarantine_append_only BEFORE UPDATE OR DELETE ON floor.quarantine"
        " FOR EACH ROW EXECUTE FUNCTION floor.append_only()",
    ),
}
VERSION = max(MIGRATIONS)


class SchemaError(Exception):
    """The database's floor schema cannot be used by this code (one line)."""


def version(conn: Any) -> int:
    """The floor schema's version in the database (0: none yet)."""
    row = conn.execute("SELECT to_regclass('floor.schema_version')").fetchone()
    if row[0] is None:
        return 0
    rows = conn.execute("SELECT version FROM floor.schema_version").fetchall()
    if len(rows) != 1:
        raise SchemaError(f"floor.schema_version holds {len(rows)} rows, not one: the schema "
                          f"is damaged")
    return int(rows[0][0])


def migrate(conn: Any, *, where: str = "the database") -> tuple[int, int]:
    """Bring the schema to VERSION (committed); (version found, version now). SchemaError when
    the database's is newer than this code's."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
        found = version(conn)
        if found > VERSION:
            raise SchemaError(f"{where}: floor schema version {found} was made by a newer "
                              f"tablectl (this one knows up to {VERSION}); upgrade the store")
        for n in range(found + 1, VERSION + 1):
            for statement in MIGRATIONS[n]:
                conn.execute(statement)
            if n == 1:
                conn.execute("INSERT INTO floor.schema_version (version) VALUES (%s)", (n,))
            else:
                conn.execute("UPDATE floor.schema_version SET version = %s, migrated = now()",
                             (n,))
    return found, VERSION


def require(conn: Any, *, where: str = "the database") -> None:
    """For readers: the schema must be there and known (SchemaError otherwise)."""
    found = version(conn)
    conn.rollback()
    if found == 0:
        raise SchemaError(f"{where} holds no floor store (no floor schema); start tablectl "
                          f"floor-store on it first")
    if found > VERSION:
        raise SchemaError(f"{where}: floor schema version {found} was made by a newer tablectl "
                          f"(this one reads up to {VERSION}); upgrade")
