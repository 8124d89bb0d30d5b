"""A lost shoe link, reviewed by the supervisor: the devices in their own process (TCP), the
table in its own (`tablectl run`), the supervisor through `tablectl override` on the socket.

While the link is down the table holds; when it is back the hold shows the reads that arrived
meanwhile; the dealer reports the card whose read died with the link, the supervisor enters it
and accepts the reads: every card is then dealt in shoe order, nothing piles up as "not due",
and every override is in the audit trail.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from controller.access.client import ControllerUnavailable, request
from controller.journal import Journal
from drivers.shuffler import protocol as shuffler_protocol
from simulators.shuffler import ShufflerModel

ROOT = Path(__file__).resolve().parents[1]
SEED, DECKS, DROP_AT = 5, 8, 30
PINS = {"mia": "manager-pin-1", "sam": "supervisor-pin-1"}


def tablectl(args, env, cwd, timeout=60.0):
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def seeded_shoe():
    """The shoe `tablectl devices --seed SEED` deals first."""
    factory = [code for _ in range(DECKS) for code in shuffler_protocol.CARD_CODES]
    return ShufflerModel(seed=SEED, decks=DECKS).shuffled(factory)


@pytest.fixture
def where():
    path = Path(tempfile.mkdtemp(prefix="link", dir="/tmp"))   # short: a socket path
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Rig:
    def __init__(self, where: Path):
        self.dir = where
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
        self.env.update(PYTHONPATH=str(ROOT), TABLECTL_CONSOLE_USERS_DB=str(where / "users.db"))
        if "TABLECTL_STORAGE_FSYNC" in os.environ:
            self.env["TABLECTL_STORAGE_FSYNC"] = os.environ["TABLECTL_STORAGE_FSYNC"]
        self.socket, self.journal = where / "ctl.sock", where / "journal.db"
        self.procs: list[subprocess.Popen] = []

    def accounts(self):
        done = tablectl(["users", "add", "mia", "--role", "manager"],
                        dict(self.env, TABLECTL_NEW_PIN=PINS["mia"]), self.dir)
        assert done.returncode == 0, done.stderr
        done = tablectl(["users", "add", "sam", "--role", "supervisor", "--as", "mia"],
                        dict(self.env, TABLECTL_PIN=PINS["mia"], TABLECTL_NEW_PIN=PINS["sam"]),
                        self.dir)
        assert done.returncode == 0, done.stderr

    def devices(self) -> str:
        """The blind dealer deals on whatever the table does: at 150 ms a card the shoe lasts
        a minute, longer than the review takes on a busy machine, so the review always comes
        before the cut card."""
        dev = subprocess.Popen([sys.executable, "-m", "controller.cli", "devices", "--tcp", "--blind",
                                "--seed", str(SEED), "--pace-ms", "150",
                                "--fault", f"drop@{DROP_AT}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=self.env, cwd=self.dir)
        self.procs.append(dev)
        line = dev.stdout.readline()
        assert line.startswith("shoe:"), line + dev.stderr.read()
        return line.split()[1]

    def run(self, url: str) -> subprocess.Popen:
        self.out = open(self.dir / "run.jsonl", "wb")
        self.err = open(self.dir / "run.err", "wb")
        ctl = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config",
             str(ROOT / "config" / "table.toml"), "--profile", "macau", "--shoe-url", url,
             "--shuffler-url", "none", "--journal", str(self.journal), "--socket",
             str(self.socket), "--shoes", "1", "--json"],
            cwd=self.dir, env=dict(self.env, TABLECTL_SHOE_RECONNECT_INITIAL_S="0.2",
                                   TABLECTL_SHOE_RECONNECT_MAX_S="0.5"),
            stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL)
        self.procs.append(ctl)
        return ctl

    def state(self) -> dict:
        answer = request(self.socket, {"user": "sam", "pin": PINS["sam"], "action": "state"},
                         timeout=10)
        assert answer["ok"], answer
        return answer["result"]

    def wait(self, done, what, timeout=40.0, until_exit=None) -> dict | None:
        """The table's state once `done(state)`; None if `until_exit` (the table's process)
        ended meanwhile, as one given `--shoes 1` does at the end of its shoe."""
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            try:
                last = self.state()
            except ControllerUnavailable:
                if until_exit is not None and until_exit.poll() is not None:
                    return None
                time.sleep(0.1)
                continue
            if done(last):
                return last
            time.sleep(0.1)
        raise AssertionError(f"no {what} in {timeout} s; last: {last and last.get('state')}\n"
                             + (self.dir / "run.err").read_text()[-2000:])

    def override(self, action, *args, reason="checked at the table") -> subprocess.CompletedProcess:
        return tablectl(["override", action, *args, "--reason", reason, "--user", "sam",
                         "--socket", str(self.socket)], dict(self.env, TABLECTL_PIN=PINS["sam"]),
                        self.dir)

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


@pytest.mark.slow
def test_reads_after_a_lost_link_are_reviewed_then_dealt_in_shoe_order(where):
    rig = Rig(where)
    rig.accounts()
    shoe = seeded_shoe()
    try:
        ctl = rig.run(rig.devices())
        back = rig.wait(lambda s: s["hold"] is not None and s["hold"]["link_back"]
                        and s["hold"]["queued"], "link back with reads to review")
        assert "link_lost" in [p["kind"] for p in back["hold"]["problems"]]
        assert "accept_reads" in back["hold"]["actions"]
        # a refused command changes nothing: the reads wait for review, resume is refused
        refused = rig.override("resume")
        assert refused.returncode == 1 and "accept or discard them first" in refused.stderr
        # the card whose read died with the link: the dealer reports it, the supervisor
        # reads it off the card and enters it; it joins the reads under review, first
        assert rig.override("report_unread", "read lost with the link").returncode == 0
        entered = rig.override("enter_card", shoe[DROP_AT], reason="read off the card")
        assert entered.returncode == 0, entered.stderr
        held = rig.state()
        assert held["hold"]["queued"][0] == shoe[DROP_AT]
        assert held["hold"]["queued"] == shoe[DROP_AT:DROP_AT + len(held["hold"]["queued"])]
        accepted = rig.override("accept_reads", reason="the reads match the cards dealt")
        assert accepted.returncode == 0, accepted.stderr
        # on a busy machine the blind dealer may have dealt the shoe out meanwhile: the table
        # then deals the reads it accepted to the cut card and ends (the journal shows it)
        rig.wait(lambda s: s["hold"] is None and s["shoe"]["cards_out"] > DROP_AT + 30,
                 "dealing on after the review", until_exit=ctl)
        ctl.terminate()                      # a clean stop (SIGTERM) mid-shoe
        assert ctl.wait(timeout=20) in (0, 130, -15), (where / "run.err").read_text()[-2000:]
    finally:
        rig.close()
    with Journal.open_readonly(rig.journal) as j:
        records = list(j.records())
        assert j.verify().ok
    kinds = [r.data.get("kind") for r in records if r.kind == "irregularity"]
    assert "card_not_due" not in kinds and kinds.count("link_lost") == 1
    cards = [r.data for r in records if r.kind == "card"]
    assert len(cards) > DROP_AT + 30                               # dealt on after the review
    assert [c["code"] for c in cards] == shoe[:len(cards)]        # every card, in shoe order
    assert [c["n"] for c in cards] == list(range(1, len(cards) + 1))
    accepted_cards = [c for c in cards if "held" in c["flags"] or "entered" in c["flags"]]
    assert accepted_cards[0]["code"] == shoe[DROP_AT] and "entered" in accepted_cards[0]["flags"]
    audit = tablectl(["audit", "--journal", str(rig.journal), "--json"], rig.env, where)
    actions = [json.loads(line)["action"] for line in audit.stdout.splitlines()]
    assert actions == ["enter_card", "accept_reads"]              # the refused resume is not
