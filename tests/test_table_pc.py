"""`tablectl run` on a table PC, as a process: a shoe that is not there at start is waited for
(and dealt from as soon as it appears), the health view through the control socket, SIMULATOR
on every prompt of a simulated table, software that is not approved held until a manager
accepts it, and a backup taken while the table writes its journal."""
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller import cli
from controller.access.accounts import AccountStore, ScryptParams
from controller.access.client import request
from controller.journal import Journal

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]
CONFIG = str(ROOT / "config" / "table.toml")
FAST = ScryptParams(n=2 ** 4, r=1, p=1)
PINS = {"mia": "manager-pin-1", "sam": "supervisor-pin-1"}


class Proc:
    """A process whose output lines are collected as they come."""

    def __init__(self, argv, env):
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, text=True, env=env, cwd=ROOT)
        self.out, self.err = [], []
        for stream, lines in ((self.p.stdout, self.out), (self.p.stderr, self.err)):
            threading.Thread(target=lambda s=stream, ls=lines: ls.extend(iter(s.readline, "")),
                             daemon=True).start()

    def wait_for(self, what, lines, predicate, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [x for x in list(lines) if predicate(x)]
            if found:
                return found[0]
            if self.p.poll() is not None:
                time.sleep(0.2)            # let the readers take the last lines
                found = [x for x in list(lines) if predicate(x)]
                if found:
                    return found[0]
                pytest.fail(f"{what}: the process ended ({self.p.returncode}): "
                            f"{''.join(self.err)[-2000:]}")
            time.sleep(0.05)
        pytest.fail(f"{what}: not within {timeout} s; stderr: {''.join(self.err)[-2000:]}")

    def events(self, kind=None):
        evs = [json.loads(x) for x in list(self.out) if x.startswith("{")]
        return [e for e in evs if kind is None or e["event"] == kind]

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
        try:
            self.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        return self.p.returncode


def env_for(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    env.update(PYTHONPATH=str(ROOT), TABLECTL_CONSOLE_USERS_DB=str(tmp_path / "users.db"),
               TABLECTL_CONSOLE_SOCKET=str(tmp_path / "ctl.sock"),
               TABLECTL_STORAGE_JOURNAL=str(tmp_path / "journal.db"), **extra)
    if "TABLECTL_STORAGE_FSYNC" in os.environ:
        env["TABLECTL_STORAGE_FSYNC"] = os.environ["TABLECTL_STORAGE_FSYNC"]
    store = AccountStore(tmp_path / "users.db", kdf=FAST)
    store.bootstrap("mia", PINS["mia"])
    store.add("sam", "supervisor", PINS["sam"], by="mia")
    return env


def ask(tmp_path, user, action, reason="", **args):
    return request(str(tmp_path / "ctl.sock"), {"user": user, "pin": PINS[user],
                                                "action": action, "args": args,
                                                "reason": reason})


def wait_socket(tmp_path, proc):
    proc.wait_for("the control socket", [1], lambda _: (tmp_path / "ctl.sock").exists())


def test_a_missing_shoe_is_waited_for_and_dealing_starts_when_it_appears(tmp_path, capsys,
                                                                        monkeypatch):
    from controller.journal.anchor import make_key
    key = make_key(str(tmp_path / "anchor.key"))       # as `tablectl install` makes it
    env = env_for(tmp_path, TABLECTL_SHOE_RECONNECT_INITIAL_S="0.2",
                  TABLECTL_SHOE_RECONNECT_MAX_S="0.4",
                  TABLECTL_STORAGE_ANCHOR_KEY_FILE=str(tmp_path / "anchor.key"))
    shoe = tmp_path / "shoe"
    devices = Proc(TABLECTL + ["devices", "--blind", "--seed", "5", "--pace-ms", "150"], env)
    run = Proc(TABLECTL + ["run", "--config", CONFIG, "--shoe-url", str(shoe),
                           "--shuffler-url", "none", "--json"], env)
    try:
        said = run.wait_for("the line saying it waits", run.err, lambda x: "NO SHOE" in x)
        assert "no_devices" in said and str(shoe) in said and "no such port" in said
        wait_socket(tmp_path, run)
        monkeypatch.setenv("TABLECTL_PIN", PINS["sam"])
        monkeypatch.setenv("TABLECTL_CONSOLE_SOCKET", str(tmp_path / "ctl.sock"))
        capsys.readouterr()
        assert cli.main(["status", "--user", "sam", "--json"]) == 0
        health = json.loads(capsys.readouterr().out)
        assert list(health["conditions"]) == ["no_devices"]
        assert health["devices"]["shoe"]["link"] == "waiting" and not health["simulator"]
        assert health["state"] == "closed"              # no shoe was started meanwhile
        state = ask(tmp_path, "sam", "state")["result"]
        assert state["prompt"].startswith("NO SHOE") and state["conditions"]
        assert run.events("prompt")[0]["condition"] == "no_devices"
        assert run.events("shoe_started") == [] and run.p.poll() is None
        # the shoe is plugged in: its port appears where the configuration says
        pty = devices.wait_for("the simulated shoe", devices.out,
                               lambda x: x.startswith("shoe:")).split()[1]
        shoe.symlink_to(pty)
        run.wait_for("a card dealt", run.out, lambda x: '"event":"card"' in x)
        run.wait_for("the line saying it deals", run.err, lambda x: "the shoe is there" in x)
        assert cli.main(["status", "--user", "sam"]) == 0
        lines = capsys.readouterr().out
        assert "! " not in lines and f"Shoe      {shoe} (beetek): up; last read" in lines
        assert f"; head signed (key {key.key_id}, " in lines
        assert "frames" in lines and "garbage bytes" in lines and "Clock" in lines
        health = ask(tmp_path, "sam", "health")["result"]
        assert health["conditions"] == {} and health["devices"]["shoe"]["counters"]["cards"] >= 1
        assert health["journal"]["last_seq"] > 0 and health["journal"]["bytes"] > 0
        assert not any("SIMULATOR" in e["text"] for e in run.events("prompt"))
    finally:
        assert run.stop() == 0, "".join(run.err)[-2000:]
        devices.stop()


def test_a_bad_shoe_url_still_stops_at_once(tmp_path, capsys):
    assert cli.main(["run", "--config", CONFIG, "--shoe-url", "foo://bar", "--no-control",
                     "--journal", str(tmp_path / "j.db")]) == 2
    assert "unknown scheme foo://" in capsys.readouterr().err
    assert not (tmp_path / "j.db").exists()


def test_unapproved_software_holds_a_simulated_table_until_a_manager_accepts_it(tmp_path,
                                                                              capsys):
    env = env_for(tmp_path, TABLECTL_SOFTWARE_APPROVED="0" * 64)
    run = Proc(TABLECTL + ["run", "--config", CONFIG, "--seed", "4", "--pace", "0.002",
                           "--json"], env)
    try:
        wait_socket(tmp_path, run)
        held = run.wait_for("the hold", run.out, lambda x: '"condition":"software"' in x)
        assert "SIMULATOR: HELD: software" in held and "accept_software" in held
        # a supervisor cannot deal past it, nor can a manager without a reason
        refused = ask(tmp_path, "sam", "open_bets")
        assert not refused["ok"] and "HELD" in refused["message"]
        assert not ask(tmp_path, "sam", "accept_software", reason="x")["ok"]   # a manager's
        assert run.events("shoe_started") == []
        done = ask(tmp_path, "mia", "accept_software", reason="lab approval 42 pending")
        assert done["ok"], done
        run.wait_for("dealing", run.out, lambda x: '"event":"round_result"' in x)
        health = ask(tmp_path, "sam", "health")["result"]
        assert health["software"]["accepted"]["user"] == "mia" and health["simulator"]
        prompts = run.events("prompt")
        assert prompts and all(e["text"].startswith("SIMULATOR: ") and e["simulator"]
                               for e in prompts)
        # a backup of the journal the table is writing right now
        copy = tmp_path / "backup.db"
        capsys.readouterr()
        assert cli.main(["backup", "--journal", str(tmp_path / "journal.db"), str(copy)]) == 0
        assert "verified: ok" in capsys.readouterr().out
    finally:
        assert run.stop() == 0, "".join(run.err)[-2000:]
    with Journal.open_readonly(copy) as j:
        accepted = [r.data for r in j.records(kinds=("override",))]
    assert [(o["action"], o["user"], o["role"], o["args"]["software"][:8]) for o in accepted] \
        == [("accept_software", "mia", "manager", health["software"]["software_sha256"][:8])]


def test_a_live_table_without_an_anchor_key_is_told_its_journal_is_not_signed():
    from controller.console.health import health_lines, problems
    unsigned = {"table": "T1", "state": "idle", "simulator": False,
                "journal": {"path": "j.db", "bytes": 10, "last_seq": 5, "anchors": None}}
    assert problems(unsigned) == ["the journal's head is not signed: give it an anchor key "
                                  "([storage] anchor_key_file)"]
    assert "; head not signed (no anchor key)" in "\n".join(health_lines(unsigned))
    assert problems(dict(unsigned, simulator=True)) == []    # a demo table is not a live one
    signed = dict(unsigned, journal=dict(unsigned["journal"], anchors={
        "key_id": "ab12", "count": 3, "last_seq": 4, "since_last": 1}))
    assert problems(signed) == []
    assert "; head signed (key ab12, 3 anchor(s), 1 record(s) since the last)" in \
        "\n".join(health_lines(signed))
