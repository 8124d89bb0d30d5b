"""The user store: bootstrap, administration, scrypt storage, lockout, and `tablectl users`."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat

import pytest

from controller.access import accounts

from controller.access import roles
from controller.access.accounts import (AccountError, AccountStore, AuthResult, ScryptParams,
                                 users_action)
from controller.cli import main
from controller.commands import users as users_cmd

FAST = ScryptParams(n=2 ** 4, r=1, p=1)


class FakeClock:
    def __init__(self, now: float = 1_700_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class RecordingLog:
    """Stands in for the structlog logger; keeps every event and its fields."""

    def __init__(self):
        self.events: list[tuple[str, dict]] = []

    def _record(self, event, **kw):
        self.events.append((event, kw))

    info = warning = error = exception = _record


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def store(tmp_path, clock):
    s = AccountStore(tmp_path / "var" / "users.db", kdf=FAST, clock=clock)
    s.bootstrap("mia", "manager-pin-1")
    return s


# -- bootstrap and administration -------------------------------------------------------------

def test_empty_store_has_no_default_account(tmp_path):
    s = AccountStore(tmp_path / "users.db", kdf=FAST)
    assert s.is_empty()
    assert s.users() == []
    assert s.authenticate("admin", "admin").code == "unknown_user"


def test_bootstrap_makes_one_manager_and_only_on_an_empty_store(store):
    assert [(u.name, u.role) for u in store.users()] == [("mia", "manager")]
    with pytest.raises(AccountError, match="already has accounts"):
        store.bootstrap("eve", "another-pin")
    assert store.changes()[0]["action"] == "bootstrap"


def test_add_needs_an_enabled_manager(store):
    store.add("ann", "dealer", "dealer-pin", by="mia")
    with pytest.raises(AccountError, match="not an enabled manager"):
        store.add("bob", "dealer", "bob-secret", by="ann")
    with pytest.raises(AccountError, match="not an enabled manager"):
        store.add("bob", "dealer", "bob-secret", by="nobody")
    assert store.authenticate("ann", "dealer-pin").role == "dealer"


@pytest.mark.parametrize("name, role, secret, match", [
    ("Ann", "dealer", "dealer-pin", "not valid"),
    ("ann smith", "dealer", "dealer-pin", "not valid"),
    ("ann", "croupier", "dealer-pin", "not known"),
    ("ann", "dealer", "12345", "too short"),
    ("ann", "dealer", "x" * 129, "too long"),
    ("annabel", "dealer", "ANNABEL", "must not be the user name"),
    ("mia", "dealer", "dealer-pin", "already exists"),
])
def test_add_refuses_bad_input(store, name, role, secret, match):
    with pytest.raises(AccountError, match=match):
        store.add(name, role, secret, by="mia")


def test_six_character_pin_is_enough(store):
    store.add("ann", "dealer", "482913", by="mia")
    assert store.authenticate("ann", "482913").ok


def test_disable_and_enable(store):
    store.add("sam", "supervisor", "sup-pin-22", by="mia")
    store.disable("sam", by="mia")
    result = store.authenticate("sam", "sup-pin-22")
    assert (result.ok, result.code) == (False, "disabled")
    assert "disabled" in result.message
    store.enable("sam", by="mia")
    assert store.authenticate("sam", "sup-pin-22").ok
    actions = [c["action"] for c in store.changes()]
    assert actions[-3:] == ["add", "disable", "enable"]


def test_last_enabled_manager_cannot_be_disabled(store):
    with pytest.raises(AccountError, match="last enabled manager"):
        store.disable("mia", by="mia")
    store.add("max", "manager", "max-pin-99", by="mia")
    store.disable("mia", by="max")
    assert store.authenticate("mia", "manager-pin-1").code == "disabled"


def test_unknown_account_is_named(store):
    with pytest.raises(AccountError, match="no user 'zed'"):
        store.disable("zed", by="mia")


def test_passwd_by_self_and_by_manager(store):
    store.add("ann", "dealer", "dealer-pin", by="mia")
    store.set_secret("ann", "new-dealer-pin", by="ann")
    assert store.authenticate("ann", "dealer-pin").code == "wrong_pin"
    assert store.authenticate("ann", "new-dealer-pin").ok
    store.set_secret("ann", "reset-by-mia", by="mia")
    assert store.authenticate("ann", "reset-by-mia").ok
    store.add("bob", "dealer", "bob-secret", by="mia")
    with pytest.raises(AccountError, match="not an enabled manager"):
        store.set_secret("ann", "bob-did-this", by="bob")


# -- secrets at rest --------------------------------------------------------------------------

def test_scrypt_params_and_salt_are_stored(store):
    store.add("ann", "dealer", "same-pin-1", by="mia")
    store.add("bob", "dealer", "same-pin-1", by="mia")
    with sqlite3.connect(store.path) as db:
        rows = {r[0]: r[1:] for r in db.execute(
            "SELECT name, kdf, kdf_n, kdf_r, kdf_p, kdf_dklen, salt, secret_hash FROM users")}
    kdf, n, r, p, dklen, salt, digest = rows["ann"]
    assert (kdf, n, r, p, dklen) == ("scrypt", FAST.n, FAST.r, FAST.p, FAST.dklen)
    assert len(salt) == 16
    assert digest == hashlib.scrypt(b"same-pin-1", salt=salt, n=n, r=r, p=p, dklen=dklen)
    assert rows["bob"][5] != salt and rows["bob"][6] != digest   # per-user salt


def test_default_params_are_memory_hard():
    assert accounts.DEFAULT_KDF.n >= 2 ** 14 and accounts.DEFAULT_KDF.r >= 8
    assert accounts.DEFAULT_KDF.p >= 1
    assert 128 * accounts.DEFAULT_KDF.r * accounts.DEFAULT_KDF.n >= 16 * 2 ** 20


@pytest.mark.parametrize("kw", [{"n": 1000}, {"n": 1}, {"r": 0}, {"dklen": 8}])
def test_bad_scrypt_params_are_refused(kw):
    with pytest.raises(ValueError):
        ScryptParams(**kw)


def test_no_plaintext_secret_in_the_db_file(store):
    secrets = ["Zebra-Quartz-771", "493817", "pässwörd-ü"]
    for i, secret in enumerate(secrets):
        store.add(f"user{i}", "dealer", secret, by="mia")
        assert store.authenticate(f"user{i}", secret).ok
    store.set_secret("user0", "Yak-Orbit-552", by="mia")
    secrets.append("Yak-Orbit-552")
    files = [p for p in store.path.parent.iterdir() if p.name.startswith("users.db")]
    blob = b"".join(p.read_bytes() for p in files)
    for secret in secrets + ["manager-pin-1"]:
        for encoding in ("utf-8", "utf-16-le"):
            assert secret.encode(encoding) not in blob


def test_db_file_is_owner_only(store):
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600


def test_rehash_on_sign_in_when_params_change(store, tmp_path, clock):
    stronger = ScryptParams(n=2 ** 5, r=2, p=1)
    upgraded = AccountStore(store.path, kdf=stronger, clock=clock)
    assert upgraded.authenticate("mia", "manager-pin-1").ok
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT kdf_n, kdf_r FROM users WHERE name='mia'").fetchone() == (32, 2)
    assert upgraded.authenticate("mia", "manager-pin-1").ok
    assert store.changes()[-1]["action"] == "rehash"


def test_sign_in_never_weakens_a_stored_hash(store, clock):
    stronger = AccountStore(store.path, kdf=ScryptParams(n=2 ** 5, r=2, p=1), clock=clock)
    assert stronger.authenticate("mia", "manager-pin-1").ok
    assert store.authenticate("mia", "manager-pin-1").ok       # store has weaker FAST params
    with sqlite3.connect(store.path) as db:
        assert db.execute("SELECT kdf_n, kdf_r FROM users WHERE name='mia'").fetchone() == (32, 2)


def test_not_a_user_store(tmp_path):
    bogus = tmp_path / "users.db"
    bogus.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(AccountError, match="not a usable user store"):
        AccountStore(bogus, kdf=FAST)


# -- sign-in and lockout ----------------------------------------------------------------------

def test_refusals_are_specific(store):
    store.add("ann", "dealer", "dealer-pin", by="mia")
    assert store.authenticate("ghost", "whatever").code == "unknown_user"
    wrong = store.authenticate("ann", "not-it", context="open_bets")
    assert (wrong.ok, wrong.code, wrong.failures, wrong.context) == (False, "wrong_pin", 1,
                                                                     "open_bets")
    assert "4 attempt(s) left" in wrong.message
    good = store.authenticate("ann", "dealer-pin")
    assert (good.ok, good.code, good.role) == (True, "ok", "dealer")


def test_a_pin_typed_as_the_name_is_never_echoed_or_logged(store, monkeypatch):
    recorder = RecordingLog()
    monkeypatch.setattr(accounts, "log", recorder)
    result = store.authenticate("482913", "482913")
    assert (result.ok, result.code, result.user) == (False, "unknown_user", "?")
    assert "482913" not in result.message + repr(result.record()) + repr(recorder.events)


def test_success_resets_the_failure_count(store):
    for _ in range(4):
        store.authenticate("mia", "bad-guess")
    assert store.authenticate("mia", "manager-pin-1").ok
    for _ in range(4):
        assert store.authenticate("mia", "bad-guess").code == "wrong_pin"
    assert store.authenticate("mia", "manager-pin-1").ok


def test_lockout_after_five_failures_and_release_after_five_minutes(store, clock):
    store.add("sam", "supervisor", "sup-pin-22", by="mia")
    results = [store.authenticate("sam", f"guess-{i}") for i in range(5)]
    assert [r.code for r in results] == ["wrong_pin"] * 5
    assert results[-1].locked_minutes == 5 and "locked" in results[-1].message
    locked = store.authenticate("sam", "sup-pin-22")    # even the right PIN
    assert (locked.ok, locked.code, locked.locked_minutes) == (False, "locked", 5)
    clock.advance(4 * 60 + 30)
    assert store.authenticate("sam", "sup-pin-22").locked_minutes == 1
    clock.advance(31)
    assert store.authenticate("sam", "sup-pin-22").ok
    # a fresh count after the lock: one wrong PIN does not lock again
    assert store.authenticate("sam", "guess").failures == 1
    assert store.authenticate("sam", "sup-pin-22").ok


def test_failures_after_expiry_count_from_zero(store, clock):
    for i in range(5):
        store.authenticate("mia", f"guess-{i}")
    clock.advance(301)
    again = store.authenticate("mia", "guess-again")
    assert (again.code, again.failures, again.locked_minutes) == ("wrong_pin", 1, None)


def test_manager_enable_clears_a_lockout(store):
    store.add("sam", "supervisor", "sup-pin-22", by="mia")
    for i in range(5):
        store.authenticate("sam", f"guess-{i}")
    assert store.authenticate("sam", "sup-pin-22").code == "locked"
    store.enable("sam", by="mia")
    assert store.authenticate("sam", "sup-pin-22").ok


def test_every_attempt_is_logged_without_the_secret(store, monkeypatch):
    recorder = RecordingLog()
    monkeypatch.setattr(accounts, "log", recorder)
    store.authenticate("mia", "Wrong-Secret-9", context="hold")
    store.authenticate("mia", "manager-pin-1", context="hold")
    store.authenticate("nobody", "Other-Secret-8")
    auth = [kw for event, kw in recorder.events if event == "sign-in attempt"]
    assert [(a["user"], a["ok"], a["code"]) for a in auth] == [
        ("mia", False, "wrong_pin"), ("mia", True, "ok"), ("nobody", False, "unknown_user")]
    assert auth[0]["context"] == "hold"
    text = repr(recorder.events)
    for secret in ("Wrong-Secret-9", "manager-pin-1", "Other-Secret-8"):
        assert secret not in text


def test_auth_result_record_is_json_and_secret_free(store):
    result = store.authenticate("mia", "Wrong-Secret-9", context="users add")
    assert isinstance(result, AuthResult)
    rec = json.loads(json.dumps(result.record()))
    assert rec["event"] == "auth" and rec["user"] == "mia" and rec["ok"] is False
    assert rec["code"] == "wrong_pin" and rec["context"] == "users add"
    assert "Wrong-Secret-9" not in json.dumps(rec)


# -- the API's users action -------------------------------------------------------------------

def test_users_action(store):
    store.add("ann", "dealer", "dealer-pin", by="mia")
    listed = users_action(store, {"op": "list"}, by="mia")
    assert [u["name"] for u in listed] == ["ann", "mia"]
    assert "secret_hash" not in listed[0] and "salt" not in listed[0]
    assert users_action(store, {"op": "disable", "name": "ann"}, by="mia") == {
        "op": "disable", "name": "ann"}
    assert store.authenticate("ann", "dealer-pin").code == "disabled"
    users_action(store, {"op": "enable", "name": "ann"}, by="mia")
    with pytest.raises(AccountError, match="not known"):
        users_action(store, {"op": "add", "name": "x"}, by="mia")
    with pytest.raises(AccountError, match="needs name"):
        users_action(store, {"op": "disable"}, by="mia")


def test_roles_are_data():
    assert set(roles.ACTIONS) == set().union(*roles.PERMISSIONS.values())
    assert roles.PERMISSIONS["auditor"] == frozenset(roles.READ_ACTIONS)
    assert not roles.PERMISSIONS["dealer"] & roles.OVERRIDE_ACTIONS
    assert set(roles.SUPERVISOR_ACTIONS) <= roles.PERMISSIONS["supervisor"]
    assert not roles.PERMISSIONS["manager"] & set(roles.SUPERVISOR_ACTIONS)
    assert set(roles.ACTION_ARGS) <= set(roles.ACTIONS)
    assert roles.roles_for("hold") == ["supervisor"]


# -- tablectl users ---------------------------------------------------------------------------

def cli(*argv: str) -> int:
    return main(list(argv))


def test_cli_bootstrap_add_list_passwd_disable(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "users.db")
    monkeypatch.setenv("TABLECTL_NEW_PIN", "first-manager")
    assert cli("users", "add", "ann", "--role", "dealer", "--db", db) == 2   # first: manager
    assert "must be a manager" in capsys.readouterr().err
    assert cli("users", "add", "mia", "--role", "manager", "--db", db) == 0
    assert "first account" in capsys.readouterr().out

    monkeypatch.setenv("TABLECTL_NEW_PIN", "sam-sup-pin")
    assert cli("users", "add", "sam", "--role", "supervisor", "--db", db) == 2   # no --as
    assert "--as MANAGER" in capsys.readouterr().err
    monkeypatch.setenv("TABLECTL_PIN", "wrong-pin")
    assert cli("users", "add", "sam", "--role", "supervisor", "--as", "mia", "--db", db) == 1
    assert "wrong PIN for 'mia'" in capsys.readouterr().err
    monkeypatch.setenv("TABLECTL_PIN", "first-manager")
    assert cli("users", "add", "sam", "--role", "supervisor", "--as", "mia", "--db", db) == 0

    monkeypatch.setenv("TABLECTL_PIN", "sam-sup-pin")   # a supervisor cannot add
    assert cli("users", "add", "bob", "--role", "dealer", "--as", "sam", "--db", db) == 1
    assert "needs manager" in capsys.readouterr().err

    monkeypatch.setenv("TABLECTL_NEW_PIN", "sam-new-pin")
    assert cli("users", "passwd", "sam", "--db", db) == 0       # own change, current PIN
    monkeypatch.setenv("TABLECTL_PIN", "first-manager")
    capsys.readouterr()
    assert cli("users", "list", "--as", "mia", "--json", "--db", db) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(u["name"], u["role"], u["disabled"]) for u in listed] == [
        ("mia", "manager", False), ("sam", "supervisor", False)]
    assert cli("users", "disable", "sam", "--as", "mia", "--db", db) == 0
    store = AccountStore(db, kdf=FAST)
    assert store.authenticate("sam", "sam-new-pin").code == "disabled"
    assert cli("users", "enable", "sam", "--as", "mia", "--db", db) == 0
    assert store.authenticate("sam", "sam-new-pin").ok
    capsys.readouterr()
    assert cli("users", "log", "--as", "mia", "--db", db) == 0
    log_lines = capsys.readouterr().out.splitlines()
    assert [line.split()[2] for line in log_lines] == [
        "bootstrap", "add", "passwd", "disable", "enable"]
    raw = open(db, "rb").read()
    for secret in ("first-manager", "sam-sup-pin", "sam-new-pin"):
        assert secret.encode() not in raw


def test_cli_db_from_config(tmp_path, monkeypatch, capsys):
    config = tmp_path / "table.toml"
    db = tmp_path / "from-config.db"
    config.write_text(f'[console]\nusers_db = "{db}"\n')
    monkeypatch.delenv("TABLECTL_CONSOLE_USERS_DB", raising=False)
    monkeypatch.setenv("TABLECTL_NEW_PIN", "first-manager")
    assert cli("users", "add", "mia", "--role", "manager", "--config", str(config)) == 0
    assert db.exists()


def test_cli_without_a_pin_is_bad_input(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "users.db")
    monkeypatch.delenv("TABLECTL_NEW_PIN", raising=False)

    def no_terminal(prompt=""):
        raise EOFError
    monkeypatch.setattr("getpass.getpass", no_terminal)
    monkeypatch.setattr(users_cmd, "terminal_available", lambda: True)
    assert cli("users", "add", "mia", "--role", "manager", "--db", db) == 2
    assert "TABLECTL_NEW_PIN" in capsys.readouterr().err


def test_cli_never_reads_a_pin_from_stdin_without_a_terminal(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("TABLECTL_NEW_PIN", raising=False)
    monkeypatch.setattr(users_cmd, "terminal_available", lambda: False)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": pytest.fail("getpass called"))
    assert cli("users", "add", "mia", "--role", "manager", "--db",
               str(tmp_path / "users.db")) == 2
    assert "no PIN given" in capsys.readouterr().err


def test_cli_getpass_pins_must_match(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "users.db")
    monkeypatch.delenv("TABLECTL_NEW_PIN", raising=False)
    typed = iter(["first-manager", "first-managre"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(typed))
    monkeypatch.setattr(users_cmd, "terminal_available", lambda: True)
    assert cli("users", "add", "mia", "--role", "manager", "--db", db) == 2
    assert "differ" in capsys.readouterr().err
    assert AccountStore(db, kdf=FAST).is_empty()


def test_cli_list_on_an_empty_store(tmp_path, capsys):
    assert cli("users", "list", "--as", "x", "--db", str(tmp_path / "u.db")) == 0
    assert "no accounts yet" in capsys.readouterr().out


def test_a_name_without_an_account_is_answered_as_a_wrong_pin_is(store, clock, monkeypatch):
    """The same words, after a check as long (a decoy scrypt of the PIN given), and a lock
    after as many failures: no answer tells which names have accounts. The log and the
    journal's code keep the difference for whoever investigates."""
    store.add("sam", "supervisor", "sam-pin-123", by="mia")
    hashed: list[str] = []
    real = accounts.derive
    monkeypatch.setattr(accounts, "derive", lambda s, salt, p: hashed.append(s) or real(s, salt, p))
    said = {}
    for name in ("sam", "nobody"):
        answers = [store.authenticate(name, f"guess-{i}") for i in range(6)]
        said[name] = [(a.ok, a.message.replace(f"'{name}'", "'X'")
                                 .replace(f"enable {name} ", "enable X ")) for a in answers]
        assert [a.code for a in answers][-1] == "locked"
    assert said["sam"] == said["nobody"]
    assert hashed.count("guess-0") == 2 and len(hashed) == 10     # five checks each
    assert [a.code for a in [store.authenticate("nobody", "x" * 6)]] == ["locked"]
    clock.advance(accounts.LOCKOUT_S + 1)                # the decoy lock runs out as a real one
    assert store.authenticate("nobody", "guess-9").code == "unknown_user"


def test_a_lock_never_outlasts_a_lockout_when_the_wall_clock_is_set_back(store, clock):
    """Five wrong PINs lock the account for five minutes; the wall clock then set back an hour
    kept the supervisor out for an hour and five minutes (the table on hold meanwhile). The
    lock ends a lockout after the first attempt that sees the clock back, for a name with an
    account and for one without."""
    store.add("sam", "supervisor", "sup-pin-22", by="mia")
    for who in ("sam", "nobody"):
        assert [store.authenticate(who, f"guess-{i}").code for i in range(5)][-1] in (
            "wrong_pin", "unknown_user")
    clock.advance(-3600)
    locked = store.authenticate("sam", "sup-pin-22")
    assert (locked.code, locked.locked_minutes) == ("locked", 5)
    assert store.authenticate("nobody", "x").code == "locked"
    clock.advance(301)
    assert store.authenticate("sam", "sup-pin-22").ok
    assert store.authenticate("nobody", "x").code == "unknown_user"
