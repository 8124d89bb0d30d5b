"""The roads: hand-made sequences, a property test against a second, from-scratch implementation
written here, and `tablectl roads --json` on every golden shoe."""
import json

import pytest
from hypothesis import given, settings, strategies as st

from controller.shoe.cards import hand_total, parse_card
from controller.cli import main
from controller.roads import (AndarBaharRoads, Roads, ShoeRoads, entry_of, roads_of)
from tests.golden import GOLDEN, expected, golden_names, needs_golden, profile_of

LETTERS = {"B": "banker", "P": "player", "T": "tie"}
DERIVED = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}


def roads(sequence: str) -> dict:
    r = Roads()
    for ch in sequence.replace(" ", ""):
        r.add(LETTERS[ch])
    return r.to_json()


def cells(road: dict) -> list[tuple]:
    return [(e["col"], e["row"]) for e in road["entries"]]


# --------------------------------------------------------------------------- hand-made
def test_bead_plate_takes_every_round_down_columns_of_six():
    out = roads("BPTBBPP")
    assert [(c["col"], c["row"], c["winner"][0]) for c in out["bead_plate"]] == [
        (0, 0, "b"), (0, 1, "p"), (0, 2, "t"), (0, 3, "b"), (0, 4, "b"), (0, 5, "p"), (1, 0, "p")]
    assert out["counts"] == {"banker": 3, "player": 3, "tie": 1, "player_pair": 0,
                             "banker_pair": 0, "natural": 0, "rounds": 7}


def test_ties_go_to_the_entry_before_and_leading_ties_to_the_first():
    out = roads("TTBTPTT")["big_road"]
    assert out["leading_ties"] == 2
    assert [(e["winner"], e["ties"]) for e in out["entries"]] == [("banker", 3), ("player", 2)]
    assert out["columns"] == [["banker"], ["player"]]
    only_ties = roads("TTT")
    assert only_ties["big_road"] == {"entries": [], "columns": [], "leading_ties": 3}
    assert only_ties["counts"]["tie"] == 3


def test_a_long_streak_turns_right_at_row_six_and_stays_on_that_row():
    out = roads("B" * 9 + "P")["big_road"]
    assert cells(out)[:9] == [(0, r) for r in range(6)] + [(1, 5), (2, 5), (3, 5)]
    assert [(e["lcol"], e["lrow"]) for e in out["entries"]][6:9] == [(0, 6), (0, 7), (0, 8)]
    # the next column starts one right of where the streak began, at row 0
    assert cells(out)[9] == (1, 0)
    assert out["columns"] == [["banker"] * 9, ["player"]]


def test_dragon_tails_that_meet_nest_and_push_a_new_column_right():
    seq = "B" * 8 + "P" * 7 + "B" * 6 + "P" * 5 + "B" * 4 + "P" * 3 + "B"
    out = roads(seq)["big_road"]
    at = cells(out)
    assert at[:8] == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (2, 5)]
    # Player: down column 1 until the Banker tail below, then right along row 4
    assert at[8:15] == [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (2, 4), (3, 4)]
    assert at[15:21] == [(2, 0), (2, 1), (2, 2), (2, 3), (3, 3), (4, 3)]
    assert at[21:26] == [(3, 0), (3, 1), (3, 2), (4, 2), (5, 2)]
    assert at[26:30] == [(4, 0), (4, 1), (5, 1), (6, 1)]
    # a column blocked at once turns on row 0; the next column finds its start cell taken
    assert at[30:33] == [(5, 0), (6, 0), (7, 0)]
    assert at[33] == (8, 0)
    assert len(set(at)) == len(at)


@pytest.mark.parametrize("road,first,colour", [
    ("big_eye_boy", "BPP", "blue"), ("big_eye_boy", "BPB", "red"),
    ("small_road", "BPBB", "blue"), ("small_road", "BPBP", "red"),
    ("cockroach_pig", "BPBPP", "blue"), ("cockroach_pig", "BPBPB", "red"),
])
def test_the_first_cell_of_each_derived_road(road, first, colour):
    assert roads(first[:-1])[road]["entries"] == []          # nothing before its start
    entries = roads(first)[road]["entries"]
    assert [(e["col"], e["row"], e["colour"]) for e in entries] == [(0, 0, colour)]
    assert roads("T" + first.replace("P", "PT"))[road]["entries"] == entries   # ties: nothing


def test_derived_rule_at_depth_two_and_beyond():
    # columns B:3 then P:1,2,3,4,5 — big eye boy compares with column n-1 (length 3)
    out = roads("BBBPPPPP")["big_eye_boy"]
    assert [e["colour"] for e in out["entries"]] == ["red", "red", "blue", "red"]
    assert out["columns"] == [["red", "red"], ["blue"], ["red"]]


def test_predictions_are_what_the_next_round_would_add():
    r = Roads()
    for ch in "BPP":
        r.add(LETTERS[ch])
    assert r.predict() == {
        "banker": {"big_eye_boy": "blue", "small_road": None, "cockroach_pig": None},
        "player": {"big_eye_boy": "red", "small_road": None, "cockroach_pig": None}}
    assert Roads().predict()["banker"] == dict.fromkeys(DERIVED)


def test_round_results_pairs_naturals_void_and_demo():
    base = {"event": "round_result", "shoe": 1, "game": "punto_banco", "winner": "banker"}
    rounds = [
        dict(base, round=1, player=["9H", "9S"], banker=["TD", "KD"], natural=True),
        dict(base, round=2, player=["2H", "3S"], banker=["4D", "4C", "AS"], winner="tie"),
        dict(base, round=3, player=["AS"], banker=[], void=True, winner=None),
        dict(base, round=4, player=["2H", "3S"], banker=["5D", "5C"], demo=True),
    ]
    out = roads_of([{"event": "shoe_started", "shoe": 1, "game": "punto_banco"}] + rounds)
    assert [c["round"] for c in out["bead_plate"]] == [1, 2]
    assert out["counts"] == {"banker": 1, "player": 0, "tie": 1, "player_pair": 1,
                             "banker_pair": 1, "natural": 1, "rounds": 2}
    first = out["bead_plate"][0]
    assert (first["player_pair"], first["banker_pair"], first["natural"]) == (True, False, True)
    assert out["bead_plate"][1]["banker_pair"] is True


def test_a_new_shoe_starts_new_roads():
    shoe = ShoeRoads()
    shoe.publish({"event": "shoe_started", "shoe": 1, "game": "punto_banco"})
    shoe.publish({"event": "round_result", "shoe": 1, "round": 1, "winner": "player"})
    shoe.publish({"event": "shoe_started", "shoe": 2, "game": "punto_banco"})
    assert shoe.to_json()["shoe"] == 2 and shoe.to_json()["bead_plate"] == []


def test_andar_bahar_plate_runs_across_decks_and_keeps_ten_columns():
    shoe = ShoeRoads()
    for n in range(1, 66):
        shoe.publish({"event": "shoe_started", "shoe": n, "game": "andar_bahar"})
        shoe.publish({"event": "round_result", "shoe": n, "round": n, "game": "andar_bahar",
                      "winner": "andar" if n % 3 else "bahar"})
    out = shoe.to_json()
    assert out["game"] == "andar_bahar" and "big_road" not in out
    # 65 rounds: the first column (rounds 1-6) went when round 61 began column 11
    assert [c["round"] for c in out["bead_plate"]] == list(range(7, 66))
    assert out["bead_plate"][0]["col"] == 0 and out["bead_plate"][-1] == \
        {"col": 9, "row": 4, "winner": "andar", "round": 65}
    assert out["counts"] == {"andar": 40, "bahar": 19, "rounds": 59}
    with pytest.raises(ValueError):
        AndarBaharRoads().add("player")


def test_baccarat_banque_puts_the_bank_against_the_punters():
    def result(right, left):
        return {"game": "baccarat_banque", "round": 1, "right_winner": right,
                "left_winner": left, "naturals": []}
    assert entry_of(result("bank", "bank"))["winner"] == "banker"
    assert entry_of(result("bank", "tie"))["winner"] == "banker"
    assert entry_of(result("right", "bank"))["winner"] == "tie"
    assert entry_of(result("right", "left"))["winner"] == "player"


# --------------------------------------------------------------------------- a second road
def reference(seq: list[str]) -> dict:
    """The roads from scratch, written as the rules read: a 2-D grid walked cell by cell, and
    the derived roads by looking at the big road's cells ("is there a cell to the left?")."""
    cols: list[list[str]] = []            # logical big-road columns
    for w in seq:
        if w == "tie":
            continue
        if cols and cols[-1][0] == w:
            cols[-1].append(w)
        else:
            cols.append([w])
    big = place(cols)

    def marks(k):
        out = []
        for n in range(len(cols)):
            for m in range(len(cols[n])):
                if n < k or (n == k and m == 0):
                    continue
                if m == 0:
                    out.append("red" if len(cols[n - 1]) == len(cols[n - k - 1]) else "blue")
                elif m < len(cols[n - k]):
                    out.append("red")                 # the cell to the left exists
                elif m == len(cols[n - k]):
                    out.append("blue")                # only the cell diagonally above does
                else:
                    out.append("red")                 # neither does
        return out

    derived = {}
    for name, k in DERIVED.items():
        colours = marks(k)
        dcols: list[list[str]] = []
        for c in colours:
            if dcols and dcols[-1][0] == c:
                dcols[-1].append(c)
            else:
                dcols.append([c])
        derived[name] = {"colours": colours, "cells": place(dcols)}
    return {"columns": cols, "cells": big, "derived": derived}


def place(cols: list[list[str]]) -> list[tuple[int, int]]:
    grid = [[False] * 6 for _ in range(400)]
    out = []
    start = -1
    for column in cols:
        c = start + 1
        while grid[c][0]:
            c += 1
        start, r, turned = c, 0, False
        for i in range(len(column)):
            if i:
                if not turned and r < 5 and not grid[c][r + 1]:
                    r += 1
                else:
                    turned = True
                    c += 1
                    while grid[c][r]:
                        c += 1
            grid[c][r] = True
            out.append((c, r))
    return out


def next_mark(seq: list[str], winner: str, k: int) -> str | None:
    """The mark road k gets from one more round, found by recomputing with it."""
    before = reference(seq)["derived"]
    after = reference(seq + [winner])["derived"]
    name = next(n for n, kk in DERIVED.items() if kk == k)
    grew = after[name]["colours"][len(before[name]["colours"]):]
    return grew[0] if grew else None


streaks = st.lists(st.tuples(st.sampled_from(["banker", "player", "tie"]),
                             st.integers(1, 9)), min_size=1, max_size=30)


@settings(max_examples=100, deadline=None)
@given(streaks)
def test_incremental_roads_equal_the_from_scratch_roads(runs):
    seq = [w for w, n in runs for _ in range(n)][:120]
    r = Roads()
    for i, w in enumerate(seq):
        predicted = r.predict()
        before = {name: len(r.derived[name].cells) for name in DERIVED}
        r.add(w)
        if w != "tie":
            # what was predicted for this winner is exactly what this round added
            for name in DERIVED:
                cells_now = r.derived[name].cells
                added = cells_now[before[name]][4] if len(cells_now) > before[name] else None
                assert predicted[w][name] == added
    out = r.to_json()
    ref = reference(seq)
    assert out["big_road"]["columns"] == ref["columns"]
    assert cells(out["big_road"]) == ref["cells"]
    for name in DERIVED:
        assert [e["colour"] for e in out[name]["entries"]] == ref["derived"][name]["colours"]
        assert cells(out[name]) == ref["derived"][name]["cells"]
    for winner in ("banker", "player"):
        assert out["predict"][winner] == {name: next_mark(seq, winner, k)
                                          for name, k in DERIVED.items()}


# --------------------------------------------------------------------------- golden shoes
def natural(codes: list[str]) -> bool:
    return hand_total([parse_card(c) for c in codes[:2]]) >= 8


def journal_of(name: str, path) -> None:
    """The golden shoe's events in a journal: Andar Bahar's decks through `tablectl simulate`;
    the Punto Banco shoes dealt by the table directly (the same events, without the simulated
    devices' time), journaled as the service journals them."""
    if name.startswith("andar"):
        assert main(["simulate", "--profile", profile_of(name), "--shoe-file",
                     str(GOLDEN / f"{name}.shoe"), "--journal", str(path), "--json"]) == 0
        return
    from controller.journal import Journal
    from controller.settings.profile import load_profile
    from controller.shoe.shoefile import read_shoe_file
    from tests.test_table import run_shoe
    shoe = read_shoe_file(GOLDEN / f"{name}.shoe")
    _, events, _ = run_shoe(load_profile(profile_of(name)), shoe.codes, shoe.cut_position)
    with Journal(path) as journal:
        journal.append_many([(e["event"], e) for e in events])


@needs_golden
@pytest.mark.parametrize("name", golden_names())
def test_tablectl_roads_json_on_every_golden_shoe(name, tmp_path, capsys):
    journal = tmp_path / "j.db"
    journal_of(name, journal)
    capsys.readouterr()
    assert main(["roads", "--journal", str(journal), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    results = [e for e in expected(name) if e["event"] == "round_result"]
    winners = [e["winner"] for e in results]
    if name.startswith("andar"):
        # one deck a round: the plate runs across them
        assert out["game"] == "andar_bahar"
        assert [c["winner"] for c in out["bead_plate"]] == winners
        assert out["counts"] == {"andar": winners.count("andar"),
                                 "bahar": winners.count("bahar"), "rounds": len(winners)}
        return
    assert [c["winner"] for c in out["bead_plate"]] == winners
    assert [c["natural"] for c in out["bead_plate"]] == \
        [natural(e["player"]) or natural(e["banker"]) for e in results]
    assert [c["player_pair"] for c in out["bead_plate"]] == \
        [e["player"][0][:-1] == e["player"][1][:-1] for e in results]
    ref = reference(winners)
    assert out["big_road"]["columns"] == ref["columns"]
    assert cells(out["big_road"]) == ref["cells"]
    for road in DERIVED:
        assert [e["colour"] for e in out[road]["entries"]] == ref["derived"][road]["colours"]
