"""The pit view in a real browser: three tables (`tablectl run`, pits 3, 3 and 5; B's shoe cannot
read its fifth card, so B stays on hold) deal through a real Mosquitto into the floor store on a
real PostgreSQL, a dealer signs in at A for a command, and `tablectl floor --web` serves the
pit. Headless Chromium sees every table with its hands an hour and its hold, the hold as an
alert once it lasts, the store's gap as an alert, the dealer in the shift's list, the columns
sorted by pit, and, asked for Traditional Chinese, all of it in Chinese."""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

from controller.feed.schema import FEED_SCHEMA
from controller.journal import Journal
from tests.broker import Mosquitto
from tests.test_display_browser import ENGLISH, browser, wait  # noqa: F401 (a fixture)

pytest.importorskip("psycopg")
from paho.mqtt import publish  # noqa: E402
from paho.mqtt.client import MQTTv5  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]
PINS = {"mia": "mia-manager-7", "dana": "dana-dealer-77"}


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e.update(PYTHONPATH=str(ROOT), TABLECTL_STORAGE_FSYNC="false", **extra)
    return e


def tablectl(*args, **extra):
    return subprocess.run(TABLECTL + list(args), capture_output=True, text=True,
                          env=env(**extra), cwd=ROOT, timeout=120)


def rows(browser) -> dict:
    return browser.execute_script(
        "const out = {}; for (const tr of document.querySelectorAll('#tables tbody tr')) {"
        "  out[tr.dataset.table] = {cells: [...tr.children].map(td => td.textContent),"
        "    held: tr.classList.contains('held')}; } return out;")


@pytest.mark.slow
def test_the_pit_view_shows_every_table_with_pace_holds_and_alerts(tmp_path, pg_server,
                                                                   browser):  # noqa: F811
    db = pg_server.new_database()
    broker = Mosquitto(tmp_path / "broker").start()
    users = tmp_path / "users.db"
    assert tablectl("users", "add", "mia", "--role", "manager", "--db", str(users),
                    TABLECTL_NEW_PIN=PINS["mia"]).returncode == 0
    assert tablectl("users", "add", "dana", "--role", "dealer", "--as", "mia", "--db",
                    str(users), TABLECTL_PIN=PINS["mia"],
                    TABLECTL_NEW_PIN=PINS["dana"]).returncode == 0
    sockets = Path(tempfile.mkdtemp(prefix="tp-", dir="/tmp"))
    procs: dict[str, subprocess.Popen] = {}
    try:
        procs["store"] = subprocess.Popen(TABLECTL + [
            "floor-store", "--feed", broker.url, "--db", db, "--name", "pit",
            "--gap-after-s", "1"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "store.err", "w"), env=env(),
            cwd=ROOT)
        for seed, (table, pit, more) in enumerate((
                ("A", "3", {}), ("B", "3", {"TABLECTL_SIMULATOR_FAULTS": "misread@5"}),
                ("C", "5", {})), 3):
            procs[table] = subprocess.Popen(TABLECTL + [
                "run", "--pace", "0.02", "--seed", str(seed), "--shoes", "0",
                "--no-virtual-supervisor", "--journal",
                str(tmp_path / f"{table}.db"), "--config", str(ROOT / "config" / "table.toml"),
                "--feed", broker.url], stdout=subprocess.DEVNULL,
                stderr=open(tmp_path / f"{table}.err", "w"), cwd=ROOT, env=env(
                    TABLECTL_TABLE_NAME=table, TABLECTL_TABLE_PIT=pit,
                    TABLECTL_CONSOLE_SOCKET=str(sockets / f"{table}.sock"),
                    TABLECTL_CONSOLE_USERS_DB=str(users), **more))
        page_log = tmp_path / "floor.err"
        procs["floor"] = subprocess.Popen(TABLECTL + [
            "floor", "--web", "127.0.0.1:0", "--feed", broker.url, "--db", db,
            "--hold-alert-min", "0.05", "--refresh-s", "1"], stdout=subprocess.DEVNULL,
            stderr=open(page_log, "w"), env=env(), cwd=ROOT)
        url = wait("the pit view's URL", lambda: (lambda m: m.group(1) if m else None)(
            re.search(r"pit view at (http://\S+)", page_log.read_text())))
        wait("table A's socket", lambda: (sockets / "A.sock").exists())
        signed = tablectl("override", "call_supervisor", "--reason", "a player asks",
                          "--user", "dana", "--socket", str(sockets / "A.sock"),
                          TABLECTL_PIN=PINS["dana"])
        assert signed.returncode == 0, signed.stdout + signed.stderr
        # a table G whose records 6 and 7 never reach the broker: the store's gap
        with Journal.open_readonly(tmp_path / "C.db") as j:
            early = [r for r in j.records() if r.seq <= 10 and r.seq not in (6, 7)]
        publish.multiple([("tables/G/records", json.dumps({
            "schema_version": FEED_SCHEMA, "table": "G", "pit": "5", "seq": r.seq, "utc": r.utc,
            "mono": r.mono, "kind": r.kind, "data": r.data, "hash": r.hash}), 1, False)
            for r in early], hostname="127.0.0.1", port=broker.port, protocol=MQTTv5)

        browser.get(url)
        seen = wait("every table with its pace", lambda: (lambda r: r if len(r) == 4 and all(
            r[t]["cells"][7] for t in "AC") else None)(rows(browser)), timeout=40)
        a, b, c, g = seen["A"], seen["B"], seen["C"], seen["G"]
        order = browser.execute_script("return [...document.querySelectorAll("
                                       "'#tables tbody tr')].map(tr => tr.dataset.table)")
        assert order == ["A", "B", "C", "G"]                           # by pit, then name
        assert [x["cells"][0] for x in (a, b, c, g)] == ["3", "3", "5", "5"]
        assert g["cells"][-1] == "not heard yet"            # in the store, never on the feed
        assert a["cells"][2] == "Punto Banco" and int(a["cells"][7].replace(",", "")) > 0
        assert b["held"] and b["cells"][4].startswith("a card the shoe could not read, for ")
        assert a["cells"][-1] == "online"
        alerts = wait("B's hold and C's gap as alerts", lambda: (lambda x: x if {
            "hold", "gap"} <= {k for k, _ in x} else None)(browser.execute_script(
                "return [...document.querySelectorAll('#alerts li')].map("
                "li => [li.dataset.kind, li.textContent])")), timeout=20)
        said = dict(alerts)
        assert said["hold"].startswith("Table B has been on hold for ")
        assert said["gap"] == "The floor store is missing records 6 to 7 of table G."
        dealers = wait("dana among the dealers", lambda: browser.execute_script(
            "return [...document.querySelectorAll('#dealers tbody tr')].map("
            "tr => [...tr.children].map(td => td.textContent))"), timeout=20)
        assert dealers[0][:2] == ["dana", "A"]
        # sorted by hands an hour, highest first: a click, then another
        header = browser.find_element("css selector", "th[data-sort=pace_shift]")
        header.click()
        header.click()
        order = browser.execute_script("return [...document.querySelectorAll("
                                       "'#tables tbody tr')].map(tr => tr.dataset.table)")
        paces = {t: rows(browser)[t]["cells"][8] for t in "ABCG"}
        assert set(order[:2]) == {"A", "C"}, (order, paces)        # B and G deal nothing
        data = json.load(urllib.request.urlopen(url + "api/floor", timeout=5))
        assert {t["table"] for t in data["tables"]} == {"A", "B", "C", "G"}

        # a pit boss who reads Chinese
        browser.get(url + "?lang=zh_Hant")
        shown = wait("the page in Chinese", lambda: (lambda r: r if len(r) == 4 else None)(
            rows(browser)))
        assert browser.find_element("tag name", "h1").text == "賭區總覽"
        assert shown["A"]["cells"][-1] == "在線" and shown["B"]["held"]
        body = browser.find_element("css selector", "main").text
        # names stay as they are: the game's (in its Chinese name), the dealers', UTC
        names = {w for d in browser.execute_script(
            "return [...document.querySelectorAll('#dealers tbody tr')].map("
            "tr => tr.children[0].textContent)") for w in ENGLISH.findall(d)}
        assert not [w for w in ENGLISH.findall(body)
                    if w not in {"UTC", "Punto", "Banco"} | names], body
        # the tables stop: offline, cleanly, each an alert
        browser.get(url)
        for table in "ABC":
            procs[table].send_signal(signal.SIGTERM)
        offline = wait("the tables offline", lambda: (lambda x: x if len(x) == 3 else None)(
            browser.execute_script("return [...document.querySelectorAll("
                                   "'#alerts li[data-kind=offline]')].map(li => li.textContent)"
                                   )), timeout=30)
        assert sorted(offline) == [f"Table {t} is offline." for t in "ABC"]
        assert rows(browser)["A"]["cells"][-1] == "offline"
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        broker.stop()
        shutil.rmtree(sockets, ignore_errors=True)
