"""Hostile and clumsy clients against a live table: `tablectl run` on the embedded simulator,
dealing, with its control socket, its web display and its own /metrics address, attacked
through the real socket and the real HTTP servers. What must hold: every bad input is answered
in one line (where the client can be told) and logged without flooding the log, nothing that is
not text reaches the journal, and a client cannot take the process's file descriptors.
"""
from __future__ import annotations

import json
import os
import re
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

from controller.access.accounts import AccountStore, ScryptParams
from controller.access.server import ControlServer
from controller.access.wire import encode
from controller.journal import Journal

pytestmark = pytest.mark.xdist_group("hostile_clients")

ROOT = Path(__file__).resolve().parents[1]
FAST = ScryptParams(n=2 ** 4, r=1, p=1)
PINS = {"mia": "manager-pin-1", "sam": "supervisor-pin-1", "aud": "auditor-pin-1",
        "dan": "dealer-pin-1"}


def make_accounts(path: Path) -> None:
    store = AccountStore(path, kdf=FAST)
    store.bootstrap("mia", PINS["mia"])
    store.add("sam", "supervisor", PINS["sam"], by="mia")
    store.add("aud", "auditor", PINS["aud"], by="mia")
    store.add("dan", "dealer", PINS["dan"], by="mia")


class Live:
    """`tablectl run` dealing in a temp directory: its socket, web and metrics ports, log."""

    def __init__(self, where: Path):
        self.dir = where
        self.sock = where / "ctl.sock"
        self.journal = where / "journal.db"
        self.log = where / "table.log"
        self.out = where / "out.jsonl"
        self.err = where / "err.txt"
        self.users = where / "users.db"
        make_accounts(self.users)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
        self.env.update(TABLECTL_CONSOLE_USERS_DB=str(self.users),
                        TABLECTL_STORAGE_FSYNC="false",
                        TABLECTL_METRICS_LISTEN="127.0.0.1:0")
        self.proc: subprocess.Popen | None = None
        self.http = self.metrics = 0

    def start(self) -> "Live":
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "controller.cli", "--log-file", str(self.log), "run",
                 "--config", str(ROOT / "config" / "table.toml"), "--journal",
                 str(self.journal), "--socket", str(self.sock), "--http", "127.0.0.1:0",
                 "--pace", "0.05", "--seed", "3", "--json"],
                cwd=self.dir, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        deadline = time.monotonic() + 30
        while True:
            said = self.err.read_text(errors="replace")
            web = re.search(r"web display at http://127\.0\.0\.1:(\d+)/", said)
            metrics = re.search(r"metrics at http://127\.0\.0\.1:(\d+)/", said)
            if web and metrics and self.sock.exists() and self.rounds() >= 1:
                self.http, self.metrics = int(web.group(1)), int(metrics.group(1))
                return self
            assert self.proc.poll() is None, said
            assert time.monotonic() < deadline, said
            time.sleep(0.05)

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rounds(self) -> int:
        return self.out.read_bytes().count(b'"event":"round_result"')

    def cards(self) -> int:
        return self.out.read_bytes().count(b'"event":"card"')

    def log_lines(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def ask(self, line: bytes | dict, timeout: float = 10.0) -> dict:
        """One request line on a connection of its own; the answer (one line) parsed."""
        data = line if isinstance(line, bytes) else (json.dumps(line) + "\n").encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(self.sock))
            s.sendall(data)
            reply = s.makefile("rb").readline()
        assert reply.endswith(b"\n"), f"no answer line to {data[:80]!r}: {reply!r}"
        return json.loads(reply)

    def stop(self) -> str:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.err.read_text(errors="replace")


@pytest.fixture(scope="module")
def live():
    where = Path(tempfile.mkdtemp(prefix="hst", dir="/tmp"))     # AF_UNIX paths are short
    table = Live(where).start()
    try:
        yield table
    finally:
        err = table.stop()
        assert table.proc.returncode == 0, err
        assert "Traceback" not in err, err
        shutil.rmtree(where, ignore_errors=True)


def sam(action: str, reason: str = "", **extra) -> dict:
    return {"id": 1, "user": "sam", "pin": PINS["sam"], "action": action, "reason": reason,
            **extra}


# --------------------------------------------------------------------------- the socket
def test_half_a_surrogate_pair_is_refused_in_one_line_and_never_reaches_the_journal(live):
    """`\\ud800` is valid JSON but no character: echoed in an answer it could not be written
    (the connection was dropped unanswered, a traceback on stderr), and a supervisor's `hold`
    whose reason held one was applied and journaled, after which every `audit` failed."""
    echoed = live.ask(b'{"id":"\\ud800","user":"sam","pin":"x","action":"state"}\n')
    assert (echoed["ok"], echoed["error"], echoed["id"]) == (False, "malformed", None)
    assert "\\ud800" in echoed["message"] and "UTF-8" in echoed["message"]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(live.sock))
        lines = s.makefile("rb")
        for bad in ("test \udc00 surrogate", "\ud83d"):
            s.sendall(encode(sam("hold", reason=bad, id=7)))
            held = json.loads(lines.readline())
            assert (held["ok"], held["error"], held["id"]) == (False, "malformed", 7), held
        # the same connection serves on, and the table was not held
        s.sendall(encode(sam("state", id=8)))
        state = json.loads(lines.readline())
    assert state["ok"] and state["result"]["state"] != "hold"
    assert live.ask(sam("audit", args={"limit": 5}))["ok"]
    with Journal.open_readonly(live.journal) as j:
        holds = [r.data for r in j.records(kinds=["input"]) if r.data.get("action") == "hold"]
    assert holds == []
    refused = [e for e in live.log_lines() if e.get("event") == "control request refused"
               and "surrogate" in e.get("message", "")]
    assert len(refused) == 3
    assert "Traceback" not in live.err.read_text(errors="replace")


def test_text_that_is_not_utf8_from_the_shell_is_one_line_from_tablectl_override(live):
    """A reason typed in a terminal that is not UTF-8 reaches Python as lone surrogates: the
    override command ended in `internal error: UnicodeEncodeError` and a traceback."""
    env = dict(live.env, TABLECTL_PIN=PINS["sam"])
    done = subprocess.run([sys.executable, "-m", "controller.cli", "override", "hold",
                           "--reason", b"caf\xe9 spilled on the layout", "--user", "sam",
                           "--socket", str(live.sock)],
                          cwd=live.dir, env=env, capture_output=True, timeout=30)
    err = done.stderr.decode(errors="replace").strip()
    assert done.returncode == 2, err
    assert err.count("\n") == 0 and "reason is not UTF-8 text" in err, err
    assert "PIN" not in err and PINS["sam"] not in err
    assert live.ask(sam("state"))["result"]["state"] != "hold"


def test_a_request_refused_after_its_sign_in_is_in_the_journal(live):
    """A dealer's void_round (forbidden), an override without its reason, a card that is no
    card: refused after a successful sign-in, before the table, they left a record of the
    sign-in alone, as if the command had been given; a command the table refuses is
    journaled with why."""
    asks = [({"id": 1, "user": "dan", "pin": PINS["dan"], "action": "void_round",
              "reason": "a dealer tries an override"}, "forbidden"),
            (sam("void_round"), "reason_required"),
            (sam("enter_card", reason="typed wrong", args={"code": "ZZ"}), "invalid_args")]
    for line, code in asks:
        answer = live.ask(line)
        assert (answer["ok"], answer["error"]) == (False, code), answer
    want = [(line["user"], line["action"], code) for line, code in asks]
    deadline = time.monotonic() + 10
    while True:
        with Journal.open_readonly(live.journal) as j:
            refused = [r.data for r in j.records(kinds=["auth"]) if r.data.get("refused")]
        got = [(a["user"], a["context"], a["refused"]) for a in refused]
        if got == want or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert got == want
    assert refused[0]["why"] == "'dan' has the role dealer; void_round needs the role supervisor"
    assert all(a["ok"] and a["peer"].startswith("uid:") for a in refused)
    assert not any(PINS[u] in json.dumps(refused) for u in PINS)


def test_two_consoles_voiding_the_round_on_hold_void_it_once(live):
    """Two supervisors see round N on hold and both send void_round: the first voided it, and
    the second, arriving a moment later, voided round N + 1, which the dealer had just begun
    and neither had seen. Each console sends the shoe and round it shows (`expect`), and the
    table refuses a command for a round that is no longer in play; it is journaled, refused."""
    assert live.ask(sam("hold", reason="a dispute at the table"))["ok"]
    state = live.ask(sam("state"))["result"]
    assert state["state"] == "hold" and state["round"] is not None
    where = {"shoe": state["shoe"]["number"], "round": state["round"]["number"]}
    go = threading.Barrier(2)
    answers: list[dict] = []

    def console(reason: str) -> None:
        go.wait()
        answers.append(live.ask(sam("void_round", reason=reason, expect=where)))
    both = [threading.Thread(target=console, args=(r,)) for r in ("void it", "void it too")]
    for t in both:
        t.start()
    for t in both:
        t.join(30)
    assert sorted(a["ok"] for a in answers) == [False, True], answers
    refused, = [a for a in answers if not a["ok"]]
    assert refused["error"] == "wrong_state"
    assert refused["message"] == (f"That was for round {where['round']} of shoe "
                                  f"{where['shoe']}, which is no longer in play. Nothing was "
                                  "done: look at the table again.")
    assert refused["words"]["code"] == "refuse.moved_on"
    time.sleep(0.3)
    with Journal.open_readonly(live.journal) as j:
        voided = [r.data for r in j.records(kinds=["override"])
                  if r.data["action"] == "void_round"]
        tried = [r.data for r in j.records(kinds=["input"])
                 if r.data.get("action") == "void_round"]
    assert [v["before"]["round"] for v in voided] == [where["round"]]
    assert [(t.get("expect"), "refused" in t) for t in tried] == [(where, False), (where, True)]
    # without `expect` (a script as before) a command applies to the table as it is now
    assert live.ask(sam("hold", reason="again"))["ok"]
    assert live.ask(sam("resume", reason="go on"))["ok"]


def test_a_flood_of_malformed_lines_is_answered_every_time_and_logged_a_few_times(live):
    before = [e for e in live.log_lines() if e.get("error") == "malformed"]
    flood = 3000
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(live.sock))
        lines = s.makefile("rb")
        answered = 0
        for _ in range(flood // 100):
            s.sendall(b"{not json\n" * 100)
            for _ in range(100):
                answered += json.loads(lines.readline())["error"] == "malformed"
    assert answered == flood
    logged = [e for e in live.log_lines() if e.get("error") == "malformed"][len(before):]
    assert 1 <= len(logged) <= 20, len(logged)
    assert live.ask(sam("state"))["ok"]          # and the next client is served as ever


def test_a_half_line_then_silence_is_told_and_logged_before_the_hang_up(tmp_path):
    """The controller's own server (a short timeout): a client that sends half a request and
    stalls was hung up on without a word, to it or in the log."""
    store = AccountStore(tmp_path / "u.db", kdf=FAST)
    store.bootstrap("mia", PINS["mia"])
    path = Path(tempfile.mkdtemp(prefix="hst", dir="/tmp")) / "c.sock"
    seen: list[tuple[str, dict]] = []
    srv = ControlServer(path, store, lambda cmd: cmd.reply.set_result({}), idle_timeout_s=0.5)
    import controller.access.server as server_module

    class Spy:
        def __getattr__(self, level):
            return lambda event, **kw: seen.append((event, kw))
    real_log, server_module.log = server_module.log, Spy()
    try:
        with srv, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(path))
            s.sendall(b'{"id": 1, "user": "mia", "pin": "manag')
            told = s.makefile("rb").readline()
            assert s.recv(10) == b""                        # then closed
    finally:
        server_module.log = real_log
        shutil.rmtree(path.parent, ignore_errors=True)
    answer = json.loads(told)
    assert (answer["ok"], answer["error"]) == (False, "timeout")
    assert "no whole request line within 0.5 s" in answer["message"]
    assert [e for e, _ in seen if "silent" in e] == ["control connection silent; closed"]
    assert "manag" not in json.dumps(seen)


def test_a_client_that_never_reads_its_answers_is_hung_up_on_and_logged(tmp_path):
    """Requests sent and sent, answers never read: the server waited on the full socket for
    the timeout and hung up without a line in the log."""
    store = AccountStore(tmp_path / "u.db", kdf=FAST)
    store.bootstrap("mia", PINS["mia"])
    path = Path(tempfile.mkdtemp(prefix="hst", dir="/tmp")) / "c.sock"
    seen: list[str] = []
    srv = ControlServer(path, store, lambda cmd: cmd.reply.set_result({"pad": "x" * 4000}),
                        idle_timeout_s=0.5)
    import controller.access.server as server_module

    class Spy:
        def __getattr__(self, level):
            return lambda event, **kw: seen.append(event)
    real_log, server_module.log = server_module.log, Spy()
    try:
        with srv, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(str(path))
            line = b'{"id": 1, "user": "mia", "token": "t", "action": "nope"}\n'
            with pytest.raises(OSError):            # until the server hangs up
                for _ in range(100_000):
                    s.sendall(line * 100)
    finally:
        server_module.log = real_log
        shutil.rmtree(path.parent, ignore_errors=True)
    assert "control client does not read its answers; closed" in seen
    assert "control connection silent; closed" not in seen


def test_no_file_descriptor_left_does_not_spin_the_control_socket(tmp_path):
    """With the process out of descriptors (its limit lowered while it deals, as a flood of
    connections or a leak would leave it), a client waiting in the socket's backlog kept the
    accepting thread retrying in a loop: a whole core taken from the table's loop, and
    nothing logged. Now one line, a pause between tries, and the table deals at its pace."""
    where = Path(tempfile.mkdtemp(prefix="hst", dir="/tmp"))
    table = Live(where).start()
    import resource
    held: list[socket.socket] = []
    try:
        time.sleep(1.0)
        cpu0, r0, t0 = table.cpu_s(), table.cards(), time.monotonic()
        time.sleep(2.0)
        quiet_cpu = (table.cpu_s() - cpu0) / (time.monotonic() - t0)
        quiet_rate = (table.cards() - r0) / (time.monotonic() - t0)
        soft, hard = resource.prlimit(table.pid, resource.RLIMIT_NOFILE)
        limit = table.fds() + 3
        resource.prlimit(table.pid, resource.RLIMIT_NOFILE, (limit, hard))
        for _ in range(8):          # three are taken, the rest wait in the backlog
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(table.sock))
            held.append(s)
        time.sleep(0.5)
        cpu0, r0, t0 = table.cpu_s(), table.cards(), time.monotonic()
        time.sleep(3.0)
        flooded_cpu = (table.cpu_s() - cpu0) / (time.monotonic() - t0)
        flooded_rate = (table.cards() - r0) / (time.monotonic() - t0)
        for s in held:
            s.close()
        held.clear()
        resource.prlimit(table.pid, resource.RLIMIT_NOFILE, (soft, hard))
        assert table.ask(sam("state"), timeout=20)["ok"]        # served once there are some
    finally:
        for s in held:
            s.close()
        err = table.stop()
        shutil.rmtree(where, ignore_errors=True) if table.proc.returncode == 0 else None
    assert table.proc.returncode == 0, err
    assert flooded_cpu < quiet_cpu + 0.35, (quiet_cpu, flooded_cpu)
    assert flooded_rate > 0.6 * quiet_rate, (quiet_rate, flooded_rate)     # cards a second


# --------------------------------------------------------------------------- HTTP
def _status(s: socket.socket) -> str:
    """What the server said on `s` so far (its status line), or open, closed, reset."""
    s.setblocking(False)
    try:
        data = s.recv(4096, socket.MSG_PEEK)
    except BlockingIOError:
        return "open"
    except OSError:
        return "reset"
    return data.split(b"\r\n", 1)[0].decode() if data else "closed"


@pytest.mark.parametrize("server", ["http", "metrics"])
def test_web_clients_that_never_send_a_whole_request_are_capped_and_closed(live, server):
    """A client that connects and sends nothing, or half its headers, kept a descriptor for
    ever (1,500 of them: 1,520 descriptors in the table's process; at a limit of 1,024 the
    console was refused and the log grew by 108 MB in 30 s). Now at most 128 at once, the
    rest answered 503 at once, and each closed with a 408 after 5 s."""
    port = getattr(live, server)
    quiet = live.fds()
    idle, half = [], []
    for i in range(200):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        if i % 2:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: table\r\n")
            half.append(s)
        else:
            idle.append(s)
    deadline = time.monotonic() + 3
    while True:         # the server takes them in as fast as it can; a full one answers 503
        at_first = [_status(s) for s in idle + half]
        turned = [st for st in at_first if st.startswith("HTTP/1.1 503") or st == "reset"]
        if len(turned) == 200 - 128 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert len(turned) == 200 - 128 and at_first.count("open") == 128, at_first
    assert any(st.startswith("HTTP/1.1 503") for st in turned)
    assert live.fds() <= quiet + 128 + 8
    assert live.ask(sam("state"))["ok"]             # the console is served meanwhile
    time.sleep(5.5)
    later = [_status(s) for s in idle + half]
    assert later.count("open") == 0, later
    assert len([st for st in later if st.startswith("HTTP/1.1 408")]) == 128
    for s in idle + half:
        s.close()
    time.sleep(0.2)
    assert live.fds() <= quiet + 2
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: table\r\nConnection: close\r\n\r\n")
        assert s.makefile("rb").readline().startswith(b"HTTP/1.1 200")
    said = [e["event"] for e in live.log_lines()]
    assert said.count("web connections at the cap; turning new ones away") >= 1
    assert said.count("web client sent no whole request in time; closed") >= 1


def test_a_flood_of_bad_http_requests_is_answered_and_logged_a_few_times(live):
    """uvicorn logged every bad request on stderr, in its own format, outside the table's log:
    a client sending garbage made 3,000 lines a second."""
    for _ in range(400):
        with socket.create_connection(("127.0.0.1", live.http), timeout=5) as s:
            s.sendall(b"\x00\x01 not http\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 400")
    assert "Invalid HTTP request" not in live.err.read_text(errors="replace")
    logged = [e for e in live.log_lines() if e.get("event", "").startswith("Invalid HTTP")]
    assert 1 <= len(logged) <= 10, len(logged)
