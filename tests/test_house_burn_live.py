"""The house burn and the invalid shoe at a live table: `tablectl run` as a process on the
embedded simulator (its virtual dealer pulls a card only when the table asks for one), the
dealer and the supervisor acting through the control socket as people do, then `tablectl
recall` and `tablectl report` read the journal.

One shoe: round 1 is dealt; at round 2's start the dealer announces a house burn and the
supervisor confirms it, so exactly one card is burned before the round's hands; round 3 is
dealt; then the supervisor finds the shoe was dealt without its shoe-start burn and declares it
invalid. The shoe is a seeded one, so every card is checked against the order it lay in.
(A process start, a real clock and an HTML report with its charts: the slow set;
tests/test_house_burn.py covers the same behaviour through the service's loop on the virtual
clock in every run.)
"""
from __future__ import annotations

import os
import subprocess
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from controller.access.accounts import AccountStore, ScryptParams
from controller.access.client import ControllerUnavailable, request
from controller.journal import Journal
from drivers.shuffler import protocol as shuffler_protocol
from simulators.shuffler import ShufflerModel

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]
SEED, DECKS = 11, 8
FAST = ScryptParams(n=2 ** 4, r=1, p=1)
PINS = {"mia": "manager-pin-1", "sam": "supervisor-pin-1", "ann": "dealer-pin-1"}


def seeded_shoe() -> list[str]:
    """The first shoe the embedded rig deals with SEED."""
    factory = [code for _ in range(DECKS) for code in shuffler_protocol.CARD_CODES]
    return ShufflerModel(seed=SEED, decks=DECKS).shuffled(factory)


class Live:
    def __init__(self, where: Path):
        self.dir = where
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
        self.env.update(PYTHONPATH=str(ROOT), TABLECTL_CONSOLE_USERS_DB=str(where / "users.db"),
                        TABLECTL_CONSOLE_SOCKET=str(where / "ctl.sock"),
                        TABLECTL_STORAGE_JOURNAL=str(where / "journal.db"))
        if "TABLECTL_STORAGE_FSYNC" in os.environ:       # the suite's setting (conftest)
            self.env["TABLECTL_STORAGE_FSYNC"] = os.environ["TABLECTL_STORAGE_FSYNC"]
        store = AccountStore(where / "users.db", kdf=FAST)
        store.bootstrap("mia", PINS["mia"])
        store.add("sam", "supervisor", PINS["sam"], by="mia")
        store.add("ann", "dealer", PINS["ann"], by="mia")
        self.err: list[str] = []
        self.p = subprocess.Popen(
            TABLECTL + ["run", "--config", str(ROOT / "config" / "table.toml"), "--profile",
                        "macau", "--seed", str(SEED), "--pace", "0.002", "--betting-seconds",
                        "120", "--shoes", "1", "--json"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            text=True, env=self.env, cwd=where)
        threading.Thread(target=lambda: self.err.extend(iter(self.p.stderr.readline, "")),
                         daemon=True).start()

    def ask(self, user: str, action: str, reason: str = "", **args) -> dict:
        return request(str(self.dir / "ctl.sock"), {"user": user, "pin": PINS[user],
                                                    "action": action, "args": args,
                                                    "reason": reason}, timeout=10)

    def wait(self, what: str, done, timeout: float = 40.0) -> dict:
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                pytest.fail(f"{what}: the table ended ({self.p.returncode}): "
                            f"{''.join(self.err)[-2000:]}")
            try:
                answer = self.ask("sam", "state")
            except (ControllerUnavailable, FileNotFoundError, ConnectionError):
                time.sleep(0.1)
                continue
            last = answer.get("result")
            if answer.get("ok") and done(last):
                return last
            time.sleep(0.05)
        pytest.fail(f"{what}: not within {timeout} s; last state {last and last.get('state')}; "
                    f"{''.join(self.err)[-2000:]}")

    def betting(self, round_no: int) -> dict:
        return self.wait(f"bets open for round {round_no}", lambda s: s["state"] == "betting"
                         and s["shoe"]["rounds"] == round_no)

    def stop(self) -> int:
        if self.p.poll() is None:
            self.p.terminate()
        try:
            return self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait()


@pytest.mark.slow
def test_a_house_burn_and_an_invalid_shoe_at_a_live_table():
    where = Path(tempfile.mkdtemp(prefix="hb", dir="/tmp"))      # short: a socket path
    live = Live(where)
    try:
        live.betting(1)
        assert live.ask("ann", "close_bets")["ok"]
        live.betting(2)
        # the dealer announces; the table waits for the supervisor, not for a card
        announced = live.ask("ann", "house_burn")
        assert announced["ok"], announced
        waiting = live.ask("sam", "state")["result"]
        assert waiting["prompt"].endswith(
            "House burn announced: wait for a supervisor to confirm it")
        assert waiting["expects"] == "bets" and "confirm_house_burn" in waiting["actions"]
        refused = live.ask("ann", "close_bets")         # bets wait for the burn
        assert not refused["ok"] and "house burn" in refused["message"]
        assert not live.ask("ann", "confirm_house_burn", reason="x")["ok"]   # a supervisor's
        assert not live.ask("sam", "confirm_house_burn")["ok"]               # with a reason
        confirmed = live.ask("sam", "confirm_house_burn", reason="house right, art. 8")
        assert confirmed["ok"], confirmed
        # the virtual dealer draws the one card asked for; then bets may close
        burned = live.wait("the house's card", lambda s: s["expects"] == "bets"
                           and "close_bets" in s["actions"])
        assert burned["state"] == "betting" and burned["round"]["burned_before"] == []
        assert live.ask("ann", "close_bets")["ok"]
        live.betting(3)
        assert live.ask("ann", "close_bets")["ok"]
        # three rounds dealt: the shoe-start burn was forgotten, the supervisor says so
        live.betting(4)
        assert not live.ask("ann", "declare_invalid", reason="x")["ok"]       # not a dealer's
        declared = live.ask("sam", "declare_invalid", reason="no burn at the shoe's start, "
                            "seen on the camera")
        assert declared["ok"], declared
        assert live.p.wait(timeout=60) == 0, "".join(live.err)[-2000:]
    finally:
        live.stop()
    try:
        _check_the_record(live, where)
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _check_the_record(live: Live, where: Path) -> None:
    journal = where / "journal.db"
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok
        records = list(j.records())
    shoe = seeded_shoe()
    cards = [r.data for r in records if r.kind == "card"]
    assert [c["code"] for c in cards] == shoe[:len(cards)]           # in shoe order
    house = [c for c in cards if "house_burn" in c["flags"]]
    assert len(house) == 1 and house[0]["slot"] == "burn" and house[0]["round"] == 2
    after = cards[cards.index(house[0]) + 1]
    assert after["round"] == 2 and after["slot"] != "burn"            # then the hands
    stages = [(r.data["stage"], r.data.get("confirmed_by")) for r in records
              if r.kind == "house_burn"]
    assert stages == [("announced", None), ("due", "sam"), ("burned", "sam")]
    results = [r.data for r in records if r.kind == "round_result"]
    assert [r["round"] for r in results] == [1, 2, 3] and not any(r.get("void") for r in results)
    ended, = [r.data for r in records if r.kind == "shoe_ended"]
    assert ended["reason"] == "invalid" and ended["cause"] == "shoe_burn_forgotten"
    assert ended["results"] == "stand" and ended["settled"] == 3
    assert not [r for r in records if r.kind == "round_voided"]       # the seed keeps them
    overrides = [r.data["action"] for r in records if r.kind == "override"]
    assert overrides == ["confirm_house_burn", "declare_invalid"]
    env = {**live.env, "TABLECTL_PIN": PINS["sam"]}
    recall = subprocess.run(TABLECTL + ["recall", "--journal", str(journal), "--last", "5"],
                            capture_output=True, text=True, env=env, cwd=where, timeout=60)
    assert recall.returncode == 0, recall.stderr
    code = house[0]["code"]
    from controller.words.fields import card as card_name
    assert (f"{card_name(code, 'en')} burned for the house, announced by ann, confirmed by sam"
            in recall.stdout), recall.stdout
    assert ("Shoe 1 was declared invalid: its burn at the start was forgotten; the results of "
            "its 3 rounds stand") in recall.stdout
    report = where / "report.html"
    done = subprocess.run(TABLECTL + ["report", "--journal", str(journal), "--output",
                                      str(report)], capture_output=True, text=True, env=env,
                          cwd=where, timeout=120)
    assert done.returncode == 0, done.stderr
    page = report.read_text()
    assert "House burns" in page and "announced by ann, confirmed by sam" in page
    assert "its 3 rounds stand" in page
