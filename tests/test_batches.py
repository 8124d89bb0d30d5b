"""On a virtual clock the loop commits many inputs in one transaction: nothing of a batch is
printed, fed or acknowledged before the batch is on disk, a batch that cannot be written is
announced by nobody, and a process killed mid-batch has announced only what the journal holds."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.commands._simulation import run_simulation
from controller.errors import TableStopped
from controller.journal import Journal, JournalError
from controller.settings.profile import load_profile
from tests.test_one_loop import env, printed_are_journaled

ROOT = Path(__file__).resolve().parents[1]


class OnDisk:
    """A publisher that checks, for every event it is given, that another connection to the
    journal file already sees the event's record (committed, not merely staged)."""

    def __init__(self, path: str):
        self.path = path
        self.reader: Journal | None = None
        self.seqs: list[int] = []

    def publish(self, event: dict) -> None:
        if "seq" not in event:
            return
        if self.reader is None:
            self.reader = Journal.open_readonly(self.path)
        assert self.reader.last_seq >= event["seq"], f"announced before it was committed: {event}"
        self.seqs.append(event["seq"])


def test_a_batch_is_announced_only_once_it_is_committed(tmp_path, monkeypatch):
    path = str(tmp_path / "j.db")
    commits = []
    real = Journal.commit

    def counting(self):
        commits.append(self.staged)
        return real(self)

    monkeypatch.setattr(Journal, "commit", counting)
    check = OnDisk(path)
    events = run_simulation(load_profile("macau"), seed=3, journal_path=path, publishers=[check])
    check.reader.close()
    rounds = [e for e in events if e["event"] == "round_result"]
    assert len(rounds) > 60 and len(check.seqs) > 400
    with Journal.open_readonly(path) as j:
        inputs = j.count(exclude_kinds=[k for k in {r.kind for r in j.records()} if k != "input"])
        assert j.verify().ok
    written = [n for n in commits if n]
    # many inputs share a transaction: far fewer commits than inputs
    assert inputs > 300 and len(written) * 4 < inputs, (inputs, len(written))


def test_a_batch_that_cannot_be_committed_is_announced_by_nobody(tmp_path, monkeypatch):
    path = str(tmp_path / "j.db")
    real = Journal.commit
    calls = {"n": 0}

    def failing(self):
        if self.staged:
            calls["n"] += 1
            if calls["n"] == 3:        # the third batch: staged, never written
                self._staged, self._last_seq, self._head = [], *self._committed
                raise JournalError(f"journal {self.path}: cannot append: disk I/O error")
        return real(self)

    monkeypatch.setattr(Journal, "commit", failing)
    check = OnDisk(path)
    with pytest.raises(TableStopped, match="before announcing anything more"):
        run_simulation(load_profile("macau"), seed=3, journal_path=path, publishers=[check])
    check.reader.close()
    with Journal.open_readonly(path) as j:
        last = j.last_seq
    assert check.seqs and max(check.seqs) <= last


@pytest.mark.parametrize("after_lines", [120, 333])
def test_killed_mid_batch_it_has_printed_only_what_is_journaled(tmp_path, after_lines, durable):
    journal = tmp_path / "j.db"
    args = [sys.executable, "-m", "controller.cli", "simulate", "--profile", "macau",
            "--seed", "6", "--journal", str(journal), "--json"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(), cwd=ROOT)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if len(lines) >= after_lines:
            os.kill(proc.pid, signal.SIGKILL)       # wherever the next batch stands
            break
    lines += proc.stdout.readlines()                # what was written before the kill
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert printed_are_journaled("".join(lines), journal) > 20
    # and the restart deals the shoe to its end from what is durable
    again = subprocess.run(args, capture_output=True, text=True, env=env(), cwd=ROOT,
                           timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    ended = [json.loads(x) for x in again.stdout.splitlines() if '"shoe_ended"' in x]
    assert ended and ended[-1]["reason"] == "cut_card"
