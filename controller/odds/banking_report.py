"""Exact odds of Chemin de Fer and Baccarat en Banque for a stated strategy, with each side's
best response to it and the equilibrium, as a table (text) or a JSON document.

The figures are per coup, per unit staked: the bank's stake and the punters' are the same
amount (the bank covers what is staked against it; in Banque the bank stakes equally against
each hand). The commission is the paytable's (the bank's win pays 0.95).
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from fractions import Fraction
from types import ModuleType
from typing import TYPE_CHECKING, Any, Mapping

from controller.errors import InputError
from controller.odds import BetOdds
from controller.odds import baccarat_banque, chemin_de_fer, strategy as strategy_text
from controller.odds.banking import Equilibrium, Solver, Strategy
from controller.odds.report import decks_text, exact_text, payout_text, table

if TYPE_CHECKING:
    from controller.settings.profile import Profile

GAMES: dict[str, ModuleType] = {"chemin_de_fer": chemin_de_fer,
                                "baccarat_banque": baccarat_banque}

METHOD = ("Method: the coup is enumerated once over card values with every optional cell left "
          "open, so any strategy's figures are exact fractions. Each side's best response "
          "draws where drawing gains and stands where it loses, cell by cell. The equilibrium "
          "is sought among: every punter pure with the bank's best response; one punter "
          "mixed, at the points where one of the bank's cells changes from standing to "
          "drawing (the bank then mixes there so that the punter is indifferent); and, in "
          "Banque, both hands mixing alike, between or at those points. Every candidate is "
          "checked exactly: no side gains by changing any of its cells.")


@dataclass(frozen=True)
class BestResponse:
    side: str
    strategy: Strategy
    before: Fraction              # the side's mean under the stated strategy
    after: Fraction               # under its best response
    changed: tuple[str, ...]      # cells whose choice changes


@dataclass(frozen=True)
class BankingOdds:
    profile: str
    game: str
    decks: int | None
    strategy: Strategy
    results: Mapping[str, Fraction]          # the outcomes of a coup; they sum to 1
    events: Mapping[str, Fraction]
    bets: Mapping[str, BetOdds]
    best: tuple[BestResponse, ...]
    equilibria: tuple[Equilibrium, ...]
    equilibrium_bets: tuple[Mapping[str, BetOdds], ...]
    describe: Any                            # (Strategy, side=None) → lines of text


def compute(profile: Profile, decks: int | None, spec: str | None) -> BankingOdds:
    """The figures of `profile`'s game at `decks` for the strategy `spec` (--strategy)."""
    game = GAMES.get(profile.game)
    if game is None:
        raise InputError(f"strategies apply to chemin_de_fer and baccarat_banque, not "
                         f"{profile.game}")
    solver = _solver(game, profile, decks)
    parsed = strategy_text.parse(spec, strategy_text.Game(
        profile.game, game.cells(), game.presets(), tuple(solver.sides), game.side_rule))
    stated = parsed.strategy
    for side in parsed.best:
        reply, _ = solver.best_response(stated, side)
        stated = Strategy(reply.draw, stated.text)
    best = []
    for side in solver.sides:
        reply, _ = solver.best_response(stated, side)
        changed = tuple(c for c in solver.owned(side) if reply[c] != stated[c])
        best.append(BestResponse(side, reply, solver.mean(stated, side),
                                 solver.mean(reply, side), changed))
    equilibria = tuple(solver.equilibria(game.default_strategy()))
    results, events, bets = _figures(solver, game, profile, stated)
    return BankingOdds(profile.name, profile.game, decks, stated, results, events, bets,
                       tuple(best), equilibria,
                       tuple(_figures(solver, game, profile, e.strategy)[2] for e in equilibria),
                       game.describe)


#: (game, decks, paytable) → its Solver, so that one process enumerates a coup once
_SOLVERS: dict[tuple, Solver] = {}


def _solver(game: ModuleType, profile: Profile, decks: int | None) -> Solver:
    paytable = profile.paytable
    key = (profile.game, decks, tuple((bet, rule.pays, tuple(sorted(rule.options.items())))
                                      for bet, rule in paytable.items()))
    solver = _SOLVERS.get(key)
    if solver is None:
        solver = _SOLVERS[key] = Solver(game.coup(decks),
                                        lambda bet, o: game.net(paytable, bet, o),
                                        tuple(paytable), game.sides(paytable), game.BANK)
    return solver


def _figures(solver: Solver, game: ModuleType, profile: Profile, s: Strategy
             ) -> tuple[dict[str, Fraction], dict[str, Fraction], dict[str, BetOdds]]:
    finals = solver.outcomes(s)
    results, events = game.outcomes(finals)
    bets = {bet: BetOdds(bet, rule, solver.bet_distribution(s, bet, finals))
            for bet, rule in profile.paytable.items()}
    return results, events, bets


# ---- text ------------------------------------------------------------------------------------

def _pct(x: Fraction) -> str:
    return f"{float(x) * 100:+.4f} %"


def _bet_rows(bets: Mapping[str, BetOdds]) -> list[list[str]]:
    return [[bet, payout_text(o.rule), f"{float(o.p_win):.8f}", f"{float(o.p_push):.8f}",
             f"{float(o.p_loss):.8f}", f"{float(o.rtp) * 100:.4f}",
             f"{float(o.house_edge) * 100:.4f}", exact_text(o.rtp)] for bet, o in bets.items()]


_BET_HEAD = ["Bet", "Payout", "P(win)", "P(push)", "P(loss)", "RTP %", "House edge %",
             "RTP (exact)"]


def to_text(r: BankingOdds) -> str:
    lines = [f"Exact odds: profile {r.profile} ({r.game}), {decks_text(r.decks)}, "
             f"{'drawn with replacement' if r.decks is None else 'off the top of a full shoe'}",
             "Computed by complete enumeration in exact rational arithmetic; per coup, per "
             "unit staked; RTP includes the stake returned, house edge = 1 - RTP.", "",
             f"Strategy ({r.strategy.text}):"]
    lines += ["  " + line for line in r.describe(r.strategy)]
    lines.append("")
    rows = [[name, f"{float(p):.8f}", exact_text(p)] for name, p in r.results.items()]
    total = sum(r.results.values(), Fraction(0))
    rows.append(["(all outcomes)", f"{float(total):.8f}", exact_text(total)])
    lines += table(["Outcome", "Probability", "Exact"], rows, {1})
    lines.append("")
    rows = [[name, f"{float(p):.8f}", exact_text(p)] for name, p in r.events.items()]
    lines += table(["Event", "Probability", "Exact"], rows, {1})
    lines.append("")
    lines += table(_BET_HEAD, _bet_rows(r.bets), {2, 3, 4, 5, 6})
    lines += ["", "Best response of each side to the others playing this strategy:"]
    for b in r.best:
        if not b.changed:
            lines.append(f"  {b.side}: already its best response (mean {_pct(b.before)} per "
                         f"unit)")
            continue
        lines.append(f"  {b.side}: change {len(b.changed)} cell(s), mean {_pct(b.before)} → "
                     f"{_pct(b.after)} per unit:")
        lines += ["    " + line for line in r.describe(b.strategy, b.side)]
    lines.append("")
    if not r.equilibria:
        lines.append("Equilibrium: none found with an exact rational form by the search "
                     "below.")
    for e, bets in zip(r.equilibria, r.equilibrium_bets):
        kind = "pure" if e.pure else "mixed"
        lines.append(f"Equilibrium ({kind}): neither side gains by changing its choices; "
                     f"the means per unit are "
                     + ", ".join(f"{side} {_pct(m)}" for side, m in e.means.items()) + ".")
        lines += ["  " + line for line in r.describe(e.strategy)]
        lines += ["  " + line for line in table(_BET_HEAD, _bet_rows(bets), {2, 3, 4, 5, 6})]
    lines += ["", *textwrap.wrap(METHOD, width=96)]
    return "\n".join(lines)


# ---- JSON --------------------------------------------------------------------------------

def _p(x: Fraction) -> dict[str, Any]:
    return {"p": float(x), "fraction": exact_text(x)}


def _strategy_json(s: Strategy) -> dict[str, Any]:
    return {"text": s.text, "cells": {c: exact_text(p) for c, p in s.draw.items()}}


def _bets_json(bets: Mapping[str, BetOdds]) -> dict[str, Any]:
    return {bet: {"payout": payout_text(o.rule), "p_win": float(o.p_win),
                  "p_push": float(o.p_push), "p_loss": float(o.p_loss), "rtp": float(o.rtp),
                  "house_edge": float(o.house_edge), "rtp_fraction": exact_text(o.rtp),
                  "p_win_fraction": exact_text(o.p_win)} for bet, o in bets.items()}


def to_json(r: BankingOdds) -> dict[str, Any]:
    return {
        "profile": r.profile, "game": r.game, "decks": "inf" if r.decks is None else r.decks,
        "strategy": _strategy_json(r.strategy),
        "outcomes": {name: _p(p) for name, p in r.results.items()},
        "events": {name: _p(p) for name, p in r.events.items()},
        "bets": _bets_json(r.bets),
        "best_response": {b.side: {"strategy": _strategy_json(b.strategy),
                                   "changed": list(b.changed), "mean_before": float(b.before),
                                   "mean": float(b.after), "mean_fraction": exact_text(b.after)}
                          for b in r.best},
        "equilibrium": [{"pure": e.pure, "strategy": _strategy_json(e.strategy),
                         "means": {side: _p(m) for side, m in e.means.items()},
                         "indifferent": list(e.indifferent), "bets": _bets_json(bets)}
                        for e, bets in zip(r.equilibria, r.equilibrium_bets)],
        "method": METHOD,
    }
