"""Monitoring: /metrics in Prometheus' format moves as the shoe reads cards, /healthz and
/readyz answer without credentials, on the display's server and on [metrics] listen."""
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from controller.monitor.metrics import TableMetrics
from controller.monitor.web import readiness
from tests.http import get

ROOT = Path(__file__).resolve().parents[1]


def samples(text: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(text: str, name: str, **labels) -> float:
    """A sample's value; 0 for a labelled counter not seen yet (Prometheus' own reading)."""
    want = tuple(sorted({"table": "T1", **labels}.items()))
    return samples(text).get((name, want), 0.0 if name.endswith(("_total", "_count")) else
                             float("nan"))


def test_metrics_move_as_cards_are_read_and_the_probes_answer(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TABLECTL_METRICS_LISTEN="127.0.0.1:0")
    log = tmp_path / "stderr.txt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", "config/table.toml",
         "--shoes", "1", "--pace", "0.02", "--http", "127.0.0.1:0", "--no-control",
         "--journal", str(tmp_path / "j.db")], cwd=ROOT, env=env, text=True,
        stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    urls: dict[str, str] = {}
    try:
        deadline = time.monotonic() + 30
        while len(urls) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
            urls = dict(re.findall(r"(web display|metrics) at (http://\S+)", log.read_text()))
        display = urls["web display"]
        own = urls["metrics"]
        assert own.endswith("/metrics")
        code, first = get(display + "metrics")
        assert code == 200, log.read_text()
        deadline = time.monotonic() + 30
        while True:
            time.sleep(0.3)
            code, second = get(display + "metrics")
            assert code == 200, second
            if value(second, "tablectl_cards_read_total") >= \
                    value(first, "tablectl_cards_read_total") + 5 or time.monotonic() > deadline:
                break
        assert value(second, "tablectl_cards_read_total") >= \
            value(first, "tablectl_cards_read_total") + 5
        assert value(second, "tablectl_journal_write_seconds_count") > \
            value(first, "tablectl_journal_write_seconds_count")
        assert value(second, "tablectl_loop_responsive") == 1
        assert value(second, "tablectl_journal_proven") == 1     # a new journal: at once
        assert value(second, "tablectl_device_link", device="shoe", state="up") == 1
        assert value(second, "tablectl_shoe_driver_total", counter="cards") >= \
            value(second, "tablectl_cards_read_total") - 1
        # the same figures on the address of their own
        code, alone = get(own)
        assert code == 200 and value(alone, "tablectl_cards_read_total") >= \
            value(second, "tablectl_cards_read_total")
        for base in (display, own.rsplit("/", 1)[0] + "/"):
            assert get(base + "healthz") == (200, json.dumps({"live": True}))
            code, body = get(base + "readyz")
            assert code == 200 and json.loads(body) == {"ready": True, "why": []}
        proc.terminate()                  # SIGTERM, as systemd stops it: a clean stop
        proc.wait(timeout=60)
        assert proc.returncode == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_figures_come_from_the_published_events_and_the_health_view():
    view = {"devices": {"shoe": {"link": "lost", "counters": {"cards": 3}},
                        "shuffler": {"link": "ok"}}, "conditions": {}}
    m = TableMetrics("T1", health=lambda: view)
    for e in ({"event": "card", "seq": 1}, {"event": "hold", "reason": "link_lost", "seq": 2},
              {"event": "round_result", "winner": "banker", "seq": 3},
              {"event": "round_result", "void": True, "winner": None, "seq": 4},
              {"event": "round_result", "winner": "tie", "reveal": "pending", "seq": 5},
              {"event": "reveal", "result": {"winner": "tie"}, "seq": 6}):
        m.publish(e)
    m.on_status({"event": "status", "hold": {"kind": "link_lost"}})
    m.journal_written(0.002)
    text = m.text().decode()
    assert value(text, "tablectl_cards_read_total") == 1
    assert value(text, "tablectl_holds_total", reason="link_lost") == 1
    assert value(text, "tablectl_rounds_total", outcome="banker") == 1
    assert value(text, "tablectl_rounds_total", outcome="void") == 1
    assert value(text, "tablectl_rounds_total", outcome="tie") == 1     # counted at its reveal
    assert value(text, "tablectl_on_hold") == 1 and value(text, "tablectl_journal_last_seq") == 6
    assert value(text, "tablectl_journal_write_seconds_count") == 1
    assert value(text, "tablectl_device_link", device="shoe", state="lost") == 1
    assert readiness(view) == ["shoe link lost"]
    assert readiness(None) == ["the table's loop did not answer"]
    assert readiness({"devices": {"shoe": {"link": "up"}, "shuffler": {"link": "none"}},
                      "conditions": {"software": "HELD"}}) == ["condition software"]
    silent = TableMetrics("T1", health=lambda: None).text().decode()
    assert value(silent, "tablectl_loop_responsive") == 0
