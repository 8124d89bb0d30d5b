"""`--json` on verify-journal and devices: what scripts and monitoring read."""
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from controller.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_verify_journal_json_says_intact_then_names_the_broken_record(tmp_path, capsys):
    journal = tmp_path / "j.db"
    assert main(["simulate", "--profile", "classic", "--seed", "2", "--journal",
                 str(journal)]) == 0
    capsys.readouterr()
    assert main(["verify-journal", "--journal", str(journal), "--json"]) == 0
    ok = json.loads(capsys.readouterr().out)
    assert ok["ok"] and ok["records"] == ok["last_seq"] > 100 and ok["first_bad_seq"] is None
    assert ok["archives"] == {"ok": True, "parts": 0, "problems": []}
    with sqlite3.connect(journal) as db:           # one record rewritten behind the chain
        seq = db.execute("SELECT min(seq) FROM records WHERE seq >= 40 AND "
                         "data LIKE '%\"card\"%'").fetchone()[0]
        db.execute("UPDATE records SET data = replace(data, '\"card\"', '\"kard\"') "
                   "WHERE seq = ?", (seq,))
    assert main(["verify-journal", "--journal", str(journal), "--json"]) == 1
    bad = json.loads(capsys.readouterr().out)
    assert not bad["ok"] and bad["first_bad_seq"] == seq and bad["reason"]


def test_devices_json_gives_the_urls_to_connect_to():
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "devices", "--seed", "1",
                             "--tcp", "--json"], cwd=ROOT, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        urls = json.loads(proc.stdout.readline())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert urls["shoe"]["protocol"] == "beetek"
    assert urls["shoe"]["url"].startswith("socket://127.0.0.1:")
    assert urls["shuffler"]["url"].startswith("socket://127.0.0.1:")
