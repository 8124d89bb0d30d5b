"""The floor store on a real PostgreSQL: its schema made, migrated and guarded; each record of a
real journal stored once by (table, seq), in order, whatever the order and the number of times
it arrives; a missing record an alarm until it comes; a payload that is not a known record kept
aside with why; and, with a real Mosquitto, a database that refuses is one line, retried, and
nothing is acknowledged to the broker before it is committed."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.cli import main
from controller.feed.schema import FEED_SCHEMA
from controller.journal import Journal
from tests.broker import Mosquitto

psycopg = pytest.importorskip("psycopg")

from controller.floor.store import ingest, schema  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]
# one worker runs the module, so that one PostgreSQL serves it (`--dist loadgroup`)
pytestmark = pytest.mark.xdist_group("floor_store_pg")


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e.update(PYTHONPATH=str(ROOT), TABLECTL_STORAGE_FSYNC="false", **extra)
    return e


@pytest.fixture(scope="module")
def journal_file(tmp_path_factory):
    """One real shoe's journal (every kind a dealt shoe journals)."""
    path = tmp_path_factory.mktemp("j") / "j.db"
    assert main(["simulate", "--profile", "macau", "--seed", "7", "--shoes", "1", "--journal",
                 str(path)]) == 0
    return path


@pytest.fixture
def journal(journal_file):
    with Journal.open_readonly(journal_file) as j:
        return list(j.records(stored=True))


def message(rec, table="T1", **change) -> ingest.Message:
    body = {"schema_version": FEED_SCHEMA, "table": table, "pit": "3", "seq": rec.seq, "utc": rec.utc,
            "mono": rec.mono, "kind": rec.kind, "data": rec.data, "hash": rec.hash, **change}
    return ingest.Message(f"tables/{table}/records", json.dumps(body).encode())


def connect(url):
    conn = psycopg.connect(url)
    schema.migrate(conn)
    return conn


def rows(conn, sql, *args):
    out = conn.execute(sql, args).fetchall()
    conn.rollback()
    return out


def test_the_schema_is_made_once_and_a_newer_one_is_refused(pg_url, capsys):
    with psycopg.connect(pg_url) as conn:
        assert schema.migrate(conn) == (0, schema.VERSION)
        assert schema.migrate(conn) == (schema.VERSION, schema.VERSION)      # idempotent
        conn.execute("UPDATE floor.schema_version SET version = 99")
        conn.commit()
        with pytest.raises(schema.SchemaError, match="version 99 was made by a newer"):
            schema.migrate(conn)
    # the command says it in one line, and makes a fresh database's schema itself (in this
    # process: the store as a process of its own is the subject of the tests below)
    capsys.readouterr()
    said = main(["floor-store", "--db", pg_url, "--migrate-only"])
    err = capsys.readouterr().err
    assert said == 2 and err.count("\n") == 1, err
    assert "newer tablectl" in err and "floor-test-secret" not in err


def test_each_record_is_stored_once_in_order_and_a_gap_is_an_alarm_until_filled(
        pg_url, journal, journal_file):
    conn = connect(pg_url)
    first, hole, rest = journal[:300], journal[300:305], journal[305:]
    # the first part twice over (at least once delivery), the part after the hole early
    got = ingest.write(conn, [message(r) for r in first + first[:50]], "tables")
    assert len(got.stored) == 300 and got.duplicates == 50 and not got.kept
    got = ingest.write(conn, [message(r) for r in rest[::-1]], "tables")
    assert len(got.stored) == len(rest) and not got.kept
    (t,) = rows(conn, "SELECT contiguous_seq, last_seq, hole_since IS NOT NULL, pit "
                      "FROM floor.tables WHERE name = 'T1'")
    assert t == (300, journal[-1].seq, True, "3")
    assert ingest.raise_gaps(conn, 0.0) == [
        f"alarm: records 301-305 of table T1 did not arrive (seq 306 and later did); the store "
        f"waits for them and counts nothing past the gap as complete"]
    assert ingest.raise_gaps(conn, 0.0) == []                           # raised once
    got = ingest.write(conn, [message(r) for r in hole], "tables")
    assert got.lines == ["gap filled: records 301-305 of table T1 did not arrive (seq 306 and "
                         "later did); the store waits for them and counts nothing past the gap "
                         "as complete"]
    (t,) = rows(conn, "SELECT contiguous_seq, last_seq, hole_since FROM floor.tables")
    assert t == (journal[-1].seq, journal[-1].seq, None)
    assert rows(conn, "SELECT count(*) FROM floor.alarms WHERE cleared IS NULL") == [(0,)]
    # every record exactly as journaled: seq, times, kind, data (its keys' order kept), hash
    stored = rows(conn, "SELECT seq, utc, mono, kind, data::text, hash FROM floor.records "
                        "ORDER BY seq")
    with Journal.open_readonly(journal_file) as j:
        raw = j._rows("SELECT seq, utc, mono, kind, data, hash FROM records ORDER BY seq")
        # as a reader of the journal gets them (ISO time, seconds, the data's text, hex hash)
        assert stored == [j.codec.unpack(r) for r in raw]
    # append-only: the database itself refuses to change or remove a record
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
        conn.execute("UPDATE floor.records SET kind = 'x' WHERE seq = 1")
    conn.rollback()
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"):
        conn.execute("DELETE FROM floor.records")
    conn.rollback()
    conn.close()


def test_what_is_not_a_known_record_is_kept_aside_with_why(pg_url, journal):
    conn = connect(pg_url)
    ingest.write(conn, [message(r) for r in journal[:10]], "tables")
    forged = dict(journal[10].data, code="AS") if journal[10].kind == "card" else \
        dict(journal[10].data, forged=True)
    bad = [ingest.Message("tables/T1/records", b"{not json"),
           message(journal[10], schema_version=7),
           message(journal[10], kind="teleport"),
           message(journal[10], data=forged),                       # does not follow seq 10
           message(journal[3], data=dict(journal[3].data, x=1), hash="b" * 64),   # another 4
           message(journal[10], table="T2"),                        # another table: stored
           ingest.Message("tables/T1/records", json.dumps(
               {"schema_version": 1, "table": "T9", "seq": 1}).encode())]
    got = ingest.write(conn, bad, "tables")
    reasons = [k.reason for k in got.kept]
    assert reasons[0].startswith("not JSON")
    assert "schema version 7 is not one this store knows" in reasons[1]
    assert "kind 'teleport' is not a record kind" in reasons[2]
    assert "does not follow seq 10 in the journal's hash chain" in reasons[4]
    assert "seq 4 of table T1 is stored with another hash" in reasons[5]
    assert "names table 'T9'" in reasons[3]
    kept = rows(conn, "SELECT reason, payload FROM floor.quarantine ORDER BY id")
    assert [r for r, _ in kept] == reasons and bytes(kept[0][1]) == b"{not json"
    # nothing of it entered the record; the genuine next record still does
    assert rows(conn, "SELECT max(seq) FROM floor.records WHERE table_id = "
                      "(SELECT id FROM floor.tables WHERE name = 'T1')") == [(10,)]
    assert not ingest.write(conn, [message(journal[10])], "tables").kept
    conn.close()


def _store(broker, db_url, log, *more, level="WARNING"):
    return subprocess.Popen(TABLECTL + ["--log-level", level, "floor-store", "--feed",
                                        broker.url, "--db", db_url,
                                        "--name", "test-store", "--retry-max-s", "0.5",
                                        *more], stdout=subprocess.DEVNULL, stderr=log,
                            env=env(), cwd=ROOT)


def _terminated(store, errors) -> None:
    """SIGTERM: the store stops cleanly (exit 0)."""
    store.send_signal(signal.SIGTERM)
    assert store.wait(15) == 0, errors.read_text()[-2000:]


def _killed(store) -> None:
    if store is not None and store.poll() is None:
        store.kill()


def _wait(what, until, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = until()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_refusing_database_is_one_line_and_nothing_is_acknowledged_before_it_commits(
        tmp_path, pg_server, pg_url, capsys, monkeypatch):
    broker = Mosquitto(tmp_path / "broker").start()
    name = pg_url.rsplit("/", 1)[1]
    errors = tmp_path / "store.err"
    store = None
    try:
        with open(errors, "w") as log:
            store = _store(broker, pg_url, log)
        _wait("the store's schema", lambda: pg_server.sql(
            "SELECT to_regclass('floor.records') IS NOT NULL", name)[0][0])
        time.sleep(0.5)                                 # subscribed, its session made
        pg_server.sql(f"ALTER DATABASE {name} SET default_transaction_read_only = on")
        pg_server.sql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
        journal = tmp_path / "j.db"
        # the table in this process: the store, a process of its own, is the subject
        monkeypatch.setenv("TABLECTL_TABLE_NAME", "R1")
        monkeypatch.chdir(ROOT)
        said = main(["simulate", "--profile", "macau", "--seed", "2", "--shoes", "1",
                     "--journal", str(journal), "--feed", broker.url])
        assert said == 0, capsys.readouterr().err[-2000:]
        lines = _wait("the refusal", lambda: [x for x in errors.read_text().splitlines()
                                              if "read-only" in x])
        time.sleep(1.5)                                 # it retries: still one line
        lines = [x for x in errors.read_text().splitlines() if "read-only" in x]
        assert len(lines) == 1 and "nothing is acknowledged" in lines[0], lines
        assert "floor-test-secret" not in errors.read_text()
        # killed while nothing could be written: what it held was never acknowledged
        store.send_signal(signal.SIGKILL)
        store.wait(10)
        pg_server.sql(f"ALTER DATABASE {name} RESET default_transaction_read_only")
        with open(errors, "a") as log:
            store = _store(broker, pg_url, log)
        with Journal.open_readonly(journal) as j:
            last = j.last_seq
        _wait("every record in the store", lambda: pg_server.sql(
            "SELECT count(*), count(DISTINCT seq), max(seq) FROM floor.records", name)[0] ==
            (last, last, last), timeout=40)
        _terminated(store, errors)
    finally:
        _killed(store)
        broker.stop()


def test_wrong_credentials_are_one_line_and_tried_again(tmp_path, pg_server, pg_url):
    broker = Mosquitto(tmp_path / "broker").start()
    wrong = pg_url.replace("floor-test-secret", "not-the-password")
    errors = tmp_path / "store.err"
    try:
        with open(errors, "w") as log:
            store = _store(broker, wrong, log)
        _wait("the refusal", lambda: "credentials" in errors.read_text())
        time.sleep(1.5)
        assert store.poll() is None                     # still trying
        text = errors.read_text()
        lines = [x for x in text.splitlines() if "credentials" in x]
        assert len(lines) == 1 and "~/.pgpass" in lines[0], text
        assert "not-the-password" not in text
        store.terminate()
        assert store.wait(15) == 0
    finally:
        broker.stop()


def test_a_new_store_subscribes_before_its_database_is_there_and_loses_nothing(
        tmp_path, pg_server, capsys, monkeypatch):
    """A store new to the broker, started while its database cannot be reached: it holds its
    session from the start, so what a table sends meanwhile waits at the broker for it."""
    import uuid
    broker = Mosquitto(tmp_path / "broker").start()
    name = f"t_{uuid.uuid4().hex[:12]}"            # a database not made yet: unreachable
    errors = tmp_path / "store.err"
    store = None
    try:
        with open(errors, "w") as log:
            store = _store(broker, pg_server.url(name), log, level="INFO")
        _wait("the database's refusal", lambda: "does not exist" in errors.read_text())
        _wait("the subscription", lambda: "subscribed" in errors.read_text())
        journal = tmp_path / "j.db"
        monkeypatch.setenv("TABLECTL_TABLE_NAME", "N1")
        monkeypatch.setenv("TABLECTL_FEED_DRAIN_TIMEOUT_S", "30")
        monkeypatch.chdir(ROOT)
        said = main(["simulate", "--profile", "macau", "--seed", "2", "--shoes", "1",
                     "--journal", str(journal), "--feed", broker.url])
        assert said == 0, capsys.readouterr().err[-2000:]
        pg_server.sql(f"CREATE DATABASE {name}")      # the database is there now
        with Journal.open_readonly(journal) as j:
            last = j.last_seq
        _wait("every record in the store", lambda: pg_server.sql(
            "SELECT to_regclass('floor.records') IS NOT NULL", name)[0][0] and pg_server.sql(
            "SELECT count(*), min(seq), max(seq) FROM floor.records", name)[0] ==
            (last, 1, last), timeout=40)
        assert "were not on the feed" not in errors.read_text()
        _terminated(store, errors)
    finally:
        _killed(store)
        broker.stop()


def _deal(monkeypatch, capsys, broker, journal, table: str) -> int:
    """One shoe of table `table` on the feed; the journal's last seq."""
    monkeypatch.setenv("TABLECTL_TABLE_NAME", table)
    monkeypatch.setenv("TABLECTL_FEED_DRAIN_TIMEOUT_S", "30")
    monkeypatch.chdir(ROOT)
    said = main(["simulate", "--profile", "macau", "--seed", "4", "--shoes", "1",
                 "--journal", str(journal), "--feed", broker.url])
    assert said == 0, capsys.readouterr().err[-2000:]
    with Journal.open_readonly(journal) as j:
        return j.last_seq


def test_a_database_that_stops_answering_mid_write_is_one_line_and_never_holds_up_a_stop(
        tmp_path, pg_server, pg_url, capsys, monkeypatch):
    """The server process behind the store's connection frozen (SIGSTOP): its socket stays
    open and the kernel takes what is sent, so nothing but the store's own deadline ends the
    wait. Before it the store hung for ever without a word, and ignored SIGTERM."""
    broker = Mosquitto(tmp_path / "broker").start()
    name = pg_url.rsplit("/", 1)[1]
    errors = tmp_path / "store.err"
    store, frozen = None, set()

    def stored(table):
        return pg_server.sql(f"SELECT count(*), count(DISTINCT r.seq), max(r.seq) FROM "
                             f"floor.records r JOIN floor.tables t ON t.id = r.table_id "
                             f"WHERE t.name = '{table}'", name)[0]

    def freeze() -> None:
        pids = [p for (p,) in pg_server.sql(
            f"SELECT pid FROM pg_stat_activity WHERE datname = '{name}' AND "
            f"application_name = 'tablectl floor-store'")]
        assert set(pids) - frozen             # (one frozen before is still there)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
            frozen.add(pid)

    def thaw() -> None:
        for pid in frozen:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:          # (killed meanwhile: nothing to thaw)
                pass
        frozen.clear()

    def gate(open_: bool) -> None:
        """New connections to the store's database taken, or refused."""
        pg_server.sql(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {str(open_).lower()}")
    try:
        with open(errors, "w") as log:
            store = _store(broker, pg_url, log, "--query-timeout-s", "1", level="INFO")
        _wait("the store subscribed, its schema made", lambda: "subscribed" in
              errors.read_text() and pg_server.sql(
                  "SELECT to_regclass('floor.records') IS NOT NULL", name)[0][0])
        last = _deal(monkeypatch, capsys, broker, tmp_path / "a.db", "F1")
        _wait("the first table stored", lambda: stored("F1") == (last, last, last))
        freeze()                                # the writer's server, between two writes
        last = _deal(monkeypatch, capsys, broker, tmp_path / "b.db", "F2")
        line = _wait("the store giving up on the frozen server", lambda: [
            x for x in errors.read_text().splitlines() if "did not answer" in x])
        assert len(line) == 1 and "nothing is acknowledged" in line[0], line
        # a new connection (a server process not frozen) takes what waited, once each
        _wait("the second table stored", lambda: stored("F2") == (last, last, last))
        # and again, a new connection refused too (however long the dealing takes, the store
        # cannot store the third table elsewhere): this time the store is stopped
        gate(False)
        freeze()
        third = _deal(monkeypatch, capsys, broker, tmp_path / "c.db", "F3")
        time.sleep(0.5)                         # its first batch sent, unanswered
        _terminated(store, errors)
        assert "floor-test-secret" not in errors.read_text()
        gate(True)
        thaw()
        assert stored("F3") == (0, 0, None)
        with open(errors, "a") as log:
            store = _store(broker, pg_url, log, "--query-timeout-s", "1", level="INFO")
        _wait("the second store subscribed",
              lambda: errors.read_text().count("floor store subscribed") >= 2)
        # nothing the stopped store held was acknowledged: the broker had kept it
        _wait("the third table stored", lambda: stored("F3") == (third, third, third))
        _terminated(store, errors)
    finally:
        gate(True)
        thaw()
        _killed(store)
        broker.stop()


def test_a_broker_that_refuses_the_store_is_one_line_however_often_it_tries(
        tmp_path, pg_url):
    broker = Mosquitto(tmp_path / "broker", users={"floor": "right-secret"}).start()
    pw = tmp_path / "pw"
    pw.write_text("wrong-secret\n")
    errors = tmp_path / "store.err"
    store = None
    try:
        with open(errors, "w") as log:
            store = subprocess.Popen(
                TABLECTL + ["floor-store", "--feed", broker.url, "--db", pg_url, "--name",
                            "refused-store", "--retry-max-s", "0.5"],
                stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT,
                env=env(TABLECTL_FEED_USERNAME="floor", TABLECTL_FEED_PASSWORD_FILE=str(pw)))
        _wait("the refusal", lambda: "refused user 'floor'" in errors.read_text())
        time.sleep(2.5)                     # several tries, half a second apart
        assert store.poll() is None
        text = errors.read_text()
        # the refusal once, and not each try's end taken for a lost connection
        assert [x for x in text.splitlines() if "floor store:" in x] == \
            [x for x in text.splitlines() if "refused user 'floor'" in x], text
        assert text.count("refused user") == 1 and "wrong-secret" not in text
        store.terminate()
        assert store.wait(15) == 0
    finally:
        if store is not None and store.poll() is None:
            store.kill()
        broker.stop()


@pytest.mark.slow
def test_stores_sharing_a_floor_keep_each_record_once(tmp_path, pg_server, pg_url):
    """Two stores of one shared subscription: the broker spreads a table's records over both,
    so each sees some out of order; the store holds every record once, the chain complete."""
    broker = Mosquitto(tmp_path / "broker").start()
    name = pg_url.rsplit("/", 1)[1]
    stores = []
    try:
        for k in (1, 2):
            with open(tmp_path / f"store{k}.err", "w") as log:
                stores.append(_store(broker, pg_url, log, "--share", "floor", "--name",
                                     f"share-{k}", level="INFO"))
        _wait("the schema", lambda: pg_server.sql(
            "SELECT to_regclass('floor.records') IS NOT NULL", name)[0][0])
        time.sleep(1.0)                                 # both subscribed
        journal = tmp_path / "j.db"
        done = subprocess.run(TABLECTL + ["simulate", "--profile", "macau", "--seed", "5",
                                          "--shoes", "1", "--journal", str(journal), "--feed",
                                          broker.url], capture_output=True, text=True,
                              env=env(TABLECTL_TABLE_NAME="S1"), cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        with Journal.open_readonly(journal) as j:
            last = j.last_seq
        _wait("every record", lambda: pg_server.sql(
            "SELECT count(*) FROM floor.records", name)[0][0] == last, timeout=40)
        assert pg_server.sql("SELECT contiguous_seq, last_seq FROM floor.tables", name) == \
            [(last, last)]
        assert pg_server.sql("SELECT count(*) FROM floor.quarantine", name) == [(0,)]
        for store in stores:
            store.terminate()
            assert store.wait(15) == 0
        shares = [(tmp_path / f"store{k}.err").read_text() for k in (1, 2)]
        assert not any("kept aside" in text for text in shares), shares
        took = [json.loads(line)["stored"] for text in shares for line in text.splitlines()
                if '"floor store stopped"' in line]
        assert len(took) == 2 and all(took) and sum(took) == last, took   # both took part
    finally:
        for store in stores:
            if store.poll() is None:
                store.kill()
        broker.stop()


def test_without_psycopg_the_store_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "psycopg", None)          # as if not installed
    assert main(["floor-store", "--db", "postgresql://floor@db/floor", "--feed",
                 "mqtt://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'tablectl[floor]'" in err
    assert main(["floor-store", "--db", "mysql://x/y"]) == 2
    assert "write postgresql://" in capsys.readouterr().err
