"""The control API on a real Unix socket: auth, roles, reasons, bad input, `tablectl override`."""
from __future__ import annotations

import grp
import json
import os
import queue
import shutil
import socket
import stat
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.access import server as control_api
from controller.access.accounts import AccountStore, ScryptParams
from controller.cli import main
from controller.commands.override import parse_args
from controller.access.server import Command, ControlError, ControlServer, refused
from controller.access.client import ControllerUnavailable, console_setting, request
from controller.errors import CommandRefused, InputError

FAST = ScryptParams(n=2 ** 4, r=1, p=1)
PINS = {"mia": "manager-pin", "sam": "supervisor-pin", "ann": "dealer-pin",
        "aud": "auditor-pin", "dan": "disabled-pin"}


class FakeClock:
    now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


class FakeTable:
    """Stands in for the application: a single worker thread drains the event queue."""

    def __init__(self):
        self.commands: list[Command] = []
        self.queue: queue.Queue = queue.Queue()
        self.answer = lambda cmd: {"done": cmd.action, "args": dict(cmd.args)}
        self.worker = threading.Thread(target=self._run, daemon=True)
        self.worker.start()

    def submit(self, command: Command) -> None:
        self.commands.append(command)
        self.queue.put(command)

    def _run(self) -> None:
        while (cmd := self.queue.get()) is not None:
            try:
                result = self.answer(cmd)
            except Exception as err:
                cmd.reply.set_exception(err)
            else:
                if result is not NotImplemented:
                    cmd.reply.set_result(result)

    def stop(self) -> None:
        self.queue.put(None)


@pytest.fixture
def short_dir():
    # AF_UNIX paths are limited to ~107 bytes; pytest's tmp_path can be longer
    path = Path(tempfile.mkdtemp(prefix="ctl", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def template_db(tmp_path_factory):
    """The staff accounts, built once; each test works on a copy."""
    path = tmp_path_factory.mktemp("accounts") / "users.db"
    s = AccountStore(path, kdf=FAST, clock=FakeClock())
    s.bootstrap("mia", PINS["mia"])
    for name, role in (("sam", "supervisor"), ("ann", "dealer"), ("aud", "auditor"),
                       ("dan", "dealer")):
        s.add(name, role, PINS[name], by="mia")
    s.disable("dan", by="mia")
    return path


@pytest.fixture
def store(short_dir, template_db):
    shutil.copy(template_db, short_dir / "users.db")
    return AccountStore(short_dir / "users.db", kdf=FAST, clock=FakeClock())


@pytest.fixture
def table():
    t = FakeTable()
    yield t
    t.stop()


@pytest.fixture
def auths():
    return []


@pytest.fixture
def server(short_dir, store, table, auths):
    # budgets wide enough for one client to lock an account: these tests are about the
    # answers (test_signin.py is about the budgets)
    srv = ControlServer(short_dir / "ctl.sock", store, table.submit, reply_timeout_s=5,
                        on_auth=auths.append, peer_limit=(100, 10.0), account_limit=(100, 10.0))
    with srv:
        yield srv


def ask(server, user="sam", action="state", args=None, reason="", pin=None, **extra):
    payload = {"id": extra.pop("id", 1), "user": user, "pin": PINS.get(user, "x") if pin is None
               else pin, "action": action, "args": args or {}, "reason": reason, **extra}
    return request(server.path, payload, timeout=5)


class Conn:
    """A raw client connection for byte-level tests."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(5)
        self.sock.connect(str(path))
        self.rfile = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def answer(self) -> dict:
        line = self.rfile.readline()
        assert line.endswith(b"\n"), line
        return json.loads(line)

    def close(self) -> None:
        self.rfile.close()
        self.sock.close()


def good_line(rid=9, user="aud", action="state"):
    return json.dumps({"id": rid, "user": user, "pin": PINS[user], "action": action}).encode() \
        + b"\n"


# -- the happy paths --------------------------------------------------------------------------

def test_state_returns_what_submit_answers(server, table, auths):
    table.answer = lambda cmd: {"state": "idle", "shoe": 3}
    resp = ask(server, user="aud", action="state", id="q1")
    assert len(resp.pop("view_token")) >= 24      # a PIN-signed read opens a view session
    assert resp == {"id": "q1", "ok": True, "result": {"state": "idle", "shoe": 3}}
    (cmd,) = table.commands
    assert (cmd.user, cmd.role, cmd.action, cmd.args, cmd.reason) == ("aud", "auditor", "state",
                                                                      {}, "")
    assert [(a.user, a.ok, a.context) for a in auths] == [("aud", True, "state")]


def test_supervisor_override_reaches_the_table_with_its_reason(server, table):
    resp = ask(server, user="sam", action="enter_card", args={"code": "10h"},
               reason="  reader missed it  ")
    assert resp["ok"] and resp["result"] == {"done": "enter_card", "args": {"code": "10h"}}
    cmd = table.commands[-1]
    assert (cmd.user, cmd.role, cmd.reason) == ("sam", "supervisor", "reader missed it")


def test_dealer_action_needs_no_reason(server, table):
    assert ask(server, user="ann", action="open_bets")["ok"]
    assert table.commands[-1].role == "dealer"


def test_supervisor_may_run_the_round(server):
    assert ask(server, user="sam", action="close_bets")["ok"]


# -- refusals ---------------------------------------------------------------------------------

@pytest.mark.parametrize("user, action, args", [
    ("ann", "hold", {}),                       # dealer cannot override
    ("aud", "open_bets", {}),                  # auditor only reads
    ("mia", "void_round", {}),                 # manager does not override play
    ("sam", "change_profile", {"profile": "macau"}),   # supervisor cannot change profiles
    ("ann", "users", {"op": "list"}),
])
def test_role_refusals(server, table, user, action, args):
    resp = ask(server, user=user, action=action, args=args, reason="because")
    assert (resp["ok"], resp["error"]) == (False, "forbidden")
    assert action in resp["message"]
    assert table.commands == []


@pytest.mark.parametrize("action, args", [("hold", {}), ("void_round", {}),
                                          ("enter_card", {"code": "AS"})])
@pytest.mark.parametrize("reason", ["", "   "])
def test_every_override_needs_a_reason(server, table, action, args, reason):
    resp = ask(server, user="sam", action=action, args=args, reason=reason)
    assert resp["error"] == "reason_required"
    assert table.commands == []


def test_manager_override_needs_a_reason(server):
    resp = ask(server, user="mia", action="change_profile", args={"profile": "macau"})
    assert resp["error"] == "reason_required"
    assert ask(server, user="mia", action="change_profile", args={"profile": "macau"},
               reason="between shoes, approved change 42")["ok"]


def test_auth_refusals(server, store, table, auths):
    assert ask(server, user="sam", pin="wrong-pin")["error"] == "auth_failed"
    # a name without an account is answered as a wrong PIN is: nothing tells it has none
    wrong = ask(server, user="sam", pin="whatever")
    unknown = ask(server, user="ghost", pin="whatever")
    assert unknown["error"] == "auth_failed"
    assert unknown["message"] == wrong["message"].replace("'sam'", "'ghost'").replace(
        "3 attempt", "4 attempt")
    assert ask(server, user="dan")["error"] == "disabled"
    for _ in range(5):
        ask(server, user="ann", pin="guess-guess")
    locked = ask(server, user="ann")                  # the right PIN, but locked now
    assert locked["error"] == "locked" and "5 minute" in locked["message"]
    assert table.commands == []
    assert [a.code for a in auths][-3:] == ["wrong_pin", "wrong_pin", "locked"]
    assert all(PINS["ann"] not in json.dumps(a.record()) for a in auths)


def test_unknown_action_is_refused_before_sign_in(server, auths):
    resp = ask(server, user="sam", action="deal_faster", reason="x")
    assert resp["error"] == "unknown_action" and "deal_faster" in resp["message"]
    assert auths == []


@pytest.mark.parametrize("action, args, match", [
    ("enter_card", {}, "needs code"),
    ("enter_card", {"code": "ZZ"}, "not a card code"),
    ("enter_card", {"code": 7}, "expected"),
    ("remove_card", {"code": "AS", "slot": "P1"}, "does not take slot"),
    ("resume", {"minutes": 3}, "takes no arguments"),
    ("hold", {"minutes": 3}, "it takes note"),
    ("remove_card", {"code": "??"}, "not a card code"),
    ("decide", {"name": "punter_on_5"}, "needs value"),
    ("decide", {"name": "punter_on_5", "value": [1]}, "expected"),
    ("switch_mode", {"mode": ""}, "expected"),
])
def test_invalid_args(server, table, action, args, match):
    resp = ask(server, user="sam", action=action, args=args, reason="test")
    assert resp["error"] == "invalid_args"
    assert match in resp["message"]
    assert table.commands == []


def test_overlong_reason_is_refused(server):
    assert ask(server, action="hold", reason="x" * 501)["error"] == "invalid_args"


# -- the table's answers ----------------------------------------------------------------------

def test_table_refusals_map_to_codes(server, table):
    table.answer = lambda cmd: (_ for _ in ()).throw(CommandRefused("no round to void"))
    resp = ask(server, action="void_round", reason="r")
    assert (resp["error"], resp["message"]) == ("wrong_state", "no round to void")
    table.answer = lambda cmd: (_ for _ in ()).throw(refused("mode 'x' unknown", "invalid_args"))
    assert ask(server, action="switch_mode", args={"mode": "x"}, reason="r")["error"] == \
        "invalid_args"
    table.answer = lambda cmd: (_ for _ in ()).throw(InputError("bad profile name"))
    assert ask(server, user="mia", action="change_profile", args={"profile": "?"},
               reason="r")["error"] == "invalid_args"


def test_silent_table_times_out(short_dir, store, table):
    table.answer = lambda cmd: NotImplemented      # never settles the Future
    with ControlServer(short_dir / "t.sock", store, table.submit, reply_timeout_s=0.2) as srv:
        resp = ask(srv, action="state")
    assert resp["error"] == "timeout"


def test_failing_submit_answers_internal_and_server_keeps_serving(short_dir, store):
    calls = []

    def submit(cmd):
        calls.append(cmd)
        if len(calls) == 1:
            raise RuntimeError("queue closed")
        cmd.reply.set_result("fine")

    with ControlServer(short_dir / "f.sock", store, submit) as srv:
        first = ask(srv, action="state")
        assert first["error"] == "internal" and "queue closed" in first["message"]
        second = ask(srv, action="state")
        second.pop("view_token")
        assert second == {"id": 1, "ok": True, "result": "fine"}


# -- bad bytes --------------------------------------------------------------------------------

@pytest.mark.parametrize("line, match", [
    (b"{not json\n", "not JSON"),
    (b"\xff\xfe\n", "not UTF-8"),
    (b"[1, 2]\n", "JSON object"),
    (b'{"id": 3, "user": "sam", "action": "state"}\n', "pin must be"),
    (b'{"id": 3, "user": "sam", "pin": "p", "action": "state", "sudo": true}\n',
     "unknown request key"),
    (b'{"id": 3, "user": "sam", "pin": "p", "action": "state", "args": [1]}\n', "args must"),
    (b'{"id": 3, "user": "sam", "pin": "p", "action": "state", "reason": 5}\n', "reason must"),
    (b'{"id": {"a": 1}, "user": "sam", "pin": "p", "action": "state"}\n', "id must"),
    (b'{"id": 3, "user": "sam", "pin": "p", "action": "decide", "reason": "r", '
     b'"args": {"name": "x", "value": NaN}}\n', "NaN is not allowed"),
    (b"[" * 30000 + b"\n", "nests deeper"),
    (b'{"id": 3, "user": "sam", "pin": "p", "action": "state", "reason": "x\\udc00"}\n',
     "half of a UTF-16 surrogate pair"),
    (b'{"id": 3, "user": "sam", "pin": "p", "action": "state", "args": {"\\ud800": 1}}\n',
     "half of a UTF-16 surrogate pair"),
    (b'{"id": 3, "user": "sam", "pin": "p", "action": "state", "args": {"a": '
     + b"[" * 20 + b"]" * 20 + b"}}\n", "nests deeper"),
])
def test_malformed_requests_get_a_refusal_and_the_connection_keeps_serving(server, table,
                                                                           line, match):
    conn = Conn(server.path)
    try:
        conn.send(line)
        resp = conn.answer()
        assert (resp["ok"], resp["error"]) == (False, "malformed")
        assert match in resp["message"]
        conn.send(b"\n" + good_line(rid=10))          # blank lines are ignored
        assert conn.answer()["id"] == 10
    finally:
        conn.close()
    assert [c.action for c in table.commands] == ["state"]


def test_malformed_request_echoes_its_id(server):
    conn = Conn(server.path)
    try:
        conn.send(b'{"id": "abc", "user": "sam", "action": "state"}\n')
        assert conn.answer()["id"] == "abc"
    finally:
        conn.close()


def test_oversized_line_is_refused_and_others_keep_being_served(short_dir, store, table):
    with ControlServer(short_dir / "o.sock", store, table.submit, max_line=1024) as srv:
        other = Conn(srv.path)
        bad = Conn(srv.path)
        try:
            bad.send(b'{"id": 1, "user": "' + b"a" * 5000)
            resp = bad.answer()
            assert resp["error"] == "malformed" and "longer than 1024" in resp["message"]
            assert bad.rfile.readline() == b""           # framing lost: hung up
            other.send(good_line(rid=77))
            answer = other.answer()
            answer.pop("view_token")
            assert answer == {"id": 77, "ok": True, "result": {"done": "state", "args": {}}}
        finally:
            bad.close()
            other.close()
        assert ask(srv, user="aud")["ok"]


def test_a_half_sent_line_does_not_block_other_clients(server):
    stalled = Conn(server.path)
    try:
        stalled.send(b'{"id": 1, "user": "sa')
        assert ask(server, user="aud")["ok"]
        stalled.send(b'm", "pin": "' + PINS["sam"].encode() + b'", "action": "state"}\n')
        assert stalled.answer()["ok"]
    finally:
        stalled.close()


def test_no_pin_in_the_server_log(server, monkeypatch):
    events = []

    class Recorder:
        def __getattr__(self, level):
            return lambda event, **kw: events.append((event, kw))
    monkeypatch.setattr(control_api, "log", Recorder())
    ask(server, action="hold", reason="spill")
    ask(server, action="hold", reason="spill", pin="Wrong-Secret-77")
    assert any(event == "control command" for event, _ in events)
    text = repr(events)
    assert PINS["sam"] not in text and "Wrong-Secret-77" not in text


# -- the socket -------------------------------------------------------------------------------

def test_socket_mode_0660_and_group(short_dir, store, table):
    group = grp.getgrgid(os.getgid()).gr_name
    with ControlServer(short_dir / "g.sock", store, table.submit, group=group) as srv:
        st = os.stat(srv.path)
        assert stat.S_ISSOCK(st.st_mode)
        assert stat.S_IMODE(st.st_mode) == 0o660
        assert st.st_gid == os.getgid()
    assert not (short_dir / "g.sock").exists()       # removed on close


def test_close_hangs_up_on_open_connections(short_dir, store, table):
    srv = ControlServer(short_dir / "c.sock", store, table.submit).start()
    conn = Conn(srv.path)
    try:
        conn.send(good_line(rid=1))
        assert conn.answer()["ok"]
        srv.close()
        try:
            conn.send(good_line(rid=2))
        except OSError:
            pass
        assert conn.rfile.readline() == b""
    finally:
        conn.close()
    assert len(table.commands) == 1


def test_unknown_group_is_a_config_error(short_dir, store, table):
    with pytest.raises(ControlError, match="does not exist"):
        ControlServer(short_dir / "u.sock", store, table.submit,
                      group="no-such-group-xyz").start()
    assert not (short_dir / "u.sock").exists()


def test_stale_socket_is_removed(short_dir, store, table):
    path = short_dir / "s.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()                                      # a socket file nobody listens on
    with ControlServer(path, store, table.submit) as srv:
        assert ask(srv, user="aud")["ok"]


def test_live_socket_and_plain_file_are_not_removed(server, short_dir, store, table):
    with pytest.raises(ControlError, match="another controller"):
        ControlServer(server.path, store, table.submit).start()
    assert ask(server, user="aud")["ok"]
    plain = short_dir / "plain"
    plain.write_text("keep me")
    with pytest.raises(ControlError, match="not a socket"):
        ControlServer(plain, store, table.submit).start()
    assert plain.read_text() == "keep me"


# -- the client and `tablectl override` -------------------------------------------------------

def test_request_without_a_controller_names_the_socket(short_dir):
    missing = short_dir / "nobody.sock"
    with pytest.raises(ControllerUnavailable, match=str(missing)):
        request(missing, {"user": "sam", "pin": "x", "action": "state"})


def test_request_adds_an_id(server):
    resp = request(server.path, {"user": "aud", "pin": PINS["aud"], "action": "state"})
    assert isinstance(resp["id"], str) and resp["ok"]


def test_parse_override_args():
    assert parse_args("enter_card", ["AS"]) == {"code": "AS"}
    assert parse_args("decide", ["punter_on_5", "true"]) == {"name": "punter_on_5",
                                                             "value": True}
    assert parse_args("decide", ["value=3", "name=x"]) == {"value": 3, "name": "x"}
    assert parse_args("decide", ["name=x", "2.5"]) == {"name": "x", "value": 2.5}
    assert parse_args("decide", ["x", "nan"]) == {"name": "x", "value": "nan"}
    assert parse_args("recall", ["5"]) == {"count": 5}
    assert parse_args("report_misplaced", ["detail=P2 and B2 swapped"]) == {
        "detail": "P2 and B2 swapped"}
    assert parse_args("hold", ["spill on the layout"]) == {"note": "spill on the layout"}
    with pytest.raises(InputError, match="takes no arguments"):
        parse_args("resume", ["now"])
    with pytest.raises(InputError, match="unexpected argument"):
        parse_args("hold", ["one", "two"])
    with pytest.raises(InputError, match="given twice"):
        parse_args("enter_card", ["code=AS", "code=KD"])


def test_override_cli(server, table, monkeypatch, capsys):
    monkeypatch.setenv("TABLECTL_PIN", PINS["sam"])
    sock = str(server.path)
    assert main(["override", "enter_card", "KD", "--reason", "misread", "--user", "sam",
                 "--socket", sock]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] and out["result"]["args"] == {"code": "KD"}
    assert table.commands[-1].reason == "misread"

    # an override without a reason is not sent: one line says what to give
    assert main(["override", "hold", "--user", "sam", "--socket", sock]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert 'hold is an override: give --reason "why"' in captured.err
    # … and the controller refuses it all the same when asked without one
    assert request(sock, {"user": "sam", "pin": PINS["sam"], "action": "hold",
                          "reason": ""})["error"] == "reason_required"

    monkeypatch.setenv("TABLECTL_USER", "ann")
    monkeypatch.setenv("TABLECTL_PIN", PINS["ann"])
    assert main(["override", "void_round", "--reason", "x", "--socket", sock]) == 1
    assert "forbidden" in capsys.readouterr().err


def test_override_cli_without_a_controller(short_dir, monkeypatch, capsys):
    monkeypatch.setenv("TABLECTL_PIN", "whatever")
    missing = str(short_dir / "gone.sock")
    assert main(["override", "state", "--user", "aud", "--socket", missing]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and missing in err


def test_override_cli_needs_a_user(monkeypatch, capsys):
    monkeypatch.delenv("TABLECTL_USER", raising=False)
    assert main(["override", "state", "--socket", "/nonexistent.sock"]) == 2
    assert "--user" in capsys.readouterr().err


def test_socket_path_from_config(short_dir, monkeypatch):
    config = short_dir / "table.toml"
    config.write_text('[console]\nsocket = "/run/tablectl/ctl.sock"\ngroup = "croupiers"\n')
    monkeypatch.delenv("TABLECTL_CONSOLE_SOCKET", raising=False)
    assert console_setting("socket", None, config) == "/run/tablectl/ctl.sock"
    assert console_setting("group", None, config) == "croupiers"
    assert console_setting("socket", "/tmp/x.sock", config) == "/tmp/x.sock"
    monkeypatch.setenv("TABLECTL_CONSOLE_SOCKET", "/env.sock")
    assert console_setting("socket", None, config) == "/env.sock"
    with pytest.raises(InputError, match="no such config"):
        console_setting("users_db", None, short_dir / "missing.toml")
    config.write_text('[console]\nsocket = 5\n')
    monkeypatch.delenv("TABLECTL_CONSOLE_SOCKET")
    with pytest.raises(InputError, match="console.socket"):
        console_setting("socket", None, config)


def test_a_view_token_reads_without_the_pin_and_never_acts(server, table, store):
    table.answer = lambda cmd: {"state": "idle"}
    token = ask(server, user="aud", action="state")["view_token"]
    resp = request(server.path, {"user": "aud", "token": token, "action": "state"})
    assert resp["ok"] and resp["result"] == {"state": "idle"} and "view_token" not in resp
    sam = ask(server, user="sam", action="state")["view_token"]
    refused = request(server.path, {"user": "sam", "token": sam, "action": "hold",
                                    "reason": "test"})
    assert refused["error"] == "auth_failed" and "only reads" in refused["message"]
    stolen = request(server.path, {"user": "sam", "token": token, "action": "state"})
    assert stolen["error"] == "auth_failed"         # a token belongs to its user
    store.disable("aud", by="mia")
    gone = request(server.path, {"user": "aud", "token": token, "action": "state"})
    assert gone["error"] == "disabled"


@settings(max_examples=40, deadline=None)
@given(depth=st.integers(9, 40000), kind=st.sampled_from(["[", '{"a":']),
       closed=st.booleans())
def test_generated_deep_nesting_is_malformed_never_internal(depth, kind, closed):
    """However deep a line nests (within the line limit), the answer is `malformed`."""
    close = ("]" if kind == "[" else "}") * depth if closed else ""
    inner = "1" if closed else ""
    line = (kind * depth + inner + close).encode()
    if len(line) > control_api.MAX_LINE:
        line = line[:control_api.MAX_LINE]
    srv = ControlServer("/nonexistent/c.sock", None, lambda cmd: None)     # never started
    answer = srv.handle_line(line)
    assert answer["error"] == "malformed", answer
