"""The command line: the simulate contract, golden shoes end to end, and bad input → exit 2."""
import json

import pytest

from controller.cli import main
from tests.eventcheck import check_events
from tests.golden import GOLDEN, compare, expected, golden_names, needs_golden, profile_of


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def events(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@needs_golden
@pytest.mark.parametrize("name", [n for n in golden_names() if not n.startswith("andar")])
def test_golden_shoes_through_simulate(capsys, name):
    code, out, err = run(capsys, "simulate", "--profile", profile_of(name), "--shoe-file",
                         str(GOLDEN / f"{name}.shoe"), "--json")
    assert code == 0, err
    compare(expected(name), events(out))
    check_events(events(out))        # and every event of the run is as the contract says


def test_contract_fields_and_determinism(capsys):
    code, first, _ = run(capsys, "simulate", "--profile", "live-commission", "--seed", "7", "--json")
    code2, second, _ = run(capsys, "simulate", "--profile", "live-commission", "--seed", "7",
                           "--json")
    assert code == code2 == 0
    a, b = events(first), events(second)
    strip = lambda evs: [{k: v for k, v in e.items() if k != "profile_sha256"} for e in evs]
    assert strip(a) == strip(b)
    start = next(e for e in a if e["event"] == "shoe_started")
    assert (start["shoe"], start["decks"], start["cards"], start["cut_card_position"]) == \
        (1, 8, 416, 402)
    burn = next(e for e in a if e["event"] == "burn")
    assert len(burn["cards"]) >= 2
    rnd = next(e for e in a if e["event"] == "round_result")
    for key in ("shoe", "round", "game", "player", "banker", "player_total", "banker_total",
                "winner", "natural", "bets"):
        assert key in rnd
    assert set(rnd["bets"]) == {"player", "banker", "tie", "player_pair", "banker_pair", "big",
                                "small"}
    end = a[-1] if a[-1]["event"] == "shoe_ended" else next(
        e for e in a if e["event"] == "shoe_ended")
    assert end["reason"] == "cut_card"
    assert end["rounds"] == sum(1 for e in a if e["event"] == "round_result")


def test_readable_lines(capsys):
    code, out, _ = run(capsys, "simulate", "--profile", "classic", "--seed", "2")
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("#")]
    assert lines and all(" PLAYER " in line and " BANKER " in line for line in lines)
    assert " ".join(lines[0].split()[-2:]) in ("PLAYER WINS", "BANKER WINS") or \
        lines[0].split()[-1] == "TIE"


@pytest.mark.parametrize("content,message", [
    ("AS\nXZ\n", ":2: 'XZ' is not a card code (rank A23456789TJQK + suit SHDC)"),
    ("AS\nCUT\nKD\n", "CUT after card 1 leaves 1 cards behind it; the profile needs at least "
                      "12 ([cut_card] min_from_end)"),
    ("AS\n" * 9, "appears 9 times, more than the 8 deck(s)"),
    ("# only a comment\n", "no cards in the shoe file"),
    ("AS\nCUT\nKD\nCUT\n", "a second CUT line"),
])
def test_bad_shoe_files_exit_2_with_one_line(tmp_path, capsys, content, message):
    f = tmp_path / "shoe.txt"
    f.write_text(content)
    code, out, err = run(capsys, "simulate", "--profile", "macau", "--shoe-file", str(f), "--json")
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv,message", [
    (["simulate", "--profile", "macau", "--shoe-file", "/no/such.shoe"], "no such shoe file"),
    (["simulate", "--profile", "nope", "--seed", "1"], "no profile of that name"),
    (["simulate", "--profile", "macau", "--seed", "1", "--fault", "boom@1"], "is not a fault"),
    (["simulate", "--profile", "macau", "--seed", "1", "--demo-rounds", "4"], "at most 3"),
    # (a port that is missing at start is waited for: tests/test_table_pc.py)
    (["run", "--shoe-url", "usb://1234:5678", "--no-control"], "a shoe is a serial device"),
    (["run", "--shoe-url", "foo://bar", "--no-control"], "unknown scheme foo://"),
    (["odds", "--profile", "macau", "--decks", "13"], "13"),
])
def test_bad_input_exits_2(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.setenv("TABLECTL_STORAGE_JOURNAL", str(tmp_path / "j.db"))
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "j.db").exists()      # nothing half-run


def test_bad_config_key(tmp_path, capsys):
    cfg = tmp_path / "table.toml"
    cfg.write_text("[shoe]\nurll = \"/dev/ttyUSB0\"\n")
    code, _, err = run(capsys, "run", "--config", str(cfg), "--no-control")
    assert code == 2 and "shoe.urll: unknown key" in err


@needs_golden
def test_simulate_reads_a_shoe_in_another_process(tmp_path):
    """--shoe-url: the shoe is a separate process on a pty (as a hardware rig has it)."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    cli = [sys.executable, "-m", "controller.cli"]
    dev = subprocess.Popen(cli + ["devices", "--blind", "--shoe-file",
                                  str(GOLDEN / "classic-1.shoe"), "--profile", "classic",
                                  "--shoe-protocol", "framed", "--pace-ms", "15"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           env=env, cwd=root)
    try:
        url = dev.stdout.readline().split()[1]
        done = subprocess.run(cli + ["simulate", "--profile", "classic", "--shoe-url", url,
                                     "--shoe-protocol", "framed", "--json"],
                              capture_output=True, text=True, env=env, cwd=root, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        out = events(done.stdout)
        compare(expected("classic-1"), out)
        # the framed shoe says itself when cards come out together: no timing guesses
        assert not [e for e in out if e["event"] == "irregularity"]
    finally:
        dev.send_signal(signal.SIGTERM)
        dev.wait(timeout=10)


def test_a_list_in_the_environment_is_written_either_way_and_blamed_on_the_variable(
        monkeypatch, tmp_path, capsys):
    from controller.settings.config import load_config
    monkeypatch.setenv("TABLECTL_SIMULATOR_FAULTS", '["misread@30", "drop@90"]')
    assert load_config("config/table.toml").simulator.faults == ("misread@30", "drop@90")
    monkeypatch.setenv("TABLECTL_SIMULATOR_FAULTS", "misread@30, drop@90")
    assert load_config("config/table.toml").simulator.faults == ("misread@30", "drop@90")
    for value, said in (('["boom@30"]', "environment TABLECTL_SIMULATOR_FAULTS: 'boom@30' is "
                         "not a fault"),
                        ("[misread@30", "environment TABLECTL_SIMULATOR_FAULTS='[misread@30': "
                         "not a list of texts; write TABLECTL_SIMULATOR_FAULTS=misread@40,"
                         "drop@90 or TABLECTL_SIMULATOR_FAULTS='[\"misread@40\"]'")):
        monkeypatch.setenv("TABLECTL_SIMULATOR_FAULTS", value)
        capsys.readouterr()
        assert main(["run", "--no-control", "--journal", str(tmp_path / "j.db")]) == 2
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1, err
        assert "config/table.toml" not in err        # the file did not say it
    assert not (tmp_path / "j.db").exists()


def _subcommands(parser):
    import argparse
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


@pytest.mark.parametrize("argv, command", [
    (["simulate", "--profile", "macau"], "simulate"),
    (["--log-level", "INFO", "run"], "run"),
    (["--log-file=x.log", "users", "list"], "users"),
    (["--log-l", "DEBUG", "verify-journal"], "verify-journal"),
    (["--help"], None), (["-h", "run"], None), (["--version"], None), ([], None),
    (["--log-file"], None), (["--log", "x", "run"], None),
])
def test_the_command_is_read_past_the_global_options_or_left_to_the_full_parser(argv, command):
    from controller.cli import command_named
    assert command_named(argv) == command


def test_a_command_alone_parses_and_helps_as_it_does_among_all_the_others():
    """tablectl loads only the command it runs: that command's parser is the same one."""
    from controller.cli import build_parser, command_modules
    every = _subcommands(build_parser())
    assert sorted(every) == sorted(command_modules())
    for name in command_modules():
        alone = _subcommands(build_parser(name))
        assert list(alone) == [name]
        assert alone[name].format_help() == every[name].format_help()
    assert build_parser("no-such-command").format_help() == build_parser().format_help()
