"""Accounts of the people who operate the table: a SQLite user store, scrypt secrets, lockout.

Rules (see docs/security.md):
- There is no default account and no built-in password. The first account is a manager created
  on an empty store (`bootstrap`, logged); every later change is made by a named manager.
- Secrets (PINs or passwords, at least 6 characters) are stored only as scrypt hashes with a
  random salt and the scrypt parameters used, so stronger defaults can be adopted later: a
  successful sign-in re-hashes a secret stored with weaker parameters than the store's.
- Five consecutive failures lock an account for five minutes. A manager's `enable` clears it.
- Every attempt, success or failure, is logged (structlog) and returned as an AuthResult with a
  JSON-ready `record()` so the application journals it.

Refusals say what to do (wrong PIN with the attempts left, disabled, locked with the minutes
left), but a name without an account is answered exactly as a wrong PIN is: the same words,
after as long a check (a decoy scrypt), and locked after as many failures (a count kept in
memory), so no answer tells which names have accounts. The log and the journal keep the
difference (`unknown_user`) for those who investigate. No message, log line or record ever
carries a secret; a name that is not a valid user name (a PIN typed into the wrong field, say)
is neither echoed nor logged, only shown as "?".
"""
from __future__ import annotations

import hmac
import math
import os
import secrets
import sqlite3
import threading
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from controller.access.credentials import (DEFAULT_KDF, MAX_SECRET_CHARS, MIN_SECRET_CHARS,
                                           NAME_HELP, NAME_RE, AccountError, ScryptParams,
                                           check_name, check_role, check_secret, derive)
from controller.access.records import AuthResult, UserInfo, iso_utc
from controller.access.roles import ROLES
from controller.access.signin import Turns
from controller.logsetup import get_logger
from controller.logsetup import secret as keep_out_of_logs
from controller.settings.paths import NotAFile, refuse_special, tighten

# what a name and a secret must be, and how a secret is hashed, are credentials.py's; they are
# importable from here as the account store's own names (derive: the store hashes through it)
__all__ = ["AccountStore", "AuthResult", "UserInfo", "users_action", "AccountError",
           "ScryptParams", "DEFAULT_KDF", "NAME_RE", "NAME_HELP", "MIN_SECRET_CHARS",
           "MAX_SECRET_CHARS", "check_name", "check_role", "check_secret", "derive"]

log = get_logger("accounts")

SCHEMA_VERSION = 1
MAX_FAILURES = 5
LOCKOUT_S = 300.0
#: scrypt computations at once (32 MiB each with the default parameters); more wait up to
#: HASH_WAIT_S for a slot, then are answered busy
MAX_HASHING = 2
HASH_WAIT_S = 2.0
#: how long an attempt waits for the account's earlier attempts to be decided
TURN_WAIT_S = 10.0
#: names without an account whose failures are counted (in memory, the newest kept)
GHOSTS = 4096
STORE_MODE = 0o600

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY NOT NULL,
    role TEXT NOT NULL CHECK (role IN ({", ".join(repr(r) for r in ROLES)})),
    secret_hash BLOB NOT NULL,
    salt BLOB NOT NULL,
    kdf TEXT NOT NULL,
    kdf_n INTEGER NOT NULL,
    kdf_r INTEGER NOT NULL,
    kdf_p INTEGER NOT NULL,
    kdf_dklen INTEGER NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    locked_until REAL,
    created TEXT NOT NULL,
    changed TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS account_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    name TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
"""


class AccountStore:
    """The user store in one SQLite file. Safe to share between threads and processes: each
    operation opens its own connection, and counters change inside IMMEDIATE transactions.

    Sign-ins to one account take turns in arrival order (`signin.Turns`), and each counts as a
    failure, and locks the account at the last allowed failure, before its PIN is hashed (one
    IMMEDIATE transaction); the right PIN then clears the count. So no two attempts, in this
    process or another, are ever checked against the same count. At most `max_hashing` scrypt
    computations run at once."""

    def __init__(self, path: str | os.PathLike[str], *, kdf: ScryptParams = DEFAULT_KDF,
                 clock: Callable[[], float] = time.time, max_failures: int = MAX_FAILURES,
                 lockout_s: float = LOCKOUT_S, max_hashing: int = MAX_HASHING,
                 hash_wait_s: float = HASH_WAIT_S, turn_wait_s: float = TURN_WAIT_S):
        self.path = Path(path)
        self.kdf = kdf
        self.clock = clock
        self.max_failures = max_failures
        self.lockout_s = lockout_s
        self.hash_wait_s, self.turn_wait_s = hash_wait_s, turn_wait_s
        self.turns = Turns()
        self._hashing = threading.BoundedSemaphore(max_hashing)
        # names without an account: failures and lock, as an account would keep them
        self._ghosts: dict[str, tuple[int, float | None]] = {}
        self._ghosts_lock = threading.Lock()
        self._decoy_salt = secrets.token_bytes(16)
        self._create()

    # -- storage -------------------------------------------------------------------------------

    def _create(self) -> None:
        try:
            # a directory, a device or a FIFO given as the store is refused before anything
            # is created or chmodded (controller/settings/paths.py)
            for side in ("", "-journal", "-wal", "-shm"):
                refuse_special(f"{self.path}{side}", "user store")
        except NotAFile as err:
            raise AccountError(str(err)) from None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                # owner-only from the first byte: the file holds the secret hashes
                os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW,
                                 STORE_MODE))
            elif not tighten(self.path, STORE_MODE):     # a copy made with a looser umask
                log.warning("user store readable by others; chmod 600 it",
                            path=str(self.path))
        except OSError as err:
            raise AccountError(f"{self.path}: cannot create the user store ({err.strerror}); "
                               "check the directory and its permissions") from err
        try:
            with self._tx() as db:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise AccountError(f"{self.path}: user store schema {version} is newer than "
                                       f"this program's ({SCHEMA_VERSION}); upgrade tablectl")
                db.executescript("BEGIN IMMEDIATE;" + _SCHEMA +
                                 f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
        except sqlite3.DatabaseError as err:
            raise AccountError(f"{self.path}: not a usable user store ({err}); "
                               "give the path of a tablectl users database") from err

    @contextmanager
    def _tx(self, immediate: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode; with immediate=True, one write transaction."""
        with closing(sqlite3.connect(self.path, timeout=10, isolation_level=None)) as db:
            db.row_factory = sqlite3.Row
            if not immediate:
                yield db
                return
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def _nowiso_utc(self) -> str:
        return iso_utc(self.clock()) or ""

    def _row(self, db: sqlite3.Connection, name: str) -> sqlite3.Row | None:
        return db.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()

    def _existing(self, db: sqlite3.Connection, name: str) -> sqlite3.Row:
        row = self._row(db, name)
        if row is None:
            raise AccountError(f"no user {name!r}; see `tablectl users list`")
        return row

    def _hash_columns(self, secret: str) -> dict[str, Any]:
        salt = secrets.token_bytes(16)
        return {"secret_hash": derive(secret, salt, self.kdf), "salt": salt, "kdf": "scrypt",
                "kdf_n": self.kdf.n, "kdf_r": self.kdf.r, "kdf_p": self.kdf.p,
                "kdf_dklen": self.kdf.dklen}

    def _log_change(self, db: sqlite3.Connection, actor: str, action: str, name: str,
                    detail: str = "") -> None:
        db.execute("INSERT INTO account_log (at, actor, action, name, detail) "
                   "VALUES (?, ?, ?, ?, ?)", (self._nowiso_utc(), actor, action, name, detail))
        log.info("account changed", actor=actor, action=action, user=name, detail=detail)

    def _require_manager(self, db: sqlite3.Connection, by: str) -> None:
        row = self._row(db, by)
        if row is None or row["role"] != "manager" or row["disabled"]:
            raise AccountError(f"{by!r} is not an enabled manager; account changes need a "
                               "manager")

    def _insert(self, db: sqlite3.Connection, name: str, role: str, secret: str) -> None:
        now = self._nowiso_utc()
        cols = self._hash_columns(secret) | {"name": name, "role": role, "created": now,
                                             "changed": now}
        db.execute(f"INSERT INTO users ({', '.join(cols)}) VALUES "
                   f"({', '.join('?' for _ in cols)})", tuple(cols.values()))

    # -- administration ------------------------------------------------------------------------

    def is_empty(self) -> bool:
        with self._tx() as db:
            return db.execute("SELECT COUNT(*) FROM users").fetchone()[0] == 0

    def bootstrap(self, name: str, secret: str) -> None:
        """Create the first account, a manager, on an empty store."""
        check_name(name)
        secret = check_secret(secret, name)
        with self._tx(immediate=True) as db:
            if db.execute("SELECT COUNT(*) FROM users").fetchone()[0]:
                raise AccountError("the user store already has accounts; add users as a "
                                   "manager (--as MANAGER)")
            self._insert(db, name, "manager", secret)
            self._log_change(db, name, "bootstrap", name, "role=manager")
        log.info("first account made", user=name, path=str(self.path))

    def add(self, name: str, role: str, secret: str, *, by: str) -> None:
        check_name(name)
        check_role(role)
        secret = check_secret(secret, name)
        with self._tx(immediate=True) as db:
            self._require_manager(db, by)
            if self._row(db, name) is not None:
                raise AccountError(f"user {name!r} already exists; pick another name "
                                   "(each account belongs to one person)")
            self._insert(db, name, role, secret)
            self._log_change(db, by, "add", name, f"role={role}")

    def disable(self, name: str, *, by: str) -> None:
        with self._tx(immediate=True) as db:
            self._require_manager(db, by)
            row = self._existing(db, name)
            if row["role"] == "manager" and not row["disabled"]:
                others = db.execute("SELECT COUNT(*) FROM users WHERE role = 'manager' AND "
                                    "disabled = 0 AND name != ?", (name,)).fetchone()[0]
                if not others:
                    raise AccountError(f"{name!r} is the last enabled manager; add or enable "
                                       "another manager first")
            db.execute("UPDATE users SET disabled = 1, changed = ? WHERE name = ?",
                       (self._nowiso_utc(), name))
            self._log_change(db, by, "disable", name)

    def enable(self, name: str, *, by: str) -> None:
        """Enable an account and clear its failures and lockout."""
        with self._tx(immediate=True) as db:
            self._require_manager(db, by)
            self._existing(db, name)
            db.execute("UPDATE users SET disabled = 0, failures = 0, locked_until = NULL, "
                       "changed = ? WHERE name = ?", (self._nowiso_utc(), name))
            self._log_change(db, by, "enable", name)

    def set_secret(self, name: str, secret: str, *, by: str) -> None:
        """Change a secret: by the user themself (after signing in) or by a manager."""
        secret = check_secret(secret, name)
        with self._tx(immediate=True) as db:
            if by != name:
                self._require_manager(db, by)
            self._existing(db, name)
            cols = self._hash_columns(secret) | {"failures": 0, "locked_until": None,
                                                 "changed": self._nowiso_utc()}
            db.execute(f"UPDATE users SET {', '.join(f'{c} = ?' for c in cols)} "
                       "WHERE name = ?", (*cols.values(), name))
            self._log_change(db, by, "passwd", name)

    def users(self) -> list[UserInfo]:
        with self._tx() as db:
            rows = db.execute("SELECT name, role, disabled, failures, locked_until, created, "
                              "changed FROM users ORDER BY name").fetchall()
        return [UserInfo(r["name"], r["role"], bool(r["disabled"]), r["failures"],
                         r["locked_until"], r["created"], r["changed"]) for r in rows]

    def is_disabled(self, name: str) -> bool:
        """True for a disabled or unknown account (a view session ends with its account)."""
        with self._tx() as db:
            row = self._row(db, name)
        return row is None or bool(row["disabled"])

    def changes(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest account changes (grants, revocations, secret changes), newest last."""
        with self._tx() as db:
            rows = db.execute("SELECT at, actor, action, name, detail FROM account_log "
                              "ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [dict(r) for r in reversed(rows)]

    # -- sign-in -------------------------------------------------------------------------------

    def authenticate(self, name: str, secret: str, *, context: str = "") -> AuthResult:
        """Check one sign-in attempt; count failures, lock, log, and return the outcome."""
        keep_out_of_logs(secret)
        now = self.clock()
        if not isinstance(name, str) or not NAME_RE.match(name):
            # never echo or journal it: a PIN typed into the name field would end up in the log
            result = AuthResult(False, "?", "unknown_user", f"not a valid user name ({NAME_HELP})",
                                context=context, at=now)
        else:
            result = self._attempt(name, secret, now, context)
        event = log.info if result.ok else log.warning
        event("sign-in attempt", user=result.user, ok=result.ok, code=result.code,
              role=result.role, context=context, failures=result.failures)
        return result

    def _attempt(self, name: str, secret: str, now: float, context: str) -> AuthResult:
        def result(ok: bool, code: str, message: str, **more: Any) -> AuthResult:
            return AuthResult(ok, name, code, message, context=context, at=now, **more)

        def busy(why: str) -> AuthResult:
            return result(False, "busy", f"sign-in for {name!r} not checked: {why}; try again "
                          "in a moment")

        with self.turns.turn(name, self.turn_wait_s) as my_turn:
            if not my_turn:
                return busy("earlier attempts for this account are still being checked")
            refusal = self._refusal(name, now, result)
            if refusal is not None:
                return refusal          # decided without hashing: nothing to wait for
            if not self._hashing.acquire(timeout=self.hash_wait_s):
                return busy("too many sign-ins at once")
            try:
                return self._check(name, secret, now, result)
            finally:
                self._hashing.release()

    def _refusal(self, name: str, now: float,
                 result: Callable[..., AuthResult]) -> AuthResult | None:
        """The answer when the account's row alone decides it (unknown, disabled, locked)."""
        with self._tx() as db:
            row = self._row(db, name)
        if row is not None and self._set_back(row["locked_until"], now):
            with self._tx(immediate=True) as db:
                row = self._clamped(db, name, now)
        return self._refused_row(name, row, now, result)

    def _set_back(self, locked_until: float | None, now: float) -> bool:
        """A lock that ends later than a whole lockout from now: set before the wall clock was
        set back (an hour back would keep a supervisor out for an hour and five minutes, the
        table on hold meanwhile)."""
        return locked_until is not None and locked_until - now > self.lockout_s

    def _clamped(self, db: sqlite3.Connection, name: str, now: float) -> sqlite3.Row | None:
        """The account's row, a lock set before the clock went back ending a lockout from now
        (in the caller's write transaction)."""
        row = self._row(db, name)
        if row is not None and self._set_back(row["locked_until"], now):
            db.execute("UPDATE users SET locked_until = ? WHERE name = ?",
                       (now + self.lockout_s, name))
            row = self._row(db, name)
        return row

    def _refused_row(self, name: str, row: sqlite3.Row | None, now: float,
                     result: Callable[..., AuthResult]) -> AuthResult | None:
        if row is None:
            failures, locked_until = self._ghost(name, now)
            if locked_until is not None:
                return self._locked(name, locked_until, now, failures, result)
            return None                 # checked like a PIN (a decoy hash) in _check
        role = row["role"]
        if row["disabled"]:
            return result(False, "disabled", f"account {name!r} is disabled; a manager can "
                          "enable it", role=role)
        locked_until = row["locked_until"]
        if locked_until is not None and now < locked_until:
            return self._locked(name, locked_until, now, row["failures"], result, role=role)
        return None

    def _locked(self, name: str, locked_until: float, now: float, failures: int,
                result: Callable[..., AuthResult], role: str | None = None) -> AuthResult:
        minutes = max(1, math.ceil((locked_until - now) / 60))
        return result(False, "locked", f"account {name!r} is locked after {self.max_failures} "
                      f"failed attempts; it opens by itself in {minutes} minute(s), or at once "
                      f"when a manager runs `tablectl users enable {name} --as MANAGER`",
                      role=role, failures=failures, locked_minutes=minutes)

    def _wrong(self, name: str, failures: int, locks: bool, result: Callable[..., AuthResult],
               code: str = "wrong_pin", **more: Any) -> AuthResult:
        """The answer to a PIN that does not match the name, an account's or not."""
        if locks:
            minutes = math.ceil(self.lockout_s / 60)
            return result(False, code, f"wrong PIN for {name!r}; account locked for {minutes} "
                          f"minute(s) after {failures} failed attempts", failures=failures,
                          locked_minutes=minutes, **more)
        left = self.max_failures - failures
        return result(False, code, f"wrong PIN for {name!r} ({left} attempt(s) left before "
                      "lockout)", failures=failures, **more)

    def _ghost(self, name: str, now: float) -> tuple[int, float | None]:
        """(failures, locked until) of a name without an account; a lock run out is gone."""
        with self._ghosts_lock:
            failures, until = self._ghosts.get(name, (0, None))
            if until is not None and self._set_back(until, now):
                until = now + self.lockout_s      # (the wall clock set back: see _set_back)
                self._ghosts[name] = (failures, until)
        if until is not None and now >= until:
            return 0, None
        return failures, until

    def _unknown(self, name: str, secret: str, now: float,
                 result: Callable[..., AuthResult]) -> AuthResult:
        """No account has this name: a decoy hash as long as a real check, then the answer a
        wrong PIN gets, and a lock after as many failures."""
        derive(secret if isinstance(secret, str) else "", self._decoy_salt, self.kdf)
        failures = self._ghost(name, now)[0] + 1
        locks = failures >= self.max_failures
        with self._ghosts_lock:
            self._ghosts.pop(name, None)
            self._ghosts[name] = (failures, now + self.lockout_s if locks else None)
            while len(self._ghosts) > GHOSTS:
                del self._ghosts[next(iter(self._ghosts))]
        return self._wrong(name, failures, locks, result, code="unknown_user")

    def _check(self, name: str, secret: str, now: float,
               result: Callable[..., AuthResult]) -> AuthResult:
        # 1. the attempt counts as a failure (and locks at the last one allowed) before the
        #    hash: another process's attempt in the meantime sees it
        with self._tx(immediate=True) as db:
            row = self._clamped(db, name, now)
            refusal = self._refused_row(name, row, now, result)
            if refusal is not None:
                return refusal
            if row is not None:
                unlocked_at = row["locked_until"]       # a lock that has run out: count from 0
                failures = (0 if unlocked_at is not None else row["failures"]) + 1
                locks = failures >= self.max_failures
                db.execute("UPDATE users SET failures = ?, locked_until = ? WHERE name = ?",
                           (failures, now + self.lockout_s if locks else None, name))
        if row is None:
            return self._unknown(name, secret, now, result)
        role = row["role"]
        params = ScryptParams(row["kdf_n"], row["kdf_r"], row["kdf_p"], row["kdf_dklen"])
        good = isinstance(secret, str) and hmac.compare_digest(
            derive(secret, row["salt"], params), row["secret_hash"])
        # 2. the right PIN clears the count (and a lock its own count set)
        if good:
            with self._tx(immediate=True) as db:
                db.execute("UPDATE users SET failures = 0, locked_until = NULL WHERE name = ?",
                           (name,))
                if self.kdf.stronger_than(params):
                    cols = self._hash_columns(secret)
                    db.execute(f"UPDATE users SET {', '.join(f'{c} = ?' for c in cols)} "
                               "WHERE name = ?", (*cols.values(), name))
                    self._log_change(db, name, "rehash", name,
                                     f"scrypt n={self.kdf.n} r={self.kdf.r} p={self.kdf.p}")
            return result(True, "ok", f"signed in as {name!r} ({role})", role=role,
                          unlocked_at=unlocked_at)
        return self._wrong(name, failures, locks, result, role=role, locked_now=locks,
                           unlocked_at=unlocked_at)


def users_action(store: AccountStore, args: Mapping[str, Any], *, by: str) -> Any:
    """The control API's `users` action for a signed-in manager: op list, disable or enable.

    Adding users and setting secrets is done with `tablectl users` at the table PC, so that
    no secret travels in a command the application journals. Raises AccountError.
    """
    op = args.get("op")
    now = store.clock()
    if op == "list":
        return [info.record(now) for info in store.users()]
    if op in ("disable", "enable"):
        name = args.get("name")
        if not isinstance(name, str):
            raise AccountError(f"users {op} needs name")
        getattr(store, op)(name, by=by)
        return {"op": op, "name": name}
    raise AccountError(f"users op {op!r} is not known; use list, disable or enable "
                       "(add and passwd: `tablectl users` on the table PC)")
