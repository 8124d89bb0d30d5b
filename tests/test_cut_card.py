"""Where the cut card may lie: at least twelve cards behind it (the Macau rules), no upper
limit but the shoe's own unless a house sets one (`[cut_card] max_from_end`)."""
import json
import random
import tomllib
from pathlib import Path

import pytest

from controller.shoe.cards import ordered_shoe
from controller.cli import main
from controller.commands._simulation import load_shoe_file
from controller.errors import InputError
from controller.settings.profile import ProfileError, load_profile, parse_profile

PROFILES = Path(__file__).resolve().parents[1] / "config" / "profiles"


def shoe_file(tmp_path, decks: int, behind: int) -> Path:
    codes = [c.code for c in ordered_shoe(decks)]
    random.Random(decks * 100 + behind).shuffle(codes)
    path = tmp_path / f"cut{behind}.shoe"
    path.write_text("\n".join(codes[:len(codes) - behind] + ["CUT"] + codes[-behind:]) + "\n")
    return path


def test_macau_deals_a_shoe_cut_21_from_the_end_and_refuses_11(tmp_path, capsys):
    assert main(["simulate", "--profile", "macau", "--shoe-file",
                 str(shoe_file(tmp_path, 8, 21)), "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    start = next(e for e in events if e["event"] == "shoe_started")
    assert start["cut_card_position"] == 416 - 21
    assert next(e for e in events if e["event"] == "shoe_ended")["reason"] == "cut_card"
    assert main(["simulate", "--profile", "macau", "--shoe-file",
                 str(shoe_file(tmp_path, 8, 11)), "--json"]) == 2
    err = capsys.readouterr().err
    assert "leaves 11 cards behind it; the profile needs at least 12" in err
    assert err.count("\n") == 1


def test_the_shoes_own_limit_and_a_house_limit(tmp_path):
    macau = load_profile("macau")
    assert macau.cut_card.max_from_end is None and macau.cut_card.upper(416) == 416
    deep = shoe_file(tmp_path, 8, 400)                  # 16 cards in front of the cut card
    assert load_shoe_file(macau, str(deep)).cut_position == 16
    data = tomllib.loads((PROFILES / "macau.toml").read_text())
    data["cut_card"]["max_from_end"] = 20
    house = parse_profile(data, "house.toml")
    assert house.cut_card.upper(416) == 20
    assert load_shoe_file(house, str(shoe_file(tmp_path, 8, 20))).cut_position == 396
    with pytest.raises(InputError, match=r"at most 20 \(\[cut_card\] max_from_end\)"):
        load_shoe_file(house, str(shoe_file(tmp_path, 8, 21)))


@pytest.mark.parametrize("cut, key", [
    ({"max_from_end": 10}, "cut_card.min_from_end"),            # below the minimum of 12
    ({"max_from_end": 417}, "cut_card.max_from_end"),           # more than the shoe holds
    ({"default_from_end": 11}, "cut_card.min_from_end"),        # above the default
    ({"max_from_end": 13}, "cut_card.default_from_end"),        # the default 14 beyond it
])
def test_bad_cut_card_limits_name_the_key(cut, key):
    data = tomllib.loads((PROFILES / "macau.toml").read_text())
    data["cut_card"].update(cut)
    with pytest.raises(ProfileError) as err:
        parse_profile(data, "house.toml")
    assert err.value.key == key and "\n" not in str(err.value)
