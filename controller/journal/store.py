"""Append-only durable event journal (SQLite, WAL) with a SHA-256 hash chain and snapshots.

Every device event and table event becomes a record: seq (1, 2, 3, … with no gaps), UTC
time, monotonic time, kind (the domain event name, "device" for a raw device event, or another
name such as the application's "input"), data (a JSON object) and a hash chaining it to the
record before (how each schema stores and hashes it: controller/journal/codec.py). Deleting
records from the end cannot be seen by the chain alone; a snapshot past the end, an anchor
kept off the table PC, or the table's own state, shows it.

This module opens the journal and appends to it; reading.py reads it back and checks it,
schema.py holds its tables and their versions.

Durability: the database runs in WAL mode with synchronous=NORMAL, so an ordinary append is a
committed transaction that survives a crash of the process at once, while its fsync is batched
with later ones. A durable append (card and override events) is committed with
synchronous=FULL: the WAL, with this record and every record before it, is on disk before the
call returns. Closing the journal checkpoints, which syncs everything.

append_many() writes several records (an input and the events it caused) in one transaction:
all or none, one commit, one fsync when durable. After each commit the writer looks that the
journal's file and its WAL are still the ones their names give (controller/journal/files.py):
one deleted or replaced meanwhile fails the write as a full disk would, after what the
connection holds is saved where a restart finds it. The writer makes the WAL's checkpoints
itself (SQLite's automatic ones turned off: `_checkpoint`), so that a journal file written in
place by another hand (a backup copied over it) is told from its own checkpoints and stops
the table too.

Snapshots (schema 3 on) are bound into the chain by a record of kind "snapshot" written in the
same transaction (controller/journal/snapshots.py); one without it is never trusted.

Cursors: a named publisher's "delivered up to seq". The cursors table is the working copy,
written with the records they go with; what a restart trusts is the copy in the chain: the
positions the latest snapshot record holds, or a "cursors" record (`record_cursors`).

One writer: a writer holds the journal's lock (controller/journal/lock.py) from before it opens
the file until it closes it. Appends come from one thread (the table's), which may hand a batch
it took to a thread of its own to write (`take`, `write`) while it stages the next; readers (recall,
console) open their own read-only connection with Journal.open_readonly(path). A journal that
cannot be read back (not SQLite, corrupted, wrong schema) raises JournalError with one line: a
hard stop.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import queue
import shutil
import sqlite3
import tempfile
import threading
import time
from contextlib import contextmanager
from itertools import chain as _chain
from typing import Callable, Iterable, Iterator, Mapping, NamedTuple

from controller.journal import lock as writer_lock
from controller.journal import reading, snapshots
from controller.journal.files import Held
from controller.journal.chain import GENESIS, VerifyResult
from controller.journal.lock import claim, claimed
from controller.journal.codec import CARD_ALONE, FOLD, Codec, for_version
from controller.journal.reading import PAGE, Record, Snapshot
from controller.journal.schema import (COLUMNS, FILE_MODE, SCHEMA_VERSION, SIDE_FILES,
                                       JournalError, connect, error, open_schema, utc_now)
from controller.journal.snapshots import SNAPSHOT_KIND

__all__ = ["Batch", "Journal", "JournalError", "Record", "Snapshot", "PAGE", "SCHEMA_VERSION",
           "FILE_MODE", "CURSORS_KIND", "SNAPSHOT_KIND", "claim", "claimed", "device_data",
           "system_clock", "utc_now"]

_SET_CURSOR = ("INSERT INTO cursors (name, seq) VALUES (?, ?) "
               "ON CONFLICT(name) DO UPDATE SET seq = excluded.seq")
_INSERT = "INSERT INTO records (seq, utc, mono, kind, data, hash) VALUES (?, ?, ?, ?, ?, ?)"
#: rows written by one INSERT statement (autocommit) rather than a transaction of several
_ONE_STATEMENT = 16
#: the WAL's frames (pages written) the writer lets gather before it checkpoints them into the
#: journal's file: SQLite's own automatic checkpoint's default
CHECKPOINT_FRAMES = 1000
#: the chain's records of the journal's own bookkeeping: a snapshot taken, publishers' positions
CURSORS_KIND = "cursors"

#: a clock gives (UTC, monotonic): µs integers, or ISO text and seconds
Clock = Callable[[], tuple[object, object]]


def _insert_rows(n: int) -> str:
    return _INSERT + ", (?, ?, ?, ?, ?, ?)" * (n - 1)


#: the statement of n rows, made once (SQLite prepares each once: the connection caches it)
_INSERT_ROWS = ("",) + tuple(_insert_rows(n) for n in range(1, _ONE_STATEMENT + 1))
_NONE: Mapping[str, int] = {}
_time_ns, _monotonic_ns = time.time_ns, time.monotonic_ns
_flat = _chain.from_iterable


class Batch(NamedTuple):
    """Staged records taken to be written in one transaction (`Journal.take`)."""
    rows: list[tuple]
    durable: bool
    cursors: Mapping[str, int]


def system_clock() -> tuple[int, int]:
    """(µs since the epoch, monotonic µs)."""
    return time.time_ns() // 1000, time.monotonic_ns() // 1000


def device_data(event: object) -> dict:
    """The data of a "device" record for a typed device event: type, its fields, raw as hex."""
    out: dict = {"type": type(event).__name__}
    for f in dataclasses.fields(event):  # type: ignore[arg-type]
        value = getattr(event, f.name)
        out[f.name] = value.hex() if isinstance(value, (bytes, bytearray)) else value
    return out


class _Mutex:
    """The journal's lock, not reentrant: one token in a queue, taken (`take`: waits while
    another thread holds it) and given back (`give`). The append path calls the two itself:
    a queue's get and put take fewer steps than a Lock's acquire and release, which parse
    their arguments, and that path is where a live table's caches are cold."""

    __slots__ = ("take", "give")

    def __init__(self) -> None:
        tokens: queue.SimpleQueue[bool] = queue.SimpleQueue()
        tokens.put(True)
        self.take, self.give = tokens.get, tokens.put

    def __enter__(self) -> None:
        self.take()

    def __exit__(self, *exc: object) -> None:
        self.give(True)


class Journal:
    """The journal at `path` (":memory:" for tests), created with its schema when new.

    durable=False skips the fsync of durable appends (a scratch journal nobody keeps, a test
    whose subject is not a power cut); None takes `Journal.durable_default`."""

    #: what durable=None means: always True in the product (tests whose subject is not
    #: durability set it False for their own process)
    durable_default = True

    def __init__(self, path: str | os.PathLike, *, clock: Clock | None = None,
                 readonly: bool = False, durable: bool | None = None):
        self.path = os.fspath(path)
        self.readonly = readonly
        self._clock = clock or system_clock
        self._lock = _Mutex()                   # the staged records and the chain's head
        self._write_lock = threading.Lock()     # the connection's writes, one at a time
        self._fsync = self.durable_default if durable is None else durable
        self._sync = "NORMAL"                   # the writer connection's synchronous level
        self._conn: sqlite3.Connection | None = None
        self._scratch: str | None = None        # a private copy's folder (open_readonly)
        self._staged: list[tuple] = []          # rows numbered and chained, not yet written
        self._staged_durable = False
        self._staged_cursors: dict[str, int] = {}
        self._cursors_written: dict[str, int] = {}   # what this connection last wrote
        self.version = SCHEMA_VERSION
        self.codec: Codec = for_version(SCHEMA_VERSION)
        self._writer: writer_lock.WriterLock | None = None
        if not readonly and self.path != ":memory:":
            self._writer = claim(self.path)
        try:
            conn = connect(self.path, readonly)
        except BaseException:
            self._let_go()
            raise
        self._conn = conn
        # the appends' one cursor, kept: conn.execute makes (and registers) a cursor a call
        self._execute = conn.cursor().execute
        try:
            self.version = open_schema(conn, self.path, readonly)
            self.codec = for_version(self.version)
            row = conn.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1").fetchone()
        except sqlite3.DatabaseError as err:
            self._abandon()
            raise self._error("cannot be read", err) from err
        except BaseException:
            self._abandon()
            raise
        # the write path's choices, made once: the system clock read inline (integer µs, what
        # `system_clock` gives and schema 4 on stores), and schema 5's folding of card reads
        self._int_times = clock is None and self.version >= 4
        self._fold_chain = getattr(self.codec, "fold_chain", None)
        self._head: object = row[1] if row else self.codec.genesis
        self._last_seq = int(row[0]) if row else 0
        self._committed = (self._last_seq, self._head)   # (seq, hash) of the newest on disk
        # the files this connection writes, as the folder names them: a write is on disk only
        # while they are still there (`_check_files`)
        self._files: Held | None = None
        self._frames = 0        # the WAL's frames written since the last checkpoint, about
        # once the table has proven the whole chain: `sealer(seq, head)` after each checkpoint
        # and after the close, with the chain proven up to `seq` (controller/journal/seal.py)
        self.sealer: Callable[[int, str, bool], None] | None = None
        if not readonly and self.path != ":memory:":
            try:
                # the checkpoints are the writer's own (`_checkpoint`): the only writes to the
                # journal's file it then did not make are another hand's
                conn.execute("PRAGMA wal_autocheckpoint=0")
                self._files = Held(self.path)
            except OSError as err:
                self._abandon()
                raise self._error("cannot be looked at", err) from err
            except sqlite3.Error as err:
                self._abandon()
                raise self._error("cannot be opened", err) from err

    def _abandon(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._let_go()

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
            for side in SIDE_FILES[:2]:
                if os.path.isfile(f"{path}{side}"):
                    shutil.copyfile(f"{path}{side}", os.path.join(scratch, f"journal.db{side}"))
            journal = cls(os.path.join(scratch, "journal.db"), readonly=True)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        journal.path, journal._scratch = os.fspath(path), scratch
        return journal

    def _error(self, what: str, err: BaseException | str) -> JournalError:
        return error(self.path, what, err)

    # --- state -------------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """Seq of the newest record this connection wrote or found at open (0 when empty)."""
        if self.readonly:
            return self.max_seq()
        return self._last_seq

    @property
    def head_hash(self) -> str:
        """Hash of the newest record in hex (GENESIS when empty)."""
        return self.codec.hex(self._head)

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

    def append_event(self, event: dict, *, durable: bool = False) -> int:
        """Append a domain event dict under its "event" name."""
        kind = event.get("event") if isinstance(event, dict) else None
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"journal: a domain event needs an 'event' name: {event!r:.80}")
        return self.append(kind, event, durable=durable)

    def stage(self, items: Iterable[tuple[str, dict]], *, durable: bool = False,
              cursors: Mapping[str, int] | None = None) -> list[int]:
        """Number and chain (kind, data) records now, and write them with the next `commit`
        (or any other write of this journal), all in one transaction; returns their seqs, one
        an item (schema 5: a card read's input and the card event after it share one).

        For a loop on a virtual clock, where nothing outside waits: many inputs, one commit
        and (durable) one fsync. Until that commit nothing of the batch may be announced; a
        failed commit loses the whole batch, and the journal is as it was before it."""
        if self.readonly:
            raise JournalError(f"journal {self.path}: opened read-only, cannot append")
        lock = self._lock
        lock.take()
        try:
            if self._conn is None:
                self._live()                        # says it is closed
            last = self._last_seq
            where = None
            if items:
                # the records of one call (an input and the events it caused) share its time
                utc: object
                mono: object
                if self._int_times:
                    utc, mono = _time_ns() // 1000, _monotonic_ns() // 1000
                else:
                    utc, mono = self.codec.times(*self._clock())
                if self._fold_chain is not None:
                    # a card read's input and its card event: one record, one seq
                    rows, where = self._fold_chain(
                        self._head, last, utc, mono,
                        items if type(items) is list else list(items))
                else:
                    rows = self.codec.chain(self._head, last, utc, mono, items)
                if rows:
                    self._staged += rows
                    self._last_seq, self._head = rows[-1][0], rows[-1][5]
            if durable:
                self._staged_durable = True
            if cursors and (self._staged_cursors or cursors != self._cursors_written):
                # the same positions as last written (a live table's usual case) add nothing
                self._staged_cursors.update(cursors)
            if where is CARD_ALONE:
                return [last + 1, last + 1]
            if where is not None:
                return [last + 1 + i for i in where]
            return list(range(last + 1, self._last_seq + 1))
        finally:
            lock.give(True)

    @property
    def staged(self) -> int:
        """How many records wait for the next commit."""
        return len(self._staged)

    def commit(self) -> None:
        """Write what was staged in one transaction (synchronous=FULL if any of it is
        durable); nothing to do when nothing was. Cursors go only when their value changed."""
        batch = self.take()
        if batch is not None:
            self.write(batch)

    def take(self) -> Batch | None:
        """What was staged, as the next batch to `write` (None when nothing was); what is
        staged after it is numbered and chained on it, and written after it.

        A live table dealt quickly writes one batch on a thread of its own while its loop
        stages the next: `take` on the loop's thread, `write` on the writer's."""
        lock = self._lock
        lock.take()
        try:
            rows, durable = self._staged, self._staged_durable
            cursors: Mapping[str, int]
            if self._staged_cursors:
                cursors = {name: seq for name, seq in self._staged_cursors.items()
                           if self._cursors_written.get(name) != seq}
                self._staged_cursors = {}
            else:
                cursors = _NONE
            self._staged, self._staged_durable = [], False
            if not rows and not cursors:
                return None
            return Batch(rows, durable, cursors)
        finally:
            lock.give(True)

    def write(self, batch: Batch) -> None:
        """Write a batch `take` gave, in one transaction, batches in the order they were
        taken (one writer at a time). A failure loses it and everything staged after it: the
        journal ends where it ended before it, as if neither had been staged."""
        rows, durable, cursors = batch
        with self._write_lock:
            conn = self._conn or self._live()
            if rows and rows[0][0] != self._committed[0] + 1:
                # a batch taken after one not yet written: the chain would have a hole
                raise self._error("cannot append", f"seq {rows[0][0]} would be written "
                                  f"before seq {self._committed[0] + 1}")
            try:
                if self._sync != ("FULL" if durable and self._fsync else "NORMAL"):
                    self._sync_level("FULL" if durable and self._fsync else "NORMAL")
                n = len(rows)
                if n == 1 and not cursors:
                    # one statement is its own transaction, all or none: a card read's one
                    # record (an input and its events) in one round trip instead of BEGIN,
                    # INSERTs, COMMIT
                    self._execute(_INSERT, rows[0])
                elif n <= _ONE_STATEMENT and not cursors:
                    self._execute(_INSERT_ROWS[n], tuple(_flat(rows)))
                else:
                    self._write(conn, rows, cursors)
            except sqlite3.Error as err:
                # the batch is lost as a whole, and what was chained on it; nothing is sealed
                # after a write that failed (another writer's, a full disk: not the writer's
                # own file any more, or not as it meant it)
                self.sealer = None
                with self._lock:
                    self._last_seq, self._head = self._committed
                    self._staged, self._staged_durable, self._staged_cursors = [], False, {}
                first = rows[0][0] if rows else self._last_seq
                if isinstance(err, sqlite3.IntegrityError):
                    raise self._error(f"seq {first} already taken (a second writer?)",
                                      err) from err
                raise self._error(f"cannot append seq {first}", err) from err
            if self._files is not None:
                # a page a statement's rows, about, and one more for an index or the cursors
                self._written(2 + len(rows) // 16)
            if rows:
                self._committed = (rows[-1][0], rows[-1][5])
            if cursors:
                self._cursors_written.update(cursors)

    def _written(self, frames: int, locked: bool = False) -> None:
        """After a commit of about `frames` pages, under the write lock: the files looked at
        (`_check_files`; `locked` as there), and the WAL checkpointed once enough gathered."""
        self._check_files(locked)
        self._frames += frames
        if self._frames >= CHECKPOINT_FRAMES:
            self._checkpoint()

    def _checkpoint(self) -> None:
        """The WAL's frames into the journal's file (PASSIVE: never waits for a reader), as
        SQLite's automatic checkpoint would after the commit; the file as it leaves it is the
        writer's own (files.py). A checkpoint that fails leaves the frames in the WAL, as
        safe as they were: it is tried again after the next frames."""
        assert self._files is not None
        self._frames = 0
        # (a full disk: the commits still fail or succeed on their own)
        with contextlib.suppress(sqlite3.Error):
            self._live().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        # a file that cannot be looked at: the next commit's look says it, in one line
        with contextlib.suppress(OSError):
            self._files.settle()
            self.seal()

    def seal(self, closed: bool = False) -> None:
        """The journal's file as it is now sealed by `sealer`, with what is committed (the
        commit under way, if any, is not counted: the seal is for what is proven on disk);
        `closed`: after the writer's close. Under the write lock (a checkpoint's own seal
        never overtaken by an older one). OSError as the sealer gives it."""
        if self.sealer is not None and self._committed[0]:
            self.sealer(self._committed[0], self.codec.hex(self._committed[1]), closed)

    def seal_now(self) -> None:
        """`seal`, from outside a write (the table has just proven the whole chain)."""
        with self._write_lock:
            self.seal()

    def _check_files(self, locked: bool = False) -> None:
        """After a commit: the journal's file and its write-ahead log are still the ones this
        connection writes. One deleted or replaced under the table (an old copy put back, the
        WAL removed) leaves SQLite writing to a file nobody will find: what was committed is
        not on disk, and a crash or a power cut takes it (the whole journal, when the WAL held
        it all). JournalError, one line, so that nothing of it is announced and the table stops;
        first, what the connection holds is saved where the next start finds it. `locked`: the
        caller holds the staged records' lock (a snapshot's write)."""
        assert self._files is not None
        gone: str | OSError | None
        try:
            gone = self._files.gone()
        except OSError as err:
            gone = err
        if gone is None:
            return
        self.sealer = None          # the file is not the writer's own: never sealed again
        # as after a write that failed: the journal ends, for this connection, where it ended
        # before (what the commit holds is saved below, and a restart publishes it)
        if not locked:
            self._lock.take()
        try:
            self._last_seq, self._head = self._committed
            self._staged, self._staged_durable, self._staged_cursors = [], False, {}
        finally:
            if not locked:
                self._lock.give(True)
        if isinstance(gone, OSError):
            raise JournalError(f"journal {self.path}: cannot be looked at while the table "
                               f"writes it ({gone.strerror or gone}); its folder must stay "
                               "readable") from gone
        if gone == "journal":
            raise JournalError(f"journal {self.path} was deleted or replaced while the table "
                               f"wrote it: {self._rescue()}")
        if gone == "written":
            raise JournalError(f"journal {self.path} was written over while the table wrote it "
                               f"(a copy put over it in place?): {self._keep_wal()}")
        try:
            # the WAL's frames, read through the connection's own handle on it, into the
            # journal's file, which is still this one
            busy = self._live().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            saved = (f"what the table journaled is saved in {self.path}" if not busy else
                     f"what the table journaled goes into {self.path} when it closes")
        except sqlite3.Error as err:
            saved = f"what the table journaled since the last checkpoint may be lost ({err})"
        raise JournalError(f"journal {self.path}: its write-ahead log {self.path}-wal was "
                           f"deleted or replaced while the table wrote it; {saved}")

    def _keep_wal(self) -> str:
        """A copy of the WAL beside the journal: a journal's file written over holds another
        file's pages, and the records checkpointed into it are gone with them; what the WAL
        holds (the records since the last checkpoint) is kept for examination. In words."""
        target = f"{self.path}-wal.kept-{utc_now().replace(':', '')}"
        try:
            shutil.copyfile(f"{self.path}-wal", target)
            os.chmod(target, FILE_MODE)
        except OSError as err:
            kept = f"its write-ahead log could not be kept ({err.strerror or err})"
        else:
            kept = f"its write-ahead log is kept in {target}"
        return (f"what it held before the last checkpoint may be lost with that file; {kept}; "
                "keep these files for examination and never start the table on them")

    def _rescue(self) -> str:
        """What this connection holds, copied to a file of its own beside the journal (SQLite
        would leave the journal's name to whatever is there now); where, in words."""
        target = f"{self.path}.rescued-{utc_now().replace(':', '')}"
        try:
            fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, FILE_MODE)
            os.close(fd)
            copy = sqlite3.connect(target)
            try:
                self._live().backup(copy)
            finally:
                copy.close()
        except (OSError, sqlite3.Error) as err:
            return (f"what the table journaled since the last checkpoint could not be saved "
                    f"({err}); keep {self.path}-wal")
        return (f"everything it journaled is saved in {target}; put that file in place of "
                f"{self.path} (its -wal and -shm removed) before starting the table again")

    @staticmethod
    def _write(conn: sqlite3.Connection, rows: list[tuple],
               cursors: Mapping[str, int] | None = None, more: tuple = ()) -> None:
        """rows, cursors and `more` (statement, parameters) in one transaction."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            for sql, params in more:
                conn.execute(sql, params)
            n = len(rows)
            if n == 1:
                conn.execute(_INSERT, rows[0])
            elif n:
                # a batch by statements of _ONE_STATEMENT rows: SQLite runs one statement a
                # chunk, where executemany binds, steps and resets one a row
                cur, full = conn.cursor(), n - n % _ONE_STATEMENT
                for i in range(0, full, _ONE_STATEMENT):
                    cur.execute(_INSERT_ROWS[_ONE_STATEMENT],
                                tuple(_flat(rows[i:i + _ONE_STATEMENT])))
                if full < n:
                    cur.execute(_INSERT_ROWS[n - full], tuple(_flat(rows[full:])))
            if cursors:
                conn.executemany(_SET_CURSOR, list(cursors.items()))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # --- cursors and snapshots ---------------------------------------------------------------

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
        return snapshots.take(self, state, upto_seq, cursors)

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
        return reading.chained_cursors(self)

    def hash_at(self, seq: int) -> str:
        """The hash (hex) of record `seq`, JournalError when it is missing."""
        if seq == 0:
            return GENESIS
        if seq == self._last_seq and not self.readonly:
            return self.head_hash
        found = self.record_hash(seq)
        if found is None:
            raise JournalError(f"journal {self.path}: record seq {seq} is missing")
        return found

    # --- reading (controller/journal/reading.py) ---------------------------------------------

    def records(self, after_seq: int = 0, kinds: Iterable[str] | None = None, *,
                stored: bool = False) -> Iterator[Record]:
        """Records with seq > after_seq in seq order, optionally only those of `kinds`; a
        folded card read (schema 5) as its input and its card event, both with its seq, unless
        `stored`: then each record as it is stored and hashed (the floor feed's records)."""
        return reading.records(self, after_seq, kinds, stored=stored)

    def records_backward(self, before_seq: int | None = None) -> Iterator[Record]:
        """Records newest first (those with seq < before_seq when given), folded ones unfolded
        (the card event before its input)."""
        return reading.records_backward(self, before_seq)

    def count(self, after_seq: int = 0, exclude_kinds: Iterable[str] = ()) -> int:
        """How many records have seq > after_seq, those of `exclude_kinds` left out (a folded
        card read counts as its input and its card event)."""
        extra = tuple(exclude_kinds)
        where = "seq > ?" + (f" AND kind NOT IN ({', '.join('?' * len(extra))})" if extra else "")
        row = self._row(f"SELECT count(*) FROM records WHERE {where}", (after_seq, *extra))
        n = int(row[0]) if row else 0
        if self.version >= 5 and "input" in extra and "card" not in extra:
            # the card events folded into the inputs left out
            row = self._row("SELECT count(*) FROM records WHERE seq > ? AND kind = 'input' "
                            "AND json_extract(data, '$.type') = 'card' "
                            f"AND json_type(data, '$.{FOLD}') = 'object'", (after_seq,))
            n += int(row[0]) if row else 0
        return n

    def trusted_snapshot(self, before_seq: int | None = None) -> Snapshot | None:
        """The newest snapshot bound into the chain (its record before `before_seq` when given:
        the seq of the last anchor, whose signature must cover it), checked against its hash
        and against its record; None when there is none (a restart then replays everything).

        A snapshot that does not match its hash or its record raises JournalError: it was
        changed after it was taken, and the table must not be rebuilt from it.
        """
        return reading.trusted_snapshot(self, before_seq)

    def latest_snapshot(self) -> tuple[int, dict] | None:
        """(upto_seq, state) of the newest trusted snapshot (see trusted_snapshot), or None."""
        snap = self.trusted_snapshot()
        return None if snap is None else (snap.upto_seq, snap.state)

    def verify(self, after_seq: int = 0, *, upto_seq: int | None = None, snapshots: bool = True,
               progress: Callable[[int], None] | None = None) -> VerifyResult:
        """Check the chain (from after_seq, trusting that record's hash, up to upto_seq or the
        end) and, with snapshots=True, every snapshot: its hash, and its record in the chain.
        `progress` hears how many records have been checked, a page at a time."""
        return reading.verify(self, after_seq, upto_seq=upto_seq, snapshots=snapshots,
                              progress=progress)

    def check_snapshots(self, since: int = 0) -> VerifyResult:
        """Every snapshot (bound after seq `since`): its hash, and (schema 3 on) the record
        binding it into the chain. Those from before schema 3 are counted, never used."""
        return reading.check_snapshots(self, since)

    def last_record(self, kind: str) -> Record | None:
        """The newest record of `kind` (anchors are found this way: near the end)."""
        return reading.last_record(self, kind)

    def record_hash(self, seq: int) -> str | None:
        """The stored hash (hex) of record `seq` (GENESIS for 0), None when there is none."""
        if seq == 0:
            return GENESIS
        row = self._row("SELECT hash FROM records WHERE seq = ?", (seq,))
        return self.codec.hex(row[0]) if row is not None else None

    def max_seq(self) -> int:
        return int(self._rows("SELECT max(seq) FROM records")[0][0] or 0)

    # --- closing -----------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (the last writer's close checkpoints and syncs the WAL), and
        let go of the writer's lock."""
        with self._write_lock, self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None
                    if self._scratch is not None:
                        shutil.rmtree(self._scratch, ignore_errors=True)
                        self._scratch = None
            if self._files is not None:
                self._files.close()         # after SQLite's own handles: nothing it locks
                self._files = None
                # the file as the close's checkpoint left it, with no write-ahead log
                with contextlib.suppress(OSError):
                    self.seal(closed=True)
            self._let_go()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "read-only" if self.readonly else "writer"
        return f"<Journal {self.path} {mode} schema {self.version} last_seq={self._last_seq}>"
