"""bench/recovery.py at a small size: both restarts give the same state, and the proof's
figures are measured on the production code path (a start check of what a restart builds on,
then the rest, and the full check) and printed as one JSON line."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import recovery  # noqa: E402


def test_a_small_run_measures_restart_and_proof(capsys):
    assert recovery.main(["--rounds", "60", "--snapshot-every", "20", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["ok"] and doc["records"] > 3000
    assert 0 < doc["start_check_records"] < doc["records"]
    assert doc["full_check_records_per_s"] > 0 and doc["projected_full_check_s"] > 0
