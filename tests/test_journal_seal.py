"""The journal's seal: a start leaves the older records to be checked while the table deals only
when the file is as its writer left it, and checks them all the same.

- A clean stop seals the journal (with the anchor key): the next start checks what it builds on
  and the records after the seal before anything else, and the older ones while it deals.
- A crash leaves the seal of the writer's last checkpoint (or of its start): the same.
- Anything that wrote the file since (a record edited in place, a copy put over it, a `touch`
  that keeps its times, a write-ahead log put beside a journal sealed closed), a seal changed,
  made with another key or missing: it vouches for nothing, and the start checks every record
  before the first card, as without a seal.
- A record rewritten through the write-ahead log after a crash, which the seal cannot see: the
  table deals, and the check of the older records stops it, naming the record.
- The writer seals after its own checkpoints as it writes, and never seals a file another hand
  wrote under it (nor after any write that failed).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from controller.cli import main
from controller.journal import Journal, seal
from controller.journal.anchor import load_key, make_key
from controller.journal.proof import check_at_start
from tests.journalfile import data_of, stored_of, write_over_in_place

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = str(ROOT / ".venv" / "bin" / "tablectl")


def simulate(path: Path, key: Path | None, *more: str) -> int:
    extra = ["--anchor-key", str(key)] if key is not None else []
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return main(["simulate", "--profile", "macau", "--seed", "5", "--journal",
                         str(path), *extra, *more])
        except SystemExit as exit_:
            return int(exit_.code or 0)


@pytest.fixture
def here(tablectl_here):
    """`tablectl` in this process (tests/conftest.py)."""
    return tablectl_here


@pytest.fixture
def sealed(tmp_path, monkeypatch):
    """A shoe dealt by `tablectl simulate` with an anchor key and stopped cleanly."""
    monkeypatch.setenv("TABLECTL_STORAGE_FSYNC", "false")
    key = tmp_path / "anchor.key"
    make_key(str(key))
    path = tmp_path / "journal.db"
    assert simulate(path, key, "--shoes", "1") == 0
    return path, key


def vouch(path: Path, key: Path) -> seal.Vouched:
    with Journal.open_readonly(path) as j:
        return seal.vouched(str(path), load_key(str(key)), j.record_hash, j.last_seq)


def start_check(path: Path, key: Path):
    # (read-only: a writer's close would merge the write-ahead log into the file, which is
    # not sealed then)
    with Journal.open_readonly(path) as j:
        return check_at_start(j, load_key(str(key)), budget=10), j.last_seq


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    env["TABLECTL_STORAGE_FSYNC"] = "false"
    return env


def _crash(path: Path, key: Path, inputs: int = 120) -> None:
    """A second simulate killed `inputs` inputs into its shoe (kill -9, a process of its own)."""
    done = subprocess.run([TABLECTL, "simulate", "--profile", "macau", "--seed", "5",
                           "--journal", str(path), "--anchor-key", str(key), "--shoes", "2",
                           "--fault", f"crash@{inputs}"], capture_output=True, text=True,
                          env=_env(), timeout=120)
    assert done.returncode in (-9, 137), (done.returncode, done.stderr[-2000:])


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "table.toml"
    config.write_text("[storage]\nverify_before_start = 10\n")
    return config


def _run(here, path: Path, key: Path, tmp_path: Path, *more: str):
    return here("run", "--config", str(_config(tmp_path)), "--journal", str(path),
                "--no-control", "--pace", "0", "--json", "--anchor-key", str(key), *more,
                cwd=tmp_path, timeout=120)


def _dealing(path: Path, key: Path, tmp_path: Path, until, timeout: float = 90,
             more: tuple = ()):
    """`tablectl run` as a process of its own, dealing with no end, until `until(event)` is
    true of an event it printed (then stopped: SIGTERM) or it exits; (exit code, events,
    stderr)."""
    env = _env()
    proc = subprocess.Popen([TABLECTL, "run", "--config", str(_config(tmp_path)), "--journal",
                             str(path), "--no-control", "--pace", "0", "--json",
                             "--anchor-key", str(key), *more], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    printed = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            printed.append(json.loads(line))
            if until(printed[-1]):
                proc.send_signal(signal.SIGTERM)
                break
        _, err = proc.communicate(timeout=timeout)
    finally:
        timer.cancel()
        proc.kill()
    return proc.returncode, printed, err


def test_a_clean_stop_seals_the_journal_and_the_next_start_deals_while_it_checks_the_rest(
        sealed, tmp_path, here):
    path, key = sealed
    held = json.loads(Path(seal.seal_path(str(path))).read_text())
    with Journal.open_readonly(path) as j:
        last, end = j.last_record("anchor"), j.last_seq
    assert held["upto_seq"] == end and held["wal"] is False         # sealed closed, all of it
    assert last is not None and last.data["verified"] == last.data["upto_seq"]
    check, _ = start_check(path, key)
    # what the restart builds on (the stop's snapshot) and after it before anything else; the
    # rest vouched for, and still to check
    assert check.vouched == end and check.checked_after == check.snapshot.upto_seq
    assert check.pending == check.snapshot.upto_seq > 10
    # dealing until the first anchor: signed only once the older records were checked, and
    # then a checkpoint
    code, printed, err = _dealing(path, key, tmp_path, lambda e: e["event"] == "anchor")
    assert code == 0, err[-2000:]
    first = err.splitlines()[0]
    assert "resumed" in first.lower() and "checked while the table deals" in first, first
    # no gate: the first prompt is the table's own, not the journal check's
    assert printed[0].get("condition") != "journal_check", printed[0]
    assert any(e["event"] == "card" for e in printed)
    assert printed[-1]["event"] == "anchor" and printed[-1]["verified"] == printed[-1]["upto_seq"]
    check = here("verify-journal", "--journal", str(path), "--key", str(key), cwd=tmp_path)
    assert check.returncode == 0, check.stdout
    with Journal.open_readonly(path) as j:
        assert json.loads(Path(seal.seal_path(str(path))).read_text())["upto_seq"] == j.last_seq


def test_a_stop_waits_for_the_check_so_every_start_finds_the_journal_sealed(sealed, tmp_path,
                                                                          here):
    """A table that deals one shoe and stops, again and again: each stop waits for the check
    of the older records its start left, so it signs its end and seals the journal, and the
    next start deals at once again."""
    path, key = sealed
    for _ in range(2):
        done = _run(here, path, key, tmp_path, "--shoes", "1")
        assert done.returncode == 0, done.stderr[-2000:]
        assert "checked while the table deals" in done.stderr.splitlines()[0], done.stderr
        printed = [json.loads(x) for x in done.stdout.splitlines()]
        assert printed[-1]["event"] == "anchor" and printed[-1]["reason"] == "stop"
        assert printed[-1]["verified"] == printed[-1]["upto_seq"]
        with Journal.open_readonly(path) as j:
            assert vouch(path, key).upto_seq == j.last_seq


def test_a_crash_leaves_a_seal_the_restart_builds_on(sealed, tmp_path, here):
    path, key = sealed
    _crash(path, key)
    assert os.path.getsize(f"{path}-wal") > 0
    v = vouch(path, key)
    check, end = start_check(path, key)
    assert v.upto_seq > 10 and check.vouched == v.upto_seq, v
    # the records after the seal (the crashed run's, in the write-ahead log) were checked at
    # the start; the ones before it are left to the check while the table deals
    assert check.checked_after <= v.upto_seq < end and check.pending == check.checked_after
    done = _run(here, path, key, tmp_path, "--shoes", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "checked while the table deals" in done.stderr.splitlines()[0], done.stderr


def _touch(path: Path) -> None:
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))    # the same times: a new ctime


def _copied(path: Path) -> None:
    shutil.copy2(path, f"{path}.copy")
    os.replace(f"{path}.copy", path)


def _wal(path: Path) -> None:
    Path(f"{path}-wal").write_bytes(b"\0" * 4096)


def _seal_changed(path: Path) -> None:
    target = Path(seal.seal_path(str(path)))
    held = json.loads(target.read_text())
    held["upto_seq"] -= 1
    target.write_text(json.dumps(held))


def _other_key(path: Path) -> None:
    other = path.parent / "other.key"
    make_key(str(other))
    with Journal.open_readonly(path) as j:
        seal.write(str(path), load_key(str(other)), j.last_seq, j.record_hash(j.last_seq),
                   closed=True)


def _no_seal(path: Path) -> None:
    os.unlink(seal.seal_path(str(path)))


def _fifo(path: Path) -> None:
    os.unlink(seal.seal_path(str(path)))
    os.mkfifo(seal.seal_path(str(path)))        # reading it would wait for a writer


def _nested(path: Path) -> None:
    Path(seal.seal_path(str(path))).write_text("[" * 4000)


def _symlink(path: Path) -> None:
    target = Path(seal.seal_path(str(path)))
    os.replace(target, path.parent / "elsewhere")
    os.symlink(path.parent / "elsewhere", target)


def _edited(path: Path) -> None:
    db = sqlite3.connect(path)
    _edited_in(db)
    db.close()


@pytest.mark.parametrize("change, why", [
    (_touch, "written since it was sealed"),
    (_copied, "written since it was sealed"),
    (_edited, "written since it was sealed"),
    (_wal, "a write-ahead log appeared"),
    (_seal_changed, "does not match its signature"),
    (_other_key, "another key"),
    (_no_seal, "no seal"),
    (_fifo, "not a regular file"),
    (_symlink, "cannot be read"),
    (_nested, "cannot be read"),
])
def test_a_seal_that_does_not_hold_vouches_for_nothing(sealed, change, why):
    path, key = sealed
    assert vouch(path, key).upto_seq > 0
    change(path)
    v = vouch(path, key)
    assert v.upto_seq == 0 and why in v.why, v
    if change is not _wal:          # (a write-ahead log of zeros: SQLite opens it as empty)
        check, _ = start_check(path, key)
        # every record before what the restart builds on waits for the check before the
        # first card, from the first record
        assert check.vouched == 0 and check.rest_after == 0 and check.pending > 10


def test_an_edited_journal_whose_seal_it_voided_is_refused_before_the_first_card(sealed,
                                                                               tmp_path, here):
    path, key = sealed
    _edited(path)
    done = _run(here, path, key, tmp_path, "--shoes", "1")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "checked before the first card" in done.stderr.splitlines()[0], done.stderr
    printed = [json.loads(x) for x in done.stdout.splitlines()]
    assert printed and all(e["event"] == "prompt" for e in printed)        # nothing dealt
    assert "chain broken at seq" in done.stderr.splitlines()[-1], done.stderr


@pytest.mark.parametrize("shoes", [None, 1])
def test_a_record_rewritten_through_the_write_ahead_log_stops_the_table_while_it_deals(
        sealed, tmp_path, here, shoes):
    """After a crash a write-ahead log stands beside the sealed file; a frame added to it can
    rewrite an older page and leave the file as it was sealed. The table deals on the seal,
    and its check of the older records stops it: while it deals, or (one shoe dealt before
    the check is done) at its stop, which waits for the check."""
    path, key = sealed
    _crash(path, key)
    before = vouch(path, key)
    # the edit goes to the write-ahead log; the process dying leaves it there, unmerged, as a
    # crash would (a connection closed last would merge it into the file)
    edit = subprocess.run([sys.executable, "-c", _EDIT_IN_WAL, str(path)], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert edit.returncode == 0, edit.stderr
    assert vouch(path, key) == before and before.upto_seq > 0      # the seal cannot see it
    # a table with no end of shoes: the check stops it, or the timeout kills it
    code, printed, err = _dealing(path, key, tmp_path, lambda e: False,
                                  more=() if shoes is None else ("--shoes", str(shoes)))
    lines = err.splitlines()
    assert code == 2, err[-2000:]
    assert "checked while the table deals" in lines[0], err
    assert "does not verify" in lines[-1] and "chain broken at seq" in lines[-1], err
    # nothing was signed on it: no anchor after the start
    assert not any(e["event"] == "anchor" for e in printed)


_EDIT_IN_WAL = """
import os, sqlite3, sys
from tests.test_journal_seal import _edited_in
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA wal_autocheckpoint=0")
_edited_in(db)
os._exit(0)
"""


def _edited_in(db: sqlite3.Connection) -> None:
    seq, kind, stored = db.execute("SELECT seq, kind, data FROM records WHERE kind = 'input' "
                                   "AND data LIKE '%card%' ORDER BY seq LIMIT 1 OFFSET 20"
                                   ).fetchone()
    data = data_of(kind, stored)
    data["card"]["code"] = "AS" if data["card"]["code"] != "AS" else "KD"
    db.execute("UPDATE records SET data = ? WHERE seq = ?", (stored_of(db, kind, data), seq))
    db.commit()


def test_without_the_anchor_key_nothing_is_sealed(tmp_path, monkeypatch):
    monkeypatch.setenv("TABLECTL_STORAGE_FSYNC", "false")
    path = tmp_path / "journal.db"
    assert simulate(path, None, "--shoes", "1") == 0
    assert not os.path.exists(seal.seal_path(str(path)))


def test_the_writer_seals_its_own_checkpoints_and_never_a_file_another_hand_wrote(tmp_path):
    """The seal follows the writer's checkpoints as it writes (the service's sealing, set once
    the chain is proven); the journal's file written over in place stops the writer, and its
    close seals nothing: the seal beside it stays the stale one."""
    from controller.journal import JournalError
    from controller.service.anchors import Anchors
    key = tmp_path / "anchor.key"
    make_key(str(key))
    path = tmp_path / "j.db"
    j = Journal(path, durable=False)
    try:
        Anchors(j, load_key(str(key))).unproven = False         # proven: an empty journal
        for i in range(3000):
            j.append("note", {"i": i, "text": "x" * 200})
        sealed = vouch(path, key)
        # sealed at the last checkpoint, with what was committed before it
        assert 1000 < sealed.upto_seq < j.last_seq, sealed
        write_over_in_place(j, path)
        with pytest.raises(JournalError, match="written over while the table wrote it"):
            j.append("note", {"i": -1})
    finally:
        j.close()
    v = vouch(path, key)
    assert v.upto_seq == 0 and "written since it was sealed" in v.why, v


def test_the_health_view_says_whether_the_whole_chain_is_proven_yet(tmp_path):
    """While the older records are checked (here: not yet), the health view and the metrics
    say the chain is not proven since the start, and once the check reports, that it is."""
    from controller.service.clock import VirtualClock
    from controller.service.health import Health
    from controller.service.inputs import Proven
    from controller.service.loop import LoopSettings, TableService
    from controller.service.recovery import open_table
    from controller.settings.profile import load_profile
    key = tmp_path / "anchor.key"
    make_key(str(key))
    with Journal(tmp_path / "j.db", durable=False) as j:
        table, _ = open_table(load_profile("macau"), j)
        svc = TableService(table, j, VirtualClock(),
                           LoopSettings(anchor_key=load_key(str(key)), unproven=True))
        health = Health(svc, journal_path=str(tmp_path / "j.db"))
        assert health.view(svc.table)["journal"]["proven"] is False
        svc.submit(Proven("journal_check"))
        svc.run()
        assert health.view(svc.table)["journal"]["proven"] is True
