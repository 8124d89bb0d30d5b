"""End to end: `tablectl run` as a real process on the embedded simulator, cleared by a person.

The controller runs as a subprocess (its own journal, control socket and user store in a temp
directory), the accounts are made with `tablectl users`, and a misread puts the table on hold.
The supervisor clears it through the Textual console (driven by its pilot, in this process,
against the real socket), typing the card's true code. The true code is known because a seeded
simulated shuffler deals a reproducible shoe: the same model, with the same seed, shuffles the
same factory-ordered cards here, and the cards read before the misread must match it.
"""
from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from controller.console.app import ConsoleApp
from controller.console.client import ConsoleClient, Credentials
from controller.console.screens import ActionScreen
from controller.access.client import ControllerUnavailable, request
from controller.journal import Journal
from drivers.shuffler import protocol as shuffler_protocol
from simulators.shuffler import ShufflerModel

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config" / "table.toml"
SEED = 7
DECKS = 8                     # the macau profile's shoe
MISREAD_AT = 12               # 0-based draw index: after the 11-card start burn and P1 → B1
# the next card (P2) is unreadable too: the round stays on the console's screen, whatever the
# timing, until the test clears that second hold itself
SECOND_MISREAD_AT = MISREAD_AT + 1
PACE_S = "0.005"
PINS = {"mia": "manager-pin-1", "sam": "supervisor-pin-1"}
SIZE = (130, 48)
START_S = 20.0                # the longest the controller may take to reach a given state
FINISH_S = 45.0               # … to deal the rest of the shoe and exit


def tablectl(args: list[str], env: dict[str, str], cwd: Path,
             timeout: float = 30.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def seeded_shoe(seed: int) -> list[str]:
    """The first shoe the embedded rig deals with this seed: its shuffler model's first shuffle
    of `DECKS` new decks in factory order."""
    factory = [code for _ in range(DECKS) for code in shuffler_protocol.CARD_CODES]
    return ShufflerModel(seed=seed, decks=DECKS).shuffled(factory)


class LiveTable:
    """`tablectl run` in a temp directory: accounts, the process, its socket and journal."""

    def __init__(self, where: Path, faults: str = "", pace_s: str = PACE_S):
        self.pace_s = pace_s
        self.dir = where
        self.journal = where / "journal.db"
        self.socket = where / "ctl.sock"
        self.users_db = where / "users.db"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
        # the user store by environment only: `tablectl users` and `tablectl run` must agree
        self.env.update(TABLECTL_CONSOLE_USERS_DB=str(self.users_db),
                        TABLECTL_SIMULATOR_FAULTS=faults, TABLECTL_SIMULATOR_SEED=str(SEED))
        self.proc: subprocess.Popen | None = None
        self.out = where / "run.jsonl"
        self.err = where / "run.err"

    def add_accounts(self) -> None:
        """The first account is a manager; the manager adds the supervisor."""
        done = tablectl(["users", "add", "mia", "--role", "manager"],
                        dict(self.env, TABLECTL_NEW_PIN=PINS["mia"]), self.dir)
        assert done.returncode == 0, done.stderr
        done = tablectl(["users", "add", "sam", "--role", "supervisor", "--as", "mia"],
                        dict(self.env, TABLECTL_PIN=PINS["mia"], TABLECTL_NEW_PIN=PINS["sam"]),
                        self.dir)
        assert done.returncode == 0, done.stderr
        assert "added 'sam' (supervisor)" in done.stdout
        assert self.users_db.is_file()

    def start(self) -> None:
        # the supervisor here is a person at the console: no virtual one
        args = ["run", "--config", str(CONFIG), "--journal", str(self.journal),
                "--socket", str(self.socket), "--pace", self.pace_s, "--shoes", "1", "--json",
                "--no-virtual-supervisor"]
        # output to files: a full shoe of JSON lines would fill a pipe nobody reads
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "controller.cli", *args],
                                         cwd=self.dir, env=self.env, stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL)

    def log(self) -> str:
        return self.err.read_text(errors="replace")[-3000:]

    def ask(self, action: str, user: str = "sam", **fields: Any) -> dict:
        return request(self.socket, {"user": user, "pin": PINS[user], "action": action,
                                     **fields}, timeout=10)

    def state(self) -> dict:
        answer = self.ask("state")
        assert answer["ok"], answer
        return answer["result"]

    def wait_state(self, done, what: str, timeout: float = START_S) -> dict:
        """Poll `state` until done(state) (the controller exiting early fails at once)."""
        deadline = time.monotonic() + timeout
        last: dict | None = None
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, \
                f"tablectl run exited ({self.proc.returncode}) before {what}:\n{self.log()}"
            try:
                last = self.state()
            except ControllerUnavailable:
                time.sleep(0.1)       # the socket is not up yet
                continue
            if done(last):
                return last
            time.sleep(0.1)
        raise AssertionError(f"no {what} within {timeout:g} s; last state: "
                             f"{last and last.get('state')}\n{self.log()}")

    def finish(self, timeout: float = FINISH_S) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"tablectl run did not finish the shoe within {timeout:g} s:"
                                 f"\n{self.log()}") from None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def records(self, *kinds: str) -> list:
        with Journal.open_readonly(self.journal) as journal:
            return list(journal.records(kinds=kinds or None))


@pytest.fixture
def short_dir():
    # AF_UNIX paths are limited to ~107 bytes; pytest's tmp_path can be longer
    path = Path(tempfile.mkdtemp(prefix="e2e", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def live(short_dir):
    table = LiveTable(short_dir, faults=f"misread@{MISREAD_AT},misread@{SECOND_MISREAD_AT}")
    table.add_accounts()
    table.start()
    yield table
    table.stop()


def on_hold(state: dict) -> bool:
    return state["state"] == "hold"


def screen_text(app) -> str:
    """What the terminal shows, as plain text."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    return console.export_text()


async def until(pilot, condition, tries: int = 200) -> None:
    """Wait for `condition` (fails only if it never happens)."""
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition never became true")


async def clear_hold_in_console(socket: Path, code: str, reason: str) -> tuple[str, str]:
    """As the supervisor: read the hold panel, press E, type the code, reason and PIN, send.
    Returns what the screen showed before and after."""
    client = ConsoleClient(socket, poll_timeout_s=10, send_timeout_s=15)
    # a long refresh: the test refreshes by hand, so nothing depends on timing
    app = ConsoleApp(client, user="sam", refresh_s=60.0,
                     credentials=Credentials("sam", PINS["sam"]))
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await app.workers.wait_for_complete()
        await pilot.pause()
        before = screen_text(app)
        assert app.query_one("#act-enter_card").has_class("-needed")
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ActionScreen))
        assert "This is one of the actions that clear the hold." in screen_text(app)
        app.screen.query_one("#arg-code").focus()
        await pilot.press(*code)
        app.screen.query_one("#reason").focus()
        await pilot.press(*reason)
        assert app.screen.query_one("#user").value == "sam"
        app.screen.query_one("#pin").focus()
        await pilot.press(*PINS["sam"], "enter")
        await until(pilot, lambda: not isinstance(app.screen, ActionScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        after = screen_text(app)
    return before, after


@pytest.mark.slow
def test_misread_cleared_through_the_console(live):
    shoe = seeded_shoe(SEED)
    true_code = shoe[MISREAD_AT]
    held = live.wait_state(on_hold, "hold for the misread")

    # the shoe is the seeded one: every card read before the misread is the predicted card
    cards = [r.data for r in live.records("card")]
    assert [c["code"] for c in cards] == shoe[:MISREAD_AT]
    [problem] = held["hold"]["problems"]
    assert problem["kind"] == "unreadable_card"
    assert held["hold"]["resume_to"] == "dealing.B1"
    assert held["round"]["hands"] == {"player": [shoe[MISREAD_AT - 1]], "banker": []}
    assert held["shoe"]["cards_out"] == MISREAD_AT + 1      # the unread card is out too
    assert true_code not in json.dumps(held)                  # an undealt card is never shown

    reason = "misread; card read by eye"
    before, after = asyncio.run(clear_hold_in_console(live.socket, true_code, reason))
    assert "TABLE ON HOLD" in before and "The shoe could not read a card" in before
    assert "[E] Enter card" in before
    assert "Enter card: done. The table now: a round is being dealt." in after, after
    assert "(entered by hand)" in after                       # the typed card is marked

    # the second misread (P2): cleared over the socket, the round goes on from there
    held = live.wait_state(on_hold, "hold for the second misread")
    assert held["hold"]["resume_to"] == "dealing.P2"
    answer = live.ask("enter_card", args={"code": shoe[SECOND_MISREAD_AT]},
                      reason="second misread")
    assert answer["ok"], answer
    resumed = live.state()
    assert resumed["hold"] is None
    assert resumed["shoe"]["cards_out"] > SECOND_MISREAD_AT

    assert live.finish() == 0, live.log()

    records = live.records()
    entered = [r.data for r in records if r.kind == "card" and "entered" in r.data["flags"]]
    assert [(c["code"], c["slot"], c["n"]) for c in entered] == [
        (true_code, "B1", MISREAD_AT + 1), (shoe[SECOND_MISREAD_AT], "P2", SECOND_MISREAD_AT + 1)]
    cards = [r.data for r in records if r.kind == "card"]
    # every card of the seeded shoe came out in order, the entered one in its place
    assert [c["code"] for c in cards] == shoe[:len(cards)]
    kinds = [r.kind for r in records]
    assert "shoe_ended" in kinds
    assert [r.data["winner"] for r in records if r.kind == "round_result"]

    audit = tablectl(["audit", "--journal", str(live.journal), "--json"], live.env, live.dir)
    assert audit.returncode == 0, audit.stderr
    override, second = [json.loads(line) for line in audit.stdout.splitlines()]
    assert (second["action"], second["reason"]) == ("enter_card", "second misread")
    assert (override["user"], override["role"], override["action"], override["args"],
            override["reason"]) == ("sam", "supervisor", "enter_card", {"code": true_code}, reason)
    assert override["before"]["state"] == "hold" and override["before"]["hold"] == \
        "unreadable_card"
    assert override["after"]["state"] == "dealing.P2"
    assert override["after"]["hands"]["banker"] == [true_code]


@pytest.mark.slow
def test_wrong_pin_override_is_refused_and_the_table_runs_on(short_dir):
    # a shoe that lasts longer than a refused command takes (a process started, a PIN checked)
    # on a slow machine: the table must still be dealing after it
    live = LiveTable(short_dir, pace_s="0.03")
    live.add_accounts()
    live.start()
    try:
        dealing = live.wait_state(lambda s: s["state"].startswith("dealing."), "dealing")
        refused = tablectl(["override", "hold", "--reason", "check the shoe", "--user", "sam",
                            "--socket", str(live.socket)],
                           dict(live.env, TABLECTL_PIN="not-the-pin"), live.dir)
        assert refused.returncode == 1, refused.stderr
        assert json.loads(refused.stdout)["error"] == "auth_failed"
        assert "refused (auth_failed): wrong PIN for 'sam'" in refused.stderr
        out = dealing["shoe"]["cards_out"]
        later = live.wait_state(lambda s: s["shoe"]["cards_out"] > out + 5, "more cards")
        assert later["hold"] is None
        assert live.finish() == 0, live.log()
    finally:
        live.stop()
    records = live.records()
    failed = [r.data for r in records if r.kind == "auth" and not r.data["ok"]]
    # failures are journaled as a summary per account and minute, written by the clean stop
    assert [(a["event"], a["user"], a["count"], a["codes"], a["contexts"]) for a in failed] == [
        ("auth_failures", "sam", 1, {"wrong_pin": 1}, {"hold": 1})]
    assert not [r for r in records if r.kind in ("override", "hold")]
    assert "shoe_ended" in [r.kind for r in records]
    audit = tablectl(["audit", "--journal", str(live.journal)], live.env, live.dir)
    assert audit.returncode == 0 and audit.stdout.startswith("No overrides")
