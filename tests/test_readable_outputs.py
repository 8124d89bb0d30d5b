"""What people read from `tablectl run`, `audit` and `recall` (and `floor --once`, in
test_floor.py): every state, hold, reason and code in words from the catalogue, never as the
program spells it, and no log line among them.

`run` is started as a person starts it at a terminal: its readable lines and its stderr on one
stream. Its log then goes to a file beside the journal, which the first line names; a hold is
one line; a restart says where it resumed in the table's language."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_words import leaks

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]
#: a log line as structlog writes it: JSON, or the console renderer's "… [warning ] …"
LOG_LINE = re.compile(r'^\s*\{.*"(event|level)"|\[\s*(debug|info|warning|error|critical)\s*\]')


def env(**extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e.update(PYTHONPATH=str(ROOT), TABLECTL_STORAGE_FSYNC="false", **extra)
    return e


def scanned(text: str) -> str:
    """The text, once it is known to hold no machine name and no log line."""
    assert not leaks(text), leaks(text)
    logged = [line for line in text.splitlines() if LOG_LINE.search(line)]
    assert not logged, logged[:3]
    assert "Traceback" not in text
    return text


def run_until(args: list[str], until, journal: Path, *, language: str, timeout: float = 30.0,
              **extra: str) -> str:
    """`tablectl run` on the embedded simulator, stdout and stderr on one pipe (as on a
    terminal), until `until(output)`; then a clean stop. Its whole output."""
    out = journal.parent / f"run-{time.monotonic_ns()}.out"
    with open(out, "wb") as sink:
        proc = subprocess.Popen(
            TABLECTL + ["run", "--config", str(ROOT / "config" / "table.toml"), "--pace", "0.01",
                        "--seed", "3", "--no-control", "--journal", str(journal), *args],
            stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT, stdin=subprocess.DEVNULL,
            env=env(TABLECTL_TABLE_LANGUAGE=language, **extra))
    try:
        deadline = time.monotonic() + timeout
        while not until(out.read_text(encoding="utf-8", errors="replace")):
            assert proc.poll() is None, out.read_text()
            assert time.monotonic() < deadline, out.read_text()
            time.sleep(0.05)
        proc.terminate()
        assert proc.wait(timeout=20) == 0, out.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out.read_text(encoding="utf-8")


def test_run_says_the_table_in_words_one_line_a_hold_and_keeps_its_log_apart(tmp_path):
    journal = tmp_path / "j.db"
    # the 30th card cannot be read: the table holds mid-round (no supervisor comes)
    said = run_until(["--no-virtual-supervisor"], lambda text: "!! " in text and "#4" in text,
                     journal, language="en",
                     TABLECTL_SIMULATOR_FAULTS="misread@30")
    log = tmp_path / "tablectl.log"
    lines = scanned(said).splitlines()
    assert lines[0] == f"tablectl run: The log is written to {log} (this screen shows the " \
                       "table's lines only)."
    assert "== Shoe 1: profile macau, 8 decks, 416 cards, the cut card after card" in said
    assert re.search(r"^#1 +PLAYER \S+ \S+.* = \d   BANKER .* = \d   (PLAYER WINS|BANKER WINS|"
                     r"TIE)", said, re.M)
    held = [line for line in lines if "The shoe could not read a card" in line]
    assert held == ["!! On hold: The shoe could not read a card: enter it from the card on the "
                    "layout, or void the round."]
    # the log has what the screen does not
    assert '"event": "table on hold"' in log.read_text()
    # started again on the same journal, in Chinese: where it resumed, in words
    again = run_until(["--no-virtual-supervisor"], lambda text: "第 2 靴" in text, journal,
                      language="zh_Hant")
    scanned(again)
    resumed = [line for line in again.splitlines() if "日誌" in line and "接續" in line]
    assert resumed and "第 1 靴，第 5 局，因牌靴無法讀取的牌而暫停" in resumed[0], again[:800]
    assert "閒" in again and "莊" in again and "作廢" in again
    assert "VOID" not in again and "devices_lost" not in again and "not_counted" not in again


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_log_file_that_cannot_be_written_is_one_line_not_a_traceback_per_line(tmp_path):
    """The log beside the journal shares its disk: full, every line the log writes fails.
    The people at the table read that once, in one line, never Python's "--- Logging error
    ---" and a traceback for every line among theirs; the table deals on (its journal is its
    record, and says for itself when it cannot be written)."""
    journal = tmp_path / "j.db"
    log = tmp_path / "tablectl.log"
    log.symlink_to("/dev/full")             # a file whose every write finds the disk full
    said = run_until([], lambda text: "!! " in text and "#6" in text, journal, language="en",
                     TABLECTL_SIMULATOR_FAULTS="misread@30")    # a hold: a warning logged
    lines = scanned(said).splitlines()
    failing = [line for line in lines if "cannot be written" in line]
    assert failing == [f"tablectl: the log {log} cannot be written (No space left on device); "
                       "its lines are dropped until it can"], said[:2000]
    assert any("The shoe could not read a card" in line for line in lines)


@pytest.fixture(scope="module")
def overrides_journal(tmp_path_factory):
    """A simulated shoe with a misread the virtual supervisor clears: an override, a hold and
    its resume, an irregularity, a corrected round."""
    from controller.cli import main
    path = tmp_path_factory.mktemp("words") / "journal.db"
    assert main(["simulate", "--profile", "macau", "--seed", "7", "--fault", "misread@40",
                 "--journal", str(path)]) == 0
    return path


@pytest.mark.parametrize("language", ["en", "th"])
def test_audit_and_recall_say_the_record_in_words(overrides_journal, language, capsys,
                                                  monkeypatch):
    from controller.cli import main
    monkeypatch.setenv("TABLECTL_TABLE_LANGUAGE", language)

    def tablectl(*args: str) -> str:
        capsys.readouterr()
        assert main(list(args)) == 0
        said = capsys.readouterr()
        return said.out + said.err                    # all a person at the terminal sees
    audit = scanned(tablectl("audit", "--journal", str(overrides_journal)))
    recall = scanned(tablectl("recall", "--journal", str(overrides_journal), "--last", "80"))
    if language == "en":
        assert "Enter card" in audit and "state: on hold → a round is being dealt" in audit
        assert "hold: a card the shoe could not read → none" in audit
        assert "the Banker's third card" in recall and "entered by hand" in recall
        assert "on hold: a card the shoe could not read" in recall and "resumed" in recall
        assert "the cut card came out" in recall
    else:
        assert "ป้อนไพ่" in audit and "ไพ่ที่ชูอ่านไม่ได้" in audit
        assert "ไพ่ตัดออกแล้ว" in recall and "ป้อนด้วยมือ" in recall
    # the --json of both stays language-neutral: the codes
    assert '"action": "enter_card"' in tablectl("audit", "--journal", str(overrides_journal),
                                                "--json")


def test_making_the_first_account_says_it_in_one_readable_line(tmp_path):
    done = subprocess.run(TABLECTL + ["users", "add", "mia", "--role", "manager", "--db",
                                      str(tmp_path / "users.db")], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, cwd=ROOT, timeout=60,
                          env=env(TABLECTL_NEW_PIN="mia-manager-7"))
    assert done.returncode == 0, done.stdout
    assert scanned(done.stdout).splitlines() == ["created the first account: 'mia' (manager)"]
