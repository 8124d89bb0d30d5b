"""The journal's files taken from under the table, as processes: `tablectl run` on the embedded
simulator and `tablectl simulate`, the files changed by someone else meanwhile.

- The write-ahead log deleted while the table deals: what the table commits after that is in a
  file nobody will find (a crash or a power cut takes it, and everything since the last
  checkpoint with it). The table stops at its next commit, in one line (exit 3), nothing of it
  announced, and first saves what it holds into the journal: the next start resumes with
  nothing lost.
- An old copy of the journal put back under a running table (renamed over it): the table stops
  the same way and saves everything it journaled to a file of its own beside it, which the
  line names; put in place, the table resumes from it.
- A copy written over the journal in place (`cp backup.db journal.db`: the same file truncated
  and rewritten, its name and inode unchanged): the journal's file then holds another file's
  pages. The table stops at its next commit, in one line (exit 3), keeps a copy of its WAL for
  examination, and the next start refuses what is left. The writer's own checkpoints (it makes
  them itself) are never taken for such a write.
- What such a loss leaves, met at a start: a journal file that holds no journal (its WAL held
  it all and is gone), or a WAL whose journal is gone, is refused in one line (exit 2), never
  started over as a new journal from seq 1.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import Journal, JournalError
from tests.journalfile import write_over_in_place

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]
RUN = ["run", "--profile", "macau", "--seed", "6", "--no-control", "--json", "--config",
       str(ROOT / "config" / "table.toml")]


def env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e["PYTHONPATH"] = str(ROOT)
    return e


def tablectl(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(TABLECTL + list(args), capture_output=True, text=True, env=env(),
                          cwd=ROOT, timeout=timeout)


def deal_until(journal: Path, cards: int, then) -> subprocess.CompletedProcess:
    """`run` on the embedded simulator until it has printed `cards` cards, then `then()` done to
    its files while it deals on; how it ended."""
    proc = subprocess.Popen(TABLECTL + RUN + ["--journal", str(journal), "--pace", "0.01"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(), cwd=ROOT)
    printed = ""
    try:
        while printed.count('"event":"card"') < cards:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            printed += line
        then()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return subprocess.CompletedProcess(RUN, proc.returncode, printed + out, err)


def stopped_in_one_line(done: subprocess.CompletedProcess, *words: str) -> str:
    assert done.returncode == 3, (done.returncode, done.stderr[-2000:])
    *start, line = done.stderr.splitlines()
    # the start's own lines (a resumed journal says so), then the stop's one line
    assert all("Resumed the journal" in x or "simulated shoe" in x for x in start), start
    assert line.startswith("tablectl run: ") and "Traceback" not in done.stderr, done.stderr
    for word in words:
        assert word in line, line
    return line


def last_printed(stdout: str) -> int:
    return max(json.loads(x).get("seq", 0) for x in stdout.splitlines())


def printed_are_in(stdout: str, journal: Path) -> None:
    """Every journaled event printed is in `journal`, as printed."""
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok
        stored = {r.seq: r.data for r in j.records() if r.kind != "input"}
    for e in map(json.loads, stdout.splitlines()):
        if "seq" in e and e["event"] != "prompt":
            seq, _ = e.pop("seq"), e.pop("schema_version")
            assert stored.get(seq) == e, f"printed but not journaled: {e}"


def test_the_wal_deleted_under_a_running_table_stops_it_and_loses_nothing(tmp_path):
    journal = tmp_path / "j.db"
    done = deal_until(journal, 20, lambda: os.remove(f"{journal}-wal"))
    stopped_in_one_line(done, "write-ahead log", "deleted or replaced", f"saved in {journal}")
    # what it had journaled is in the journal's file itself: nothing was lost with the WAL
    printed_are_in(done.stdout, journal)
    again = tablectl(*RUN, "--journal", str(journal), "--pace", "0", "--shoes", "1")
    assert again.returncode == 0, again.stderr[-2000:]
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok and j.last_seq > last_printed(done.stdout)


def test_an_old_copy_put_back_under_a_running_table_stops_it_and_loses_nothing(tmp_path):
    journal, old = tmp_path / "j.db", tmp_path / "old.db"
    first = tablectl(*RUN, "--journal", str(journal), "--pace", "0", "--shoes", "1")
    assert first.returncode == 0, first.stderr[-2000:]
    shutil.copy(journal, old)                   # a copy taken after the first shoe

    def roll_back() -> None:
        os.replace(old, journal)                # and put back in the second
    done = deal_until(journal, 20, roll_back)
    line = stopped_in_one_line(done, "deleted or replaced", "saved in")
    rescued = Path(line.split("saved in ")[1].split(";")[0])
    assert rescued.parent == tmp_path and rescued.name.startswith("j.db.rescued-")
    printed_are_in(done.stdout, rescued)
    # put in place as the line says, the table resumes from everything it had journaled
    for side in ("-wal", "-shm"):
        Path(f"{journal}{side}").unlink(missing_ok=True)
    os.replace(rescued, journal)
    again = tablectl(*RUN, "--journal", str(journal), "--pace", "0", "--shoes", "1")
    assert again.returncode == 0, again.stderr[-2000:]
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok and j.last_seq > last_printed(done.stdout)


def test_a_copy_written_over_a_running_table_in_place_stops_it_and_keeps_its_wal(tmp_path):
    journal, old = tmp_path / "j.db", tmp_path / "old.db"
    first = tablectl(*RUN, "--journal", str(journal), "--pace", "0", "--shoes", "1")
    assert first.returncode == 0, first.stderr[-2000:]
    shutil.copy(journal, old)
    inode = journal.stat().st_ino
    done = deal_until(journal, 20, lambda: shutil.copyfile(old, journal))
    assert journal.stat().st_ino == inode       # written in place: no name changed
    line = stopped_in_one_line(done, "written over while the table wrote it", "kept in",
                               "never start the table on them")
    kept = Path(line.split("kept in ")[1].split(";")[0])
    assert kept.parent == tmp_path and kept.name.startswith("j.db-wal.kept-")
    assert kept.stat().st_size > 0


def test_the_writers_own_checkpoints_are_not_taken_for_another_hands_write(tmp_path):
    """Thousands of commits, checkpointed by the writer itself as it goes (the WAL stays near
    SQLite's own bound), never stop it; the journal's file written over in place between two
    commits does, on the next one, and nothing of that commit counts as written."""
    path = tmp_path / "j.db"
    j = Journal(path, durable=False)
    try:
        for i in range(3000):
            j.append("note", {"i": i, "text": "x" * 200})
        # 1000 frames of 4 KB and the WAL's header, with room for one batch past the bound
        assert os.path.getsize(f"{path}-wal") < 1300 * 4120
        assert j.verify().ok
        write_over_in_place(j, path)
        last = j.last_seq
        with pytest.raises(JournalError, match="written over while the table wrote it"):
            j.append("note", {"i": -1})
        assert j.last_seq == last
    finally:
        j.close()


def _crashed(tmp_path: Path) -> Path:
    """A journal `simulate` was killed on (crash@60), its WAL holding all of it."""
    journal = tmp_path / "j.db"
    killed = tablectl("simulate", "--profile", "macau", "--seed", "3", "--journal",
                      str(journal), "--fault", "crash@60")
    assert killed.returncode in (-9, 137), killed.stderr[-2000:]
    assert os.path.getsize(f"{journal}-wal") > 0
    return journal


@pytest.mark.parametrize("lost", ["the WAL", "the journal"])
def test_what_a_lost_file_leaves_is_refused_never_started_over(tmp_path, lost):
    journal = _crashed(tmp_path)
    gone = Path(f"{journal}-wal") if lost == "the WAL" else journal
    gone.unlink()
    for args in (["simulate", "--profile", "macau", "--seed", "3"], RUN + ["--pace", "0"]):
        done = tablectl(*args, "--journal", str(journal))
        assert done.returncode == 2, (args[0], done.returncode, done.stderr[-2000:])
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "write-ahead log" in lines[0], done.stderr
        assert done.stdout == ""
    if lost == "the WAL":
        assert "an empty database" in lines[0]
        check = tablectl("verify-journal", "--journal", str(journal))
        assert check.returncode == 2 and "lost with its write-ahead log" in check.stderr
    else:
        assert "no such file" in lines[0] and not journal.exists()
