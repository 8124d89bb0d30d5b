"""Exact Chemin de Fer odds: the coup enumerated once with its optional cells left open.

As in punto_banco.py, only card values decide a coup, so the deal P1 B1 P2 B2 [player third]
[banker third] is enumerated over values weighted by how many physical card sequences have them,
each hand's first two cards as unordered pairs. Where the rules (controller.games.chemin_de_fer)
give a choice — the player on 5, the banker in his optional cells — both branches are followed
and each final is recorded under the choices that led to it (banking.Coup), so every strategy's
figures come from the same enumeration. A final is (player total, banker total, player's cards,
banker's cards); weights are normalised to six-card sequences, so they are exact.

With every option drawn the cells are Punto Banco's tableau, and so are the figures.
"""
from __future__ import annotations

from fractions import Fraction
from math import perm
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Mapping

from controller.games.chemin_de_fer import (
    BANKER_TABLEAU, DRAW, GAME, OPTION, banker_rule, player_rule)
from controller.odds.banking import Cell, Coup, Path, Strategy, choice_text
from controller.odds.punto_banco import first_four, rank_counts, value_counts

if TYPE_CHECKING:
    from controller.settings.profile import BetRule

#: a coup's final as the enumeration records it: (player total, banker total, player cards,
#: banker cards)
Final = tuple[int, int, int, int]

PLAYER, BANKER = "player", "banker"


def player_cell(total: int) -> str:
    return f"player_{total}"


def banker_cell(total: int, third: int | None) -> str:
    return f"banker_{total}_{'stood' if third is None else third}"


def cells() -> dict[str, Cell]:
    """The optional cells of the rules' tableau, the player's first."""
    out = {player_cell(t): Cell(player_cell(t), PLAYER, f"player on {t}")
           for t in range(8) if player_rule(t) == OPTION}
    for total, (stood, by_third) in BANKER_TABLEAU.items():
        if stood == OPTION:
            out[banker_cell(total, None)] = Cell(banker_cell(total, None), BANKER,
                                                 f"banker on {total}, player stood")
        for x, action in by_third.items():
            if action == OPTION:
                out[banker_cell(total, x)] = Cell(
                    banker_cell(total, x), BANKER,
                    f"banker on {total}, player's third card {x}")
    return out


def default_strategy() -> Strategy:
    """The rules' default decisions: draw in every optional cell (`default_decision`)."""
    return Strategy({c: Fraction(1) for c in cells()}, "draw on every option")


def coup(decks: int | None) -> Coup:
    """Every final of a coup off the top of a full shoe of `decks` decks (None: infinite)."""
    return composition_coup(rank_counts(decks), infinite=decks is None)


@lru_cache(maxsize=16)
def composition_coup(ranks: tuple[int, ...], infinite: bool = False) -> Coup:
    """Every final of a coup from a shoe holding `ranks[i]` cards of rank A..K (with
    `infinite`, relative frequencies of cards drawn with replacement)."""
    counts = value_counts(ranks)
    dep = 0 if infinite else 1
    n = sum(counts)
    decks = None if infinite else sum(ranks) // 52
    # a final that used u cards stands for this many six-card sequences
    scale = {u: perm(n - u, 6 - u) if dep else n ** (6 - u) for u in (4, 5, 6)}
    total = perm(n, 6) if dep else n ** 6
    # path → raw weights of u-card sequences, index (player cards - 2, banker cards - 2,
    # player total, banker total) flattened
    arrays: dict[Path, list[int]] = {}
    rem: list[int] = []              # the cards left, as first_four deals the first four

    def add(path: Path, index: int, w: int) -> None:
        arr = arrays.get(path)
        if arr is None:
            arr = arrays[path] = [0] * 400
        arr[index] += w

    def banker_turn(path: Path, pt: int, bt: int, third: int | None, w: int) -> None:
        block = 0 if third is None else 200
        for p2, draws in branches(path, banker_rule(bt, third), banker_cell(bt, third)):
            if draws:
                base = block + 100 + pt * 10
                for y in range(10):
                    if rem[y] > 0:
                        add(p2, base + (bt + y) % 10, w * rem[y])
            else:
                add(p2, block + pt * 10 + bt, w)

    for rem, pt, bt, w4 in first_four(counts, dep):
        if pt >= 8 or bt >= 8:
            add((), pt * 10 + bt, w4)
            continue
        for path, draws in branches((), player_rule(pt), player_cell(pt)):
            if not draws:
                banker_turn(path, pt, bt, None, w4)
                continue
            for x in range(10):
                wx = w4 * rem[x]
                if wx <= 0:
                    continue
                rem[x] -= dep
                banker_turn(path, (pt + x) % 10, bt, x, wx)
                rem[x] += dep
    records = {}
    for path, arr in arrays.items():
        finals = {}
        for i, w in enumerate(arr):
            if w:
                pc, bc = 2 + i // 200, 2 + i // 100 % 2
                finals[(i // 10 % 10, i % 10, pc, bc)] = w * scale[pc + bc]
        records[path] = finals
    return Coup(GAME, decks, cells(), records, total)


def branches(path: Path, rule: str, cell: str) -> tuple[tuple[Path, bool], ...]:
    """(path so far, draws?) for a mandatory cell, or both choices of an optional one."""
    if rule == OPTION:
        return (path + ((cell, True),), True), (path + ((cell, False),), False)
    return ((path, rule == DRAW),)


def winner(outcome: Any) -> str:
    pt, bt = outcome[0], outcome[1]
    return PLAYER if pt > bt else BANKER if bt > pt else "tie"


def net(paytable: Mapping[str, BetRule], bet: str, outcome: Any) -> Fraction:
    """Net per unit staked on `bet` (the bank's stake or the punters') at a final."""
    win = winner(outcome)
    if win == "tie":
        return Fraction(0)
    return paytable[bet].paid(GAME, bet) if win == bet else Fraction(-1)


def outcomes(finals: Mapping[Any, Fraction]) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """(the results, which sum to 1; other events) from final → probability."""
    results = {BANKER: Fraction(0), PLAYER: Fraction(0), "tie": Fraction(0)}
    events = {"natural": Fraction(0), "player_draws": Fraction(0),
              "banker_draws": Fraction(0)}
    for o, p in finals.items():
        results[winner(o)] += p
        if o[2] == o[3] == 2 and max(o[0], o[1]) >= 8:
            events["natural"] += p
        if o[2] == 3:
            events["player_draws"] += p
        if o[3] == 3:
            events["banker_draws"] += p
    return results, events


# ---- what the odds command needs of the game (controller.odds.banking_report) ---------------

BANK = BANKER


def presets() -> dict[str, Strategy]:
    every = cells()
    draw = default_strategy()
    return {"default": Strategy(draw.draw, "the rules' defaults: draw on every option"),
            "draw": draw,
            "stand": Strategy({c: Fraction(0) for c in every}, "stand on every option")}


def side_rule(side: str, text: str) -> None:
    """Chemin de Fer's sides have no rule of their own beyond their cells."""
    return None


def sides(paytable: Mapping[str, BetRule]) -> dict[str, tuple[str, ...]]:
    """Each side and the bet it holds: the bank's stake, and the punters'."""
    return {side: (side,) for side in (PLAYER, BANKER) if side in paytable}


def describe(strategy: Strategy, side: str | None = None) -> list[str]:
    """Each optional cell's choice in words (only `side`'s, if given)."""
    return [f"{cell.text}: {choice_text(strategy[name])}" for name, cell in cells().items()
            if side in (None, cell.side)]
