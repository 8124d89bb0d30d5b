"""The engine benchmark runs all its paths on the same shoes (figures are printed, not asserted)."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import engine  # noqa: E402

from controller.games import procedure as procedures  # noqa: E402
from controller.settings.profile import load_profile  # noqa: E402


def test_the_paths_deal_the_same_hands():
    profile = load_profile("macau")
    shoes = engine.shoes(profile, 2)
    cut = procedures.default_cut_position(profile, profile.cards)
    rules = engine.rules(profile, shoes, cut)
    assert rules == engine.machine(profile, shoes, cut)          # (hands, cards) alike
    pyb = engine.load_pybaccarat()
    if pyb is not None:
        hands, _ = engine.pybaccarat(pyb, engine.pybaccarat_shoes(pyb, shoes),
                                     profile.cards - cut)
        # PyBaccarat plays one more hand once it has seen the cut card
        assert rules[0] <= hands <= rules[0] + 2 * len(shoes)


def test_json_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["engine.py", "--shoes", "1", "--repeat", "1",
                                      "--min-seconds", "0", "--json"])
    engine.main()
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ("rules_hands_per_s", "machine_hands_per_s", "pybaccarat_hands_per_s",
                "machine_vs_rules", "rules_vs_pybaccarat"):
        assert key in doc
    assert doc["rules_hands_per_s"] > 0 and doc["machine_hands_per_s"] > 0
    assert (doc["pybaccarat_hands_per_s"] is None) == (engine.load_pybaccarat() is None)
