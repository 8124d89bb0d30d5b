"""The live write's short way for a card read (schema 5) makes the very rows the general way
makes (`fold` then `chain`, which docs/journal.md describes), and the journal it writes reads
back, verifies and links for the floor feed as any other."""
from __future__ import annotations

import hashlib
import sqlite3
import struct

import pytest

from controller.journal import Journal
from controller.journal.codec import CARD_ALONE, V4, V5, links

READ = {"type": "card", "code": "QD", "device": "shoe"}
CARD = {"event": "card", "shoe": 1, "round": 9, "n": 51, "code": "QD", "slot": "player_third",
        "flags": []}
PREV = hashlib.sha256(b"the record before").digest()

SHAPES = [
    [("input", READ), ("card", CARD)],                                      # the short way
    [("input", {**READ, "seq": 9, "flags": {}}), ("card", {"event": "card"})],
    [("input", READ), ("card", {"shoe": 1, "event": "card"})],             # "event" not first
    [("input", {"event": "input", **READ}), ("card", CARD)],               # its own name first
    [("input", {**READ, "card": 1}), ("card", CARD)],                      # FOLD already taken
    [("input", {**READ, "note": "é \"quoted\" ,{\"event\":\"card\","}), ("card", CARD)],
    [("input", {**READ, 7: None}), ("card", {"event": "card", 2: 1.5, "x": [True, None]})],
    [("input", READ), ("card", CARD), ("round_result", {"event": "round_result", "a": [1]})],
    [("input", READ), ("card", CARD), ("input", READ), ("card", CARD)],
    [("input", {"type": "bet"}), ("card", CARD)],
    [("input", READ), ("shoe_ended", {"event": "shoe_ended"})],
    [("input", READ)],
]


@pytest.mark.parametrize("items", SHAPES)
def test_the_short_way_makes_the_rows_of_fold_then_chain(items):
    rows, where = V5.fold_chain(PREV, 40, 1_796_186_922_902_818, 28_096_040_297, items)
    folded, expected_where = V5.fold(items)
    assert rows == V4.chain(PREV, 40, 1_796_186_922_902_818, 28_096_040_297, folded)
    assert list(where if where is not None else range(len(items))) == expected_where
    assert V5.check_chain(rows, 41, PREV)[2] is None


def test_a_lone_card_read_is_one_record_hashed_as_docs_say():
    rows, where = V5.fold_chain(PREV, 40, 5, 6, [("input", READ), ("card", CARD)])
    assert where is CARD_ALONE and len(rows) == 1
    seq, utc, mono, kind, text, digest = rows[0]
    assert text == ('{"type":"card","code":"QD","device":"shoe","card":{"shoe":1,"round":9,'
                    '"n":51,"code":"QD","slot":"player_third","flags":[]}}')
    body = struct.pack(">qqqH", seq, utc, mono, 5) + b"input" + text.encode("ascii")
    assert digest == hashlib.sha256(PREV + body).digest() and (seq, kind) == (41, "input")


@pytest.mark.parametrize("bad", [{"event": "card", "x": float("nan")}, {"event": "card",
                                                                         "x": object()}])
def test_a_card_event_that_is_not_json_ready_is_refused_as_by_the_general_way(bad):
    with pytest.raises(ValueError, match="not JSON-ready"):
        V5.fold_chain(PREV, 0, 1, 2, [("input", READ), ("card", bad)])


def test_a_live_journal_of_card_reads_reads_back_verifies_and_links(tmp_path):
    path = tmp_path / "j.db"
    with Journal(path, durable=False) as j:
        for n in range(1, 6):
            assert j.stage([("input", {**READ, "n": n}), ("card", {**CARD, "n": n})],
                           durable=True, cursors={"feed": 1}) == [n, n]
            j.commit()
        assert j.cursor("feed") == 1
    assert sqlite3.connect(path).execute("SELECT count(*) FROM records").fetchone()[0] == 5
    with Journal.open_readonly(path) as r:
        assert r.verify().ok
        got = list(r.records())
        assert [(x.kind, x.data["n"]) for x in got] == [
            (k, n) for n in range(1, 6) for k in ("input", "card")]
        assert got[1].data == {**CARD, "n": 1}
        prev = "0" * 64
        for x in r.records(stored=True):
            assert links(prev, x.seq, x.utc, x.mono, x.kind, x.data, x.hash)
            prev = x.hash
