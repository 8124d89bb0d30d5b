"""The shuffle battery's family-wise error rate (Holm–Bonferroni) and its run over recorded shoes
(`tablectl shuffle-test --journal`)."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from controller.shoe.cards import ordered_shoe
from controller.journal import Journal
from controller.shuffle.record import RecordedShoe, judge_journal, recorded_tests
from controller.shuffle.stats import TestResult as Result, adjust, holm, run_shuffle_test
from simulators.shuffler import ShufflerModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import shuffle_fpr  # noqa: E402


def test_holm_adjusts_as_the_procedure_says():
    # sorted 0.01, 0.02, 0.03, 0.5 → 4·0.01, 3·0.02, 2·0.03 (made non-decreasing), 1·0.5
    assert holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert holm([0.9, 0.8]) == [1.0, 1.0]
    assert holm([0.9, 0.3]) == [0.9, 0.6]
    assert holm([0.4, 0.4, 0.4]) == [1.0, 1.0, 1.0]
    # a p that alone would FAIL does not, among six, unless it is small enough for all six
    tests = adjust([Result(str(i), 0, p, "") for i, p in
                    enumerate([0.005, 0.5, 0.6, 0.7, 0.8, 0.9])])
    assert tests[0].verdict == "FLAG" and tests[0].adjusted == pytest.approx(0.03)
    assert adjust([Result("x", 0, 0.001, "")])[0].verdict == "FAIL"


def test_the_output_says_how_the_tests_are_combined():
    factory = [c.code for c in ordered_shoe(1)]
    rng = random.Random(3)
    report = run_shuffle_test(lambda: (factory, rng.sample(factory, 52)), 20)
    text = report.to_text()
    assert "Holm-Bonferroni" in text and "family-wise" in text and "Adjusted p" in text
    doc = report.to_json()
    assert doc["correction"] == {"method": "holm-bonferroni", "tests": 6,
                                 "family_wise_error_rate": {"FAIL": 0.01, "FLAG": 0.05}}
    assert all(t["adjusted"] >= t["p_value"] for t in doc["tests"])


def test_the_benchmark_measures_false_alarms_and_detection(capsys):
    # a short run of the benchmark itself: its JSON keys, a good shuffler that rarely fails
    # and a weak one that always does (the full measure is 1000 sessions: docs/shuffle-test.md)
    doc = shuffle_fpr.measure(sessions=60, runs=20, decks=1, seed=11, weak_sessions=10)
    assert doc["runs"] == 60 and doc["detection_rate"] == 1.0
    assert doc["false_alarm_rate"] <= 2 / 60
    with pytest.raises(SystemExit):
        shuffle_fpr.main(["--sessions", "10"])          # fewer than 200 is no measure


def _shoe(number: int, cards: list[str], decks: int, cut: int) -> RecordedShoe:
    return RecordedShoe(number, decks, tuple(cards[:len(cards) - cut]))


def test_recorded_shoes_of_a_good_shuffler_pass_and_of_a_weak_one_fail():
    factory = [c.code for c in ordered_shoe(8)]
    good, weak = ShufflerModel(seed=2, decks=8), ShufflerModel(seed=2, decks=8, weak=True)
    fails = 0
    for session in range(40):
        shoes = [_shoe(i, good.shuffled(factory), 8, 14) for i in range(4)]
        fails += recorded_tests(shoes[1:], shoes[0]).verdict == "FAIL"
    assert fails <= 1
    shoes = [_shoe(i, weak.shuffled(factory), 8, 14) for i in range(3)]
    report = recorded_tests(shoes)
    assert report.verdict == "FAIL"
    by_name = {t.name: t.verdict for t in report.tests}
    assert by_name["factory successors kept"] == "FAIL"


def test_a_shuffler_fed_the_last_shoe_unshuffled_is_caught_by_the_pairs_it_keeps():
    rng = random.Random(5)
    factory = [c.code for c in ordered_shoe(6)]
    first = rng.sample(factory, len(factory))
    # the next shoe is the last one's discards cut once: every pair but one is kept
    cut = 150
    second = first[cut:] + first[:cut]
    report = recorded_tests([_shoe(2, second, 6, 10)], _shoe(1, first, 6, 0))
    by_name = {t.name: t for t in report.tests}
    assert by_name["pairs kept from the previous shoe"].verdict == "FAIL"
    assert by_name["factory successors kept"].verdict == "PASS"


def _journal(path: Path, shoes: list[list[str]], decks: int) -> None:
    with Journal(path) as j:
        for number, cards in enumerate(shoes, start=1):
            j.append_many([("shoe_started", {"event": "shoe_started", "shoe": number,
                                             "decks": decks})]
                          + [("card", {"event": "card", "shoe": number, "n": i + 1,
                                       "code": code, "slot": "P1"})
                             for i, code in enumerate(cards)])


def test_command_over_a_journal(tmp_path, capsys):
    from controller.cli import main
    factory = [c.code for c in ordered_shoe(1)]
    good = ShufflerModel(seed=4, decks=1)
    weak = ShufflerModel(seed=4, decks=1, weak=True)
    _journal(tmp_path / "good.db", [good.shuffled(factory)[:45] for _ in range(6)], 1)
    _journal(tmp_path / "weak.db", [weak.shuffled(factory)[:45] for _ in range(6)], 1)
    assert main(["shuffle-test", "--journal", str(tmp_path / "good.db"), "--last-shoes", "4",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["shoes"] == [3, 4, 5, 6] and doc["cards"] == 180 and doc["verdict"] != "FAIL"
    assert doc["correction"]["method"] == "holm-bonferroni"
    assert main(["shuffle-test", "--journal", str(tmp_path / "weak.db")]) == 1
    out = capsys.readouterr().out
    assert "6 recorded shoe(s)" in out and "Overall: FAIL" in out and "Holm-Bonferroni" in out
    assert main(["shuffle-test", "--journal", str(tmp_path / "none.db")]) == 2
    capsys.readouterr()
    # what drives a shuffler means nothing for recorded shoes: refused in one line
    assert main(["shuffle-test", "--journal", str(tmp_path / "good.db"), "--runs", "-1"]) == 2
    assert "--runs goes with --shuffler-url" in capsys.readouterr().err
    assert main(["shuffle-test", "--shuffler-url", "usb://1:2?sim=none", "--last-shoes",
                 "3"]) == 2
    assert "--last-shoes goes with --journal" in capsys.readouterr().err
    assert judge_journal(str(tmp_path / "good.db"), 2).shoes[0].number == 5
