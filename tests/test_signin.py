"""Sign-in under attack: no lockout race, bounded scrypt work, rate limits, a connection cap,
and failed sign-ins summarised in the journal rather than one durable record each."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from controller.access.accounts import AccountStore, AuthResult, ScryptParams
from controller.access.server import ControlServer
from controller.journal import Journal
from controller.service.signins import SignInJournal
from controller.access.signin import RateLimit, Turns

ROOT = Path(__file__).resolve().parents[1]
FAST = ScryptParams(n=2 ** 4, r=1, p=1)
PIN = "supervisor-pin-1"


@pytest.fixture
def short_dir():
    path = Path(tempfile.mkdtemp(prefix="sgn", dir="/tmp"))    # AF_UNIX paths are short
    yield path
    shutil.rmtree(path, ignore_errors=True)


def accounts(path: Path, kdf: ScryptParams = FAST, **kw) -> AccountStore:
    store = AccountStore(path, kdf=kdf, **kw)
    store.bootstrap("mia", "manager-pin-1")
    store.add("sam", "supervisor", PIN, by="mia")
    return store


def answer(sock_path: Path, line: dict, timeout: float = 20.0) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(sock_path))
        s.sendall((json.dumps(line) + "\n").encode())
        return json.loads(s.makefile("rb").readline())


def at_once(sock_path: Path, lines: list[dict]) -> list[dict]:
    """Each line on its own connection, all sent together."""
    go = threading.Barrier(len(lines))
    out: list = [None] * len(lines)

    def one(i: int) -> None:
        go.wait()
        try:
            out[i] = answer(sock_path, lines[i])
        except OSError as err:          # refused, or no answer: the test says which
            out[i] = {"ok": False, "error": f"client: {err!r}", "message": ""}

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(lines))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def wrong(i: int) -> dict:
    return {"id": i, "user": "sam", "pin": f"guess-{i:04d}", "action": "hold",
            "reason": "try"}


CLIENT = r"""
import json, socket, sys, time
path, user, pin, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
answers = {}
end = time.monotonic() + seconds
i = 0
while i == 0 or time.monotonic() < end:         # at least once
    i += 1
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(20)
        s.connect(path)
        s.sendall((json.dumps({"id": i, "user": user, "pin": pin.replace("#", str(i)),
                               "action": "state"}) + "\n").encode())
        a = json.loads(s.makefile("rb").readline())
    key = "ok" if a["ok"] else a["error"]
    answers[key] = answers.get(key, 0) + 1
    if sys.argv[5:]:
        time.sleep(float(sys.argv[5]))
print(json.dumps(answers))
"""


def client(sock: Path, user: str, pin: str, seconds: float, pause: float | None = None):
    """A console of its own (a process): `user` signs in with `pin` (# → a counter) again and
    again for `seconds`; prints how each attempt was answered."""
    return subprocess.Popen([sys.executable, "-c", CLIENT, str(sock), user, pin, str(seconds),
                             *([str(pause)] if pause is not None else [])],
                            stdout=subprocess.PIPE, text=True)


def test_thirty_wrong_pins_at_once_through_tablectl_run(short_dir):
    """The production path: `tablectl run` on the embedded simulator, real scrypt parameters.
    Thirty wrong PINs at once from one client: three are checked (that client's budget for the
    account, below the five failures that lock it), the rest refused unchecked; the account's
    owner signs in from another process at once; the controller's peak memory stays low, and
    the journal holds a summary naming the client, not thirty records."""
    users = short_dir / "users.db"
    accounts(users, kdf=ScryptParams())
    sock, journal = short_dir / "ctl.sock", short_dir / "journal.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    env.update(TABLECTL_CONSOLE_USERS_DB=str(users), TABLECTL_STORAGE_FSYNC="false")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config",
         str(ROOT / "config" / "table.toml"), "--journal", str(journal), "--socket", str(sock),
         "--pace", "0.5", "--seed", "3"], cwd=short_dir, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not sock.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.05)
        answers = at_once(sock, [wrong(i) for i in range(30)])
        owner = client(sock, "sam", PIN, 0.0)           # one attempt, from another process
        served = json.loads(owner.communicate(timeout=30)[0])
        hwm_kb = int(next(line.split()[1] for line in
                          Path(f"/proc/{proc.pid}/status").read_text().splitlines()
                          if line.startswith("VmHWM:")))
    finally:
        proc.send_signal(signal.SIGTERM)
        err = proc.communicate(timeout=30)[1].decode()
    assert proc.returncode == 0, err
    checked = [a for a in answers if "wrong PIN" in a.get("message", "")]
    assert len(checked) == 3
    assert all(not a["ok"] for a in answers)
    assert sum(a["error"] == "rate_limited" for a in answers) == 27
    assert served == {"ok": 1}
    sam = {u.name: u for u in AccountStore(users).users()}["sam"]
    assert sam.failures == 0 and sam.locked_until is None      # the owner's sign-in cleared it
    assert hwm_kb < 150 * 1024, f"peak RSS {hwm_kb} kB"
    with Journal.open_readonly(journal) as j:
        auth = [r.data for r in j.records(kinds=["auth"])]
    assert "auth_lock" not in [a["event"] for a in auth]
    summaries = [a for a in auth if a["event"] == "auth_failures"]
    assert 1 <= len(summaries) <= 2                 # one a minute (the test may span two)
    assert sum(s["count"] for s in summaries) == 30
    codes: dict[str, int] = {}
    for s in summaries:
        for code, n in s["codes"].items():
            codes[code] = codes.get(code, 0) + n
    assert codes["wrong_pin"] == 3 and codes["rate_limited"] == 27
    peers = {p for s in summaries for p in s["peers"]}
    assert peers == {f"uid:{os.getuid()} pid:{os.getpid()}"}      # the flood's own process


def test_a_flood_from_one_client_never_holds_up_the_owner_from_another(short_dir):
    """One process floods wrong PINs for sam's account for 2 s; sam signs in again and
    again from another process of the same user id meanwhile: every one is served, the flood
    is refused unchecked after its first few, and the account is never locked."""
    store = accounts(short_dir / "users.db")
    srv = ControlServer(short_dir / "c.sock", store, lambda cmd: cmd.reply.set_result({}))
    with srv:
        flood = client(srv.path, "sam", "guess-#", 2.0)
        time.sleep(0.3)                                 # the flood is under way
        owner = client(srv.path, "sam", PIN, 1.2, pause=0.1)
        served = json.loads(owner.communicate(timeout=60)[0])
        flooded = json.loads(flood.communicate(timeout=60)[0])
    assert set(served) == {"ok"} and served["ok"] >= 5, served
    assert flooded.get("rate_limited", 0) > 10 * flooded.get("auth_failed", 0), flooded
    assert "locked" not in flooded and "ok" not in flooded
    assert store.users()[1].locked_until is None


def test_a_right_pin_queued_behind_five_wrong_ones_is_refused(short_dir):
    """All 31 attempts arrive while an earlier one holds the account's turn: five wrong PINs
    are checked in turn, then the account is locked, so the right PIN behind them is refused."""
    store = accounts(short_dir / "users.db")
    srv = ControlServer(short_dir / "c.sock", store, lambda cmd: cmd.reply.set_result({}),
                        peer_limit=(100, 10.0), account_limit=(100, 10.0))
    out: dict[int, dict] = {}

    def send(i: int, line: dict) -> None:
        out[i] = answer(srv.path, line)

    with srv:
        with store.turns.turn("sam", 5) as mine:
            assert mine
            threads = [threading.Thread(target=send, args=(i, wrong(i))) for i in range(29)]
            for t in threads:
                t.start()
            while store.turns.waiting("sam") < 30:
                time.sleep(0.005)
            right = threading.Thread(target=send, args=(29, {
                "id": 29, "user": "sam", "pin": PIN, "action": "hold", "reason": "mine"}))
            right.start()
            while store.turns.waiting("sam") < 31:
                time.sleep(0.005)
        for t in [*threads, right]:
            t.join(10)
    assert (out[29]["ok"], out[29]["error"]) == (False, "locked")
    wrongs = [out[i] for i in range(29)]
    assert sum("wrong PIN" in a["message"] for a in wrongs) == 5
    assert sum(a["error"] == "locked" for a in wrongs) == 24
    assert store.users()[1].failures == 5


def test_turns_come_in_arrival_order_and_a_waiter_may_give_up():
    turns, order = Turns(), []
    with turns.turn("a", 1) as first:
        assert first

        def later(i: int) -> None:
            with turns.turn("a", 5):
                order.append(i)

        threads = []
        for i in range(5):
            threads.append(threading.Thread(target=later, args=(i,)))
            threads[-1].start()
            while turns.waiting("a") < i + 2:
                time.sleep(0.001)
        with turns.turn("a", 0.01) as impatient:        # gives up: skipped, not stuck
            assert not impatient
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2, 3, 4] and turns.waiting("a") == 0


def test_scrypt_slots_answer_busy_without_counting_a_failure(short_dir):
    store = accounts(short_dir / "users.db", max_hashing=1, hash_wait_s=0.05)
    store._hashing.acquire()                    # another sign-in is hashing
    try:
        busy = store.authenticate("sam", "guess-1")
    finally:
        store._hashing.release()
    assert (busy.ok, busy.code) == (False, "busy")
    assert store.users()[1].failures == 0
    assert store.authenticate("sam", PIN).ok


def test_a_lock_is_decided_before_the_hash_so_another_process_sees_it(short_dir,
                                                                     monkeypatch):
    """Two stores on one file (two processes): the fifth failure locks the account in the
    same transaction that counts it, before its PIN is hashed."""
    from controller.access import accounts as module
    path = short_dir / "users.db"
    one = accounts(path)
    two = AccountStore(path, kdf=FAST)
    for i in range(4):
        assert one.authenticate("sam", f"guess-{i}").code == "wrong_pin"
    seen: list[str] = []
    derive = module.derive

    def hashing(*a, **kw):
        if not seen:        # the other process, while the fifth attempt is being hashed
            seen.append("…")
            seen.append(two.authenticate("sam", PIN).code)
        return derive(*a, **kw)

    monkeypatch.setattr(module, "derive", hashing)
    fifth = one.authenticate("sam", "guess-4")
    assert fifth.locked_now and fifth.failures == 5
    assert seen == ["…", "locked"]


def test_rate_limits_spend_failures_only(short_dir):
    store = accounts(short_dir / "users.db")
    srv = ControlServer(short_dir / "c.sock", store, lambda cmd: cmd.reply.set_result({}),
                        peer_limit=(4, 1.0), account_limit=(3, 1.0))
    with srv:
        for _ in range(6):          # successes give their tokens back
            assert answer(srv.path, {"user": "sam", "pin": PIN, "action": "state"})["ok"]
        errors = [answer(srv.path, {"user": name, "pin": "guess-99", "action": "state"})["error"]
                  for name in ("ann", "bob", "cy", "dee", "eve")]
        assert errors == ["auth_failed"] * 4 + ["rate_limited"]     # the peer's budget
        late = answer(srv.path, {"user": "sam", "pin": PIN, "action": "state"})
        assert late["error"] == "rate_limited" and "from this console" in late["message"]
    # one peer's budget for one account is below the failures that lock it
    srv = ControlServer(short_dir / "d.sock", store, lambda cmd: cmd.reply.set_result({}),
                        peer_limit=(100, 1.0), account_limit=(3, 1.0))
    with srv:
        errors = [answer(srv.path, {"user": "sam", "pin": "guess-99", "action": "state"})["error"]
                  for _ in range(5)]
        assert errors == ["auth_failed"] * 3 + ["rate_limited"] * 2
        assert store.users()[1].failures == 3 and store.users()[1].locked_until is None


def test_rate_limit_refills_and_forgets_full_buckets():
    now = [0.0]
    limit = RateLimit(2, 6.0, clock=lambda: now[0], keep=2)
    assert [limit.take("a") for _ in range(2)] == [0.0, 0.0]
    assert limit.take("a") == pytest.approx(10.0)           # one token every 10 s
    now[0] = 10.0
    assert limit.take("a") == 0.0
    limit.take("b"), limit.take("c")
    now[0] = 1000.0
    limit.take("d")                                         # over `keep`: full ones go
    assert set(limit._buckets) == {"d"}


def test_connection_cap_idle_timeout_and_backlog(short_dir):
    store = accounts(short_dir / "users.db")
    srv = ControlServer(short_dir / "c.sock", store, lambda cmd: cmd.reply.set_result({}),
                        max_connections=3, idle_timeout_s=0.5)
    with srv:
        idle = []
        for _ in range(3):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(str(srv.path))
            idle.append(s)
        while srv._active < 3:
            time.sleep(0.005)
        extra = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        extra.settimeout(5)
        extra.connect(str(srv.path))
        turned = json.loads(extra.makefile("rb").readline())
        assert (turned["ok"], turned["error"]) == (False, "busy")
        assert extra.recv(10) == b""                      # and closed
        extra.close()
        for s in idle:              # silent: told so in one line, and closed by the controller
            told = json.loads(s.makefile("rb").readline())
            assert (told["ok"], told["error"]) == (False, "timeout")
            assert s.recv(10) == b""
            s.close()
        while srv._active:
            time.sleep(0.005)
    many = ControlServer(short_dir / "m.sock", store, lambda cmd: cmd.reply.set_result({}),
                         max_connections=64)
    with many:          # 40 clients at once all get in (a backlog of 5 turned most away)
        got = at_once(many.path, [{"user": "sam", "pin": "x", "action": "nope"}] * 40)
    assert [a["error"] for a in got] == ["unknown_action"] * 40


def _result(ok: bool, code: str, at: float, **kw) -> AuthResult:
    return AuthResult(ok, "sam", code, "", context=kw.pop("context", "hold"), at=at, **kw)


def test_failures_are_summarised_per_account_and_minute():
    written: list[tuple[dict, bool]] = []
    now = [600.0]
    log = SignInJournal(lambda d, durable: written.append((d, durable)), clock=lambda: now[0])
    for i in range(4):
        log.record(_result(False, "wrong_pin", 600.0 + i, failures=i + 1))
    log.record(_result(False, "wrong_pin", 605.0, failures=5, locked_now=True,
                       locked_minutes=5))
    for i in range(20):
        log.record(_result(False, "locked", 606.0 + i))
    log.record(_result(True, "ok", 630.0, context="state"))            # a console's read
    log.record(_result(True, "ok", 631.0, unlocked_at=620.0))          # a command
    assert [(d["event"], durable) for d, durable in written] == [
        ("auth_lock", True), ("auth_unlock", True), ("auth", False)]
    assert log.flush() == 0                         # the minute is not over
    now[0] = 660.0
    assert log.flush() == 1
    summary = written[-1][0]
    assert summary["event"] == "auth_failures" and summary["count"] == 25
    assert summary["codes"] == {"wrong_pin": 5, "locked": 20}
    assert summary["minute"] == "1970-01-01T00:10:00+00:00"
    log.record(_result(False, "wrong_pin", 700.0))
    assert log.flush(everything=True) == 1 and not log.pending()
