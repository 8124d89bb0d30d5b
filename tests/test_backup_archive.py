"""Backups and archives of the journal: consistent while a table writes, verified before they
are named, and read by recall, audit and verify-journal together with the journal."""
import functools
import json
import os
import tempfile
import sqlite3
import stat
from datetime import date, datetime, time, timedelta, timezone

from controller import cli
from controller.commands._simulation import run_simulation
from controller.journal import Journal
from controller.journal.archive import archive, backup, check_archives, open_with_archives
from controller.settings.profile import load_profile
from controller.service.clock import VirtualClock
from controller.service.loop import TableService
from controller.service.recovery import open_table
from controller.table.inputs import parse_input

D1, D2, D3 = date(2024, 5, 1), date(2024, 5, 2), date(2024, 5, 3)


def _utc(local: datetime) -> str:
    return local.astimezone(timezone.utc).isoformat(timespec="microseconds")[:-6] + "Z"


@functools.lru_cache(maxsize=1)
def shoe_inputs() -> tuple:
    """One simulated shoe's inputs (made once for the module)."""
    with tempfile.TemporaryDirectory() as where:
        source = os.path.join(where, "source.db")
        run_simulation(load_profile("classic"), seed=11, journal_path=source)
        with Journal.open_readonly(source) as src:
            return tuple(r.data for r in src.records(kinds=("input",)))


def days_journal(tmp_path, days=(D1, D2, D3)):
    """A journal of three gaming days: one simulated shoe's inputs dealt again through the
    service, a third of them on each day (evenings, local time), with a snapshot at the end."""
    inputs = shoe_inputs()
    third = len(inputs) // 3
    state = {"n": 0}

    def clock():
        n = state["n"]
        day = days[min(n // third, 2)]
        state["t"] = state.get("t", 0.0) + 0.5
        return _utc(datetime.combine(day, time(20, 0)).astimezone()
                    + timedelta(seconds=(n % third) * 2)), state["t"]

    path = tmp_path / "var" / "journal.db"
    journal = Journal(path, clock=clock)
    table, _ = open_table(load_profile("classic"), journal, auto_open=True)
    svc = TableService(table, journal, VirtualClock())
    for data in inputs:
        svc.process(parse_input(data))
        state["n"] += 1
    svc.close()
    journal.close()
    return path


def stories(path):
    with open_with_archives(str(path)) as j:
        from controller.journal.recall import last_rounds
        return [(s["shoe"], s["round"], s["winner"], s["first_seq"]) for s in last_rounds(j, 500)]


def test_closed_days_move_to_dated_verified_archives_and_recall_reads_across(tmp_path, capsys):
    path = days_journal(tmp_path)
    before = stories(path)
    with Journal.open_readonly(path) as j:
        last_seq = j.last_seq
    done = archive(str(path), D2)                  # day 1 closed
    assert done.copied.path.endswith("journal.2024-05-01_to_2024-05-01.db")
    assert done.copied.result.ok and done.deleted > 0
    assert stat.S_IMODE(os.stat(done.copied.path).st_mode) == 0o640
    assert cli.main(["archive", "--journal", str(path), "--before", str(D3)]) == 0   # day 2
    second = sorted((tmp_path / "var" / "archive").glob("journal.*.db"))[-1]
    assert second.name == "journal.2024-05-02_to_2024-05-02.db"
    # the journal keeps only day 3 (from the last archived record on), and the same story
    with Journal.open_readonly(path) as j:
        first = next(j.records()).seq
        assert j.last_seq == last_seq and first > 1
        assert all(r.utc >= _utc(datetime.combine(D2, time(20, 0)).astimezone())
                   for r in j.records(after_seq=first))
    assert stories(path) == before
    assert check_archives(str(path)).ok
    capsys.readouterr()
    assert cli.main(["verify-journal", "--journal", str(path)]) == 0
    assert "2 archive(s) verified and linked" in capsys.readouterr().out
    assert cli.main(["recall", "--journal", str(path), "--last", "500", "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(before)
    # an archive that goes missing is named, not silently skipped
    os.rename(second, tmp_path / "elsewhere.db")
    assert cli.main(["verify-journal", "--journal", str(path)]) == 1
    assert "does not follow" in capsys.readouterr().out


def test_nothing_is_archived_that_a_restart_or_a_publisher_still_needs(tmp_path, capsys):
    path = days_journal(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE cursors SET seq = 5")        # the floor feed is far behind
    conn.commit()
    conn.close()
    assert cli.main(["archive", "--journal", str(path), "--before", str(D2)]) == 2
    assert "delivered only up to seq 5" in capsys.readouterr().err
    assert cli.main(["archive", "--journal", str(path), "--before", str(D1)]) == 2
    assert "nothing to archive" in capsys.readouterr().err
    assert not (tmp_path / "var" / "archive").exists() or \
        not list((tmp_path / "var" / "archive").glob("*.db"))


def test_a_backup_verifies_never_overwrites_and_reads_like_the_journal(tmp_path, capsys):
    path = days_journal(tmp_path)
    media = tmp_path / "media"
    media.mkdir()
    assert cli.main(["backup", "--journal", str(path), str(media)]) == 0
    assert "verified: ok" in capsys.readouterr().out
    copy = next(media.glob("journal.*.db"))
    assert stat.S_IMODE(os.stat(copy).st_mode) == 0o640
    assert not list(media.glob("*.part"))
    assert cli.main(["backup", "--journal", str(path), str(copy)]) == 2     # never overwrites
    assert "already exists" in capsys.readouterr().err
    assert cli.main(["verify-journal", "--journal", str(copy)]) == 0
    assert cli.main(["recall", "--journal", str(copy), "--last", "3", "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 + 3 and json.loads(out[-1])["round"]


def test_archiving_while_a_table_writes_never_passes_for_another_hand_on_its_file(tmp_path,
                                                                                  monkeypatch):
    """Archiving deletes the moved records from the journal while a table may be writing it;
    the table makes the WAL's checkpoints itself and takes any other write to the journal's
    file for a copy put over it. The archive's commits, after a WAL the table filled, never
    checkpoint: the table writes on, and everything verifies."""
    from controller.journal import store
    path = days_journal(tmp_path)
    monkeypatch.setattr(store, "CHECKPOINT_FRAMES", 10 ** 9)   # the table's WAL left full
    with Journal(path, durable=False) as j:
        for i in range(1100):
            j.append("note", {"i": i, "text": "x" * 3000})
        done = archive(str(path), D2)
        assert done.deleted > 0
        j.append("note", {"i": -1})
    assert check_archives(str(path)).ok
    assert cli.main(["verify-journal", "--journal", str(path)]) == 0
