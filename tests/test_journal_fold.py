"""Schema 5: a card read's input and the card event it caused are one record, and every reader
gets the two back; a schema 4 journal keeps its own format."""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys

import pytest

from controller.journal import Journal
from controller.journal.codec import links
from controller.journal.schema import create_legacy

READ = {"type": "card", "code": "QD", "device": "shoe", "seq": 71, "flags": {}}
CARD = {"event": "card", "shoe": 1, "round": 13, "n": 71, "code": "QD", "slot": "B2",
        "flags": []}
RESULT = {"event": "round_result", "shoe": 1, "round": 13, "winner": "banker"}


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                          text=True, timeout=180)
    if check:
        assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_a_card_read_and_its_event_are_one_record_read_back_as_two(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path) as j:
        assert j.version == 5
        assert j.append_many([("input", dict(READ)), ("card", dict(CARD)),
                              ("round_result", dict(RESULT))], durable=True) == [1, 1, 2]
        # a refused read caused no card event: nothing to fold
        assert j.append_many([("input", {**READ, "refused": "no shoe"})]) == [3]
    rows = sqlite3.connect(path).execute("SELECT seq, kind, data FROM records").fetchall()
    assert [(s, k) for s, k, _ in rows] == [(1, "input"), (2, "round_result"), (3, "input")]
    assert json.loads(rows[0][2]) == {**READ, "card": {k: v for k, v in CARD.items()
                                                        if k != "event"}}
    with Journal.open_readonly(path) as r:
        got = list(r.records())
        assert [(x.seq, x.kind, x.data) for x in got] == [
            (1, "input", READ), (1, "card", CARD), (2, "round_result", RESULT),
            (3, "input", {**READ, "refused": "no shoe"})]
        assert got[0].hash == got[1].hash == r.record_hash(1)
        assert [(x.seq, x.kind) for x in r.records_backward()] == [
            (3, "input"), (2, "round_result"), (1, "card"), (1, "input")]
        assert [x.data for x in r.records(kinds=["card"])] == [CARD]
        assert r.last_record("card").data == CARD and r.last_record("input").seq == 3
        assert r.count(exclude_kinds=["input"]) == 2         # the card event and the result
        assert r.verify().ok
        # as stored and hashed: what the floor feed sends and the floor store re-checks
        stored = list(r.records(stored=True))
        assert len(stored) == 3 and "card" in stored[0].data
        prev = "0" * 64
        for x in stored:
            assert links(prev, x.seq, x.utc, x.mono, x.kind, x.data, x.hash)
            prev = x.hash


def test_a_schema_4_journal_opens_and_appends_in_its_own_format(tmp_path):
    path = tmp_path / "old.db"
    create_legacy(str(path), 4)
    with Journal(path) as j:
        assert j.version == 4
        assert j.append_many([("input", dict(READ)), ("card", dict(CARD))]) == [1, 2]
    with Journal(path) as j:                         # opened again, appended again
        assert j.version == 4
        assert j.append_many([("input", dict(READ)), ("card", dict(CARD))]) == [3, 4]
    db = sqlite3.connect(path)
    assert db.execute("SELECT version FROM schema_version").fetchone() == (4,)
    assert [k for k, in db.execute("SELECT kind FROM records ORDER BY seq")] == [
        "input", "card", "input", "card"]
    # the card event keeps schema 4's shortening: its data column starts after its name
    assert db.execute("SELECT data FROM records WHERE seq = 2").fetchone()[0].startswith(',"')
    with Journal.open_readonly(path) as r:
        assert [(x.seq, x.kind) for x in r.records()] == [(1, "input"), (2, "card"),
                                                          (3, "input"), (4, "card")]
        assert r.verify().ok
    assert "chain intact" in cli("verify-journal", "--journal", str(path)).stdout


@pytest.fixture(scope="module")
def shoe(tmp_path_factory):
    """One shoe through `tablectl simulate --json` on a new journal."""
    path = tmp_path_factory.mktemp("fold") / "journal.db"
    done = cli("simulate", "--profile", "macau", "--seed", "3", "--journal", str(path), "--json")
    return path, [json.loads(line) for line in done.stdout.splitlines()]


def test_a_shoe_folds_every_card_read_and_every_reader_sees_the_cards(shoe):
    path, printed = shoe
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM records WHERE kind = 'card'").fetchone() == (0,)
    with Journal.open_readonly(path) as r:
        cards = list(r.records(kinds=["card"]))
        inputs = {x.seq: x for x in r.records(kinds=["input"])}
    assert len(cards) > 300
    # each card event carries the seq of its read's record, as --json printed it
    assert all(inputs[c.seq].data["code"] == c.data["code"] for c in cards)
    printed_cards = [(e["seq"], e["code"]) for e in printed if e.get("event") == "card"]
    assert printed_cards == [(c.seq, c.data["code"]) for c in cards]
    assert "chain intact" in cli("verify-journal", "--journal", str(path)).stdout
    rounds = [json.loads(line) for line in
              cli("recall", "--journal", str(path), "--last", "3", "--json").stdout.splitlines()]
    assert len(rounds) == 3
    shown = [c for rnd in rounds for c in rnd["cards"]]
    by_seq = {c.seq: c.data["code"] for c in cards}
    assert shown and all(by_seq[c["seq"]] == c["code"] for c in shown)


def test_a_folded_card_changed_in_place_fails_verify_journal(shoe, tmp_path):
    path, _ = shoe
    copy = tmp_path / "edited.db"
    src = sqlite3.connect(path)
    with sqlite3.connect(copy) as dst:
        src.backup(dst)
    db = sqlite3.connect(copy)
    seq, text = db.execute("SELECT seq, data FROM records WHERE kind = 'input' AND "
                           "data LIKE '%\"card\":{%' ORDER BY seq LIMIT 1 OFFSET 40").fetchone()
    data = json.loads(text)
    data["card"]["code"] = "AS" if data["card"]["code"] != "AS" else "KD"
    db.execute("UPDATE records SET data = ? WHERE seq = ?",
               (json.dumps(data, separators=(",", ":")), seq))
    db.commit()
    db.close()
    done = cli("verify-journal", "--journal", str(copy), check=False)
    assert done.returncode == 1 and f"seq {seq}" in done.stdout, done.stdout


def test_killed_mid_shoe_it_resumes_from_the_folded_records(tmp_path, shoe):
    _, clean = shoe
    path = tmp_path / "killed.db"
    killed = cli("simulate", "--profile", "macau", "--seed", "3", "--journal", str(path),
                 "--json", "--fault", "crash@120", check=False)
    assert killed.returncode in (-signal.SIGKILL, 137), killed.stderr[-500:]
    cli("simulate", "--profile", "macau", "--seed", "3", "--journal", str(path), "--json")
    assert "chain intact" in cli("verify-journal", "--journal", str(path)).stdout
    with Journal.open_readonly(path) as r:
        codes = [c.data["code"] for c in r.records(kinds=["card"])]
        results = [x.data["winner"] for x in r.records(kinds=["round_result"])]
    assert codes == [e["code"] for e in clean if e.get("event") == "card"]
    assert results == [e["winner"] for e in clean if e.get("event") == "round_result"]
