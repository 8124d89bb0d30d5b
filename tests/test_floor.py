"""`tablectl floor`: two tables on one broker, one of them on hold, seen live (`--json`), then
offline after a clean stop (`--json --once`); the full screen's rows and counts; the console's
line about the feed."""
import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from controller.console.text import feed_text
from controller.floor.app import FloorApp
from controller.floor.model import Floor, counts
from tests.broker import Mosquitto

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e.update(PYTHONPATH=str(ROOT), TABLECTL_TEST_NO_FSYNC="1", **extra)
    return e


def lines_of(proc) -> queue.Queue:
    out: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [out.put(x) for x in proc.stdout], daemon=True).start()
    return out


def test_the_floor_shows_two_tables_one_on_hold_then_both_offline(tmp_path):
    broker = Mosquitto(tmp_path / "broker").start()
    floor = subprocess.Popen(TABLECTL + ["floor", "--feed", broker.url, "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env(), cwd=ROOT)
    tables = {}
    # table B's shoe cannot read its 5th card, and no supervisor, virtual or real, clears it
    for name, more in (("A", {}), ("B", {"TABLECTL_SIMULATOR_FAULTS": "misread@5"})):
        tables[name] = subprocess.Popen(TABLECTL + [
            "run", "--pace", "0.02", "--seed", "3", "--shoes", "0", "--no-control",
            "--no-virtual-supervisor", "--journal",
            str(tmp_path / f"{name}.db"), "--config", str(ROOT / "config" / "table.toml"),
            "--feed", broker.url], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env=env(TABLECTL_TABLE_NAME=name, **more), cwd=ROOT)
    try:
        rows, seen = lines_of(floor), {}
        deadline = time.monotonic() + 30
        # a held table sends nothing more: its last row may show the hold at age 0.0, so the
        # hold's age is checked below, by `--once`, seconds later
        while not (seen.get("B", {}).get("hold") and (seen.get("A", {}).get("round") or 0) >= 3):
            row = json.loads(rows.get(timeout=max(0.1, deadline - time.monotonic())))
            seen[row["table"]] = row
        a, b = seen["A"], seen["B"]
        assert a["status"] == b["status"] == "online"
        assert a["hold"] is None and a["state"] != "hold" and a["game"] == "punto_banco"
        assert b["state"] == "hold" and b["hold"]["kind"] == "unreadable_card"
        assert a["last_result"]["round"] >= 2 and sum(a["road"].values()) >= 2
        for proc in tables.values():
            proc.terminate()
        for proc in tables.values():
            assert proc.wait(30) == 0, proc.stderr.read()[-2000:]
        once = subprocess.run(TABLECTL + ["floor", "--feed", broker.url, "--json", "--once"],
                              capture_output=True, text=True, env=env(), cwd=ROOT, timeout=30)
        assert once.returncode == 0, once.stderr
        after = {r["table"]: r for r in map(json.loads, once.stdout.splitlines())}
        assert sorted(after) == ["A", "B"]
        assert all(r["status"] == "offline" and r["clean_exit"] for r in after.values())
        assert after["B"]["hold"]["kind"] == "unreadable_card" and after["B"]["feed_behind"] == 0
        assert after["B"]["hold"]["age_s"] > 0                  # counted from the hold's start
    finally:
        for proc in (*tables.values(), floor):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        broker.stop()



def test_the_floor_comes_back_by_itself_after_the_broker_restarts(tmp_path):
    """The broker stops while a table deals and `floor --json` watches: the floor shows the
    table go on once the broker is back, with no restart of either."""
    broker = Mosquitto(tmp_path / "broker").start()
    floor = subprocess.Popen(TABLECTL + ["floor", "--feed", broker.url, "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env(), cwd=ROOT)
    table = subprocess.Popen(TABLECTL + [
        "run", "--pace", "0.02", "--seed", "3", "--shoes", "0", "--no-control", "--journal",
        str(tmp_path / "A.db"), "--config", str(ROOT / "config" / "table.toml"),
        "--feed", broker.url], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=env(TABLECTL_TABLE_NAME="A"), cwd=ROOT)
    try:
        rows = lines_of(floor)

        def round_seen(after: int, within: float = 30.0) -> int:
            deadline = time.monotonic() + within
            while True:
                row = json.loads(rows.get(timeout=max(0.1, deadline - time.monotonic())))
                if row["table"] == "A" and (row.get("round") or 0) > after:
                    return row["round"]

        before = round_seen(2)
        broker.stop()
        time.sleep(1.0)                          # the floor and the table both lose it
        while not rows.empty():
            rows.get()
        broker.start()                           # same port, same persistence
        assert round_seen(before + 2) > before + 2
        assert floor.poll() is None and table.poll() is None
    finally:
        for proc in (table, floor):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        broker.stop()

def _floor() -> Floor:
    floor = Floor("tables")
    since = (datetime.now(timezone.utc) - timedelta(seconds=95)).isoformat()[:-6] + "Z"
    floor.message("tables/T1/state", json.dumps({
        "table": "T1", "game": "punto_banco", "state": "betting", "shoe": 2, "round": 7,
        "last_result": {"round": 6, "winner": "banker", "player_total": 4, "banker_total": 7},
        "road": {"banker": 4, "player": 2}, "hold": None, "links": {}, "feed_behind": 0,
        "utc": since}).encode())
    floor.message("tables/T1/status", b'{"status": "online"}')
    floor.message("tables/T2/state", json.dumps({
        "table": "T2", "game": "andar_bahar", "state": "hold", "shoe": 1, "round": 3,
        "hold": {"kind": "link_lost", "detail": "cable", "since": since},
        "links": {"shoe": "down"}, "feed_behind": 12}).encode())
    floor.message("tables/T2/status", b'{"status": "offline", "clean": false}')
    floor.message("tables/T3/status", b'{"status": "online"}')
    assert floor.message("tables/T3/events", b"{}") is None      # not a floor topic
    assert floor.message("other/T4/state", b"{}") is None
    floor.message("tables/T3/status", b"")                     # retained status cleared
    return floor


def test_floor_rows_say_hold_age_links_lag_and_offline():
    rows = {r["table"]: r for r in _floor().rows()}
    assert sorted(rows) == ["T1", "T2"]
    t2 = rows["T2"]
    assert t2["hold"]["kind"] == "link_lost" and 94 <= t2["hold"]["age_s"] <= 100
    assert (t2["links_down"], t2["feed_behind"], t2["status"], t2["clean_exit"]) == \
        (["shoe"], 12, "offline", False)
    assert counts(list(rows.values())) == {"tables": 2, "on_hold": 1, "offline": 1,
                                           "links_down": 1, "feed_behind": 1}


def test_the_full_screen_floor_lists_every_table():
    floor = _floor()

    class Watch:
        connected = True

    async def scenario():
        app = FloorApp(floor, Watch(), "mqtt://127.0.0.1:1883", refresh_s=0.1)
        async with app.run_test(size=(160, 20)) as pilot:
            await pilot.pause()
            table = app.query_one("DataTable")
            assert table.row_count == 2
            t1 = [str(c) for c in table.get_row("T1")]
            t2 = [str(c) for c in table.get_row("T2")]
            assert t1[:5] == ["T1", "punto_banco", "betting", "2/7", "#6 BANKER 4-7"]
            assert t2[5].startswith("link_lost 1m3") and t2[6] == "shoe down"
            assert (t2[7], t2[8]) == ("behind 12", "offline (lost)")
            summary = str(app.query_one("#summary").render())
            assert "2 tables   1 on hold   1 offline" in summary
            floor.message("tables/T5/status", b'{"status": "online"}')
            await pilot.pause(0.3)
            assert table.row_count == 3
    asyncio.run(scenario())


def test_the_console_says_how_far_behind_the_feed_is():
    assert feed_text(None).plain == ""
    up = feed_text({"broker": "mqtt://b:1883", "connected": True, "behind": 0})
    assert up.plain == "Floor feed mqtt://b:1883: up to date"
    down = feed_text({"broker": "mqtt://b:1883", "connected": False, "behind": 42,
                      "problem": "nothing listens at mqtt://b:1883 (connection refused)"})
    assert "mqtt://b:1883: behind by 42" in down.plain
    assert down.plain.endswith(" (nothing listens at mqtt://b:1883 (connection refused))")
