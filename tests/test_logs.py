"""Logs: JSON lines that keep tracebacks, and the table, shoe and round on every line."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROGRAM = """
import logging, structlog
from controller.logsetup import configure, get_logger
configure("INFO", json_logs=True)
structlog.contextvars.bind_contextvars(table="T9", shoe=3, round=7)
log = get_logger("test")
try:
    {}["missing"]
except KeyError as err:
    log.error("input could not be applied", error=repr(err), exc_info=err)
logging.getLogger("transitions").error("a library's own line")
"""


def test_json_logs_keep_the_traceback_and_the_table_context():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          cwd=ROOT, timeout=30)
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert len(lines) == 2, done.stderr
    ours, theirs = lines
    assert ours["event"] == "input could not be applied" and ours["level"] == "error"
    assert (ours["table"], ours["shoe"], ours["round"]) == ("T9", 3, 7)
    frames = ours["exception"][0]
    assert frames["exc_type"] == "KeyError" and frames["frames"]
    assert theirs["event"] == "a library's own line" and theirs["table"] == "T9"


def test_the_service_binds_the_table_shoe_and_round(tmp_path):
    done = subprocess.run([sys.executable, "-m", "controller.cli", "--log-level", "INFO",
                           "simulate", "--profile", "classic", "--seed", "2",
                           "--fault", "misread@30"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    refused_or_later = [x for x in lines if x.get("shoe") == 1 and x.get("round")]
    assert refused_or_later, done.stderr[-2000:]
    assert all(x["table"] == "T1" for x in refused_or_later)
