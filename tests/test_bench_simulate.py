"""bench/simulate.py at a small size: `tablectl simulate` as a process with its journal on
tmpfs and on disk, the rate read from its own output, one JSON line."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import simulate  # noqa: E402


def test_a_small_run_measures_both_places(capsys, tmp_path):
    assert simulate.main(["--shoes", "1", "--runs", "1", "--no-run", "--disk", str(tmp_path),
                          "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for place in ("simulate tmpfs", "simulate disk"):
        run = doc["results"][place]["runs"][0]
        assert run["rounds"] > 60 and run["cards"] > 5 * run["rounds"] // 2
        assert run["hands_per_s"] > 0 and run["journal_mb"] > 0
        # a process of its own blocks at least once (start-up's reads and its subprocess)
        assert isinstance(run["voluntary_switches"], int) and run["voluntary_switches"] >= 1
    assert doc["fs"]["tmpfs"] == "tmpfs" and doc["run_over_simulate"] is None
    assert list(tmp_path.iterdir()) == []          # the journals are removed


def test_the_thread_round_trip_is_timed_and_its_thread_ends():
    import threading
    before = set(threading.enumerate())
    trip = simulate.thread_round_trip(50)
    assert 0 < trip["p50"] <= trip["p90"]
    # the reader it started was told to stop, and did (a thread an earlier test left may end
    # meanwhile: only new ones count)
    assert set(threading.enumerate()) - before == set()


def test_the_bare_commit_writes_a_real_card_record_and_leaves_nothing(tmp_path):
    from controller.commands._simulation import run_simulation
    from controller.settings.profile import load_profile
    path = str(tmp_path / "j.db")
    run_simulation(load_profile("macau"), seed=2, shoes=1, journal_path=path, keep_events=False)
    row = simulate.card_row(path)
    # a card read's one record: its input, the card event folded in
    assert row is not None and row[3] == "input"
    data = json.loads(row[4])
    assert data["type"] == "card" and data["card"]["code"] == data["code"] and len(row[5]) == 32
    folder = tmp_path / "bare"
    folder.mkdir()
    commit = simulate.bare_commit(str(folder), row, commits=50)
    assert 0 < commit["p50"] <= commit["p90"]
    assert list(folder.iterdir()) == []
    assert simulate.card_row(str(tmp_path / "none.db")) is None
