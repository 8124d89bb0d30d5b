"""Time `tablectl odds`: Punto Banco from 1 to 12 decks and an infinite deck, and the banking
games (Chemin de Fer, Baccarat en Banque) with their strategies, best responses and equilibrium.

    python bench/odds.py [--profile live-commission] [--repeat 3] [--banking-decks 6,8,inf] [--json]

Each figure is the best of --repeat cold computations in process (the enumeration caches are
cleared before each), with the range over those runs; the command column times the whole
`tablectl odds` in a subprocess, start-up of Python included, once. For the banking games the
enumeration of every coup (all optional cells open), the strategy's figures, the best responses
and the equilibrium search are timed apart, and Punto Banco's enumeration at the same decks in
the same run gives the ratio.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.odds import banking_report, compute_odds, parse_decks, punto_banco  # noqa: E402
from controller.settings.profile import load_profile  # noqa: E402

BANKING = {"chemin-de-fer": banking_report.GAMES["chemin_de_fer"],
           "baccarat-banque": banking_report.GAMES["baccarat_banque"]}


def timed(f):
    t = time.perf_counter()
    value = f()
    return time.perf_counter() - t, value


def cold_pb(profile, decks) -> float:
    punto_banco.composition_odds.cache_clear()
    return timed(lambda: compute_odds(profile, decks))[0]


def cold_banking(name: str, profile, decks) -> dict[str, float]:
    """One cold computation, by phase."""
    game = BANKING[name]
    game.composition_coup.cache_clear()
    banking_report._SOLVERS.clear()
    out = {}
    out["enumerate_s"], _ = timed(lambda: game.coup(decks))
    out["solver_s"], solver = timed(lambda: banking_report._solver(game, profile, decks))
    default = game.default_strategy()
    out["figures_s"], _ = timed(lambda: banking_report._figures(solver, game, profile, default))
    out["best_responses_s"], _ = timed(lambda: [solver.best_response(default, side)
                                               for side in solver.sides])
    out["equilibrium_s"], found = timed(lambda: solver.equilibria(default))
    out["total_s"] = sum(out.values())
    out["equilibrium_pure"] = bool(found) and found[0].pure
    return out


def command(profile: str, decks: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "controller.cli", "odds", "--profile", profile,
                    "--decks", decks], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="live-commission")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--banking-decks", default="6,8,inf",
                    help="deck counts for the banking games, comma-separated")
    ap.add_argument("--json", action="store_true", help="one JSON line")
    args = ap.parse_args()
    profile = load_profile(args.profile)
    pb_rows = []
    for decks in [*range(1, 13), None]:
        label = "inf" if decks is None else str(decks)
        best = [cold_pb(profile, decks) for _ in range(args.repeat)]
        pb_rows.append({"decks": label, "best_s": min(best), "worst_s": max(best),
                        "command_s": command(args.profile, label),
                        "p_banker": float(compute_odds(profile, decks).outcomes["banker"])})
    banking_rows = []
    for name in BANKING:
        bp = load_profile(name)
        for text in args.banking_decks.split(","):
            decks = parse_decks(text)
            phases = [cold_banking(name, bp, decks) for _ in range(args.repeat)]
            pb_time = min(cold_pb(profile, decks) for _ in range(args.repeat))
            row = {"profile": name, "decks": text.strip(),
                   "equilibrium_pure": phases[0]["equilibrium_pure"],
                   "command_s": command(name, text.strip()),
                   "punto_banco_enumerate_s": pb_time}
            for key in ("enumerate_s", "solver_s", "figures_s", "best_responses_s",
                        "equilibrium_s", "total_s"):
                values = [p[key] for p in phases]
                row[key] = min(values)
                row[key.replace("_s", "_worst_s")] = max(values)
            row["enumerate_vs_punto_banco"] = row["enumerate_s"] / pb_time
            banking_rows.append(row)
    if args.json:
        print(json.dumps({"repeat": args.repeat, "punto_banco": pb_rows,
                          "banking": banking_rows}))
        return
    print(f"odds of {profile.name} ({profile.game}); best of {args.repeat} (worst)")
    print(f"{'decks':>6}  {'compute s':>18}  {'command s':>10}  {'P(banker)':>12}")
    for r in pb_rows:
        print(f"{r['decks']:>6}  {r['best_s']:8.4f} ({r['worst_s']:7.4f})  "
              f"{r['command_s']:10.3f}  {r['p_banker']:12.8f}")
    print()
    print(f"banking games, best of {args.repeat} (worst), seconds")
    print(f"{'profile':>16} {'decks':>5} {'enumerate':>16} {'x PB':>6} {'figures':>7} "
          f"{'best resp.':>10} {'equilibrium':>16} {'total':>16} {'command':>8}  kind")
    for r in banking_rows:
        print(f"{r['profile']:>16} {r['decks']:>5} {r['enumerate_s']:7.3f} "
              f"({r['enumerate_worst_s']:6.3f}) {r['enumerate_vs_punto_banco']:6.0f} "
              f"{r['figures_s']:7.3f} {r['best_responses_s']:10.3f} "
              f"{r['equilibrium_s']:7.3f} ({r['equilibrium_worst_s']:6.3f}) "
              f"{r['total_s']:7.3f} ({r['total_worst_s']:6.3f}) {r['command_s']:8.2f}  "
              f"{'pure' if r['equilibrium_pure'] else 'mixed'}")


if __name__ == "__main__":
    main()
