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

from controller.cli import main
from controller.console.text import feed_text
from controller.floor.app import FloorApp
from controller.floor.model import Floor, counts
from tests.broker import Mosquitto

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e.update(PYTHONPATH=str(ROOT), TABLECTL_STORAGE_FSYNC="false", **extra)
    return e


def lines_of(proc) -> queue.Queue:
    out: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [out.put(x) for x in proc.stdout], daemon=True).start()
    return out


def test_the_floor_shows_two_tables_one_on_hold_then_both_offline(tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.chdir(ROOT)
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
        # the floor as text, for a person, in their language: no machine word, no log line
        from tests.test_readable_outputs import scanned
        # (`--once` in this process: the floor as its own process is the live one above)
        capsys.readouterr()
        said = main(["floor", "--feed", broker.url, "--once", "--language", "zh_Hant"])
        text = capsys.readouterr()
        assert said == 0, text
        scanned(text.out + text.err)
        lines = text.out.splitlines()
        assert "2 張牌桌" in lines[0] and "1 張暫停" in lines[0] and "0 張數據傳送落後" in lines[0]
        held = next(line for line in lines if line.startswith("B "))
        assert "暫停中" in held and "牌靴無法讀取的牌，已" in held and "在線" in held
        # a reader that goes away ends the rows quietly
        cut = subprocess.Popen(TABLECTL + ["floor", "--feed", broker.url, "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(),
                               cwd=ROOT)
        assert cut.stdout.readline().startswith(b"{")
        cut.stdout.close()
        assert cut.wait(timeout=20) == 0
        assert cut.stderr.read() == b""
        for proc in tables.values():
            proc.terminate()
        for proc in tables.values():
            assert proc.wait(30) == 0, proc.stderr.read()[-2000:]
        said = main(["floor", "--feed", broker.url, "--json", "--once"])
        once = capsys.readouterr()
        assert said == 0, once.err
        after = {r["table"]: r for r in map(json.loads, once.out.splitlines())}
        assert sorted(after) == ["A", "B"]
        assert all(r["status"] == "offline" and r["clean_exit"] for r in after.values())
        assert after["B"]["hold"]["kind"] == "unreadable_card" and not after["B"]["feed_late"]
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
    now = datetime.now(timezone.utc)
    since = (now - timedelta(seconds=95)).isoformat()[:-6] + "Z"
    stopped = (now - timedelta(seconds=35)).isoformat()[:-6] + "Z"
    floor.message("tables/T1/state", json.dumps({
        "table": "T1", "game": "punto_banco", "state": "betting", "shoe": 2, "round": 7,
        "last_result": {"round": 6, "winner": "banker", "player_total": 4, "banker_total": 7},
        "road": {"banker": 4, "player": 2}, "hold": None, "links": {}, "feed_behind": 2,
        "feed_lag_s": 0.1, "utc": since}).encode())
    floor.message("tables/T1/status", b'{"status": "online"}')
    # T2 stopped (its broker said so) 60 s into a hold: the hold's age stays 60 s
    floor.message("tables/T2/state", json.dumps({
        "table": "T2", "game": "andar_bahar", "state": "hold", "shoe": 1, "round": 3,
        "hold": {"kind": "link_lost", "detail": "cable", "since": since},
        "links": {"shoe": "down"}, "feed_behind": 12, "feed_lag_s": 40.0}).encode())
    floor.message("tables/T2/status", json.dumps({"status": "offline", "clean": False,
                                                  "utc": stopped}).encode())
    # T6 deals with a hold of its own, a device down and a feed that really lags
    floor.message("tables/T6/state", json.dumps({
        "table": "T6", "game": "punto_banco", "state": "hold", "shoe": 4, "round": 1,
        "hold": {"kind": "count_mismatch", "detail": "415", "since": since},
        "links": {"shuffler": "down"}, "feed_behind": 30, "feed_lag_s": 12.5}).encode())
    floor.message("tables/T6/status", b'{"status": "online"}')
    floor.message("tables/T3/status", b'{"status": "online"}')
    assert floor.message("tables/T3/events", b"{}") is None      # not a floor topic
    assert floor.message("other/T4/state", b"{}") is None
    floor.message("tables/T3/status", b"")                     # retained status cleared
    return floor


def test_floor_rows_say_hold_age_links_lag_and_stopped_tables():
    rows = {r["table"]: r for r in _floor().rows()}
    assert sorted(rows) == ["T1", "T2", "T6"]
    t1, t2, t6 = rows["T1"], rows["T2"], rows["T6"]
    # a table in full flow owes a record or two for a moment: that is not behind
    assert t1["feed_behind"] == 2 and not t1["feed_late"]
    assert t6["feed_late"] and 94 <= t6["hold"]["age_s"] <= 100
    # a stopped table's hold stopped ageing when the table stopped
    assert t2["hold"]["kind"] == "link_lost" and 59 <= t2["hold"]["age_s"] <= 61
    assert (t2["links_down"], t2["feed_late"], t2["status"], t2["clean_exit"]) == \
        (["shoe"], False, "offline", False)
    assert counts(list(rows.values())) == {"tables": 3, "on_hold": 1, "offline": 1,
                                           "links_down": 1, "feed_behind": 1}


def test_the_floor_in_words_as_text_and_full_screen():
    from controller.floor.words import floor_text
    from tests.test_words import leaks
    floor = _floor()
    text = floor_text(floor.rows(), "mqtt://127.0.0.1:1883", "en")
    assert text.splitlines()[0] == ("mqtt://127.0.0.1:1883   3 tables   1 on hold   1 stopped"
                                    "   1 with a device disconnected   1 with its feed "
                                    "behind")
    t6 = next(line for line in text.splitlines() if line.startswith("T6"))
    assert "the shuffler's count, for 1 minute" in t6 and "shuffler disconnected" in t6
    assert "30 events behind" in t6 and "online" in t6
    t2 = next(line for line in text.splitlines() if line.startswith("T2"))
    assert "stopped" in t2 and "a lost link, for 1 minute" in t2 and "connection lost" in t2
    t1 = next(line for line in text.splitlines() if line.startswith("T1"))
    assert "bets are open" in t1 and "Round 6: BANKER 4–7" in t1 and "up to date" in t1
    chinese = floor_text(floor.rows(), "mqtt://b", "zh_Hant")
    for said in (text, chinese):
        assert not leaks(said), leaks(said)
        assert "punto_banco" not in said and "count_mismatch" not in said

    class Watch:
        connected = True

    async def scenario():
        app = FloorApp(floor, Watch(), "mqtt://127.0.0.1:1883", refresh_s=0.1)
        async with app.run_test(size=(200, 20)) as pilot:
            for _ in range(100):
                await pilot.pause(0.05)
                if app.query("DataTable") and app.query_one("DataTable").row_count == 3:
                    break
            table = app.query_one("DataTable")
            assert table.row_count == 3
            t1 = [str(c) for c in table.get_row("T1")]
            t2 = [str(c) for c in table.get_row("T2")]
            assert t1[:5] == ["T1", "Punto Banco", "bets are open", "Shoe 2 · Round 7",
                              "Round 6: BANKER 4–7"]
            assert t2[5].startswith("a lost link, for 1 minute") and t2[2] == "stopped"
            assert t2[8] == "offline, connection lost"
            summary = str(app.query_one("#summary").render())
            assert "3 tables   1 on hold   1 stopped" in summary
            floor.message("tables/T5/status", b'{"status": "online"}')
            await pilot.pause(0.3)
            assert table.row_count == 4
    asyncio.run(scenario())


def test_the_console_says_how_far_behind_the_feed_is():
    assert feed_text(None).plain == ""
    up = feed_text({"broker": "mqtt://b:1883", "connected": True, "behind": 0})
    assert up.plain == "Floor feed mqtt://b:1883: up to date"
    down = feed_text({"broker": "mqtt://b:1883", "connected": False, "behind": 42,
                      "problem": "nothing listens at mqtt://b:1883 (connection refused)"})
    assert "mqtt://b:1883: behind by 42" in down.plain
    assert down.plain.endswith(" (nothing listens at mqtt://b:1883 (connection refused))")


def test_the_pit_views_json_is_sent_whatever_text_it_holds():
    """Half a UTF-16 surrogate in what the pit view shows (an old journal's record, the words
    of an error naming an undecodable path): its JSON could not be encoded, and the page's
    every refresh failed. It is escaped, and reads back as it was."""
    from controller.floor.pit import PitHub, PitView
    view = PitView(Floor())
    view.store_problem = "cannot open /srv/caf\udce9/root.crt"
    text = PitHub(view).json("en")
    text.encode("utf-8")
    [alert] = json.loads(text)["alerts"]
    assert "caf\udce9" in alert["text"]
