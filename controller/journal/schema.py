"""The journal's file: its tables per schema version, creating, opening and upgrading it.

Schema 4 stores integer times and binary hashes, schema 5 the same tables with a card read's
input and its `card` event in one record (controller/journal/codec.py). A journal of schema
1-4 is opened as it is: versions 1 and 2 are upgraded in place to 3 (tables added, no record
touched), and a schema 3 or 4 journal is read, verified and appended to in its own format, so
its chain is never rewritten; a new journal is started in schema 5.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
import urllib.parse
from datetime import datetime, timezone

from controller.settings.paths import NotAFile, flush, refuse_special, tighten

#: The journal schema this code writes new journals in; a newer one is refused.
SCHEMA_VERSION = 5
#: the journal and its WAL and shared-memory files: the service writes, its group may read
FILE_MODE = 0o640
SIDE_FILES = ("", "-wal", "-shm")
CURSORS = "CREATE TABLE cursors (name TEXT PRIMARY KEY, seq INTEGER NOT NULL)"
_TABLES = {
    3: ("CREATE TABLE records (seq INTEGER PRIMARY KEY, utc TEXT NOT NULL, mono REAL NOT NULL,"
        " kind TEXT NOT NULL, data TEXT NOT NULL, hash TEXT NOT NULL)"),
    4: ("CREATE TABLE records (seq INTEGER PRIMARY KEY, utc INTEGER NOT NULL,"
        " mono INTEGER NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL, hash BLOB NOT NULL)"),
}
_TABLES[5] = _TABLES[4]
_COMMON = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL, created_utc TEXT NOT NULL)",
    "CREATE TABLE snapshots (id INTEGER PRIMARY KEY, upto_seq INTEGER NOT NULL,"
    " utc TEXT NOT NULL, state TEXT NOT NULL, hash TEXT NOT NULL, record_seq INTEGER)",
    CURSORS,
)
COLUMNS = "seq, utc, mono, kind, data, hash"
#: kinds a few records a shoe have, found by an index of their own (schema 4): a start looks
#: for the last shoe's start, the anchors and the snapshots without reading the whole file
RARE_KINDS = ("shoe_started", "shoe_ended", "anchor", "snapshot", "cursors")
#: the partial index's condition, as ORed equalities: SQLite evaluates it on every INSERT, and
#: an IN list of three or more builds a temporary table each time (a third of a card's commit)
_RARE_OR = "(" + " OR ".join(f"kind = '{k}'" for k in RARE_KINDS) + ")"
#: what a query names so that SQLite may use the index: its condition as it is, in both the
#: form above and the IN list the journals of schema 4 made before have
RARE = "kind IN (" + ", ".join(f"'{k}'" for k in RARE_KINDS) + f") AND {_RARE_OR}"
_RARE_INDEX = f"CREATE INDEX records_rare ON records (kind, seq) WHERE {_RARE_OR}"
#: that earlier index (tests hold a journal made with it to the queries above)
RARE_INDEX_IN_LIST = ("CREATE INDEX records_rare ON records (kind, seq) WHERE kind IN ("
                      + ", ".join(f"'{k}'" for k in RARE_KINDS) + ")")
SNAP_COLUMNS = "id, upto_seq, utc, state, hash"


class JournalError(Exception):
    """The journal cannot be opened, read back or written: one line, a hard stop for the table."""


def utc_now() -> str:
    """UTC time as ISO 8601 with microseconds and a Z: 2024-05-01T12:00:00.123456Z."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"


def error(path: str, what: str, err: BaseException | str) -> JournalError:
    detail = str(err).splitlines()[0] if str(err) else type(err).__name__
    return JournalError(f"journal {path}: {what}: {detail}")


def connect(path: str, readonly: bool) -> sqlite3.Connection:
    try:
        if readonly:
            if path == ":memory:" or not os.path.exists(path):
                raise JournalError(f"journal {path}: no such file")
            try:
                refuse_special(path, "journal")
            except NotAFile as err:
                raise JournalError(str(err)) from None
            uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
            return sqlite3.connect(uri, uri=True, isolation_level=None,
                                   check_same_thread=False, timeout=5.0)
        if path != ":memory:":
            if not os.path.exists(path):
                _no_orphan_wal(path)
                _making(path)
                # 0640 from the first byte; SQLite gives the WAL and SHM files the same
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL | os.O_NOFOLLOW,
                                 FILE_MODE))
            # a journal made before (or copied with a looser umask) is brought to FILE_MODE:
            # only our own regular files (controller/settings/paths.py)
            for side in SIDE_FILES:
                tighten(path + side, FILE_MODE)
        # check_same_thread=False: the journal may be built on one thread and used by the
        # table thread; the journal's lock serialises the rare accidental second caller.
        return sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                               timeout=5.0)
    except (sqlite3.Error, OSError) as err:
        raise error(path, "cannot be opened", err) from err


#: beside a journal while it is being made: a crash then leaves a database without tables,
#: which is also what is left of a journal whose WAL held it all and was lost; this file tells
#: the next start that it is a making cut short (made again), not a loss (refused)
MAKING = ".making"


def _making(path: str) -> None:
    """The mark that the journal at `path` is being made, on disk (its folder flushed) before
    the journal's first byte is."""
    os.close(os.open(path + MAKING, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE))
    flush(os.path.dirname(os.path.abspath(path)))


def _made(path: str) -> None:
    """The making is over (its tables committed): the mark goes. A mark left with a journal
    that holds records (its removal lost with a power cut) is removed the same way."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path + MAKING)


def _no_orphan_wal(path: str) -> None:
    """A journal is made new only where nothing of one is left: a write-ahead log that holds
    frames with no journal beside it is the newest part of a journal deleted or moved away
    (SQLite would take it for the new file's, or write over it)."""
    try:
        size = os.path.getsize(path + "-wal")
    except OSError:
        return
    if size:
        raise JournalError(f"journal {path}: no such file, but its write-ahead log {path}-wal "
                           f"({size:,} bytes) is there: the journal was deleted or moved while "
                           f"it was open; put it back, or keep the -wal for examination and "
                           f"move it (and {path}-shm) away to start a new journal")


def open_schema(conn: sqlite3.Connection, path: str, readonly: bool) -> int:
    """The journal's schema version, the file created (writer, empty file) or upgraded from
    version 1 or 2 to 3 first; JournalError in one line when it is not a journal we read."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    making = path != ":memory:" and os.path.exists(path + MAKING)
    if not tables:
        size = os.path.getsize(path) if path != ":memory:" else 0
        if readonly:
            raise JournalError(f"journal {path}: empty database, not a journal" + (
                " (its making was cut short; the table's next start makes it again)"
                if making else
                f" (what it held may have been lost with its write-ahead log {path}-wal)"
                if size else ""))
        if size and not making:
            # a new journal is an empty file (made just now, or by hand); a database that
            # holds nothing is what is left of a journal whose write-ahead log held it all
            # and was lost (deleted, or not copied with it): never dealt on as a new one
            raise JournalError(f"journal {path}: an empty database ({size:,} bytes, no "
                               f"records), not a journal: what it held may have been lost with "
                               f"its write-ahead log {path}-wal; keep it for examination and "
                               f"give another --journal, or move it away to start a new one")
        _create(conn)
        tables = {"schema_version"}
    if making and not readonly:
        _made(path)
    if "schema_version" not in tables:
        raise JournalError(f"journal {path}: not a journal (no schema_version table; "
                           f"tables: {', '.join(sorted(tables))})")
    rows = conn.execute("SELECT version FROM schema_version").fetchall()
    if len(rows) != 1 or not isinstance(rows[0][0], int):
        raise JournalError(f"journal {path}: damaged schema_version table ({rows!r:.60})")
    version = rows[0][0]
    if version > SCHEMA_VERSION:
        raise JournalError(f"journal {path}: schema version {version} was written by a "
                           f"newer tablectl (this one reads up to {SCHEMA_VERSION}); upgrade")
    if version < 1:
        raise JournalError(f"journal {path}: schema version {version} is unknown "
                           f"(this tablectl reads versions 1 to {SCHEMA_VERSION})")
    if version < 3 and not readonly:
        _upgrade(conn)
        version = 3
    try:
        conn.execute(f"SELECT {COLUMNS} FROM records LIMIT 0")
        conn.execute(f"SELECT {SNAP_COLUMNS}{', record_seq' if version >= 3 else ''} "
                     "FROM snapshots LIMIT 0")
    except sqlite3.OperationalError as err:
        raise error(path, f"wrong schema for version {version}", err) from err
    if not readonly:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal" and path != ":memory:":
            raise JournalError(f"journal {path}: cannot switch to WAL mode "
                               f"(journal_mode is {mode})")
        conn.execute("PRAGMA synchronous=NORMAL")
    return version


def _upgrade(conn: sqlite3.Connection) -> None:
    """Version 1 → 2: add the cursors table; 2 → 3: snapshots name their record in the chain
    (those taken before have none, and a restart does not trust them). Records unchanged."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'cursors'").fetchone():
            conn.execute(CURSORS)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(snapshots)")}
        if "record_seq" not in columns:
            conn.execute("ALTER TABLE snapshots ADD COLUMN record_seq INTEGER")
        conn.execute("UPDATE schema_version SET version = 3")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _create(conn: sqlite3.Connection, version: int = SCHEMA_VERSION) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
            for statement in (_TABLES[version], *_COMMON,
                              *((_RARE_INDEX,) if version >= 4 else ())):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version VALUES (?, ?)", (version, utc_now()))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def create_legacy(path: str, version: int = 3) -> None:
    """An empty journal of an earlier schema (3 or 4) at `path` (what earlier releases
    started): for the tests and benchmarks that hold this release to the journals already on
    table PCs."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        _create(conn, version)
    finally:
        conn.close()
