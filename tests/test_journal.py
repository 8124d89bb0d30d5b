"""Journal: round trip, durability settings, hash chain, snapshots, corruption, crash, recall."""
from __future__ import annotations

import hashlib
import json
import os
import queue
import signal
import sqlite3
import struct
import subprocess
import sys
import textwrap

import pytest

from controller.cli import main as tablectl
from controller.journal import (SCHEMA_VERSION, Journal, JournalError, Record, device_data)
from controller.journal.chain import GENESIS, record_canonical
from controller.journal.schema import RARE, create_legacy
from controller.journal.recall import format_json_lines, last_rounds
from controller.journal.recall_text import format_text


class FakeClock:
    """UTC and monotonic times advancing half a second per call (deterministic text)."""

    def __init__(self) -> None:
        self.t = 0

    def __call__(self) -> tuple[str, float]:
        self.t += 1
        ms = self.t * 500
        s, ms = divmod(ms, 1000)
        m, s = divmod(s, 60)
        h, m = divmod(m, 60)
        return f"2025-03-14T{20 + h:02d}:{m:02d}:{s:02d}.{ms:03d}000Z", 1000.0 + self.t / 2


def sql(path, statement: str, params: tuple = ()) -> list:
    """Edit or read the SQLite file directly, bypassing the journal."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        return conn.execute(statement, params).fetchall()
    finally:
        conn.close()


def filled(path, n: int = 20) -> str:
    with Journal(path) as j:
        for i in range(1, n + 1):
            # Big journals (corruption tests) skip the fsyncs to stay fast.
            j.append("card" if i % 2 else "device", {"i": i, "code": "AS"},
                     durable=i % 2 == 1 and n <= 100)
    return str(path)


# --- round trip --------------------------------------------------------------------------------

def test_append_and_read_back_round_trip():
    with Journal(":memory:") as j:
        assert j.last_seq == 0 and j.head_hash == GENESIS
        data = {"event": "round_result", "shoe": 1, "round": 2, "bets": {"banker": 0.95},
                "player": ["9H", "5C"], "note": "café", "demo": True}
        assert j.append("round_result", data) == 1
        assert j.append("card", {"code": "KD", "slot": "P1"}, durable=True) == 2
        assert j.append("device", {"type": "LinkLost", "raw": "0a0b"}) == 3
        assert j.last_seq == 3
        recs = list(j.records())
        assert [r.seq for r in recs] == [1, 2, 3]
        assert [r.kind for r in recs] == ["round_result", "card", "device"]
        assert recs[0].data == data
        assert recs[-1].hash == j.head_hash
        assert [r.seq for r in j.records(after_seq=1)] == [2, 3]
        assert [r.seq for r in j.records(kinds=["card", "device"])] == [2, 3]
        assert list(j.records(kinds=[])) == []
        assert [r.seq for r in j.records_backward()] == [3, 2, 1]
        assert [r.seq for r in j.records_backward(before_seq=3)] == [2, 1]
        assert recs[1].mono >= recs[0].mono
        assert recs[0].utc.endswith("Z") and recs[0].utc[10] == "T"


def test_an_auditor_rechecks_the_chain_from_the_rows_with_their_own_code(tmp_path):
    """What docs/journal.md says a record holds and how its hash is made, done by hand."""
    path = tmp_path / "j.db"
    with Journal(path, clock=FakeClock()) as j:
        j.append("card", {"slot": "P1", "code": "AS", "flags": []})
        j.append_event({"event": "hold", "reason": "link lost", "shoe": 1, "round": 0})
        shown = list(j.records())
    prev = bytes(32)
    rows = sql(path, "SELECT seq, utc, mono, kind, data, hash FROM records ORDER BY seq")
    for (seq, utc, mono, kind, data, digest), rec in zip(rows, shown):
        text = data if data.startswith("{") else '{"event":' + json.dumps(kind) + data
        body = struct.pack(">qqqH", seq, utc, mono, len(kind.encode())) + kind.encode()
        assert hashlib.sha256(prev + body + text.encode("ascii")).digest() == digest
        assert json.loads(text) == rec.data and digest.hex() == rec.hash
        assert isinstance(utc, int) and isinstance(mono, int) and len(digest) == 32
        prev = digest
    assert rows[1][4] == ',"reason":"link lost","shoe":1,"round":0}'  # its name: the kind's


def test_a_schema_3_hash_is_sha256_of_prev_hash_and_canonical_record(tmp_path):
    path = tmp_path / "old.db"
    create_legacy(str(path))
    with Journal(path, clock=FakeClock()) as j:
        assert j.version == 3
        j.append("card", {"slot": "P1", "code": "AS", "flags": []})
        j.append("hold", {"reason": "link lost", "shoe": 1, "round": 0})
        prev = GENESIS
        for r in j.records():
            text = json.dumps({"seq": r.seq, "utc": r.utc, "mono": r.mono, "kind": r.kind,
                               "data": r.data}, sort_keys=True, separators=(",", ":"))
            assert r.hash == hashlib.sha256((prev + text).encode()).hexdigest()
            prev = r.hash
        assert j.verify().ok
        data_json = json.dumps({"b": 1.5, "a": [1, "x"]}, sort_keys=True, separators=(",", ":"))
        assert record_canonical(7, "u", 2.0, "k", data_json) == json.dumps(
            {"seq": 7, "utc": "u", "mono": 2.0, "kind": "k", "data": {"b": 1.5, "a": [1, "x"]}},
            sort_keys=True, separators=(",", ":"))


def test_pages_of_records_are_read_in_full(monkeypatch):
    monkeypatch.setattr("controller.journal.PAGE", 7)
    with Journal(":memory:") as j:
        for i in range(30):
            j.append("device", {"i": i})
        assert [r.data["i"] for r in j.records()] == list(range(30))
        assert [r.data["i"] for r in j.records_backward()] == list(range(29, -1, -1))
        assert j.verify().records_checked == 30


def test_bad_appends_are_refused_and_do_not_use_a_seq():
    with Journal(":memory:") as j:
        for kind, data in [("card", {"x": float("nan")}), ("card", {"raw": b"\x01"}),
                           ("card", ["not", "a", "dict"]), ("", {}), ("card", {"s": {1, 2}})]:
            with pytest.raises(ValueError):
                j.append(kind, data)
        assert j.append("card", {"ok": 1}) == 1
        with pytest.raises(ValueError, match="event"):
            j.append_event({"shoe": 1})


def test_append_many_is_one_transaction_all_or_none(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        assert j.append_many([]) == []
        assert j.append_many([("input", {"type": "card", "code": "AS"}),
                              ("card", {"code": "AS", "slot": "P1"}),
                              ("prompt", {"text": "deal B1"})], durable=True) == [1, 2, 3]
        with pytest.raises(ValueError):
            j.append_many([("input", {"ok": 1}), ("card", {"bad": float("inf")})])
        assert j.last_seq == 3
        other = Journal(path)
        other.append("device", {"from": "another writer"})
        with pytest.raises(JournalError, match="already taken"):
            j.append_many([("input", {"n": 1}), ("card", {"n": 2})])
        assert j.last_seq == 3                   # nothing of the failed batch was kept
        other.close()
    with Journal.open_readonly(path) as r:
        assert [x.kind for x in r.records()] == ["input", "card", "prompt", "device"]
        assert r.verify().ok


def test_append_event_uses_the_event_name_and_the_callers_durability():
    # which records are durable is decided once, by the table's inputs (DURABLE), not here
    with Journal(":memory:") as j:
        seen = []
        real = j.append
        j.append = lambda kind, data, *, durable=False: seen.append((kind, durable)) or \
            real(kind, data, durable=durable)
        j.append_event({"event": "card", "shoe": 1}, durable=True)
        j.append_event({"event": "round_result", "shoe": 1})
        assert seen == [("card", True), ("round_result", False)]


def test_cursors_are_kept_with_the_records_they_go_with(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        assert j.cursor("local") is None
        j.append_many([("input", {"n": 1}), ("card", {"n": 1})], cursors={"local": 0})
        assert j.cursor("local") == 0
        j.append_many([("input", {"n": 2})], durable=True, cursors={"local": 2, "mqtt": 1})
        assert (j.cursor("local"), j.cursor("mqtt")) == (2, 1)
        j.set_cursors({"local": 3})
        assert j.verify().ok and j.last_seq == 3
    with Journal.open_readonly(path) as r:
        assert r.cursor("local") == 3


def test_a_failed_append_moves_no_cursor(tmp_path):
    with Journal(tmp_path / "j.db") as j:
        j.append_many([("input", {"n": 1})], cursors={"local": 0})
        with pytest.raises(ValueError):
            j.append_many([("input", {"n": 2}), ("card", {"bad": float("nan")})],
                          cursors={"local": 1})
        assert j.cursor("local") == 0 and j.last_seq == 1


def test_a_version_1_journal_is_upgraded_in_place(tmp_path):
    path = tmp_path / "old.db"
    create_legacy(str(path))
    with Journal(path) as j:
        j.append("input", {"n": 1})
        head = j.head_hash
    sql(path, "DROP TABLE cursors")
    sql(path, "UPDATE schema_version SET version = 1")
    with Journal.open_readonly(path) as r:          # a reader leaves it as it is
        assert r.cursor("local") is None and r.verify().ok
    with Journal(path) as j:
        assert j.head_hash == head and j.cursor("local") is None
        j.append_many([("input", {"n": 2})], cursors={"local": 2})
        assert j.cursor("local") == 2 and j.verify().ok
    # the tables of schema 3 added; its records keep their format (and their chain)
    assert sql(path, "SELECT version FROM schema_version") == [(3,)]


def test_device_data_holds_type_fields_and_raw_hex():
    from drivers.events import CardRead
    ev = CardRead(code="TD", seq=12, multiple=2, raw=b"\x02TD\x03")
    data = device_data(ev)
    assert data["type"] == "CardRead" and data["code"] == "TD" and data["multiple"] == 2
    assert data["raw"] == "02544403" and data["device"] == "shoe"
    with Journal(":memory:") as j:
        j.append("device", data)
        assert next(j.records()).data == data


def test_readonly_reader_sees_the_writer_and_cannot_append(tmp_path):
    path = tmp_path / "var" / "journal.db"          # the parent folder is created
    with Journal(path) as writer:
        writer.append("card", {"n": 1}, durable=True)
        with Journal.open_readonly(path) as reader:
            assert reader.last_seq == 1
            writer.append("card", {"n": 2})
            assert [r.data["n"] for r in reader.records()] == [1, 2]
            with pytest.raises(JournalError, match="read-only"):
                reader.append("card", {"n": 3})
            with pytest.raises(JournalError, match="read-only"):
                reader.snapshot({}, 1)
    with Journal(path) as again:                      # reopened: the chain continues
        assert again.last_seq == 2 and again.append("card", {"n": 3}) == 3
        assert again.verify().ok


def test_a_second_writer_cannot_fork_the_chain(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as a, Journal(path) as b:
        a.append("card", {"n": 1})
        with pytest.raises(JournalError, match="seq 1 already taken"):
            b.append("card", {"n": 1})


def test_closed_journal_refuses_use():
    j = Journal(":memory:")
    j.close()
    j.close()
    with pytest.raises(JournalError, match="closed"):
        j.append("card", {})


# --- durability settings -------------------------------------------------------------------------

class SyncSpy:
    """Wraps the journal's connection; reads PRAGMA synchronous at the moment of each INSERT."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.inserts: list[tuple[str, int]] = []

    def execute(self, statement: str, params: tuple = ()):
        if statement.startswith("INSERT INTO"):
            level = self.conn.execute("PRAGMA synchronous").fetchone()[0]
            self.inserts.append((statement.split()[2], level))
        return self.conn.execute(statement, params)

    def executemany(self, statement: str, rows):
        level = self.conn.execute("PRAGMA synchronous").fetchone()[0]
        self.inserts.append((statement.split()[2] + "*", level))
        return self.conn.executemany(statement, rows)

    def __getattr__(self, name):
        return getattr(self.conn, name)


def test_wal_and_synchronous_levels_are_applied(tmp_path, durable):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        assert j.pragmas() == {"journal_mode": "wal", "synchronous": 1}    # 1 = NORMAL
        spy = SyncSpy(j._conn)
        j._conn, j._execute = spy, spy.execute      # the appends' own cursor too
        j.append("device", {"n": 1})
        j.append("card", {"n": 2}, durable=True)
        j.append_event({"event": "override", "shoe": 1, "round": 1}, durable=True)
        j.append_event({"event": "round_result", "shoe": 1, "round": 1})
        j.snapshot({"round": 1}, 4)
        j.append_many([("input", {"type": "card"}), ("card", {"n": 5})], durable=True)
        j.append_many([("input", {"type": "warning"}), ("alarm", {"n": 6})])
        # 2 = FULL: a durable append's commit fsyncs the WAL before append() returns.
        assert spy.inserts == [("records", 1), ("records", 2), ("records", 2), ("records", 1),
                               ("snapshots", 2), ("records", 2), ("records", 2),
                               ("records", 1)]    # an input and its events: one INSERT
        j._conn = spy.conn
        assert j.pragmas()["synchronous"] == 1           # NORMAL again for the last one
    # WAL mode is a property of the file, seen by any later connection.
    assert sql(path, "PRAGMA journal_mode") == [("wal",)]
    assert sql(path, "SELECT version FROM schema_version") == [(SCHEMA_VERSION,)]


# --- hash chain ----------------------------------------------------------------------------------

def test_verify_on_an_intact_journal(tmp_path):
    path = filled(tmp_path / "j.db")
    with Journal.open_readonly(path) as j:
        result = j.verify()
    assert result.ok and bool(result) and result.records_checked == 20 and result.last_seq == 20
    assert "ok: 20 records" in str(result)


def test_tampered_data_field_is_named(tmp_path):
    path = filled(tmp_path / "j.db")
    sql(path, "UPDATE records SET data = ? WHERE seq = 7", ('{"code":"KD","i":7}',))
    with Journal.open_readonly(path) as j:
        result = j.verify()
    assert not result.ok and result.first_bad_seq == 7 and "hash mismatch" in result.reason
    assert "seq 7" in str(result)


def test_deleted_record_is_named(tmp_path):
    path = filled(tmp_path / "j.db")
    sql(path, "DELETE FROM records WHERE seq = 12")
    with Journal.open_readonly(path) as j:
        result = j.verify()
    assert result.first_bad_seq == 12 and "missing seq" in result.reason
    assert result.records_checked == 11


def test_deleted_first_record_is_named(tmp_path):
    path = filled(tmp_path / "j.db")
    sql(path, "DELETE FROM records WHERE seq = 1")
    with Journal.open_readonly(path) as j:
        assert j.verify().first_bad_seq == 1


def test_reordered_records_are_named(tmp_path):
    path = filled(tmp_path / "j.db")
    for a, b in ((5, -1), (6, 5), (-1, 6)):
        sql(path, "UPDATE records SET seq = ? WHERE seq = ?", (b, a))
    with Journal.open_readonly(path) as j:
        result = j.verify()
    assert result.first_bad_seq == 5 and "hash mismatch" in result.reason


def test_bad_json_is_named_and_reading_it_is_a_hard_stop(tmp_path):
    path = filled(tmp_path / "j.db")
    sql(path, "UPDATE records SET data = '{\"i\": 9,' WHERE seq = 9")
    with Journal.open_readonly(path) as j:
        result = j.verify()
        # the chain covers the data's bytes: the hash no longer matches them
        assert result.first_bad_seq == 9 and result.reason.startswith("hash mismatch")
        with pytest.raises(JournalError, match="seq 9 is unreadable"):
            list(j.records())


def test_same_json_with_other_spacing_verifies_in_a_schema_3_journal_only(tmp_path):
    legacy = tmp_path / "old.db"
    create_legacy(str(legacy))
    for path in (filled(legacy), filled(tmp_path / "j.db")):
        sql(path, "UPDATE records SET data = '{\"i\": 3, \"code\": \"AS\"}' WHERE seq = 3")
        with Journal.open_readonly(path) as j:
            # schema 3 hashes canonical JSON; schema 4 the bytes as stored
            assert j.verify().ok == (j.version == 3)


def test_verify_after_a_seq_trusts_that_record(tmp_path):
    path = filled(tmp_path / "j.db")
    sql(path, "UPDATE records SET data = '{\"i\":0}' WHERE seq = 2")
    with Journal.open_readonly(path) as j:
        assert j.verify().first_bad_seq == 2
        tail = j.verify(after_seq=10)
        assert tail.ok and tail.records_checked == 10


# --- snapshots -----------------------------------------------------------------------------------

def test_snapshots_round_trip_and_the_newest_wins(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        assert j.latest_snapshot() is None
        assert j.snapshot({"empty": True}, 0) == 1
        assert j.latest_snapshot() == (0, {"empty": True}) and j.last_seq == 1
        for i in range(10):
            j.append("card", {"i": i})                  # seqs 2 to 11
        j.snapshot({"shoe": 1, "round": 4, "seen": ["AS", "KD"]}, 6)
        j.snapshot({"shoe": 1, "round": 7, "seen": ["AS", "KD", "9C"]}, 11,
                   cursors={"feed": 9})
        for bad in (14, -1, True, "3"):
            with pytest.raises(ValueError, match="upto_seq"):
                j.snapshot({}, bad)
        with pytest.raises(ValueError, match="JSON"):
            j.snapshot({"x": object()}, 1)
        assert j.last_seq == 13 and j.cursor("feed") == 9
    with Journal.open_readonly(path) as r:
        assert r.latest_snapshot() == (11, {"shoe": 1, "round": 7, "seen": ["AS", "KD", "9C"]})
        # each snapshot has its record in the chain: what it is, and the publishers' positions
        bound = [x.data for x in r.records(kinds=["snapshot"])]
        assert [(d["id"], d["upto_seq"]) for d in bound] == [(1, 0), (2, 6), (3, 11)]
        assert bound[-1]["cursors"] == {"feed": 9} and r.chained_cursors() == {"feed": 9}
        assert sql(path, "SELECT hash FROM snapshots WHERE id = 3") == [(bound[-1]["hash"],)]
        assert r.verify().snapshots_checked == 3 and r.verify().ok


def test_a_snapshot_rewritten_and_rehashed_no_longer_matches_its_record(tmp_path):
    """Anyone can recompute a snapshot's hash; nobody can change its record in the chain
    without breaking the chain (and, with the anchor key, the anchors after it)."""
    from controller.journal.chain import canonical, snapshot_hash
    path = tmp_path / "j.db"
    with Journal(path) as j:
        for i in range(5):
            j.append("card", {"i": i})
        j.snapshot({"shoe_no": 1}, 5)
        head = j.record_hash(5)
    (utc,), = sql(path, "SELECT utc FROM snapshots")
    forged = {"shoe_no": 7}
    sql(path, "UPDATE snapshots SET state = ?, hash = ?",
        (json.dumps(forged), snapshot_hash(head, 5, utc, canonical(forged))))
    with Journal.open_readonly(path) as r:
        with pytest.raises(JournalError, match="changed after it was taken"):
            r.latest_snapshot()
        result = r.verify()
        assert not result.ok and result.bad_snapshot_id == 1 and "record in the chain" in str(
            result)


def test_a_snapshot_without_its_record_is_never_used(tmp_path):
    """A snapshot row slipped in (or one from before schema 3) is not trusted at a restart."""
    path = tmp_path / "j.db"
    with Journal(path) as j:
        for i in range(5):
            j.append("card", {"i": i})
        j.snapshot({"shoe_no": 1}, 5)
    sql(path, "UPDATE snapshots SET record_seq = NULL")
    with Journal.open_readonly(path) as r:
        assert r.latest_snapshot() is None
        result = r.verify()
        assert result.ok and result.snapshots_unbound == 1 and "not used at a restart" in str(
            result)


def test_tampered_snapshot_is_rejected(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        for i in range(5):
            j.append("card", {"i": i})
        j.snapshot({"round": 5, "shoe": 1}, 5)
    sql(path, "UPDATE snapshots SET state = '{\"round\":6,\"shoe\":1}'")
    with Journal.open_readonly(path) as r:
        with pytest.raises(JournalError, match="snapshot 1 .*rejected: hash mismatch"):
            r.latest_snapshot()
        result = r.verify()
        assert not result.ok and result.first_bad_seq is None and result.bad_snapshot_id == 1


def test_snapshot_moved_to_another_record_is_rejected(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        for i in range(5):
            j.append("card", {"i": i})
        j.snapshot({"round": 5}, 5)
    sql(path, "UPDATE snapshots SET upto_seq = 4")
    with Journal.open_readonly(path) as r, pytest.raises(JournalError, match="rejected"):
        r.latest_snapshot()
    sql(path, "UPDATE snapshots SET upto_seq = 5")
    sql(path, "UPDATE records SET data = '{\"i\":99}' WHERE seq = 5")
    with Journal.open_readonly(path) as r, pytest.raises(JournalError, match="anchor"):
        r.latest_snapshot()


# --- unreadable journals -------------------------------------------------------------------------

def test_not_sqlite_is_a_journal_error(tmp_path):
    path = tmp_path / "j.db"
    path.write_bytes(b"this is not a database\n" * 200)
    for opener in (Journal, Journal.open_readonly):
        with pytest.raises(JournalError, match="not a database") as err:
            opener(path)
        assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_corrupted_pages_are_a_journal_error(tmp_path):
    path = filled(tmp_path / "j.db", n=2000)
    size = os.path.getsize(path)
    assert size > 8 * 4096
    with open(path, "r+b") as f:           # wreck the b-tree header of a page in the middle
        f.seek((size // 4096 // 2) * 4096)
        f.write(b"\xff" * 16)
    with pytest.raises(JournalError, match="malformed"):
        with Journal.open_readonly(path) as j:
            j.verify()
    with pytest.raises(JournalError, match="malformed"):
        with Journal.open_readonly(path) as j:
            list(j.records())


def test_truncated_file_is_a_journal_error(tmp_path):
    path = filled(tmp_path / "j.db", n=2000)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(JournalError):
        with Journal.open_readonly(path) as j:
            j.verify()


def test_foreign_database_is_not_taken_over(tmp_path):
    path = tmp_path / "other.db"
    sql(path, "CREATE TABLE customers (name TEXT)")
    with pytest.raises(JournalError, match="not a journal.*customers"):
        Journal(path)
    assert sql(path, "SELECT name FROM sqlite_master") == [("customers",)]


def test_newer_schema_version_is_refused(tmp_path):
    path = filled(tmp_path / "j.db", n=2)
    sql(path, "UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(JournalError, match=f"schema version {SCHEMA_VERSION + 1} .*newer"):
        Journal(path)
    with pytest.raises(JournalError, match="newer"):
        Journal.open_readonly(path)


def test_wrong_schema_is_refused(tmp_path):
    path = filled(tmp_path / "j.db", n=2)
    sql(path, "ALTER TABLE records DROP COLUMN mono")
    with pytest.raises(JournalError, match="wrong schema"):
        Journal(path)


def test_missing_or_empty_file_for_a_reader(tmp_path):
    with pytest.raises(JournalError, match="no such file"):
        Journal.open_readonly(tmp_path / "absent.db")
    (tmp_path / "empty.db").write_bytes(b"")
    with pytest.raises(JournalError, match="empty"):
        Journal.open_readonly(tmp_path / "empty.db")


# --- crash -------------------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys
    from controller.journal import Journal
    j = Journal(sys.argv[1])
    i = 0
    while True:
        i += 1
        durable = i % 3 == 0
        if i % 5 == 0:      # an input and the events it caused, in one transaction
            seqs = j.append_many([("input", {"i": i}), ("card", {"i": i}),
                                  ("round_result", {"i": i, "pad": "x" * 200})], durable=True)
        else:
            seqs = [j.append("card" if durable else "device", {"i": i, "pad": "x" * 200},
                             durable=durable)]
        if i % 40 == 0:
            j.snapshot({"i": i}, seqs[-1])
        sys.stdout.write("".join(f"{seq} {i}\\n" for seq in seqs))
        sys.stdout.flush()
""")


@pytest.mark.parametrize("kill_after", [150, 400])
def test_kill_9_mid_stream_keeps_every_returned_append(tmp_path, kill_after, durable):
    path = str(tmp_path / "j.db")
    acked: dict[int, int] = {}
    for run in range(2):        # the second run continues the chain the first one left
        proc = subprocess.Popen([sys.executable, "-c", WRITER, path], stdout=subprocess.PIPE,
                                text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
        for _ in range(kill_after):
            seq, i = map(int, proc.stdout.readline().split())
            acked[seq] = i
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for line in proc.stdout:            # lines written before the kill: appends that returned
            if line.endswith("\n"):
                seq, i = map(int, line.split())
                acked[seq] = i
        proc.stdout.close()
        assert proc.returncode == -signal.SIGKILL
    with Journal(path) as j:
        stored = {r.seq: r.data["i"] for r in j.records() if r.kind != "snapshot"}
        assert all(stored.get(seq) == i for seq, i in acked.items())
        assert j.last_seq >= max(acked)
        result = j.verify()
        assert result.ok, str(result)
        upto, state = j.latest_snapshot()
        assert stored[upto] == state["i"]
        assert j.append("card", {"after": "restart"}, durable=True) == j.last_seq
        assert j.verify().ok


# --- recall ------------------------------------------------------------------------------------

def _cards(j: Journal, shoe: int, rnd: int, start_n: int, deal: list[tuple[str, str]],
           flags: dict[str, list[str]] | None = None) -> int:
    n = start_n
    for code, slot in deal:
        f = (flags or {}).get(code, [])
        j.append("device", {"type": "CardRead", "device": "shoe", "code": code, "seq": n,
                            "multiple": 2 if f else 0, "raw": code.encode().hex()})
        j.append_event({"event": "card", "shoe": shoe, "round": rnd, "n": n, "code": code,
                        "slot": slot, "flags": f})
        n += 1
    return n


def _result(j: Journal, shoe: int, rnd: int, player, banker, pt, bt, winner, **extra) -> None:
    bets = {"player": 1 if winner == "player" else 0 if winner == "tie" else -1,
            "banker": 0.95 if winner == "banker" else 0 if winner == "tie" else -1,
            "tie": 8 if winner == "tie" else -1}
    j.append_event({"event": "round_result", "shoe": shoe, "round": rnd, "game": "punto_banco",
                    "player": player, "banker": banker, "player_total": pt, "banker_total": bt,
                    "winner": winner, "natural": max(pt, bt) >= 8 and len(player) == 2,
                    "bets": bets, **extra})


def table_day(path) -> None:
    """Two shoes: a demo round, a corrected double-draw round, a void round, a link loss,
    a late override of a finished round, and a round still being dealt."""
    with Journal(path, clock=FakeClock()) as j:
        j.append_event({"event": "shoe_started", "shoe": 1, "decks": 8, "cards": 416,
                        "cut_card_position": 402, "profile": "macau",
                        "profile_sha256": "ab" * 32, "game": "punto_banco"})
        n = _cards(j, 1, 0, 1, [("5H", "burn")] + [(c, "burn") for c in
                                                   ("2C", "7D", "QS", "4S", "8H")])
        j.append_event({"event": "burn", "shoe": 1, "cards": ["5H", "2C", "7D", "QS", "4S", "8H"]})
        j.append_event({"event": "round_started", "shoe": 1, "round": 1, "demo": True})
        n = _cards(j, 1, 1, n, [("AS", "P1"), ("8C", "B1"), ("3S", "P2"), ("JD", "B2")])
        _result(j, 1, 1, ["AS", "3S"], ["8C", "JD"], 4, 8, "banker", demo=True)
        j.append_event({"event": "round_started", "shoe": 1, "round": 2, "demo": False})
        n = _cards(j, 1, 2, n, [("8H", "P1"), ("5S", "B1"), ("TD", "P2"), ("7C", "B2")])
        _result(j, 1, 2, ["8H", "TD"], ["5S", "7C"], 8, 2, "player")
        # Round 3: P2 and B2 leave the shoe together; the dealer swaps them; the supervisor
        # restores shoe order.
        j.append_event({"event": "round_started", "shoe": 1, "round": 3, "demo": False})
        n = _cards(j, 1, 3, n, [("9S", "P1"), ("4H", "B1")])
        n = _cards(j, 1, 3, n, [("3D", "P2"), ("2C", "B2")],
                   flags={"3D": ["multiple"], "2C": ["multiple"]})
        j.append_event({"event": "irregularity", "shoe": 1, "round": 3, "kind": "double_draw",
                        "detail": "2 cards drawn together while dealing (3D, 2C): top is P2, "
                                  "bottom is B2"})
        j.append_event({"event": "hold", "shoe": 1, "round": 3, "reason": "double_draw"})
        j.append("input", {"type": "command", "action": "restore_order",
                           "args": {"P2": "3D", "B2": "2C"}, "user": "mchan",
                           "role": "supervisor", "reason": "wrong boxes"}, durable=True)
        j.append_event({"event": "override", "shoe": 1, "round": 3, "user": "mchan",
                        "role": "supervisor", "action": "restore_order",
                        "reason": "dealer put the double-drawn cards on the wrong boxes; "
                                  "restored to shoe order",
                        "before": {"P2": "2C", "B2": "3D"}, "after": {"P2": "3D", "B2": "2C"}})
        j.append_event({"event": "resume", "shoe": 1, "round": 3})
        n = _cards(j, 1, 3, n, [("KC", "player_third")])
        _result(j, 1, 3, ["9S", "3D", "KC"], ["4H", "2C"], 2, 6, "banker")
        # Round 4: void (face-up card policy).
        j.append_event({"event": "round_started", "shoe": 1, "round": 4, "demo": False})
        n = _cards(j, 1, 4, n, [("6D", "P1")])
        j.append_event({"event": "irregularity", "shoe": 1, "round": 4, "kind": "face_up",
                        "detail": "card 6D left the shoe face up"})
        j.append_event({"event": "round_result", "shoe": 1, "round": 4, "game": "punto_banco",
                        "void": True, "reason": "face_up", "bets": {"player": 0, "banker": 0,
                                                                    "tie": 0}})
        # Round 5: the shoe link drops and comes back; alarm; a tie.
        j.append_event({"event": "round_started", "shoe": 1, "round": 5, "demo": False})
        n = _cards(j, 1, 5, n, [("6H", "P1"), ("KC", "B1")])
        j.append("device", {"type": "LinkLost", "device": "shoe", "reason": "timeout",
                            "raw": ""})
        j.append_event({"event": "alarm", "shoe": 1, "round": 5, "source": "shoe",
                        "code": "link_lost", "text": "no data from the shoe for 2.0 s"})
        j.append("device", {"type": "LinkBack", "device": "shoe", "raw": ""})
        j.append("input", {"type": "command", "action": "void_round", "args": {},
                           "user": "tlee", "role": "dealer", "reason": "link lost",
                           "refused": "a dealer cannot void a round"}, durable=True)
        j.append("input", {"type": "read_failed", "device": "shoe", "reason": "card not read"},
                 durable=True)
        j.append("input", {"type": "card", "code": "QD", "device": "shoe"}, durable=True)
        n = _cards(j, 1, 5, n, [("QD", "P2"), ("AS", "B2"), ("5D", "banker_third")])
        _result(j, 1, 5, ["6H", "QD"], ["KC", "AS", "5D"], 6, 6, "tie")
        j.append_event({"event": "shoe_ended", "shoe": 1, "rounds": 5, "reason": "supervisor"})
        j.append_event({"event": "shoe_started", "shoe": 2, "decks": 8, "cards": 416,
                        "cut_card_position": 380, "profile": "macau",
                        "profile_sha256": "cd" * 32, "game": "punto_banco"})
        n = _cards(j, 2, 0, 1, [("2D", "burn"), ("9C", "burn"), ("3C", "burn")])
        j.append_event({"event": "round_started", "shoe": 2, "round": 1, "demo": False})
        # A late correction of shoe 2's round 1 never happens; instead shoe 1 round 2 gets a
        # late note, recorded while shoe 2 round 1 is being dealt.
        j.append_event({"event": "override", "shoe": 1, "round": 2, "user": "kwong",
                        "role": "pit_boss", "action": "annotate", "reason": "camera check",
                        "before": None, "after": None})
        _cards(j, 2, 1, n, [("7S", "P1"), ("TH", "B1")])


@pytest.fixture()
def day(tmp_path):
    path = tmp_path / "journal.db"
    table_day(path)
    return str(path)


def test_recall_last_ten_tells_every_round_in_sequence(day):
    with Journal.open_readonly(day) as j:
        assert j.verify().ok
        stories = last_rounds(j, 10)
    assert [(s["shoe"], s["round"]) for s in stories] == [(1, 1), (1, 2), (1, 3), (1, 4),
                                                           (1, 5), (2, 1)]
    first = stories[0]
    assert first["demo"] and first["complete"] and first["shoe_started"]["decks"] == 8
    assert [c["code"] for c in first["burns_before"]] == ["5H", "2C", "7D", "QS", "4S", "8H"]
    assert [c["slot"] for c in first["cards"]] == ["P1", "B1", "P2", "B2"]
    assert stories[1]["overrides"][0]["action"] == "annotate"       # late note, its own round
    void = stories[3]
    assert void["void"] and void["reason"] == "face_up" and set(void["bets"].values()) == {0}
    tie = stories[4]
    assert tie["winner"] == "tie" and tie["bets"]["tie"] == 8
    assert [a["code"] for a in tie["alarms"]] == ["link_lost"]
    assert [d["type"] for d in tie["device"]] == ["LinkLost", "LinkBack", "read_failed"]
    assert [(c["user"], c["action"]) for c in tie["commands"]] == [("tlee", "void_round")]
    assert tie["commands"][0]["refused"] == "a dealer cannot void a round"
    assert tie["shoe_ended"]["reason"] == "supervisor"
    live = stories[5]
    assert not live["complete"] and live["winner"] is None
    assert [c["code"] for c in live["burns_before"]] == ["2D", "9C", "3C"]
    assert live["shoe_started"]["shoe"] == 2


def test_recall_of_the_corrected_double_draw_round(day):
    with Journal.open_readonly(day) as j:
        story = next(s for s in last_rounds(j, 10) if s["round"] == 3)
    assert story["corrected"] and story["complete"] and not story["demo"]
    assert [(c["n"], c["code"], c["slot"]) for c in story["cards"]] == [
        (15, "9S", "P1"), (16, "4H", "B1"), (17, "3D", "P2"), (18, "2C", "B2"),
        (19, "KC", "player_third")]
    assert story["cards"][2]["flags"] == ["multiple"]
    assert story["hands"] == {"player": ["9S", "3D", "KC"], "banker": ["4H", "2C"]}
    assert story["totals"] == {"player": 2, "banker": 6} and story["winner"] == "banker"
    assert story["bets"] == {"player": -1, "banker": 0.95, "tie": -1}
    assert [i["kind"] for i in story["irregularities"]] == ["double_draw"]
    assert [h["event"] for h in story["holds"]] == ["hold", "resume"]
    (o,) = story["overrides"]
    assert (o["user"], o["role"], o["action"]) == ("mchan", "supervisor", "restore_order")
    assert o["before"] == {"P2": "2C", "B2": "3D"} and o["after"] == {"P2": "3D", "B2": "2C"}
    assert "wrong boxes" in o["reason"]
    assert story["started_utc"] < story["ended_utc"]


def test_recall_text_reads_for_a_supervisor(day):
    with Journal.open_readonly(day) as j:
        stories = last_rounds(j, 4)
    text = format_text(stories, source="journal.db", asked=4)
    assert text.startswith("Game recall from journal.db: 4 rounds (the last 4 asked)")
    assert "=== Shoe 1, round 3: CORRECTED, complete (Punto Banco)" in text
    assert "for a reason this console does not know" in text   # a kind this one lacks
    assert "mchan (supervisor): restore_order" in text
    assert "the Player's second card: 2 of clubs → 3 of diamonds" in text
    assert "natural: no" in text
    assert "Winner: BANKER" in text and "PLAYER: 9 of spades, 3 of diamonds, king of clubs = 2" \
        in text
    assert "Bets (net per unit staked): Player -1, Banker +0.95, Tie -1" in text
    assert "VOID (" in text
    assert "Shoe 1 ended after this round" in text
    assert "tlee (dealer): Void round; reason: link lost  REFUSED: a dealer cannot void a round" \
        in text
    assert "New shoe 2 started 2025-03-14" in text
    assert "=== Shoe 2, round 1: IN PROGRESS" in text
    assert "burned before the round" in text
    assert text.index("round 3") < text.index("round 4") < text.index("round 5")
    # in another language: the same story, no name of the machine in it
    from tests.test_words import leaks
    chinese = format_text(stories, source="journal.db", asked=4, language="zh_Hant")
    assert "第 1 靴，第 3 局" in chinese and "閒家第二張牌" in chinese
    assert not leaks(chinese) and not leaks(text), leaks(text)


def test_recall_window_of_two_and_superseded_result():
    with Journal(":memory:", clock=FakeClock()) as j:
        for rnd in (1, 2, 3):
            j.append_event({"event": "round_started", "shoe": 7, "round": rnd})
            _cards(j, 7, rnd, rnd * 10, [("9H", "P1"), ("2S", "B1"), ("KD", "P2"),
                                         ("3C", "B2")])
            _result(j, 7, rnd, ["9H", "KD"], ["2S", "3C"], 9, 5, "player")
        j.append_event({"event": "override", "shoe": 7, "round": 3, "user": "ana",
                        "role": "supervisor", "action": "correct_result",
                        "reason": "B2 was misread", "before": {"B2": "3C"}, "after": {"B2": "QC"}})
        _result(j, 7, 3, ["9H", "KD"], ["2S", "QC"], 9, 2, "player", corrected=True)
        stories = last_rounds(j, 2)
    assert [s["round"] for s in stories] == [2, 3]
    third = stories[1]
    assert third["corrected"] and len(third["results"]) == 2
    assert third["hands"]["banker"] == ["2S", "QC"] and third["totals"]["banker"] == 2
    assert "Superseded result" in format_text(stories)
    assert format_text([]).endswith("No rounds in the journal.")


def test_recall_json_lines(day):
    with Journal.open_readonly(day) as j:
        lines = format_json_lines(last_rounds(j, 3)).splitlines()
    objs = [json.loads(line) for line in lines]
    assert [(o["shoe"], o["round"]) for o in objs] == [(1, 4), (1, 5), (2, 1)]


# --- commands ----------------------------------------------------------------------------------

def test_tablectl_recall(day, capsys):
    assert tablectl(["recall", "--journal", day]) == 0
    out = capsys.readouterr().out
    assert "6 rounds (the last 10 asked)" in out and "Shoe 1, round 1" in out
    assert tablectl(["recall", "--journal", day, "--last", "2", "--json"]) == 0
    objs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [o["round"] for o in objs] == [5, 1]


def test_tablectl_recall_default_path_and_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert tablectl(["recall"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "var/journal.db: no such file" in err
    table_day(tmp_path / "var" / "journal.db")
    assert tablectl(["recall", "--last", "1"]) == 0
    assert "1 round (the last 1 asked)" in capsys.readouterr().out
    assert tablectl(["recall", "--last", "0"]) == 2
    assert "--last must be at least 1" in capsys.readouterr().err
    (tmp_path / "junk.db").write_bytes(b"junk" * 1000)
    assert tablectl(["recall", "--journal", "junk.db"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a database" in err


def test_tablectl_verify_journal_exit_codes(tmp_path, capsys):
    path = filled(tmp_path / "j.db")
    assert tablectl(["verify-journal", "--journal", path]) == 0
    assert "ok: 20 records" in capsys.readouterr().out
    sql(path, "DELETE FROM records WHERE seq = 4")
    assert tablectl(["verify-journal", "--journal", path]) == 1
    assert "chain broken at seq 4: missing seq" in capsys.readouterr().out
    assert tablectl(["verify-journal", "--journal", str(tmp_path / "none.db")]) == 2
    (tmp_path / "junk.db").write_bytes(b"junk" * 1000)
    assert tablectl(["verify-journal", "--journal", str(tmp_path / "junk.db")]) == 2
    err = capsys.readouterr().err
    assert "no such file" in err and "not a database" in err


def test_record_is_immutable():
    r = Record(1, "u", 0.0, "card", {}, "h")
    with pytest.raises(AttributeError):
        r.seq = 2


def test_staged_records_are_one_commit_and_no_reader_sees_them_before(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        said: list[str] = []
        j._conn.set_trace_callback(said.append)
        assert j.stage([("input", {"n": 1}), ("card", {"n": 1})], durable=True,
                       cursors={"local": 0}) == [1, 2]
        assert j.stage([("input", {"n": 2})], cursors={"local": 2}) == [3]
        assert (j.last_seq, j.staged, said) == (3, 3, [])      # nothing written yet
        with Journal.open_readonly(path) as r:
            assert r.last_seq == 0
        j.commit()
        assert [s for s in said if s.startswith(("BEGIN", "COMMIT"))] == \
            ["BEGIN IMMEDIATE", "COMMIT"]
        with Journal.open_readonly(path) as r:
            assert r.last_seq == 3 and r.verify().ok and r.cursor("local") == 2
        said.clear()
        j.stage([("input", {"n": 3})], cursors={"local": 2})      # the position is the same
        j.commit()
        assert said and not any("cursors" in s for s in said)
        j.commit()                                                # nothing staged: nothing
        assert j.staged == 0 and j.verify().ok


def test_a_batch_that_fails_leaves_the_journal_where_it_was(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        j.append("input", {"n": 1})
        head = j.head_hash
        j.stage([("input", {"n": 2}), ("card", {"n": 2})])
        other = Journal(path)
        other.append("device", {"from": "another writer"})
        with pytest.raises(JournalError, match="already taken"):
            j.commit()
        assert (j.last_seq, j.head_hash, j.staged) == (1, head, 0)
        other.close()
    with Journal.open_readonly(path) as r:
        assert [x.kind for x in r.records()] == ["input", "device"] and r.verify().ok


def test_a_shoe_s_starts_and_the_anchors_come_from_their_own_index(tmp_path):
    """The few records a start looks for are read without the whole file, and are the same."""
    path = tmp_path / "j.db"
    with Journal(path) as j:
        for i in range(300):
            j.append_event({"event": "shoe_started" if i % 100 == 0 else "card", "i": i})
            if i % 120 == 0:
                j.append_event({"event": "anchor", "i": i})
        assert [r.data["i"] for r in j.records(kinds=["shoe_started"])] == [0, 100, 200]
        assert [r.seq for r in j.records(kinds=["anchor", "shoe_started"])] == [
            r.seq for r in j.records() if r.kind in ("anchor", "shoe_started")]
        plan = j._rows("EXPLAIN QUERY PLAN SELECT seq FROM records INDEXED BY records_rare "
                       "WHERE seq > 0 AND kind IN ('anchor') AND " + RARE)
        assert "records_rare" in str(plan)


def test_an_insert_builds_no_temporary_table_for_the_rare_kinds_index(tmp_path):
    """The partial index's condition is evaluated on every append: as an IN list of three or
    more it would build a temporary table for each card's commit."""
    with Journal(tmp_path / "j.db") as j:
        ops = [row[1] for row in j._rows(
            "EXPLAIN INSERT INTO records (seq, utc, mono, kind, data, hash) "
            "VALUES (1, 0, 0, 'input', '{}', x'00')")]
        assert "IdxInsert" in ops and "OpenEphemeral" not in ops


def test_a_schema_4_journal_with_the_earlier_rare_kinds_index_still_uses_it(tmp_path):
    from controller.journal.schema import RARE_INDEX_IN_LIST
    path = tmp_path / "j.db"
    with Journal(path) as j:
        for i in range(30):
            j.append_event({"event": "shoe_started" if i % 10 == 0 else "card", "i": i})
    sql(path, "DROP INDEX records_rare")
    sql(path, RARE_INDEX_IN_LIST)
    for opened in (Journal(path), Journal.open_readonly(path)):
        with opened as j:
            assert [r.data["i"] for r in j.records(kinds=["shoe_started"])] == [0, 10, 20]
            if not j.readonly:
                j.append_event({"event": "anchor", "i": 30})
            assert j.last_record("anchor").data["i"] == 30     # the writer's, opened first
            assert j.verify().ok


def test_a_card_s_write_is_one_statement_and_cursors_go_only_when_they_moved(tmp_path):
    with Journal(tmp_path / "j.db", durable=True) as j:
        said: list[str] = []
        j._conn.set_trace_callback(said.append)
        for n, feed in ((1, 5), (2, 5), (3, 5), (4, 6)):
            said.clear()
            j.stage([("input", {"type": "card", "code": "AS", "n": n}),
                     ("card", {"event": "card", "code": "AS", "n": n})], durable=True,
                    cursors={"feed": feed})
            j.commit()
            records = [s for s in said if s.startswith("INSERT INTO records")]
            moved = [s for s in said if s.startswith("INSERT INTO cursors")]
            if n in (1, 4):         # the first position, and one that moved, go with them
                assert len(moved) == 1 and said[-1] == "COMMIT", said
            else:                   # the same position again: the records' one statement
                assert said == records and len(records) == 1 and not moved, said
        assert j.cursor("feed") == 6 and j.verify().ok


@pytest.mark.parametrize("version", [3, 4])
def test_one_pass_chaining_gives_the_rows_of_the_record_format(version):
    """Staging encodes, numbers and hashes in one pass: the same rows as the format's own
    prepare-and-row steps (which the auditors' description follows)."""
    from controller.journal.codec import for_version
    codec = for_version(version)
    items = [("input", {"type": "card", "code": "QD", "device": "shoe", "seq": 9}),
             ("card", {"event": "card", "shoe": 1, "n": 7, "code": "QD", "flags": []}),
             ("card", {"shoe": 1, "event": "card"}), ("note", {"event": "other", "é": "ü"}),
             ("card", {"event": "card"})]
    utc, mono = codec.times(1_796_186_922_902_818, 28_096_040_297)
    rows = codec.chain(codec.genesis, 40, utc, mono, items)
    prev, expected = codec.genesis, []
    for seq, (kind, data) in enumerate(items, 41):
        row = codec.row(prev, seq, utc, mono, kind, codec.prepare(kind, data))
        expected.append(row)
        prev = row[5]
    assert rows == expected
    assert codec.check_chain(rows, 41, codec.genesis)[2] is None
    if version == 4:
        assert [r[4][:1] for r in rows] == ["{", ",", "{", "{", "}"]
    for kind, data, why in (("", {}, "kind"), (7, {}, "kind"), (["x"], {}, "kind"),
                            ("card", [1], "dict"), ("card", {"x": float("nan")}, "JSON-ready")):
        with pytest.raises(ValueError, match=why):
            codec.chain(codec.genesis, 0, utc, mono, [("input", {}), (kind, data)])


def test_the_journal_s_lock_has_one_holder_and_every_write_gives_it_back(tmp_path):
    with Journal(tmp_path / "j.db", durable=False) as j:
        with j._lock:
            with pytest.raises(queue.Empty):
                j._lock.take(False)              # a second writer would wait here
        for write in (lambda: j.stage([("input", {"type": "card"}), ("card", {"x": {1}})]),
                      lambda: j.stage([("device", {"n": 1})]), j.commit,
                      lambda: j.append("device", {"n": 2}, durable=True)):
            try:
                write()
            except ValueError:
                pass                             # refused, as any write may be
            j._lock.take(False)                  # free again
            j._lock.give(True)
        assert j.last_seq == 2 and j.verify().ok
