"""The floor at scale, end to end: three tables (`tablectl run`, each its own process, journal
and control socket; pits 3, 3 and 5) deal through a real Mosquitto while `tablectl floor-store`
writes into a real PostgreSQL. A supervisor, sam, overrides at two tables. Mid-shoe the store is
killed (kill -9) and started again, the database is stopped and started again, and the broker is
stopped and started again. Afterwards:

- the store holds every record of every table's journal exactly once, equal to the journal
  (seq, times, kind, data, hash), and `recall --store --table T --json` is the journal's recall;
- `audit --store --user sam` lists sam's overrides from both tables, and `report --store --pit 3
  --output shift.pdf` covers both;
- `verify-journal --store` holds an intact journal to the store, and finds a cut tail.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from controller.cli import main
from controller.journal import Journal
from tests.broker import Mosquitto

pytest.importorskip("psycopg")

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]
TABLES = {"A": "3", "B": "3", "C": "5"}
PINS = {"mia": "mia-manager-7", "sam": "sam-supervisor-7"}


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e.update(PYTHONPATH=str(ROOT), TABLECTL_STORAGE_FSYNC="false", TABLECTL_FEED_RETRY_MAX_S="0.3",
             **extra)
    return e


def tablectl(*args, timeout=120, **extra):
    return subprocess.run(TABLECTL + list(args), capture_output=True, text=True,
                          env=env(**extra), cwd=ROOT, timeout=timeout)


def wait(what, until, timeout=40.0, every=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = until()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def ask(capsys, *args) -> tuple[int, str]:
    """A question to `tablectl` in this process: (exit status, what it printed)."""
    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().out


@pytest.mark.slow
def test_three_tables_through_every_outage_end_in_the_store_once(tmp_path, pg_server, capsys):
    db = pg_server.new_database()
    name = db.rsplit("/", 1)[1]
    broker = Mosquitto(tmp_path / "broker").start()
    users = tmp_path / "users.db"
    assert tablectl("users", "add", "mia", "--role", "manager", "--db", str(users),
                    TABLECTL_NEW_PIN=PINS["mia"]).returncode == 0
    added = tablectl("users", "add", "sam", "--role", "supervisor", "--as", "mia", "--db",
                     str(users), TABLECTL_PIN=PINS["mia"], TABLECTL_NEW_PIN=PINS["sam"])
    assert added.returncode == 0, added.stderr
    sockets = Path(tempfile.mkdtemp(prefix="tc-", dir="/tmp"))
    store_log = tmp_path / "store.err"
    procs: dict[str, subprocess.Popen] = {}

    def start_store() -> subprocess.Popen:
        with open(store_log, "a") as log:
            return subprocess.Popen(TABLECTL + [
                "floor-store", "--feed", broker.url, "--db", db, "--name", "e2e",
                "--retry-max-s", "0.5", "--gap-after-s", "2"], stdout=subprocess.DEVNULL,
                stderr=log, env=env(), cwd=ROOT)

    def stored(table: str | None = None) -> int:
        where = f" WHERE table_id = (SELECT id FROM floor.tables WHERE name = '{table}')" \
            if table else ""
        try:
            return pg_server.sql(f"SELECT count(*) FROM floor.records{where}", name)[0][0]
        except Exception:            # the schema not made yet, or the server restarting
            return 0

    def journaled() -> int:
        total = 0
        for table in TABLES:
            with Journal.open_readonly(tmp_path / f"{table}.db") as j:
                total += j.last_seq
        return total

    def progress(after: str) -> None:
        """Until the store holds what the journals hold now (what they dealt meanwhile
        included): it works again after `after`."""
        now = journaled()
        try:
            wait(f"the store to catch up with the journals {after}",
                 lambda: stored() >= now, timeout=60)
        except AssertionError as err:
            raise AssertionError(f"{err} ({stored()} of {now})\n"
                                 f"{store_log.read_text()[-3000:]}") from None

    try:
        procs["store"] = start_store()
        wait("the store's schema", lambda: pg_server.sql(
            "SELECT to_regclass('floor.records') IS NOT NULL", name)[0][0])
        for seed, (table, pit) in enumerate(TABLES.items(), 3):
            procs[table] = subprocess.Popen(TABLECTL + [
                "run", "--pace", "0.02", "--seed", str(seed), "--shoes", "0",
                "--no-virtual-supervisor", "--journal",     # sam's hold is sam's to resume
                str(tmp_path / f"{table}.db"), "--config", str(ROOT / "config" / "table.toml"),
                "--feed", broker.url], stdout=subprocess.DEVNULL,
                stderr=open(tmp_path / f"{table}.err", "w"), cwd=ROOT, env=env(
                    TABLECTL_TABLE_NAME=table, TABLECTL_TABLE_PIT=pit,
                    TABLECTL_CONSOLE_SOCKET=str(sockets / f"{table}.sock"),
                    TABLECTL_CONSOLE_USERS_DB=str(users)))
        wait("every table in the store", lambda: all(stored(t) > 20 for t in TABLES))
        # sam holds tables A and B, and resumes them (both tables at once)
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(2) as pool:
            for action in ("hold", "resume"):
                for sent in pool.map(lambda table: tablectl(
                        "override", action, "--reason", f"{action} at {table}", "--user",
                        "sam", "--socket", str(sockets / f"{table}.sock"),
                        TABLECTL_PIN=PINS["sam"]), ("A", "B")):
                    assert sent.returncode == 0, sent.stdout + sent.stderr
        # the store killed mid-shoe, and started again
        progress("after the overrides")
        procs["store"].send_signal(signal.SIGKILL)
        procs["store"].wait(10)
        time.sleep(0.5)
        procs["store"] = start_store()
        # the database stopped mid-shoe, and started again
        progress("after the store's restart")
        pg_server.stop("fast")
        time.sleep(1.0)
        pg_server.start()
        # the broker stopped mid-shoe, and started again (it keeps the store's session)
        progress("after the database's restart")
        broker.stop()
        time.sleep(0.5)
        broker.start()
        progress("after the broker's restart")
        for table in TABLES:
            procs[table].send_signal(signal.SIGTERM)
        for table in TABLES:
            assert procs[table].wait(60) == 0, (tmp_path / f"{table}.err").read_text()[-2000:]
        journals = {}
        for table in TABLES:
            with Journal.open_readonly(tmp_path / f"{table}.db") as j:
                journals[table] = list(j.records(stored=True))
        wait("every record of every table in the store", lambda: all(
            stored(t) >= len(journals[t]) for t in TABLES), timeout=60)
        procs["store"].send_signal(signal.SIGTERM)
        assert procs["store"].wait(20) == 0, store_log.read_text()[-3000:]
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        broker.stop()
        shutil.rmtree(sockets, ignore_errors=True)
    log = store_log.read_text()
    assert "the database is back" in log and "the broker is back" in log, log[-3000:]

    # every journal seq of every table once, exactly as journaled
    for table, records in journals.items():
        rows = pg_server.sql(
            "SELECT r.seq, r.utc, r.mono, r.kind, r.data::text, r.hash, r.pit FROM floor.records"
            f" r JOIN floor.tables t ON t.id = r.table_id WHERE t.name = '{table}' "
            "ORDER BY r.seq", name)
        assert [r[0] for r in rows] == list(range(1, len(records) + 1))
        assert [(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows] == \
            [(x.seq, x.utc, x.mono, x.kind, x.data, x.hash) for x in records]
        assert {r[6] for r in rows} == {TABLES[table]}
    assert pg_server.sql("SELECT count(*) FROM floor.quarantine", name) == [(0,)]
    assert pg_server.sql("SELECT count(*) FROM floor.alarms WHERE cleared IS NULL", name) == \
        [(0,)]
    assert pg_server.sql("SELECT name, contiguous_seq = last_seq FROM floor.tables ORDER BY "
                         "name", name) == [(t, True) for t in TABLES]

    # the store's recall is each table's own
    for table in TABLES:
        mine = ask(capsys, "recall", "--journal", str(tmp_path / f"{table}.db"), "--last",
                   "1000", "--json")
        theirs = ask(capsys, "recall", "--store", db, "--table", table, "--last", "1000",
                     "--json")
        assert mine[0] == theirs[0] == 0
        stories = [json.loads(x) for x in theirs[1].splitlines()]
        assert {s.pop("table") for s in stories} == {table}
        assert [json.dumps(s, ensure_ascii=False) for s in stories] == mine[1].splitlines()
        assert len(stories) > 10

    # sam's overrides across the floor, and the pit's shift report
    code, out = ask(capsys, "audit", "--store", db, "--user", "sam", "--json")
    assert code == 0
    trail = [json.loads(x) for x in out.splitlines()]
    assert sorted((e["table"], e["action"]) for e in trail) == [
        ("A", "hold"), ("A", "resume"), ("B", "hold"), ("B", "resume")]
    assert {e["pit"] for e in trail} == {"3"} and all(e["user"] == "sam" for e in trail)
    code, out = ask(capsys, "audit", "--store", db, "--user", "sam")
    assert out.splitlines()[1].split()[:2] == ["Table", "Record"]      # the columns, in words
    pdf = tmp_path / "shift.pdf"
    code, out = ask(capsys, "report", "--store", db, "--pit", "3", "--from", "2000-01-01",
                    "--output", str(pdf))
    assert code == 0
    assert "2 tables (A, B)" in out
    from pypdf import PdfReader
    words = "\n".join(page.extract_text() for page in PdfReader(str(pdf)).pages)
    assert "Floor report" in words and "2 tables" in words
    for table in ("A", "B"):
        assert f"Table {table}, from the floor store" in words
    assert words.count("sam") >= 4 and "Table C," not in words

    # a journal held to what left it: intact, then with its tail cut
    code, out = ask(capsys, "verify-journal", "--journal", str(tmp_path / "C.db"), "--store",
                    db, "--table", "C")
    assert code == 0, out
    assert f"{len(journals['C'])} record(s) of table C match" in out
    cut = tmp_path / "C-cut.db"
    shutil.copy(tmp_path / "C.db", cut)
    with sqlite3.connect(cut) as conn:
        conn.execute("DELETE FROM records WHERE seq > ?", (len(journals["C"]) - 40,))
        conn.execute("DELETE FROM snapshots")
        conn.execute("DELETE FROM cursors")
    code, out = ask(capsys, "verify-journal", "--journal", str(cut), "--store", db, "--table",
                    "C")
    assert code == 1, out
    assert "chain intact" in out                   # the file alone cannot show it
    assert (f"the journal ends at seq {len(journals['C']) - 40}, but the floor store holds "
            f"table C's records up to seq {len(journals['C'])}") in out
    assert "the journal's tail was cut" in out
