"""Time `tablectl odds` for Punto Banco from 1 to 12 decks and an infinite deck.

    python bench/odds.py [--profile live-commission] [--repeat 3]

Each figure is the best of --repeat cold computations (the enumeration caches are cleared
before each), in process; the last column times the whole command in a subprocess, start-up of
Python included, once per deck count.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.odds import compute_odds, punto_banco  # noqa: E402
from controller.profile import load_profile  # noqa: E402


def cold(profile, decks) -> float:
    punto_banco.composition_odds.cache_clear()
    t = time.perf_counter()
    compute_odds(profile, decks)
    return time.perf_counter() - t


def command(profile: str, decks: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "controller.cli", "odds", "--profile", profile,
                    "--decks", decks], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="live-commission")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    profile = load_profile(args.profile)
    print(f"odds of {profile.name} ({profile.game}); best of {args.repeat}")
    print(f"{'decks':>6}  {'compute s':>10}  {'command s':>10}  {'P(banker)':>12}")
    for decks in [*range(1, 13), None]:
        best = min(cold(profile, decks) for _ in range(args.repeat))
        whole = command(args.profile, "inf" if decks is None else str(decks))
        p = float(compute_odds(profile, decks).outcomes["banker"])
        label = "inf" if decks is None else str(decks)
        print(f"{label:>6}  {best:10.4f}  {whole:10.3f}  {p:12.8f}")


if __name__ == "__main__":
    main()
