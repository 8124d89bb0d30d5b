import tomllib
from pathlib import Path

import pytest

from controller.profile import ProfileError, load_profile, parse_profile

PROFILES = Path(__file__).resolve().parents[1] / "config" / "profiles"


def base() -> dict:
    return tomllib.loads((PROFILES / "macau.toml").read_text())


@pytest.mark.parametrize("name,decks,between,bets", [
    ("macau", 8, 0, {"player", "banker", "tie", "player_pair", "banker_pair"}),
    ("live-commission", 8, 1, {"player", "banker", "tie", "player_pair", "banker_pair", "big", "small"}),
    ("live-super6", 8, 1, {"player", "banker", "tie", "player_pair", "banker_pair", "big", "small"}),
    ("classic", 6, 0, {"player", "banker", "tie"}),
])
def test_named_profiles(name, decks, between, bets):
    p = load_profile(name)
    assert (p.decks, p.burn.between_rounds, set(p.paytable)) == (decks, between, bets)
    assert (p.cut_card.min_from_end, p.cut_card.max_from_end, p.cut_card.default_from_end) == (12, 20, 14)
    assert p.burn.rule == "first_card" and len(p.sha256) == 64


def test_super6_banker_options():
    b = load_profile("live-super6").paytable["banker"]
    assert b.pays == 1 and float(b.option("on_six")) == 0.5
    assert float(load_profile("macau").paytable["banker"].pays) == 0.95


@pytest.mark.parametrize("mutate,key,fix", [
    (lambda d: d.update(decks=5), "decks", "from 6 to 12"),
    (lambda d: d.update(colour="red"), "colour", "remove it"),
    (lambda d: d["burn"].update(rule="coin"), "burn.rule", "first_card"),
    (lambda d: d["burn"].update(rule="fixed", count=0), "burn.count", "1 to 8"),
    (lambda d: d["burn"].update(count=9), "burn.count", "from 0 to 8"),
    (lambda d: d["cut_card"].update(after="later"), "cut_card.after", "one_more"),
    (lambda d: d["cut_card"].update(min_from_end=30), "cut_card.min_from_end", "min_from_end"),
    (lambda d: d["paytable"].update(dragon=40), "paytable.dragon", "use bets from"),
    (lambda d: d["paytable"].update(tie="eight"), "paytable.tie", "0.95"),
    (lambda d: d["paytable"].update(tie=-1), "paytable.tie", "greater than 0"),
    (lambda d: d.update(game="poker"), "game", "punto_banco"),
    (lambda d: d["demo_rounds"].update(max=4), "demo_rounds.max", "from 0 to 3"),
    (lambda d: d["irregularities"].update(face_up_card="maybe"), "irregularities.face_up_card", "valid"),
    (lambda d: d.pop("decks"), "decks", "add `decks"),
])
def test_validation_errors_name_file_key_and_fix(mutate, key, fix):
    d = base()
    mutate(d)
    with pytest.raises(ProfileError) as err:
        parse_profile(d, "macau.toml")
    msg = str(err.value)
    assert msg.startswith(f"macau.toml: {key}:") and fix in msg and "\n" not in msg


def test_unknown_profile_name_lists_known_ones():
    with pytest.raises(ProfileError) as err:
        load_profile("nope")
    assert "macau" in str(err.value)


def test_bad_toml_file(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text("decks = = 8")
    with pytest.raises(ProfileError) as err:
        load_profile(str(f))
    assert "not valid TOML" in str(err.value)


def test_exact_fraction_payouts():
    from fractions import Fraction
    assert load_profile("live-commission").paytable["big"].pays == Fraction(27, 50)
