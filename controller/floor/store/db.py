"""The database server as the floor store reaches it: its URL checked once (one line on a
mistake), a psycopg 3 connection, every way the server refuses said in one plain line without
the password, and the capped backoff the store waits between tries.

The password belongs in libpq's own places (`~/.pgpass`, `PGPASSFILE`, `PGPASSWORD`) rather
than in a URL that `ps` shows; a URL's password is accepted and never printed.
"""
from __future__ import annotations

import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from controller.errors import InputError

SCHEMES = ("postgresql", "postgres")
INSTALL = "pip install 'tablectl[floor]' (psycopg 3)"


def psycopg() -> Any:
    """The psycopg module, or one line saying what to install."""
    try:
        import psycopg as module
    except ImportError:
        raise InputError(f"the floor store needs psycopg: {INSTALL}") from None
    return module


@dataclass(frozen=True)
class Database:
    url: str
    where: str            # postgresql://user@host:port/db, never the password

    def connect(self, *, timeout_s: float = 5.0, autocommit: bool = False,
                statement_timeout_s: float | None = None) -> Any:
        """A connection; with `statement_timeout_s`, the server cancels a statement that runs
        longer (a lock that is never granted, say), added to the URL's own `options`."""
        pg = psycopg()
        more: dict[str, Any] = {}
        if statement_timeout_s is not None:
            given = pg.conninfo.conninfo_to_dict(self.url).get("options") or ""
            more["options"] = (f"{given} -c statement_timeout="
                               f"{max(1, int(statement_timeout_s * 1000))}").strip()
        return pg.connect(self.url, connect_timeout=max(1, int(timeout_s)),
                          autocommit=autocommit, application_name="tablectl floor-store",
                          **more)


def database(url: str | None, option: str = "--db") -> Database:
    """The database of `url` (postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?…]); one line when
    it is not one."""
    if not url:
        raise InputError(f"give {option} postgresql://USER@HOST[:PORT]/DATABASE (or set "
                         f"TABLECTL_FLOOR_DB)")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise InputError(f"{option} {_hide(url)!r}: write postgresql://USER@HOST[:PORT]/DATABASE")
    try:
        port = parts.port
    except ValueError:
        raise InputError(f"{option} {_hide(url)!r}: the port is not a number from 1 to "
                         f"65535") from None
    name = parts.path.lstrip("/")
    if not name:
        raise InputError(f"{option} {_hide(url)!r}: name the database after the host "
                         f"(…/DATABASE)")
    host = parts.hostname or "localhost"
    user = f"{urllib.parse.unquote(parts.username)}@" if parts.username else ""
    where = f"postgresql://{user}{host}{f':{port}' if port else ''}/{name}"
    return Database(url, where)


def _hide(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


@dataclass(frozen=True)
class Refusal:
    """Why the database did not take what the store wrote, in one line."""
    text: str
    kind: str             # down, credentials, read_only, full, privileges, schema, other


def refusal(db: Database, err: BaseException) -> Refusal:
    """One line for a database error (a connection's or a statement's)."""
    state = getattr(err, "sqlstate", None) or ""
    first = (str(err).strip().splitlines() or [type(err).__name__])[0]
    text = first.lower()
    if state in ("28P01", "28000") or "password authentication failed" in text \
            or "no password supplied" in text or "authentication failed" in text:
        return Refusal(f"the database at {db.where} refused the store's credentials "
                       f"({_after_fatal(first)}); check the user and its password "
                       f"(~/.pgpass or PGPASSFILE)", "credentials")
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return Refusal(f"the database at {db.where} does not exist; create it (createdb) or "
                       f"give another --db", "credentials")
    if state == "25006" or "read-only transaction" in text:
        return Refusal(f"the database at {db.where} is read-only (a standby, or "
                       f"default_transaction_read_only): nothing is acknowledged until it "
                       f"takes writes again", "read_only")
    if state.startswith("53") or "no space left" in text or "could not extend" in text:
        return Refusal(f"the database at {db.where} is full ({_after_fatal(first)}): nothing "
                       f"is acknowledged until it has room", "full")
    if state == "42501" or "permission denied" in text:
        return Refusal(f"the database at {db.where} does not let the store write "
                       f"({_after_fatal(first)}); GRANT it INSERT and SELECT on the floor "
                       f"schema", "privileges")
    if state == "57014" and "statement timeout" in text:
        return Refusal(f"the database at {db.where} did not finish a write in time "
                       f"({_after_fatal(first)}): a lock held elsewhere, or a server "
                       f"overloaded", "down")
    if "connection refused" in text:
        return Refusal(f"nothing listens at {db.where} (connection refused)", "down")
    if "timeout" in text or "timed out" in text:
        return Refusal(f"no answer from {db.where} (timed out)", "down")
    if state.startswith("57") or state.startswith("08") or "server closed the connection" in \
            text or "terminating connection" in text or "the connection is lost" in text \
            or "consuming input failed" in text or "connection is closed" in text \
            or "server conn crashed" in text:
        return Refusal(f"the connection to the database at {db.where} was lost "
                       f"({_after_fatal(first)})", "down")
    if "could not translate host name" in text or "name or service not known" in text:
        return Refusal(f"the database host of {db.where} is not known (DNS)", "down")
    return Refusal(f"the database at {db.where} refused: {_after_fatal(first)}", "other")


def _after_fatal(line: str) -> str:
    """The server's own words of a libpq error line, without its preamble."""
    for marker in ("FATAL:  ", "ERROR:  ", "failed: "):
        if marker in line:
            line = line.rsplit(marker, 1)[1]
    return line.strip()[:200]


def unanswered(db: Database, timeout_s: float) -> Refusal:
    """The store itself gave up on a database that did not answer at all."""
    return Refusal(f"the database at {db.where} did not answer for {timeout_s:g} s (the "
                   f"server frozen, or the link to it lost); the connection was dropped",
                   "down")


class Backoff:
    """Waits that double from `first_s` up to `max_s`; `reset()` after a success."""

    def __init__(self, first_s: float = 0.5, max_s: float = 30.0,
                 sleep: Any = time.sleep):
        self.first_s, self.max_s, self._sleep = first_s, max(first_s, max_s), sleep
        self.next_s = first_s

    def wait(self, stop: Any = None) -> float:
        """Wait the next delay (cut short when `stop`, an Event, is set); the seconds waited."""
        delay = self.next_s
        self.next_s = min(self.next_s * 2, self.max_s)
        if stop is not None:
            stop.wait(delay)
        else:
            self._sleep(delay)
        return delay

    def reset(self) -> None:
        self.next_s = self.first_s
