"""Copies of the journal that stay checkable: an online backup, and archives of closed gaming
days that recall and verify read together with the journal.

**Backup.** SQLite's online backup API copies the journal as of one read transaction: a table
writing meanwhile is neither disturbed nor half-copied (WAL readers and the writer do not block
each other). The copy is made under a temporary name, checked (hash chain and snapshots), and
only then given its name: a backup file that exists is one that verified.

**Archive.** Gaming day D runs from D at `day_start` (local time) to the same time on D + 1.
`archive(before=D)` moves the records of the gaming days before D out of the journal into
`archive/<journal name>.<first day>_to_<last day>.db` beside it, a journal file of its own:

- the cut falls before the first input journaled at or after D's start, so a day's inputs
  and the events they caused stay together;
- the journal keeps the last archived record (seq N): it is also the archive's last record,
  so the chain runs on from one file to the next and each link is checked by hash;
- nothing is moved that a restart or a publisher still needs: the cut must lie before the
  journal's latest snapshot, and every publisher (the floor feed) must have delivered past it;
- the archive is written and verified before a single record leaves the journal, and the
  journal's old records are then deleted in short transactions, so a table writing at the
  same time waits milliseconds at most.

`open_with_archives(path)` reads the archives and the journal as one journal (recall, audit),
and `check_archives(path)` verifies every archive and every link between them.
"""
from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import urllib.parse
from dataclasses import dataclass, field
from datetime import date, datetime, time as dtime, timedelta, timezone
from pathlib import Path
from typing import Iterable, Iterator

from controller.journal.chain import VerifyResult
from controller.journal.codec import V4, for_version
from controller.journal.store import Journal, JournalError, Record
from controller.settings.paths import flush

#: records deleted from the live journal per transaction
DELETE_BATCH = 2000
#: archives and backups, like the journal: the service writes, its group may read
FILE_MODE = 0o640
ARCHIVE_DIR = "archive"
_NAME = re.compile(r"\.(\d{4}-\d{2}-\d{2})_to_(\d{4}-\d{2}-\d{2})\.db$")


class ArchiveError(JournalError):
    """An archive or a backup that cannot be made now: one line saying why and what to do."""


def _ro_uri(path: str) -> str:
    return "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"


def start_of(journal: Journal) -> int:
    """The seq to verify a journal from: 0, or for one whose older records were archived its
    first record (the archive's last, whose hash the archive vouches for)."""
    rows = journal._rows("SELECT min(seq) FROM records")
    first = rows[0][0] if rows and rows[0][0] is not None else 0
    return first if first > 1 else 0


def verify(journal: Journal) -> VerifyResult:
    return journal.verify(after_seq=start_of(journal))


def _copy(src_path: str, dest_path: str) -> None:
    """The journal as of one read transaction, to a new single-file database."""
    src = sqlite3.connect(_ro_uri(src_path), uri=True, timeout=5.0)
    try:
        dst = sqlite3.connect(dest_path)
        try:
            # all pages in one step: one read transaction, hence one consistent state
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")    # one self-contained file
        finally:
            dst.close()
    finally:
        src.close()


def _seal(tmp: str, dest: str) -> None:
    """Mode 0640, on disk, then under its name."""
    os.chmod(tmp, FILE_MODE)
    flush(tmp)
    os.replace(tmp, dest)
    flush(os.path.dirname(os.path.abspath(dest)))


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class Copied:
    path: str
    bytes: int
    first_seq: int
    last_seq: int
    snapshots: int
    sha256: str
    result: VerifyResult

    def line(self) -> str:
        return (f"{self.path}: seq {self.first_seq}..{self.last_seq}, {self.bytes} bytes, "
                f"SHA-256 {self.sha256}; verified: {self.result}")


def _check_copy(path: str) -> Copied:
    with Journal.open_readonly(path) as j:
        result = verify(j)
        rows = j._rows("SELECT min(seq), max(seq), (SELECT count(*) FROM snapshots) "
                       "FROM records")
    first, last, snaps = rows[0]
    return Copied(path, os.path.getsize(path), first or 0, last or 0, snaps, _sha256(path),
                  result)


def backup(journal_path: str, dest: str) -> Copied:
    """A verified copy of the journal (which a table may be writing) at `dest` (a new file,
    or a folder: then `<journal name>.<UTC time>.db` in it)."""
    if not os.path.isfile(journal_path):
        raise ArchiveError(f"journal {journal_path}: no such file")
    if os.path.isdir(dest):
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        dest = os.path.join(dest, f"{Path(journal_path).stem}.{stamp}.db")
    if os.path.exists(dest):
        raise ArchiveError(f"{dest}: already exists; give a new file name (a backup never "
                           f"overwrites one)")
    tmp = f"{dest}.part"
    try:
        _copy(journal_path, tmp)
        copied = _check_copy(tmp)
        if not copied.result.ok:
            raise ArchiveError(f"the copy of {journal_path} does not verify ({copied.result}); "
                               f"run tablectl verify-journal --journal {journal_path}")
        _seal(tmp, dest)
    except sqlite3.Error as err:
        raise ArchiveError(f"journal {journal_path}: cannot be copied to {dest}: {err}") from err
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    copied.path = dest
    return copied


# ---------------------------------------------------------------------------------------------
# archives of closed gaming days

def day_bounds(before: date, day_start: dtime) -> str:
    """The UTC time (as the journal writes it) when gaming day `before` began, local time."""
    local = datetime.combine(before, day_start).astimezone()
    return local.astimezone(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"


def _gaming_day(utc: str, day_start: dtime) -> date:
    t = datetime.fromisoformat(utc.replace("Z", "+00:00")).astimezone()
    start = datetime.combine(t.date(), day_start).astimezone()
    return t.date() if t >= start else t.date() - timedelta(days=1)


def archive_dir(journal_path: str) -> Path:
    return Path(journal_path).resolve().parent / ARCHIVE_DIR


@dataclass
class Archived:
    copied: Copied
    cut_seq: int
    deleted: int
    first_day: date
    last_day: date


def archive(journal_path: str, before: date, *, day_start: dtime = dtime(6, 0),
            dest_dir: str | None = None) -> Archived:
    """Move the gaming days before `before` out of the journal into a verified archive."""
    if not os.path.isfile(journal_path):
        raise ArchiveError(f"journal {journal_path}: no such file")
    boundary = day_bounds(before, day_start)
    src = sqlite3.connect(_ro_uri(journal_path), uri=True, timeout=5.0)
    try:
        codec = for_version(src.execute("SELECT version FROM schema_version").fetchone()[0])
        first, = src.execute("SELECT min(seq) FROM records").fetchone()
        x, = src.execute("SELECT min(seq) FROM records WHERE kind = 'input' AND utc >= ?",
                         (codec.utc_param(boundary),)).fetchone()
        # a snapshot a restart can use (bound into the chain), and the publishers' positions
        # as the chain has them (the working copy may be ahead)
        snap, = src.execute("SELECT max(upto_seq) FROM snapshots "
                            "WHERE record_seq IS NOT NULL").fetchone()
        cursor, = src.execute("SELECT min(seq) FROM cursors").fetchone()
        # the first record of its own: the one before it, if any, is the previous archive's
        first_utc = src.execute("SELECT utc FROM records WHERE seq = ?",
                                (first + 1 if first and first > 1 else first,)).fetchone()
    except sqlite3.Error as err:
        raise ArchiveError(f"journal {journal_path}: cannot be read: {err}") from err
    finally:
        src.close()
    with Journal.open_readonly(journal_path) as j:
        chained = list(j.chained_cursors().values())
    if chained:
        cursor = min([cursor, *chained] if cursor is not None else chained)
    if first is None:
        raise ArchiveError(f"journal {journal_path}: empty, nothing to archive")
    if x is None:
        raise ArchiveError(f"nothing was journaled since gaming day {before} began ({boundary} "
                           f"UTC), so the days before it cannot be told closed; archive once "
                           f"the table has written on {before}")
    cut = x - 1
    if cut <= first:
        raise ArchiveError(f"nothing to archive: the journal begins at seq {first}, on or after "
                           f"gaming day {before}")
    if snap is None or snap <= cut:
        raise ArchiveError(f"the journal's latest snapshot (seq {snap}) lies before the cut "
                           f"(seq {cut}); a restart would need what is archived: archive after "
                           f"the table takes its next snapshot (at every shoe's end)")
    if cursor is not None and cursor < cut:
        raise ArchiveError(f"a publisher (the floor feed) has delivered only up to seq {cursor}"
                           f" of the {cut} to archive: archive once it has caught up")
    last_utc_row = None
    folder = Path(dest_dir) if dest_dir else archive_dir(journal_path)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = str(folder / f".{Path(journal_path).stem}.archive.part")
    try:
        _copy(journal_path, tmp)
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("DELETE FROM records WHERE seq > ?", (cut,))
            # a snapshot stays with its record (the one after the records it covers)
            conn.execute("DELETE FROM snapshots WHERE upto_seq > ? OR record_seq > ?",
                         (cut, cut))
            conn.execute("DELETE FROM cursors")
            conn.commit()
            last_utc_row = conn.execute("SELECT utc FROM records WHERE seq = ?",
                                        (cut,)).fetchone()
            conn.execute("VACUUM")
        finally:
            conn.close()
        first_day = _gaming_day(codec.iso(first_utc[0]), day_start)
        last_day = _gaming_day(codec.iso(last_utc_row[0]), day_start)
        dest = str(folder / f"{Path(journal_path).stem}.{first_day}_to_{last_day}.db")
        if os.path.exists(dest):
            raise ArchiveError(f"{dest}: already exists; move it away first")
        copied = _check_copy(tmp)
        if not copied.result.ok:
            raise ArchiveError(f"the archive of {journal_path} does not verify "
                               f"({copied.result}); nothing was removed from the journal")
        prev = _parts(journal_path, folder)
        if prev and prev[-1].last_seq != copied.first_seq and first > 1:
            raise ArchiveError(f"the archives in {folder} end at seq {prev[-1].last_seq}, the "
                               f"journal begins at seq {first}: an archive is missing")
        _seal(tmp, dest)
    except sqlite3.Error as err:
        raise ArchiveError(f"journal {journal_path}: cannot be archived: {err}") from err
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    copied.path = dest
    deleted = _delete_before(journal_path, cut)
    return Archived(copied, cut, deleted, first_day, last_day)


def _delete_before(journal_path: str, cut: int) -> int:
    """Delete records before `cut` (it stays: the link to the archive) and the snapshots the
    archive took, a batch per short transaction (a table may be writing meanwhile)."""
    conn = sqlite3.connect(journal_path, timeout=5.0, isolation_level=None)
    deleted = 0
    try:
        # the checkpoints are the table's own (store.py): a write to the journal's file it did
        # not make stops it as a copy put over the journal would. Closed with no table open,
        # this connection checkpoints at its close as the last one
        conn.execute("PRAGMA wal_autocheckpoint=0")
        while True:
            conn.execute("BEGIN IMMEDIATE")
            n = conn.execute("DELETE FROM records WHERE seq IN (SELECT seq FROM records "
                             "WHERE seq < ? ORDER BY seq LIMIT ?)", (cut, DELETE_BATCH)).rowcount
            if n < DELETE_BATCH:
                conn.execute("DELETE FROM snapshots WHERE upto_seq <= ?", (cut,))
            conn.execute("COMMIT")
            deleted += n
            if n < DELETE_BATCH:
                return deleted
    finally:
        conn.close()


# ---------------------------------------------------------------------------------------------
# reading and checking across the archives

@dataclass
class Part:
    path: str
    first_seq: int
    last_seq: int
    first_hash: str
    last_hash: str


def _part(path: str) -> Part | None:
    try:
        conn = sqlite3.connect(_ro_uri(path), uri=True, timeout=5.0)
    except sqlite3.Error:
        return None
    try:
        lo = conn.execute("SELECT seq, hash FROM records ORDER BY seq LIMIT 1").fetchone()
        hi = conn.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1").fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    if lo is None:
        return None
    return Part(path, lo[0], hi[0], V4.hex(lo[1]), V4.hex(hi[1]))


def _parts(journal_path: str, folder: Path | None = None) -> list[Part]:
    """The journal's archives, oldest first."""
    folder = folder or archive_dir(journal_path)
    stem = Path(journal_path).stem
    parts = []
    if folder.is_dir():
        for p in sorted(folder.glob(f"{stem}.*_to_*.db")):
            if _NAME.search(p.name):
                part = _part(str(p))
                if part is not None:
                    parts.append(part)
    return sorted(parts, key=lambda p: p.first_seq)


@dataclass
class ArchivesResult:
    parts: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        if self.problems:
            return "archives: " + "; ".join(self.problems)
        return f"{self.parts} archive(s) verified and linked" if self.parts else "no archives"


def check_archives(journal_path: str) -> ArchivesResult:
    """Every archive verifies, each begins where the one before it ended (same record), and
    the journal begins where the last one ended."""
    live = _part(journal_path)
    parts = _parts(journal_path)
    out = ArchivesResult(len(parts))
    prev: Part | None = None
    for part in parts:
        with Journal.open_readonly(part.path) as j:
            result = verify(j)
        if not result.ok:
            out.problems.append(f"{part.path}: {result}")
        if prev is None and part.first_seq != 1:
            out.problems.append(f"{part.path} begins at seq {part.first_seq}: the archive of "
                                f"seq 1..{part.first_seq} is missing")
        if prev is not None and (prev.last_seq, prev.last_hash) != (part.first_seq,
                                                                     part.first_hash):
            out.problems.append(f"{part.path} does not follow {prev.path} (seq "
                                f"{prev.last_seq} there, {part.first_seq} here)")
        prev = part
    if live is not None and live.first_seq > 1:
        if prev is None:
            out.problems.append(f"the journal begins at seq {live.first_seq} and no archive of "
                                f"the records before it is in {archive_dir(journal_path)}")
        elif (prev.last_seq, prev.last_hash) != (live.first_seq, live.first_hash):
            out.problems.append(f"the journal (from seq {live.first_seq}) does not follow "
                                f"{prev.path} (to seq {prev.last_seq})")
    return out


class JournalSet:
    """The archives and the journal read as one journal: what recall and audit need
    (`records`, `records_backward`), each record once, in seq order."""

    def __init__(self, journals: list[Journal]):
        self.parts = journals
        self.path = journals[-1].path

    @property
    def last_seq(self) -> int:
        return self.parts[-1].last_seq

    def records(self, after_seq: int = 0, kinds: Iterable[str] | None = None
                ) -> Iterator[Record]:
        kinds = None if kinds is None else tuple(kinds)
        last = after_seq
        for j in self.parts:
            for rec in j.records(after_seq=last, kinds=kinds):
                last = rec.seq
                yield rec

    def records_backward(self, before_seq: int | None = None) -> Iterator[Record]:
        below = before_seq
        for j in reversed(self.parts):
            for rec in j.records_backward(below):
                below = rec.seq
                yield rec

    def close(self) -> None:
        for j in self.parts:
            j.close()

    def __enter__(self) -> "JournalSet":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_with_archives(journal_path: str) -> JournalSet:
    """The journal with its archives (read-only): a journal never archived is read alone."""
    opened: list[Journal] = []
    try:
        for part in _parts(journal_path):
            opened.append(Journal.open_readonly(part.path))
        opened.append(Journal.open_readonly(journal_path))
    except BaseException:
        for j in opened:
            j.close()
        raise
    return JournalSet(opened)
