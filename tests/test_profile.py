import tomllib
from pathlib import Path

import pytest

from controller.cli import main
from controller.settings.profile import ProfileError, load_profile, load_profile_for_use, parse_profile

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
    # at least twelve behind the cut card; no upper limit but the shoe's own
    assert (p.cut_card.min_from_end, p.cut_card.max_from_end, p.cut_card.default_from_end) == \
        (12, None, 14)
    assert p.cut_card.upper(p.cards) == p.cards
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
    (lambda d: d["paytable"].update(tie="eight"), "paytable.tie", "19/20"),
    (lambda d: d["paytable"].update(tie="8"), "paytable.tie", "without quotes"),
    (lambda d: d.update(name=""), "name", "1 to 64 printable"),
    (lambda d: d.update(name="macau\nforged"), "name", "1 to 64 printable"),
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


def mistyped_macau(tmp_path) -> str:
    f = tmp_path / "mistyped.toml"
    f.write_text((PROFILES / "macau.toml").read_text().replace("banker = 0.95", "banker = 9.5"))
    return str(f)


def test_a_mistyped_payout_parses_but_is_refused_for_use(tmp_path):
    from fractions import Fraction
    path = mistyped_macau(tmp_path)
    assert load_profile(path).paytable["banker"].pays == Fraction(19, 2)   # well-formed file
    with pytest.raises(ProfileError) as err:
        load_profile_for_use(path)
    assert err.value.key == "rtp_band.banker" and "computed RTP" in err.value.problem


@pytest.mark.parametrize("command,more", [
    ("simulate", ["--seed", "1"]), ("odds", []), ("run", ["--no-control", "--shoes", "1"]),
    ("devices", []),
])
def test_commands_stop_on_a_mistyped_payout_with_one_line_and_exit_2(tmp_path, capsys, command,
                                                                      more):
    code = main([command, "--profile", mistyped_macau(tmp_path), *more])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"tablectl {command}: ") and "rtp_band.banker" in err
