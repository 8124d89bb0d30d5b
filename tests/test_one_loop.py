"""The production path is the tested path: `tablectl run` and `tablectl simulate` as processes,
the same loop; a journal that cannot be written stops the table before it announces anything
that is not in the journal; the same seed gives the same rounds through either command."""
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.journal import Journal

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e.update(PYTHONPATH=str(ROOT), **extra)
    if "TABLECTL_STORAGE_FSYNC" in os.environ:
        e["TABLECTL_STORAGE_FSYNC"] = os.environ["TABLECTL_STORAGE_FSYNC"]
    return e


def tablectl(*args, timeout=120, **kw):
    return subprocess.run(TABLECTL + list(args), capture_output=True, text=True, env=env(),
                          cwd=ROOT, timeout=timeout, **kw)


def recall(journal, capsys):
    """The rounds as `tablectl recall --json` tells them (in this process: the processes under
    test are the ones that dealt)."""
    from controller.cli import main
    capsys.readouterr()
    assert main(["recall", "--journal", str(journal), "--last", "1000", "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def outcome(story):
    """A round as recall tells it, without when it was written (seq, time)."""
    cards = [(c["n"], c["code"], c["slot"]) for c in story["burns_before"] + story["cards"]]
    return {k: story.get(k) for k in ("shoe", "round", "hands", "winner", "bets", "void",
                                      "demo")} | {"cards": cards}


def test_simulate_and_run_on_the_embedded_simulator_deal_the_same_rounds(tmp_path, capsys):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    sim = tablectl("simulate", "--profile", "macau", "--seed", "11", "--journal", str(a),
                   "--json")
    assert sim.returncode == 0, sim.stderr[-2000:]
    run = tablectl("run", "--profile", "macau", "--seed", "11", "--pace", "0", "--shoes", "1",
                   "--no-control", "--journal", str(b), "--json", "--config",
                   str(ROOT / "config" / "table.toml"))
    assert run.returncode == 0, run.stderr[-2000:]
    ra, rb = recall(a, capsys), recall(b, capsys)
    assert len(ra) > 60
    assert [outcome(s) for s in ra] == [outcome(s) for s in rb]


def _small_disk(limit: int):
    """The process can write no file larger than `limit` bytes: a disk that fills up."""
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def printed_are_journaled(stdout: str, journal: Path) -> int:
    """Every card and round result printed is in the journal (same seq, same fields)."""
    printed = [json.loads(line) for line in stdout.splitlines()]
    printed = [e for e in printed if e["event"] in ("card", "round_result")]
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok
        stored = {r.seq: r.data for r in j.records(kinds=["card", "round_result"])}
    for e in printed:
        seq = e.pop("seq")
        assert e.pop("schema_version") == 1          # the contract's, not the journal's
        assert stored.get(seq) == e, f"printed but not journaled: {e}"
    return len(printed)


def _stopped_with_one_line(proc) -> None:
    assert proc.returncode == 3, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("tablectl")]
    assert len(lines) == 1 and "journal" in lines[0] and "stopped" in lines[0], proc.stderr


SIMULATE_4 = ["simulate", "--profile", "macau", "--seed", "4"]


@pytest.mark.parametrize("command,room", [
    (SIMULATE_4, 150_000),        # full mid-shoe, at a record
    (SIMULATE_4, 200_000),        # full at the shoe's end, at its snapshot
    (["run", "--profile", "macau", "--seed", "4", "--pace", "0", "--shoes", "1", "--no-control",
      "--config", str(ROOT / "config" / "table.toml")], 150_000),
], ids=["simulate", "simulate-at-snapshot", "run-embedded"])
def test_a_full_disk_stops_the_table_and_nothing_unjournaled_is_printed(tmp_path, command, room,
                                                                        durable):
    journal = tmp_path / "j.db"
    proc = subprocess.run(TABLECTL + command + ["--journal", str(journal), "--json"],
                          capture_output=True, text=True, env=env(), cwd=ROOT, timeout=120,
                          preexec_fn=_small_disk(room))
    _stopped_with_one_line(proc)
    assert printed_are_journaled(proc.stdout, journal) > 5
    # what is durable resumes: a second start, with room, carries on from it
    again = tablectl(*command, "--journal", str(journal), "--json")
    assert again.returncode == 0, again.stderr[-2000:]


def test_simulated_devices_state_that_cannot_be_written_stops_the_table_in_one_line(
        tmp_path, durable):
    """simulate keeps its devices' state beside the journal, saved with every batch: on a full
    disk that save fails first (it is the bigger write). It stops the table as the journal
    would (exit 3, one line, nothing printed that is not journaled), never an internal error;
    once it can be written, the same command resumes."""
    journal = tmp_path / "j.db"
    blocked = Path(f"{journal}.devices.json.tmp")
    blocked.mkdir()                 # the state's next write cannot be made: as on a full disk
    proc = tablectl(*SIMULATE_4, "--journal", str(journal), "--json")
    _stopped_with_one_line(proc)
    assert "devices' state" in proc.stderr and "internal error" not in proc.stderr
    printed_are_journaled(proc.stdout, journal)
    blocked.rmdir()
    again = tablectl(*SIMULATE_4, "--journal", str(journal), "--json")
    assert again.returncode == 0, again.stderr[-2000:]
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok and j.last_seq > 100


def test_a_full_disk_against_devices_in_another_process(tmp_path, durable):
    dev = subprocess.Popen(TABLECTL + ["devices", "--blind", "--seed", "5", "--shoe-protocol", "framed",
                                       "--pace-ms", "5"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                           cwd=ROOT)
    try:
        line = dev.stdout.readline()
        assert line.startswith("shoe:"), line + dev.stderr.read()
        url = line.split()[1]
        journal = tmp_path / "j.db"
        proc = subprocess.run(
            TABLECTL + ["run", "--profile", "macau", "--shoe-url", url, "--shoe-protocol",
                        "framed", "--shuffler-url", "none", "--journal", str(journal),
                        "--no-control", "--json", "--shoes", "1"],
            capture_output=True, text=True, env=env(), cwd=ROOT, timeout=120,
            preexec_fn=_small_disk(200_000))
        _stopped_with_one_line(proc)
        assert printed_are_journaled(proc.stdout, journal) > 5
    finally:
        dev.terminate()
        dev.wait(timeout=10)


def test_events_journaled_before_a_crash_are_published_after_it(tmp_path, durable):
    """kill -9 after the 40th input is journaled, before its events are printed: the restart
    prints them first (at least once; the seq tells a consumer what it has seen)."""
    journal = tmp_path / "j.db"
    args = ["simulate", "--profile", "classic", "--seed", "2", "--journal", str(journal),
            "--json"]
    killed = tablectl(*args, "--fault", "crash@40")
    assert killed.returncode in (-9, 137)
    again = tablectl(*args)
    assert again.returncode == 0, again.stderr[-2000:]
    seen = [json.loads(x) for x in killed.stdout.splitlines() + again.stdout.splitlines()]
    seqs = {e["seq"] for e in seen if "seq" in e}
    with Journal.open_readonly(journal) as j:
        # the journal's own records (snapshots, positions) and the sign-in log are never printed
        published = [r.seq for r in j.records() if r.kind not in (
            "input", "auth", "account", "snapshot", "cursors")]
    assert set(published) <= seqs, sorted(set(published) - seqs)[:10]


def test_a_replay_that_disagrees_with_the_journal_stops_and_names_the_record(tmp_path):
    journal = tmp_path / "j.db"
    done = tablectl("simulate", "--profile", "classic", "--seed", "2", "--journal",
                    str(journal), "--fault", "crash@60")
    assert done.returncode in (-9, 137)
    with Journal.open_readonly(journal) as j:
        target = next(r for r in j.records(kinds=["card"]) if r.data["n"] == 20)
        # the card event is in its read's input record (one record, one seq)
        stored = next(j.records(after_seq=target.seq - 1, stored=True))
    assert stored.seq == target.seq and stored.data["card"]["n"] == 20
    # a record rewritten without its hash chain being recomputed would be caught by
    # verify-journal; here the chain is recomputed too, as by someone who can write the file
    other = "P1" if target.data["slot"] != "P1" else "B1"
    _rewrite(journal, target.seq, dict(stored.data, card=dict(stored.data["card"], slot=other)))
    again = tablectl("simulate", "--profile", "classic", "--seed", "2", "--journal",
                     str(journal))
    assert again.returncode == 2
    assert f"input seq {target.seq}" in again.stderr and "disagree" in again.stderr


def _rewrite(path, seq, data):
    """Change one record and recompute the chain after it (what tamper evidence must see)."""
    import sqlite3
    from tests.journalfile import rehash, stored_of
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        rows = conn.execute("SELECT seq, utc, mono, kind, data FROM records ORDER BY seq")
        rows = [[s, utc, mono, kind, stored_of(conn, kind, data) if s == seq else text]
                for s, utc, mono, kind, text in rows.fetchall()]
        conn.execute("BEGIN")
        rehash(conn, rows)
        conn.execute("DELETE FROM snapshots")
        conn.execute("COMMIT")
    finally:
        conn.close()


def test_a_second_start_closes_what_the_embedded_simulator_left_and_deals_on(tmp_path):
    journal = tmp_path / "j.db"
    args = ["run", "--profile", "macau", "--seed", "3", "--pace", "0", "--no-control",
            "--journal", str(journal), "--json", "--config", str(ROOT / "config" / "table.toml")]
    proc = subprocess.Popen(TABLECTL + args + ["--shoes", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env(), cwd=ROOT)
    deadline = time.monotonic() + 60
    for line in proc.stdout:               # kill it mid-shoe
        if '"event":"round_result"' in line and '"round":5,' in line:
            break
        assert time.monotonic() < deadline
    proc.kill()
    proc.wait()
    again = tablectl(*args, "--shoes", "1")
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Resumed the journal" in again.stderr and "shoe 1" in again.stderr
    events = [json.loads(x) for x in again.stdout.splitlines()]
    ended = [e for e in events if e["event"] == "shoe_ended"]
    assert [e["reason"] for e in ended][:1] == ["devices_lost"]
    assert [e["shoe"] for e in events if e["event"] == "shoe_started"] == [2]
    assert ended[-1]["shoe"] == 2 and ended[-1]["reason"] == "cut_card"


def test_sigterm_is_a_clean_stop_and_the_next_start_replays_nothing(tmp_path):
    from controller.settings.profile import load_profile
    from controller.service.recovery import open_table
    journal = tmp_path / "j.db"
    proc = subprocess.Popen(TABLECTL + ["run", "--profile", "macau", "--seed", "8", "--pace",
                                        "0.005", "--shoes", "0", "--no-control", "--journal",
                                        str(journal), "--json", "--config",
                                        str(ROOT / "config" / "table.toml")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env(), cwd=ROOT)
    for line in proc.stdout:
        if '"event":"round_result"' in line and '"round":3,' in line:
            break
    proc.terminate()
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err[-2000:]
    with Journal(journal) as j:
        table, rec = open_table(load_profile("macau"), j)
        assert rec.resumed and rec.inputs_replayed == 0 and rec.undelivered == []
        assert table.shoe_no == 1 and table.round is not None


def test_a_betting_window_closes_on_the_service_clock():
    """simulate --betting-seconds 12: bets open by themselves and the timer closes them after
    the window, in simulated time; the results are those of an instant window."""
    from controller.commands._simulation import run_simulation
    from controller.settings.profile import load_profile
    profile = load_profile("classic")
    timed = run_simulation(profile, seed=4, betting_seconds=12)
    instant = run_simulation(profile, seed=4)
    opened = [e for e in timed if e["event"] == "bets_open"]
    assert opened and all(e["closes_in_s"] == 12 for e in opened)
    closes = [e for e in timed if e["event"] == "bets_closed"]
    assert len(closes) == len(opened)
    strip = [{k: v for k, v in e.items() if k != "seq"} for e in timed
             if e["event"] == "round_result"]
    assert strip == [{k: v for k, v in e.items() if k != "seq"} for e in instant
                     if e["event"] == "round_result"]


@pytest.mark.skipif(not hasattr(resource, "prlimit"), reason="needs Linux's prlimit")
def test_a_journal_full_at_a_clean_stop_is_a_stop_in_one_line_exit_3(tmp_path, durable):
    """The disk fills while the table waits for its next card, then SIGTERM: the stop's own
    records (its snapshot and anchor) cannot be written. That is a journal that cannot be
    written, told as one: exit 3 and one line, not a clean stop (exit 0); with room again the
    next start resumes from what is durable."""
    journal = tmp_path / "j.db"
    args = ["run", "--profile", "macau", "--seed", "4", "--no-control", "--journal",
            str(journal), "--json", "--config", str(ROOT / "config" / "table.toml")]
    proc = subprocess.Popen(TABLECTL + args + ["--pace", "30"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env(), cwd=ROOT)
    try:
        printed = ""
        while '"expects":"card"' not in printed:   # the shoe is loaded and waits for a card
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            printed += line
        # from now on no file of the table's may grow: its disk is full
        full = os.path.getsize(f"{journal}-wal")
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (full, full))
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    _stopped_with_one_line(subprocess.CompletedProcess(args, proc.returncode, out, err))
    assert "without its last records" in err
    printed_are_journaled(printed + out, journal)
    again = tablectl(*args, "--pace", "0", "--shoes", "1")
    assert again.returncode == 0, again.stderr[-2000:]
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok
