"""Every bad input is refused the same way: exit 2 and one line that names the file or the flag
and the fix, before anything is opened or journaled. The cases found by an adversarial run are
listed one by one; then generated configs, profiles and flags (hypothesis) must all be refused
so."""
from __future__ import annotations

import math
import re
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.cli import main
from controller.settings.config import _RANGES
from controller.settings.profile import MAX_PAYOUT

ROOT = Path(__file__).resolve().parents[1]
MACAU = (ROOT / "config" / "profiles" / "macau.toml").read_text()
CASES = settings(max_examples=20, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture,
                                        HealthCheck.too_slow])


class Accepted(AssertionError):
    """A bad input got as far as dealing."""


@pytest.fixture(autouse=True)
def guarded(monkeypatch):
    """No table ever starts here: a bad input that gets that far fails at once (and nothing
    may hang: an alarm ends the test)."""
    for name in [k for k in __import__("os").environ if k.startswith("TABLECTL_")]:
        monkeypatch.delenv(name)

    def refuse(*args, **kw):
        raise Accepted("the bad input was accepted: the table was about to start")

    monkeypatch.setattr("controller.service.runtime.TableRuntime.run", refuse)
    monkeypatch.setattr("controller.commands._simulation.run_simulation", refuse)

    def hung(signum, frame):
        raise Accepted("the bad input hung the command")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def refused(capsys, argv: list[str], names: str) -> str:
    """main(argv) must exit 2 with one line on stderr that names `names`."""
    capsys.readouterr()
    try:
        rc = main(argv)
    except SystemExit as done:          # the parser's refusal (tablectl exits with it)
        rc = done.code
    out = capsys.readouterr()
    assert rc == 2, (argv, rc, out.err[-500:])
    assert out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
    assert names in out.err, (names, out.err)
    return out.err


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def sub(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


# ---------------------------------------------------------------- the cases found, one by one

def _empty_paytables(t):
    start, end = t.index("[paytable]"), t.index("# The RTP")
    return t[:start] + "[paytables]\n\n" + t[end:]


PROFILES = {
    "empty [paytables]": (_empty_paytables, "paytables"),
    "player_pair = 1e308": (lambda t: sub(t, "player_pair = 11", "player_pair = 1e308"),
                            "player_pair"),
    "player_pair = 1000": (lambda t: sub(t, "player_pair = 11", "player_pair = 1000"),
                           "player_pair"),
    "unknown key in an inline table": (
        lambda t: sub(t, "banker = 0.95", "banker = {pays = 0.95, bogus = 2}"), "bogus"),
}


@pytest.mark.parametrize("case", PROFILES)
def test_listed_bad_profiles(case, tmp_path, capsys):
    edit, names = PROFILES[case]
    path = write(tmp_path / "bad.toml", edit(MACAU))
    err = refused(capsys, ["simulate", "--profile", path, "--seed", "1"], names)
    assert "bad.toml" in err


CONFIGS = {
    "read_timeout_s = 0": "[shoe]\nread_timeout_s = 0\n",
    "dead_after_timeouts = -1": "[shoe]\ndead_after_timeouts = -1\n",
    "faults = [\"bogus@1\"]": "[simulator]\nfaults = [\"bogus@1\"]\n",
    "faults past the shoe": "[simulator]\nfaults = [\"misread@99999\"]\n",
    "response_timeout_s = 0": "[shuffler]\nresponse_timeout_s = 0\n",
    "reconnect_initial_s < 0": "[shoe]\nreconnect_initial_s = -0.5\n",
    "min_pull_interval_s < 0": "[shoe]\nmin_pull_interval_s = -1\n",
    "shoes < 0": "[table]\nshoes = -1\n",
    "demo_rounds < 0": "[table]\ndemo_rounds = -1\n",
    "betting_seconds = nan": "[table]\nbetting_seconds = nan\n",
    "betting_seconds = inf": "[table]\nbetting_seconds = inf\n",
    "snapshot_every = 0": "[storage]\nsnapshot_every = 0\n",
}


@pytest.mark.parametrize("case", CONFIGS)
def test_listed_bad_configs(case, tmp_path, capsys):
    path = write(tmp_path / "table.toml", CONFIGS[case])
    refused(capsys, ["run", "--config", path, "--journal", str(tmp_path / "j.db"),
                     "--no-control"], "table.toml")
    assert not (tmp_path / "j.db").exists()            # refused before anything is journaled


FLAGS = {
    "--fault misread@99999": (["simulate", "--profile", "macau", "--seed", "1", "--fault",
                               "misread@99999"], "--fault"),
    "--betting-seconds nan": (["simulate", "--profile", "macau", "--seed", "1",
                               "--betting-seconds", "nan"], "--betting-seconds"),
    "--betting-seconds inf": (["run", "--betting-seconds", "inf", "--no-control"],
                              "--betting-seconds"),
    "--demo-rounds -1 (simulate)": (["simulate", "--profile", "macau", "--seed", "1",
                                     "--demo-rounds", "-1"], "--demo-rounds"),
    "--demo-rounds -1 (run)": (["run", "--demo-rounds", "-1", "--no-control"], "--demo-rounds"),
    "diagram --output /no/dir/x.md": (["diagram", "--output", "/no/dir/x.md"], "--output"),
    "socket://127.0.0.1:99999": (["run", "--shoe-url", "socket://127.0.0.1:99999",
                                  "--no-control"], "socket://127.0.0.1:99999"),
    "console --language xx": (["console", "--language", "xx"], "--language"),
    "shuffle-test --journal J --runs -1": (["shuffle-test", "--journal", "j.db", "--runs", "-1"],
                                           "--runs"),
    "report --output /no/dir/x.pdf": (["report", "--journal", "/etc/hostname", "--output",
                                       "/no/dir/x.pdf"], "no folder /no/dir"),
    "run --virtual-players (punto banco)": (["run", "--profile", "macau", "--virtual-players",
                                             "--no-control"], "--virtual-players"),
    "run --decisions without --virtual-players": (
        ["run", "--profile", "chemin-de-fer", "--decisions", "d.txt", "--no-control"],
        "--decisions needs --virtual-players"),
    "run --virtual-players --decisions /no/such": (
        ["run", "--profile", "chemin-de-fer", "--virtual-players", "--decisions", "/no/such",
         "--no-control"], "/no/such"),
}


@pytest.mark.parametrize("case", FLAGS)
def test_listed_bad_flags(case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)                        # any journal would land here
    argv, names = FLAGS[case]
    refused(capsys, argv, names)
    assert not list(tmp_path.rglob("*.db"))


def test_a_shoe_file_may_start_with_a_byte_order_mark(tmp_path):
    from controller.shoe.shoefile import read_shoe_file
    path = tmp_path / "shoe.txt"
    path.write_text("\ufeffAS\n2H\nCUT\nKD\n", encoding="utf-8")
    shoe = read_shoe_file(path)
    assert shoe.codes == ["AS", "2H", "KD"] and shoe.cut_position == 2


def test_a_config_and_a_profile_may_start_with_a_byte_order_mark(tmp_path):
    from controller.settings.config import load_config
    from controller.settings.profile import load_profile
    cfg = write(tmp_path / "t.toml", "\ufeff[table]\nshoes = 2\n")
    assert load_config(cfg).table.shoes == 2
    assert load_profile(write(tmp_path / "p.toml", "\ufeff" + MACAU)).decks == 8


def test_snapshot_every_is_the_services_interval(tmp_path, monkeypatch):
    from controller.service import runtime
    seen = {}
    real = runtime.TableRuntime.__init__

    def spy(self, spec):
        real(self, spec)
        seen["every"] = spec.snapshot_every
        self.close()
        raise Accepted("stop here")

    monkeypatch.setattr(runtime.TableRuntime, "__init__", spy)
    path = write(tmp_path / "t.toml", "[storage]\nsnapshot_every = 7\n")
    with pytest.raises(Accepted):
        main(["run", "--config", path, "--journal", str(tmp_path / "j.db"), "--no-control"])
    assert seen == {"every": 7}


# ---------------------------------------------------------------- generated bad inputs

def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def _type_of(key: str) -> str:
    """The declared type of a config key ("int", "float", …), from the config itself."""
    from dataclasses import fields
    from controller.settings import config
    section, name = key.split(".")
    cls = {f.name: f.default_factory for f in fields(config.Config)
           if f.name == section}[section]
    return next(str(f.type) for f in fields(cls) if f.name == name)


@st.composite
def bad_numbers(draw):
    """A config key with a number it must refuse: not finite, out of its range, wrong type."""
    key = draw(st.sampled_from(sorted(_RANGES)))
    lo, lo_ok, hi = _RANGES[key]
    whole = _type_of(key) == "int"
    choices = [st.sampled_from(["x", True, [1]])]
    if whole:
        choices += [st.integers(max_value=int(lo) - (0 if not lo_ok else 1)),
                    st.integers(min_value=int(hi) + 1, max_value=int(hi) + 2 ** 40)]
    else:
        choices += [st.sampled_from([math.nan, math.inf, -math.inf]),
                    st.floats(max_value=lo, exclude_max=lo_ok, allow_nan=False,
                              allow_infinity=False, min_value=-1e12).filter(
                                  lambda x: not (lo_ok and x == lo)),      # -0.0 is 0
                    st.floats(min_value=hi, exclude_min=True, max_value=1e12)]
    return key, draw(st.one_of(choices))


@CASES
@given(bad=bad_numbers())
def test_generated_bad_config_values(bad, tmp_path_factory, capsys):
    key, value = bad
    where = tmp_path_factory.mktemp("cfg")
    section, name = key.split(".")
    path = write(where / "table.toml", f"[{section}]\n{name} = {_toml(value)}\n")
    refused(capsys, ["run", "--config", path, "--journal", str(where / "j.db"), "--no-control"],
            "table.toml")


IDENT = st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True)


@CASES
@given(section=st.sampled_from(["table", "shoe", "shuffler", "storage", "console",
                                "simulator", "bogus"]), key=IDENT)
def test_generated_unknown_config_keys(section, key, tmp_path_factory, capsys):
    from controller.settings import config
    known = {f.name for cls in (config.TableCfg, config.ShoeCfg, config.ShufflerCfg,
                                config.StorageCfg, config.ConsoleCfg, config.SimulatorCfg)
             for f in config.fields(cls)}
    if key in known:
        key += "_x"
    where = tmp_path_factory.mktemp("cfg")
    path = write(where / "table.toml", f"[{section}]\n{key} = 1\n")
    refused(capsys, ["run", "--config", path, "--no-control"], "table.toml")


BETS = ("player", "banker", "tie", "player_pair", "banker_pair")


@st.composite
def bad_profiles(draw):
    """The macau profile with one mistake in it."""
    kind = draw(st.sampled_from(["absurd", "not_a_payout", "inline_key", "unknown_bet",
                                 "unknown_key", "decks", "empty_paytables", "burn"]))
    t, bet = MACAU, draw(st.sampled_from(BETS))
    line = next(x for x in t.splitlines() if x.startswith(f"{bet} = "))
    if kind == "absurd":        # pays more than it takes in, or out of any band
        pays = draw(st.floats(min_value=30, max_value=MAX_PAYOUT * 1e6))
        return sub(t, line, f"{bet} = {pays!r}")
    if kind == "not_a_payout":
        bad = draw(st.sampled_from(["0", "-1", "nan", "inf", '"x"', "true", "[1]", "{}"]))
        return sub(t, line, f"{bet} = {bad}")
    if kind == "inline_key":
        extra = draw(IDENT.filter(lambda k: k not in ("pays", "on_six")))
        return sub(t, line, f"{bet} = {{pays = {line.split('= ')[1]}, {extra} = 2}}")
    if kind == "unknown_bet":
        return sub(t, "[paytable]\n", f"[paytable]\n{draw(IDENT)}_x = 2\n")
    if kind == "unknown_key":
        return sub(t, 'game = "punto_banco"', f'game = "punto_banco"\n{draw(IDENT)}_y = 1')
    if kind == "decks":
        return sub(t, "decks = 8", f"decks = {draw(st.sampled_from([0, -1, 5, 13, 10 ** 9]))}")
    if kind == "burn":
        return sub(t, 'rule = "first_card"', f'rule = "{draw(IDENT)}_z"')
    return _empty_paytables(t)


@CASES
@given(text=bad_profiles())
def test_generated_bad_profiles(text, tmp_path_factory, capsys):
    where = tmp_path_factory.mktemp("prof")
    path = write(where / "bad.toml", text)
    refused(capsys, ["simulate", "--profile", path, "--seed", "1"], "bad.toml")


FLAG_VALUES = {
    "--betting-seconds": st.sampled_from(["nan", "inf", "-inf", "-1", "x", "1e999"]),
    "--shoes": st.sampled_from(["-1", "0", "x", "1.5"]),
    "--demo-rounds": st.sampled_from(["-1", "4", "99", "x"]),
    "--fault": st.one_of(st.sampled_from(["misread@416", "misread@-1", "bogus@1", "misread",
                                          "@3", "crash@0", "crash@x"]),
                         st.integers(416, 10 ** 9).map(lambda n: f"double_draw@{n}")),
    "--shoe-protocol": IDENT.filter(lambda p: p not in ("beetek", "barcode", "framed")),
    "--shoe-url": st.sampled_from(["socket://127.0.0.1:99999", "socket://:1", "bogus://x",
                                   "socket://host:0", "rfc2217://h:70000"]),
}


@CASES
@given(flag=st.sampled_from(sorted(FLAG_VALUES)), data=st.data())
def test_generated_bad_flags(flag, data, tmp_path_factory, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path_factory.mktemp("flags"))
    value = data.draw(FLAG_VALUES[flag])
    argv = ["simulate", "--profile", "macau", "--seed", "1", "--json", f"{flag}={value}"]
    names = value if flag == "--shoe-url" else flag
    if flag == "--shoe-url":
        argv = ["run", "--no-control", f"--shoe-url={value}"]
    err = refused(capsys, argv, re.sub(r"^--", "", names) if flag == "--fault" else names)
    assert "Traceback" not in err


# ---------------------------------------------------------------- the third sweep

THIRD = {
    "TABLECTL_CONFIG names no file": ({"TABLECTL_CONFIG": "/nonexistent.toml"},
                                      ["run", "--no-control"], "TABLECTL_CONFIG"),
    "an unknown TABLECTL_ variable": ({"TABLECTL_SHOE_URLL": "x"}, ["run", "--no-control"],
                                      "TABLECTL_SHOE_URL"),
    "--betting-seconds 1e308 (run)": ({}, ["run", "--betting-seconds", "1e308",
                                           "--no-control"], "--betting-seconds"),
    "--betting-seconds 1e308 (simulate)": ({}, ["simulate", "--profile", "macau", "--seed",
                                                "1", "--betting-seconds", "1e308"],
                                           "--betting-seconds"),
    "--pace 61": ({}, ["run", "--pace", "61", "--no-control"], "--pace"),
    "--seed -2": ({}, ["run", "--seed", "-2", "--no-control"], "--seed"),
    "--feed port 0 (run)": ({}, ["run", "--feed", "mqtt://127.0.0.1:0", "--no-control"],
                            "the port is not a number"),
    "--feed port 0 (simulate)": ({}, ["simulate", "--profile", "macau", "--seed", "1",
                                      "--journal", "j.db", "--feed", "mqtt://127.0.0.1:0"],
                                 "the port is not a number"),
    "--feed port 99999": ({}, ["run", "--feed", "mqtt://127.0.0.1:99999", "--no-control"],
                          "the port is not a number"),
    "--shuffler-url usb://zzzz:1": ({}, ["run", "--shuffler-url", "usb://zzzz:1",
                                         "--no-control"], "usb://zzzz:1"),
    "env table name T1/#": ({"TABLECTL_TABLE_NAME": "T1/#"}, ["run", "--no-control"],
                            "TABLECTL_TABLE_NAME"),
    "env betting seconds 1e308": ({"TABLECTL_TABLE_BETTING_SECONDS": "1e308"},
                                  ["run", "--no-control"], "TABLECTL_TABLE_BETTING_SECONDS"),
}


@pytest.mark.parametrize("case", THIRD)
def test_third_sweep_listed(case, tmp_path, capsys, monkeypatch):
    env, argv, names = THIRD[case]
    monkeypatch.chdir(tmp_path)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    refused(capsys, argv, names)
    assert not list(tmp_path.rglob("*.db"))


BAD_NAMES = st.one_of(
    st.sampled_from(["T1/#", "T+1", "T1\nx", "T9/evil", "../../x", "", "a" * 33, "T 1",
                     "tables/+", "T1\x00", "Ｔ１"]),
    st.text(min_size=1, max_size=40).filter(lambda t: not re.fullmatch(r"[A-Za-z0-9_-]{1,32}",
                                                                       t)))


@CASES
@given(name=BAD_NAMES, via=st.sampled_from(["file", "env"]))
def test_generated_table_names_that_are_not_a_topic_level(name, via, tmp_path_factory, capsys,
                                                          monkeypatch):
    where = tmp_path_factory.mktemp("name")
    argv = ["run", "--no-control", "--journal", str(where / "j.db")]
    if via == "env":
        if "\x00" in name:
            name = name.replace("\x00", "/")         # no NUL in an environment variable
        if not name:
            return                  # an empty variable is an unset one (the file's name holds)
        monkeypatch.setenv("TABLECTL_TABLE_NAME", name)
        names = "TABLECTL_TABLE_NAME"
    else:
        argv += ["--config", write(where / "t.toml", f"[table]\nname = {_toml(name)}\n")]
        names = "t.toml"
    try:
        refused(capsys, argv, names)
    finally:
        monkeypatch.delenv("TABLECTL_TABLE_NAME", raising=False)


@CASES
@given(bad=bad_numbers())
def test_generated_bad_values_in_the_environment_are_refused_as_in_the_file(
        bad, tmp_path_factory, capsys, monkeypatch):
    key, value = bad
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return                       # the environment holds text: a number or not, not a type
    section, name = key.split(".")
    variable = f"TABLECTL_{section.upper()}_{name.upper()}"
    monkeypatch.setenv(variable, repr(value) if isinstance(value, float) else str(value))
    where = tmp_path_factory.mktemp("env")
    try:
        refused(capsys, ["run", "--no-control", "--journal", str(where / "j.db")], variable)
    finally:
        monkeypatch.delenv(variable)


@CASES
@given(data=st.data())
def test_generated_unknown_variables_are_refused(data, capsys, monkeypatch, tmp_path_factory):
    from controller.settings.config import known_variables
    known = sorted(known_variables())
    base = data.draw(st.sampled_from(known))
    typo = data.draw(st.sampled_from([base + "S", base[:-1], base.replace("_", "", 1) + "_X",
                                      "TABLECTL_" + data.draw(IDENT).upper()]))
    if typo in known or typo == "TABLECTL_" or not typo.startswith("TABLECTL_"):
        return
    monkeypatch.setenv(typo, "1")
    where = tmp_path_factory.mktemp("var")
    try:
        refused(capsys, ["run", "--no-control", "--journal", str(where / "j.db")], typo)
    finally:
        monkeypatch.delenv(typo)


#: a flag held to the range the config holds its setting to: (command, flag, config key)
CAPPED = [("run", "--betting-seconds", "table.betting_seconds"),
          ("simulate", "--betting-seconds", "table.betting_seconds"),
          ("run", "--pace", "simulator.pace_s"), ("run", "--seed", "simulator.seed"),
          ("run", "--shoes", "table.shoes"), ("simulate", "--shoes", "table.shoes")]


@CASES
@given(which=st.sampled_from(CAPPED), data=st.data())
def test_generated_flags_beyond_the_configs_caps(which, data, tmp_path_factory, capsys,
                                                 monkeypatch):
    command, flag, key = which
    lo, lo_ok, hi = _RANGES[key]
    value = data.draw(st.one_of(st.integers(int(hi) + 1, int(hi) * 10 + 10 ** 6),
                                st.sampled_from([hi * 2, 1e308]))
                      if _type_of(key) == "int" else
                      st.floats(min_value=hi, exclude_min=True, max_value=1e308))
    if _type_of(key) == "int":
        value = int(value)
    monkeypatch.chdir(tmp_path_factory.mktemp("cap"))
    argv = (["run", "--no-control"] if command == "run"
            else ["simulate", "--profile", "macau", "--seed", "1"]) + [f"{flag}={value}"]
    refused(capsys, argv, flag)


@CASES
@given(url=st.one_of(
    st.from_regex(r"usb://[0-9a-f]{1,4}:", fullmatch=True),
    st.from_regex(r"usb://[g-z]{1,4}:[0-9]{1,4}", fullmatch=True),
    st.from_regex(r"usb://[1-9a-f][0-9a-f]{4,5}:[0-9a-f]{4}", fullmatch=True),
    st.sampled_from(["usb://7a5c:5348?bogus=1", "usb://7a5c:5348/x", "usb://", "usb://:",
                     "socket://h:0", "bogus://x"])))
def test_generated_shuffler_urls_that_cannot_name_a_device(url, tmp_path_factory, capsys,
                                                          monkeypatch):
    monkeypatch.chdir(tmp_path_factory.mktemp("url"))
    refused(capsys, ["run", "--no-control", f"--shuffler-url={url}"], url.split("?")[0][:12])


@pytest.mark.parametrize("edit, names", [
    (lambda t: sub(t, "tie = 8", 'tie = "8"'), "tie"),
    (lambda t: sub(t, 'name = "macau"', 'name = ""'), "name"),
])
def test_a_payout_typed_as_text_and_an_empty_name_are_refused(edit, names, tmp_path, capsys):
    path = write(tmp_path / "bad.toml", edit(MACAU))
    err = refused(capsys, ["simulate", "--profile", path, "--seed", "1"], names)
    assert "bad.toml" in err


def test_a_second_crash_fault_is_refused_not_ignored(capsys, tmp_path):
    # the process dies at the first: a second would never happen (before, only the last was
    # kept, silently)
    err = refused(capsys, ["simulate", "--profile", "macau", "--seed", "1", "--journal",
                           str(tmp_path / "j.db"), "--fault", "crash@300", "--fault",
                           "crash@700"], "crash@700")
    assert "one crash@N" in err and not (tmp_path / "j.db").exists()
