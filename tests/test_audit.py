"""`tablectl audit`: the override trail read back from a journal."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import count
from pathlib import Path

import pytest

from controller.cli import main
from controller.commands.audit import change, format_table
from controller.journal.recall import overrides
from controller.journal import Journal

HOLD = {"state": "hold", "round": 10, "hands": {"player": ["9H"], "banker": ["2S"]},
        "hold": "unreadable_card"}
DEALING = {"state": "dealing.B2", "round": 10,
           "hands": {"player": ["9H", "TH"], "banker": ["2S"]}}


def fixed_clock():
    ticks = count(1)

    def clock():
        n = next(ticks)
        return f"2024-05-01T12:00:{n:02d}.000000Z", float(n)
    return clock


def override(user, action, reason, *, args=None, role="supervisor", rnd=10, before=HOLD,
             after=DEALING):
    return {"event": "override", "shoe": 3, "round": rnd, "user": user, "role": role,
            "action": action, "args": args or {}, "reason": reason, "before": before,
            "after": after}


@pytest.fixture
def journal_path(tmp_path):
    path = tmp_path / "journal.db"
    with Journal(path, clock=fixed_clock()) as journal:
        journal.append_event({"event": "shoe_started", "shoe": 3, "decks": 8, "cards": 416})
        journal.append_event({"event": "hold", "shoe": 3, "round": 10,
                              "reason": "unreadable_card"})
        journal.append_event(override("sam", "enter_card", "reader missed it",
                                      args={"code": "TH"}))                      # seq 3
        journal.append_event({"event": "card", "shoe": 3, "round": 10, "n": 58, "code": "TH",
                              "slot": "P2", "flags": ["entered"]})
        journal.append_event(override("kim", "void_round", "dealer exposed\na card\x1b[2J",
                                      before=DEALING, after={"state": "idle"}))  # seq 5
        journal.append("input", {"type": "command", "action": "state"})
        journal.append_event(override("sam", "end_shoe", "shoe damaged", rnd=10,
                                      before={"state": "idle"},
                                      after={"state": "shoe_ended"}))           # seq 7
    return path


def test_table_shows_who_did_what_and_why(journal_path, capsys, monkeypatch):
    monkeypatch.delenv("TABLECTL_TABLE_LANGUAGE", raising=False)
    assert main(["audit", "--journal", str(journal_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Overrides in ") and "3 shown, oldest first, newest last" in out[0]
    header = out[1].split()
    assert header[:3] == ["Record", "Time", "(UTC)"] and header[-2:] == ["What", "changed"]
    rows = out[2:]
    assert [r.split()[0] for r in rows] == ["3", "5", "7"]                  # newest last
    first = rows[0]
    for cell in ("2024-05-01 12:00:03", "sam", "supervisor", "Enter card", "Card: 10 of hearts",
                 "reader missed it", "state: on hold → a round is being dealt",
                 "cards on the table: PLAYER: 9 of hearts; BANKER: 2 of spades → PLAYER: 9 of "
                 "hearts, 10 of hearts; BANKER: 2 of spades",
                 "hold: a card the shoe could not read → none"):
        assert cell in first, cell
    # a reason with a newline and an escape stays on its row and cannot drive the terminal
    assert "dealer exposed a card [2J" in rows[1] and "\x1b" not in rows[1]
    assert len(out) == 5
    # the columns line up: every row's action starts where the header's does
    col = out[1].index("Action")
    assert [r[col:col + 10] for r in rows] == ["Enter card", "Void round", "End shoe  "]


def test_the_trail_in_the_readers_language_names_nothing_as_the_program_does(journal_path,
                                                                            capsys):
    from tests.test_words import leaks
    assert main(["audit", "--journal", str(journal_path), "--language", "zh_Hant"]) == 0
    out = capsys.readouterr().out
    assert "輸入牌" in out and "暫停中 → 正在發牌" in out and "紅心10" in out
    assert not leaks(out), leaks(out)
    lines = out.splitlines()
    # the columns line up as the terminal shows them (a Chinese letter takes two cells)
    from rich.cells import cell_len
    head = lines[1]
    at = cell_len(head[:head.index("操作")])
    assert all(cell_len(r[:r.index(w)]) == at for r, w in zip(lines[2:], ("輸入牌", "取消本局",
                                                                         "結束牌靴")))


def test_filters_by_user_and_last(journal_path, capsys):
    assert main(["audit", "--journal", str(journal_path), "--user", "sam", "--last", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "by sam" in out[0] and len(out) == 3 and out[2].split()[0] == "7"
    assert main(["audit", "--journal", str(journal_path), "--user", "nobody"]) == 0
    assert capsys.readouterr().out.startswith("No overrides by nobody in ")


def test_json_lines(journal_path, capsys):
    assert main(["audit", "--journal", str(journal_path), "--json", "--last", "2"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["seq"] for e in lines] == [5, 7]
    assert lines[0] == {"seq": 5, "utc": "2024-05-01T12:00:05.000000Z", "shoe": 3, "round": 10,
                        "user": "kim", "role": "supervisor", "action": "void_round", "args": {},
                        "reason": "dealer exposed\na card\x1b[2J", "before": DEALING,
                        "after": {"state": "idle"}}


def test_missing_journal_is_one_line_exit_2(tmp_path, capsys):
    assert main(["audit", "--journal", str(tmp_path / "none.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err


def test_unreadable_journal_is_one_line_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    assert main(["audit", "--journal", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tablectl audit: journal ")


def test_bad_last(journal_path, capsys):
    assert main(["audit", "--journal", str(journal_path), "--last", "0"]) == 2
    assert "--last must be at least 1" in capsys.readouterr().err


def test_empty_journal(tmp_path, capsys):
    Journal(tmp_path / "j.db").close()
    assert main(["audit", "--journal", str(tmp_path / "j.db")]) == 0
    assert capsys.readouterr().out.startswith("No overrides in ")


def test_pieces(journal_path):
    with Journal.open_readonly(journal_path) as journal:
        assert [e["action"] for e in overrides(journal)] == ["enter_card", "void_round",
                                                             "end_shoe"]
        assert [e["seq"] for e in overrides(journal, user="sam", last=5)] == [3, 7]
    assert change({"state": "idle"}, {"state": "idle"}) == "no change"
    assert change(None, "x") == "None → x"
    assert change({"P2": "2C"}, {"P2": "3D"}, "en") == \
        "the Player's second card: 2 of clubs → 3 of diamonds"
    assert format_table([]).split() == ["Record", "Time", "(UTC)", "Shoe", "Round", "Who",
                                        "Role", "Action", "Given", "Why", "What", "changed"]


def test_text_no_encoder_takes_is_printed_escaped_never_a_traceback(journal_path):
    """A journal holding half a UTF-16 surrogate (written before such requests were refused):
    `tablectl audit` ended in `internal error: UnicodeEncodeError` on a UTF-8 terminal. It
    prints the escape instead, and every other override as it is."""
    with Journal(journal_path) as journal:
        journal.append_event(override("ann\ud800", "void_round", "spilled \udc00 drink"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TABLECTL_", "PYTHONIO"))}
    done = subprocess.run([sys.executable, "-m", "controller.cli", "audit", "--journal",
                           str(journal_path)], capture_output=True, env=dict(env, LANG="C.UTF-8"),
                          cwd=Path(__file__).resolve().parents[1], timeout=60)
    out = done.stdout.decode("utf-8")
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert "ann\\ud800" in out and "spilled \\udc00 drink" in out
    assert b"Traceback" not in done.stderr and done.stderr == b""
