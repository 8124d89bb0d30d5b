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
