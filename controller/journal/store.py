"""Append-only durable event journal (SQLite, WAL) with a SHA-256 hash chain and snapshots.

Every device event and table event becomes a record: seq (1, 2, 3, … with no gaps), UTC ISO
time, monotonic time, kind (the domain event name, "device" for a raw device event, or another
name such as the application's "input"), data (a JSON object) and a hash chaining it to the
record before (see controller.journal_chain). Deleting records from the end cannot be seen by
the chain alone; a snapshot past the end, or the table's own state, shows it.

Durability: the database runs in WAL mode with synchronous=NORMAL, so an ordinary append is a
committed transaction that survives a crash of the process at once, while its fsync is batched
with later ones. A durable append (card and override events) is committed with
synchronous=FULL: the WAL, with this record and every record before it, is on disk before the
call returns. Closing the journal checkpoints, which syncs everything.

append_many() writes several records (an input and the events it caused) in one transaction:
all or none, one commit, one fsync when durable.

Snapshots (schema 3) are bound into the chain: each is stored with a record of kind "snapshot"
(its id, the seq it covers up to, its time, its hash and the publishers' positions), appended in
the same transaction, so a snapshot rewritten and rehashed no longer matches the chain, and an
anchor after it signs it. A snapshot without such a record (written before schema 3, or slipped
in since) is never trusted at a restart.

Cursors: a named publisher's "delivered up to seq". The cursors table is the working copy,
written with the records they go with; what a restart trusts is the copy in the chain: the
positions the latest snapshot record holds, or a "cursors" record (`record_cursors`).

One writer: a writer holds the journal's lock (controller/journal/lock.py) from before it opens
the file until it closes it. Appends come from one thread (the table's); readers (recall,
console) open their own read-only connection with Journal.open_readonly(path). A journal that
cannot be read back (not SQLite, corrupted, wrong schema) raises JournalError with one line: a
hard stop.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import tempfile
import threading
import time
import urllib.parse
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable, Iterator, Mapping

from controller.journal import lock as writer_lock
from controller.journal.chain import (GENESIS, VerifyResult, check_chain,
                                      json_object, record_hash, snapshot_hash,
                                      stored_and_canonical)
from controller.journal.snapshots import SNAPSHOT_KIND, binding_problem, snapshot_problem
from controller.settings.paths import NotAFile, refuse_special, tighten

#: The journal schema this code writes and reads; a newer one is refused, older ones upgraded.
SCHEMA_VERSION = 3
#: Rows fetched per query when reading records (keyset pages: no long-lived cursor).
PAGE = 2000

_SCHEMA = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL, created_utc TEXT NOT NULL)",
    "CREATE TABLE records (seq INTEGER PRIMARY KEY, utc TEXT NOT NULL, mono REAL NOT NULL,"
    " kind TEXT NOT NULL, data TEXT NOT NULL, hash TEXT NOT NULL)",
    "CREATE TABLE snapshots (id INTEGER PRIMARY KEY, upto_seq INTEGER NOT NULL,"
    " utc TEXT NOT NULL, state TEXT NOT NULL, hash TEXT NOT NULL, record_seq INTEGER)",
    _CURSORS := "CREATE TABLE cursors (name TEXT PRIMARY KEY, seq INTEGER NOT NULL)",
)
_SET_CURSOR = ("INSERT INTO cursors (name, seq) VALUES (?, ?) "
               "ON CONFLICT(name) DO UPDATE SET seq = excluded.seq")
_INSERT = "INSERT INTO records (seq, utc, mono, kind, data, hash) VALUES (?, ?, ?, ?, ?, ?)"
#: rows written by one INSERT statement (autocommit) rather than a transaction of several
_ONE_STATEMENT = 16
_COLUMNS = "seq, utc, mono, kind, data, hash"
_SNAP_COLUMNS = "id, upto_seq, utc, state, hash"
#: the chain's records of the journal's own bookkeeping: a snapshot taken, publishers' positions
CURSORS_KIND = "cursors"

Clock = Callable[[], tuple[str, float]]
#: the journal and its WAL and shared-memory files: the service writes, its group may read
FILE_MODE = 0o640
_SIDE_FILES = ("", "-wal", "-shm")


def _insert_rows(n: int) -> str:
    return _INSERT + ", (?, ?, ?, ?, ?, ?)" * (n - 1)


class JournalError(Exception):
    """The journal cannot be opened, read back or written: one line, a hard stop for the table."""


@dataclass(frozen=True)
class Snapshot:
    """A snapshot as a restart uses it: checked against its hash and its record in the chain."""

    id: int
    upto_seq: int
    record_seq: int
    state: dict


@dataclass(frozen=True, slots=True)
class Record:
    """One journal record as read back."""

    seq: int
    utc: str
    mono: float
    kind: str
    data: dict
    hash: str


def claim(path: str) -> writer_lock.WriterLock:
    """What a writer does before anything is opened or created: the journal's path (and its
    WAL and shared-memory files) must be files or nothing yet, and no other process may be
    writing it. JournalError in one line otherwise; release the lock it returns."""
    try:
        for side in _SIDE_FILES:
            refuse_special(path + side, "journal")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        return writer_lock.hold(path)
    except (NotAFile, writer_lock.JournalBusy) as err:
        raise JournalError(str(err)) from None
    except OSError as err:
        raise JournalError(f"journal {path}: cannot be opened: {err.strerror or err}") from None


@contextmanager
def claimed(path: str) -> Iterator[writer_lock.WriterLock]:
    """The journal's writer lock for the length of a `with` (see claim)."""
    lock = claim(path)
    try:
        yield lock
    finally:
        writer_lock.release(lock)


def utc_now() -> str:
    """UTC time as ISO 8601 with microseconds and a Z: 2024-05-01T12:00:00.123456Z."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"


def system_clock() -> tuple[str, float]:
    return utc_now(), time.monotonic()


def device_data(event: object) -> dict:
    """The data of a "device" record for a typed device event: type, its fields, raw as hex."""
    out: dict = {"type": type(event).__name__}
    for f in dataclasses.fields(event):  # type: ignore[arg-type]
        value = getattr(event, f.name)
        out[f.name] = value.hex() if isinstance(value, (bytes, bytearray)) else value
    return out


class Journal:
    """The journal at `path` (":memory:" for tests), created with its schema when new."""

    def __init__(self, path: str | os.PathLike, *, clock: Clock | None = None,
                 readonly: bool = False):
        self.path = os.fspath(path)
        self.readonly = readonly
        self._clock = clock or system_clock
        self._lock = threading.Lock()
        # tests whose subject is not durability may skip the fsync (never set in production)
        self._fsync = os.environ.get("TABLECTL_TEST_NO_FSYNC") != "1"
        self._sync = "NORMAL"                   # the writer connection's synchronous level
        self._conn: sqlite3.Connection | None = None
        self._scratch: str | None = None        # a private copy's folder (open_readonly)
        self._last_seq = 0
        self._head = GENESIS
        self._committed = (0, GENESIS)          # (seq, hash) of the newest record on disk
        self._staged: list[tuple] = []          # rows numbered and chained, not yet written
        self._staged_durable = False
        self._staged_cursors: dict[str, int] = {}
        self._cursors_written: dict[str, int] = {}   # what this connection last wrote
        self._version = SCHEMA_VERSION
        self._writer: writer_lock.WriterLock | None = None
        if not readonly and self.path != ":memory:":
            self._take_lock()
        try:
            conn = self._connect()
        except BaseException:
            self._let_go()
            raise
        self._conn = conn
        try:
            self._open_schema(conn)
            row = conn.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1").fetchone()
        except sqlite3.DatabaseError as err:
            conn.close()
            self._conn = None
            self._let_go()
            raise self._error("cannot be read", err) from err
        except BaseException:
            conn.close()
            self._conn = None
            self._let_go()
            raise
        if row is not None:
            self._last_seq, self._head = int(row[0]), str(row[1])
            self._committed = (self._last_seq, self._head)

    def _take_lock(self) -> None:
        self._writer = claim(self.path)

    def _let_go(self) -> None:
        if self._writer is not None:
            writer_lock.release(self._writer)
            self._writer = None

    @classmethod
    def open_readonly(cls, path: str | os.PathLike) -> "Journal":
        """A read-only connection for readers (recall, console, verify); append is refused.

        Reading a WAL journal still writes beside it (its shared-memory index), so a journal
        this process may not write to (a read-only copy kept for an investigation, read-only
        media) is read from a private copy of its files, removed again at close."""
        try:
            return cls(path, readonly=True)
        except JournalError as err:
            cause = err.__cause__
            if not (isinstance(cause, sqlite3.OperationalError) and any(
                    word in str(cause) for word in ("readonly", "unable to open"))):
                raise
        scratch = tempfile.mkdtemp(prefix="tablectl-journal-")
        try:
            for side in _SIDE_FILES[:2]:
                if os.path.isfile(f"{path}{side}"):
                    shutil.copyfile(f"{path}{side}", os.path.join(scratch, f"journal.db{side}"))
            journal = cls(os.path.join(scratch, "journal.db"), readonly=True)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        journal.path, journal._scratch = os.fspath(path), scratch
        return journal

    # --- opening -----------------------------------------------------------------------------

    def _error(self, what: str, err: BaseException | str) -> JournalError:
        detail = str(err).splitlines()[0] if str(err) else type(err).__name__
        return JournalError(f"journal {self.path}: {what}: {detail}")

    def _connect(self) -> sqlite3.Connection:
        path = self.path
        try:
            if self.readonly:
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
                    # 0640 from the first byte; SQLite gives the WAL and SHM files the same
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL | os.O_NOFOLLOW,
                                     FILE_MODE))
                self._tighten()
            # check_same_thread=False: the journal may be built on one thread and used by the
            # table thread; the lock serialises the rare accidental second caller.
            return sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                   timeout=5.0)
        except (sqlite3.Error, OSError) as err:
            raise self._error("cannot be opened", err) from err

    def _tighten(self) -> None:
        """A journal made before (or copied with a looser umask) is brought to FILE_MODE: only
        our own regular files (controller/settings/paths.py), never a file someone else owns."""
        for side in _SIDE_FILES:
            tighten(self.path + side, FILE_MODE)

    def _open_schema(self, conn: sqlite3.Connection) -> None:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            if self.readonly:
                raise JournalError(f"journal {self.path}: empty database, not a journal")
            self._create(conn)
            tables = {"schema_version"}
        if "schema_version" not in tables:
            raise JournalError(f"journal {self.path}: not a journal (no schema_version table; "
                               f"tables: {', '.join(sorted(tables))})")
        rows = conn.execute("SELECT version FROM schema_version").fetchall()
        if len(rows) != 1 or not isinstance(rows[0][0], int):
            raise JournalError(f"journal {self.path}: damaged schema_version table ({rows!r:.60})")
        version = rows[0][0]
        if version > SCHEMA_VERSION:
            raise JournalError(f"journal {self.path}: schema version {version} was written by a "
                               f"newer tablectl (this one reads up to {SCHEMA_VERSION}); upgrade")
        if version < 1:
            raise JournalError(f"journal {self.path}: schema version {version} is unknown "
                               f"(this tablectl reads versions 1 to {SCHEMA_VERSION})")
        if version < SCHEMA_VERSION and not self.readonly:
            self._upgrade(conn, version)
            version = SCHEMA_VERSION
        self._version = version
        try:
            conn.execute(f"SELECT {_COLUMNS} FROM records LIMIT 0")
            conn.execute(f"SELECT {_SNAP_COLUMNS}{', record_seq' if version >= 3 else ''} "
                         "FROM snapshots LIMIT 0")
        except sqlite3.OperationalError as err:
            raise self._error(f"wrong schema for version {version}", err) from err
        if not self.readonly:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode != "wal" and self.path != ":memory:":
                raise JournalError(f"journal {self.path}: cannot switch to WAL mode "
                                   f"(journal_mode is {mode})")
            conn.execute("PRAGMA synchronous=NORMAL")

    def _upgrade(self, conn: sqlite3.Connection, version: int) -> None:
        """Version 1 → 2: add the cursors table; 2 → 3: snapshots name their record in the
        chain (those taken before have none, and a restart no longer trusts them). Records and
        chain are unchanged."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            if version < 2:
                conn.execute(_CURSORS)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(snapshots)")}
            if "record_seq" not in columns:
                conn.execute("ALTER TABLE snapshots ADD COLUMN record_seq INTEGER")
            conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _create(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_version VALUES (?, ?)",
                             (SCHEMA_VERSION, utc_now()))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # --- state -------------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """Seq of the newest record this connection wrote or found at open (0 when empty)."""
        if self.readonly:
            row = self._row("SELECT max(seq) FROM records")
            return int(row[0] or 0)
        return self._last_seq

    @property
    def head_hash(self) -> str:
        """Hash of the newest record (GENESIS when empty)."""
        return self._head

    def pragmas(self) -> dict[str, object]:
        """journal_mode and synchronous as SQLite reports them on this connection."""
        conn = self._live()
        return {"journal_mode": conn.execute("PRAGMA journal_mode").fetchone()[0],
                "synchronous": conn.execute("PRAGMA synchronous").fetchone()[0]}

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise JournalError(f"journal {self.path}: closed")
        return self._conn

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """All rows of a query; a damaged database becomes a JournalError."""
        try:
            return self._live().execute(sql, params).fetchall()
        except sqlite3.DatabaseError as err:
            raise self._error("cannot be read", err) from err

    def _row(self, sql: str, params: tuple = ()) -> tuple | None:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    @contextmanager
    def _full_sync(self) -> Iterator[None]:
        """Commits inside run with synchronous=FULL (WAL fsynced before COMMIT returns).
        The level is left as it is until a non-durable commit needs NORMAL: a live table's
        appends are nearly all durable, and switching costs a statement each way."""
        if self._fsync:
            self._sync_level("FULL")
        yield

    def _normal_sync(self) -> None:
        if self._sync != "NORMAL":
            self._sync_level("NORMAL")

    def _sync_level(self, level: str) -> None:
        if self._sync != level:
            self._live().execute(f"PRAGMA synchronous={level}")
            self._sync = level

    # --- writing -----------------------------------------------------------------------------

    def append(self, kind: str, data: dict, *, durable: bool = False) -> int:
        """Append one record and return its seq; durable=True returns only once it is on disk."""
        return self.append_many(((kind, data),), durable=durable)[0]

    def append_many(self, items: Iterable[tuple[str, dict]], *, durable: bool = False,
                    cursors: Mapping[str, int] | None = None) -> list[int]:
        """Append (kind, data) records in one transaction (all or none); returns their seqs.

        For an input and the events it caused: one commit, and with durable=True one fsync.
        `cursors` (name → seq) are set in the same transaction. Records staged before
        (`stage`) go first, in the same transaction.
        """
        seqs = self.stage(items, durable=durable, cursors=cursors)
        self.commit()
        return seqs

    # --- a batch: many inputs, one transaction ---------------------------------------------------

    def stage(self, items: Iterable[tuple[str, dict]], *, durable: bool = False,
              cursors: Mapping[str, int] | None = None) -> list[int]:
        """Number and chain (kind, data) records now, and write them with the next `commit`
        (or any other write of this journal), all in one transaction; returns their seqs.

        For a loop on a virtual clock, where nothing outside waits: many inputs, one commit
        and (durable) one fsync. Until that commit nothing of the batch may be announced; a
        failed commit loses the whole batch, and the journal is as it was before it."""
        prepared = [self._prepare(kind, data) for kind, data in items]
        with self._lock:
            self._live()
            seq, head = self._last_seq, self._head
            rows = self._staged
            # the records of one call (an input and the events it caused) share its time
            utc, mono = self._clock() if prepared else ("", 0.0)
            mono = float(mono)
            for kind, data_text, data_json in prepared:
                seq += 1
                head = record_hash(head, seq, utc, mono, kind, data_json)
                rows.append((seq, utc, mono, kind, data_text, head))
            self._last_seq, self._head = seq, head
            self._staged_durable = self._staged_durable or durable
            if cursors:
                self._staged_cursors.update(cursors)
        return list(range(seq - len(prepared) + 1, seq + 1))

    @property
    def staged(self) -> int:
        """How many records wait for the next commit."""
        return len(self._staged)

    def commit(self) -> None:
        """Write what was staged in one transaction (synchronous=FULL if any of it is
        durable); nothing to do when nothing was. Cursors go only when their value changed."""
        with self._lock:
            rows, durable = self._staged, self._staged_durable
            cursors = {name: seq for name, seq in self._staged_cursors.items()
                       if self._cursors_written.get(name) != seq}
            self._staged, self._staged_durable, self._staged_cursors = [], False, {}
            if not rows and not cursors:
                return
            conn = self._live()
            try:
                if not durable:
                    self._normal_sync()
                with self._full_sync() if durable else nullcontext():
                    if rows and len(rows) <= _ONE_STATEMENT and not cursors:
                        # one statement is its own transaction, all or none: an input and
                        # its events in one round trip instead of BEGIN, INSERTs, COMMIT
                        conn.execute(_insert_rows(len(rows)),
                                     [v for row in rows for v in row])
                    else:
                        self._insert_all(conn, rows, cursors)
            except sqlite3.Error as err:
                # the batch is lost as a whole: the journal ends where it ended before it
                self._last_seq, self._head = self._committed
                first = rows[0][0] if rows else self._last_seq
                if isinstance(err, sqlite3.IntegrityError):
                    raise self._error(f"seq {first} already taken (a second writer?)",
                                      err) from err
                raise self._error(f"cannot append seq {first}", err) from err
            if rows:
                self._committed = (rows[-1][0], rows[-1][5])
            self._cursors_written.update(cursors)

    @staticmethod
    def _insert_all(conn: sqlite3.Connection, rows: list[tuple],
                    cursors: Mapping[str, int] | None = None) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if rows:
                conn.executemany(_INSERT, rows)
            if cursors:
                conn.executemany(_SET_CURSOR, list(cursors.items()))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _prepare(self, kind: str, data: dict) -> tuple[str, str, str]:
        """(kind, text to store, canonical text to hash) of a record, or ValueError."""
        if self.readonly:
            raise JournalError(f"journal {self.path}: opened read-only, cannot append")
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"journal: record kind must be a non-empty string, not {kind!r}")
        if not isinstance(data, dict):
            raise ValueError(f"journal: {kind} data must be a dict, not {type(data).__name__}")
        try:
            return (kind, *stored_and_canonical(data))
        except (TypeError, ValueError) as err:
            raise ValueError(f"journal: {kind} data is not JSON-ready: {err}") from err

    def append_event(self, event: dict, *, durable: bool = False) -> int:
        """Append a domain event dict under its "event" name."""
        kind = event.get("event") if isinstance(event, dict) else None
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"journal: a domain event needs an 'event' name: {event!r:.80}")
        return self.append(kind, event, durable=durable)

    # --- cursors -----------------------------------------------------------------------------

    def cursor(self, name: str) -> int | None:
        """The seq publisher `name` has delivered up to; None when it never recorded one."""
        try:
            row = self._live().execute("SELECT seq FROM cursors WHERE name = ?",
                                       (name,)).fetchone()
        except sqlite3.OperationalError:
            return None     # a version 1 journal opened read-only: no cursors yet
        except sqlite3.DatabaseError as err:
            raise self._error("cannot be read", err) from err
        return int(row[0]) if row else None

    def set_cursors(self, cursors: Mapping[str, int], *, durable: bool = False) -> None:
        """Record publishers' positions on their own (at a clean stop, say)."""
        if self.readonly:
            raise JournalError(f"journal {self.path}: opened read-only, cannot set cursors")
        try:
            self.stage((), durable=durable, cursors=cursors)
            self.commit()
        except JournalError as err:
            raise JournalError(f"{err} (recording a publisher's position)") from err.__cause__

    def snapshot(self, state: dict, upto_seq: int,
                 cursors: Mapping[str, int] | None = None) -> int:
        """Store `state` as the table state after record `upto_seq` (durably); returns its id.

        In the same transaction a record of kind "snapshot" binds it into the chain (id, upto
        seq, time, hash, and the publishers' positions `cursors`, also set in the cursors
        table)."""
        if self.readonly:
            raise JournalError(f"journal {self.path}: opened read-only, cannot snapshot")
        if not isinstance(state, dict):
            raise ValueError(f"journal: snapshot state must be a dict, not {type(state).__name__}")
        if not isinstance(upto_seq, int) or isinstance(upto_seq, bool) \
                or not 0 <= upto_seq <= self._last_seq:
            raise ValueError(f"journal: snapshot upto_seq must be 0..{self._last_seq}, "
                             f"not {upto_seq!r}")
        try:
            state_text, state_json = stored_and_canonical(state)
        except (TypeError, ValueError) as err:
            raise ValueError(f"journal: snapshot state is not JSON-ready: {err}") from err
        given = dict(cursors or {})
        self.commit()                   # what was staged comes first, as it was numbered
        with self._lock:
            conn = self._live()
            head = self._hash_at(upto_seq)
            utc, mono = self._clock()
            digest = snapshot_hash(head, upto_seq, utc, state_json)
            seq = self._last_seq + 1
            try:
                with self._full_sync():
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        sid = int(conn.execute(
                            "INSERT INTO snapshots (upto_seq, utc, state, hash, record_seq) "
                            "VALUES (?, ?, ?, ?, ?)",
                            (upto_seq, utc, state_text, digest, seq)).lastrowid)
                        data = {"event": SNAPSHOT_KIND, "id": sid, "upto_seq": upto_seq,
                                "utc": utc, "hash": digest, "cursors": given}
                        text, data_json = stored_and_canonical(data)
                        record_head = record_hash(self._head, seq, utc, float(mono),
                                                  SNAPSHOT_KIND, data_json)
                        conn.execute(_INSERT, (seq, utc, float(mono), SNAPSHOT_KIND, text,
                                               record_head))
                        if given:
                            conn.executemany(_SET_CURSOR, list(given.items()))
                        conn.execute("COMMIT")
                    except BaseException:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        raise
            except sqlite3.Error as err:
                raise self._error("cannot store snapshot", err) from err
            self._last_seq, self._head = seq, record_head
            self._committed = (seq, record_head)
            self._cursors_written.update(given)
            return sid

    def record_cursors(self, cursors: Mapping[str, int]) -> int:
        """Publishers' positions into the chain (a "cursors" record, durably) and the cursors
        table: a position a restart must be able to trust (a feed's first start, say)."""
        seq = self.append_many([(CURSORS_KIND, {"event": CURSORS_KIND,
                                                "cursors": dict(cursors)})],
                               durable=True, cursors=cursors)
        return seq[0]

    def chained_cursors(self) -> dict[str, int]:
        """The publishers' positions the chain holds: those of its newest snapshot or cursors
        record ({} when it holds none)."""
        row = self._row("SELECT data FROM records WHERE kind IN (?, ?) ORDER BY seq DESC LIMIT 1",
                        (SNAPSHOT_KIND, CURSORS_KIND))
        if row is None:
            return {}
        data, _ = json_object(row[0], "data")
        value = (data or {}).get("cursors")
        if not isinstance(value, dict):
            return {}
        return {k: v for k, v in value.items()
                if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)}

    def _hash_at(self, seq: int) -> str:
        if seq == 0:
            return GENESIS
        if seq == self._last_seq and not self.readonly:
            return self._head
        row = self._row("SELECT hash FROM records WHERE seq = ?", (seq,))
        if row is None:
            raise JournalError(f"journal {self.path}: record seq {seq} is missing")
        return str(row[0])

    # --- reading -----------------------------------------------------------------------------

    def records(self, after_seq: int = 0, kinds: Iterable[str] | None = None) -> Iterator[Record]:
        """Records with seq > after_seq in seq order, optionally only those of `kinds`."""
        where = "seq > ?"
        extra: tuple = ()
        if kinds is not None:
            extra = tuple(kinds)
            if not extra:
                return
            where += f" AND kind IN ({', '.join('?' * len(extra))})"
        sql = f"SELECT {_COLUMNS} FROM records WHERE {where} ORDER BY seq LIMIT {PAGE}"
        last = after_seq
        while True:
            rows = self._rows(sql, (last, *extra))
            for row in rows:
                yield self._record(row)
            if len(rows) < PAGE:
                return
            last = rows[-1][0]

    def count(self, after_seq: int = 0, exclude_kinds: Iterable[str] = ()) -> int:
        """How many records have seq > after_seq, those of `exclude_kinds` left out."""
        extra = tuple(exclude_kinds)
        where = "seq > ?" + (f" AND kind NOT IN ({', '.join('?' * len(extra))})" if extra else "")
        row = self._row(f"SELECT count(*) FROM records WHERE {where}", (after_seq, *extra))
        return int(row[0]) if row else 0

    def records_backward(self, before_seq: int | None = None) -> Iterator[Record]:
        """Records newest first (those with seq < before_seq when given)."""
        sql = f"SELECT {_COLUMNS} FROM records WHERE seq < ? ORDER BY seq DESC LIMIT {PAGE}"
        last = before_seq if before_seq is not None else 2 ** 62
        while True:
            rows = self._rows(sql, (last,))
            for row in rows:
                yield self._record(row)
            if len(rows) < PAGE:
                return
            last = rows[-1][0]

    def _record(self, row: tuple) -> Record:
        seq, utc, mono, kind, data_text, digest = row
        try:
            data = json.loads(data_text)
        except (TypeError, ValueError) as err:
            raise self._error(f"record seq {seq} is unreadable (bad JSON; run "
                              f"tablectl verify-journal)", err) from err
        if not isinstance(data, dict):
            raise JournalError(f"journal {self.path}: record seq {seq} is unreadable (data is "
                               f"not a JSON object; run tablectl verify-journal)")
        return Record(seq, utc, mono, kind, data, digest)

    def trusted_snapshot(self, before_seq: int | None = None) -> Snapshot | None:
        """The newest snapshot bound into the chain (its record before `before_seq` when given:
        the seq of the last anchor, whose signature must cover it), checked against its hash
        and against its record; None when there is none (a restart then replays everything).

        A snapshot that does not match its hash or its record raises JournalError: it was
        changed after it was taken, and the table must not be rebuilt from it.
        """
        if self._version < 3:
            return None
        sql = f"SELECT {_SNAP_COLUMNS}, record_seq FROM snapshots WHERE record_seq IS NOT NULL"
        params: tuple = ()
        if before_seq is not None:
            sql += " AND record_seq < ?"
            params = (before_seq,)
        row = self._row(sql + " ORDER BY id DESC LIMIT 1", params)
        if row is None:
            return None
        why = snapshot_problem(self, *row[:5]) or binding_problem(self, *row)
        if why is not None:
            raise JournalError(f"journal {self.path}: snapshot {row[0]} (up to seq {row[1]}) "
                               f"rejected: {why}")
        return Snapshot(int(row[0]), int(row[1]), int(row[5]), json.loads(row[3]))

    def latest_snapshot(self) -> tuple[int, dict] | None:
        """(upto_seq, state) of the newest trusted snapshot (see trusted_snapshot), or None."""
        snap = self.trusted_snapshot()
        return None if snap is None else (snap.upto_seq, snap.state)

    def verify(self, after_seq: int = 0, *, upto_seq: int | None = None, snapshots: bool = True,
               progress: Callable[[int], None] | None = None) -> VerifyResult:
        """Check the chain (from after_seq, trusting that record's hash, up to upto_seq or the
        end) and, with snapshots=True, every snapshot: its hash, and its record in the chain.
        `progress` hears how many records have been checked, a page at a time."""
        prev = self._hash_at(after_seq) if after_seq else GENESIS
        sql = f"SELECT {_COLUMNS} FROM records WHERE seq > ?" + (
            " AND seq <= ?" if upto_seq is not None else "") + f" ORDER BY seq LIMIT {PAGE}"
        bound = (upto_seq,) if upto_seq is not None else ()
        expected, checked, last = after_seq + 1, 0, after_seq
        while True:
            rows = self._rows(sql, (last, *bound))
            n, prev, broken = check_chain(rows, expected, prev)
            checked += n
            expected += n
            if broken is not None:
                return VerifyResult(checked, self._max_seq(), broken.seq, broken.reason)
            if progress is not None:
                progress(checked)
            if len(rows) < PAGE:
                break
            last = rows[-1][0]
        if upto_seq is not None and expected - 1 < upto_seq:
            return VerifyResult(checked, self._max_seq(), expected,
                                f"missing seq (the chain ends at seq {expected - 1})")
        if not snapshots:
            return VerifyResult(checked, expected - 1)
        snaps = self.check_snapshots()
        return dataclasses.replace(snaps, records_checked=checked, last_seq=expected - 1)

    def check_snapshots(self) -> VerifyResult:
        """Every snapshot: its hash, and (schema 3) the record that binds it into the chain.
        Those from before schema 3 are counted: a restart does not use them."""
        bound_col = ", record_seq" if self._version >= 3 else ", NULL"
        snaps = self._rows(f"SELECT {_SNAP_COLUMNS}{bound_col} FROM snapshots ORDER BY id")
        unbound = 0
        for row in snaps:
            why = snapshot_problem(self, *row[:5])
            if why is None and row[5] is not None:
                why = binding_problem(self, *row)
            if why is not None:
                return VerifyResult(0, 0, snapshots_checked=len(snaps), bad_snapshot_id=row[0],
                                    snapshot_reason=why)
            unbound += row[5] is None
        return VerifyResult(0, 0, snapshots_checked=len(snaps), snapshots_unbound=unbound)

    def last_record(self, kind: str) -> Record | None:
        """The newest record of `kind` (anchors are found this way: near the end)."""
        row = self._row(f"SELECT {_COLUMNS} FROM records WHERE kind = ? ORDER BY seq DESC "
                        "LIMIT 1", (kind,))
        return self._record(row) if row is not None else None

    def record_hash(self, seq: int) -> str | None:
        """The stored hash of record `seq` (GENESIS for 0), None when there is no such record."""
        if seq == 0:
            return GENESIS
        row = self._row("SELECT hash FROM records WHERE seq = ?", (seq,))
        return str(row[0]) if row is not None else None

    def _max_seq(self) -> int:
        return int(self._row("SELECT max(seq) FROM records")[0] or 0)

    # --- closing -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (the last writer's close checkpoints and syncs the WAL), and
        let go of the writer's lock."""
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None
                    if self._scratch is not None:
                        shutil.rmtree(self._scratch, ignore_errors=True)
                        self._scratch = None
            self._let_go()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.readonly else "writer"
        return f"<Journal {self.path} {mode} last_seq={self._last_seq}>"
