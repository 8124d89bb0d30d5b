"""Where tablectl finds its files: a site's configuration and profiles before the shipped
ones (--config, $TABLECTL_CONFIG, /etc/tablectl/, then the release's own)."""
import pytest

from controller.settings import locations
from controller.settings.config import load_config
from controller.errors import InputError
from controller.settings.profile import load_profile


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A stand-in for /etc/tablectl, and no configuration named in the environment."""
    folder = tmp_path / "etc-tablectl"
    (folder / "profiles").mkdir(parents=True)
    monkeypatch.setattr(locations, "SITE_DIR", folder)
    monkeypatch.delenv("TABLECTL_CONFIG", raising=False)
    monkeypatch.delenv("TABLECTL_PROFILES", raising=False)
    monkeypatch.chdir(tmp_path)                 # no checkout in the working directory
    return folder


def test_the_configuration_is_the_given_then_the_environments_then_the_sites_then_shipped(
        site, tmp_path, monkeypatch):
    assert locations.config_file() == locations.shipped_config()
    assert load_config().table.name == "T1"                  # the shipped one: the simulator
    (site / "table.toml").write_text('[table]\nname = "SITE"\n')
    assert load_config().table.name == "SITE"
    env = tmp_path / "env.toml"
    env.write_text('[table]\nname = "ENV"\n')
    monkeypatch.setenv("TABLECTL_CONFIG", str(env))
    assert load_config().table.name == "ENV"
    given = tmp_path / "given.toml"
    given.write_text('[table]\nname = "GIVEN"\n')
    assert load_config(given).table.name == "GIVEN"
    monkeypatch.setenv("TABLECTL_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(InputError, match="TABLECTL_CONFIG=.*missing.toml: no such config file"):
        load_config()
    with pytest.raises(InputError, match="nope.toml: no such config file; give an existing"):
        load_config(tmp_path / "nope.toml")


def test_a_sites_profile_of_the_same_name_comes_before_the_shipped_one(site, tmp_path,
                                                                      monkeypatch):
    shipped = load_profile("macau")
    assert shipped.path == str(locations.shipped("config") / "profiles" / "macau.toml")
    text = (locations.shipped("config") / "profiles" / "macau.toml").read_text()
    (site / "profiles" / "macau.toml").write_text(text.replace("decks = 8", "decks = 6"))
    assert load_profile("macau").decks == 6
    # beside the configuration given, before the site's
    mine = tmp_path / "mine"
    (mine / "profiles").mkdir(parents=True)
    (mine / "profiles" / "macau.toml").write_text(text.replace("decks = 8", "decks = 7"))
    assert load_profile("macau", config=str(mine / "table.toml")).decks == 7
    monkeypatch.setenv("TABLECTL_CONFIG", str(mine / "table.toml"))
    assert load_profile("macau").decks == 7
    dirs = locations.profile_dirs()
    assert dirs == [mine / "profiles", site / "profiles",
                    locations.shipped("config") / "profiles"]
