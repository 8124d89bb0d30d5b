"""bench/recovery.py at a small size, on a journal `tablectl simulate` wrote (and killed into
its last shoe): the restart from the snapshot and the full replay reach the same table, the
restart replays the tail after the snapshot, and the proof's figures come out as one JSON
line."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import recovery  # noqa: E402


def test_a_small_run_measures_restart_and_proof(capsys):
    assert recovery.main(["--shoes", "1", "--tail", "120", "--runs", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["ok"] and doc["rounds"] > 60 and doc["records"] > 600
    assert doc["inputs_replayed"] == 120               # the tail after the shoe's snapshot
    assert 0 < doc["start_check_records"] < doc["records"]
    assert doc["full_check_records_per_s"] > 0 and doc["projected_full_check_s"] > 0
    assert doc["process_restart_s"][0] > 0
