"""The continuous shuffler repeats itself when seeded (a simulation's seed, or its shoe file)
and draws from the operating system's CSPRNG when not (play)."""
import os
import random
import subprocess
import sys
from pathlib import Path

from controller.shoe.cards import ordered_shoe
from controller.cli import main
from simulators.csm import ContinuousShufflerModel

ROOT = Path(__file__).resolve().parents[1]


def test_two_runs_with_the_same_seed_are_byte_identical():
    """Separate processes, each with its own hash seed: nothing may depend on either."""
    outs = []
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        done = subprocess.run([sys.executable, "-m", "controller.cli", "simulate", "--profile",
                               "macau-csm", "--seed", "5", "--json"], cwd=ROOT, env=env,
                              capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    assert outs[0].count(b'"event":"cards_returned"') > 60


def test_a_shoe_file_deals_the_same_rounds_every_run_and_a_seed_changes_them(tmp_path, capsys):
    codes = [c.code for c in ordered_shoe(8)]
    random.Random(3).shuffle(codes)
    path = tmp_path / "machine.shoe"
    path.write_text("\n".join(codes) + "\n")

    def run(*more: str) -> str:
        assert main(["simulate", "--profile", "macau-csm", "--shoe-file", str(path), "--json",
                     *more]) == 0
        return "\n".join(line for line in capsys.readouterr().out.splitlines()
                         if '"event":"round_result"' in line)

    first = run()
    assert first and run() == first            # the file alone: its cards seed the machine
    other = run("--seed", "4")
    assert other != first                      # another seed puts the returned cards elsewhere
    assert other.splitlines()[0] == first.splitlines()[0]   # the file's first round is the same


def test_play_draws_from_the_csprng_and_a_seed_repeats():
    cards = [c.code for c in ordered_shoe(1)]
    live = ContinuousShufflerModel(cards)
    assert isinstance(live._rng, random.SystemRandom) and not live.seeded
    live.reseed(7)                               # no seed turns a live machine repeatable
    assert isinstance(live._rng, random.SystemRandom)

    def returns(seed):
        m = ContinuousShufflerModel(cards, seed=seed)
        dealt = [code for _ in range(6) for code in m.pull()]
        m.return_cards(dealt)
        return m.undealt()
    assert returns(9) == returns(9) and returns(9) != returns(10)
