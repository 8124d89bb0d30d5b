"""`--strategy` text → a banking.Strategy for a banking game.

A strategy is written as items separated by commas, later items overriding earlier ones:

- `default` (what the table's rules decide when nobody chooses), `draw` (draw in every optional
  cell of the tableau), `stand` (stand in every one);
- `CELL=VALUE`: one cell (`player_5`, `banker_3_9`, `right_5`, `bank_4_stood_7`, …), VALUE
  `draw`, `stand` or the probability of drawing, `0.25` or `9/11`;
- `SIDE=best`: that side's best response to the rest (applied last, in the order given);
- Baccarat en Banque's bank as a whole: `bank=N` (draws on 0 to N whatever the hands show),
  `bank=tableau` or `bank=tableau-right` / `bank=tableau-left` (the tableau against that hand,
  against the other when that one is a natural).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Mapping

from controller.errors import InputError
from controller.odds.banking import Strategy

HELP = ("items separated by commas: default | draw | stand, CELL=draw|stand|P (P the "
        "probability of drawing, e.g. 0.25 or 9/11), SIDE=best; Baccarat en Banque also "
        "bank=N (draws on 0 to N) or bank=tableau[-right|-left]")


@dataclass(frozen=True)
class Game:
    """What the parser needs of a banking game."""
    name: str
    cells: Mapping[str, object]                     # cell name → banking.Cell
    presets: Mapping[str, Strategy]                 # "default", "draw", "stand"
    sides: tuple[str, ...]
    #: a whole-side rule: (side, text) → {cell: probability}, or None if not a rule
    side_rule: Callable[[str, str], Mapping[str, Fraction] | None] = lambda side, text: None


@dataclass(frozen=True)
class Parsed:
    strategy: Strategy
    best: tuple[str, ...]           # sides whose best response replaces their cells, in order


def probability(item: str, value: str) -> Fraction:
    word = value.strip().lower()
    if word in ("draw", "stand"):
        return Fraction(word == "draw")
    try:
        p = Fraction(word)
    except (ValueError, ZeroDivisionError):
        p = None
    if p is None or not 0 <= p <= 1:
        raise InputError(f"--strategy {item!r}: write draw, stand or a probability of drawing "
                         f"from 0 to 1 (e.g. 0.25 or 9/11)")
    return p


def parse(text: str | None, game: Game) -> Parsed:
    """The strategy `text` states for `game` (None or empty: the rules' defaults)."""
    strategy = game.presets["default"]
    best: list[str] = []
    words: list[str] = []
    for item in (text or "default").split(","):
        item = item.strip()
        if not item:
            raise InputError(f"--strategy {text!r}: an empty item; {HELP}")
        if "=" not in item:
            if item.lower() not in game.presets:
                raise InputError(f"--strategy {item!r}: not a strategy of {game.name}; "
                                 f"{HELP}")
            strategy = game.presets[item.lower()]
            words.append(strategy.text)
            continue
        key, _, value = (part.strip() for part in item.partition("="))
        key = key.lower()
        if key in game.sides and value.lower() == "best":
            best.append(key)
            words.append(f"{key}: best response")
            continue
        if key in game.cells:
            strategy = strategy.with_cells({key: probability(item, value)}, "")
            words.append(item)
            continue
        if key in game.sides:
            cells = game.side_rule(key, value.strip().lower())
            if cells is None:
                raise InputError(f"--strategy {item!r}: {key} takes best"
                                 + (", N (draws on 0 to N) or tableau[-right|-left]"
                                    if key == "bank" and game.name == "baccarat_banque"
                                    else " or its cells one by one"))
            strategy = strategy.with_cells(cells, "")
            words.append(item)
            continue
        some = ", ".join(list(game.cells)[:4])
        raise InputError(f"--strategy {item!r}: {game.name} has no cell or side {key!r} "
                         f"(sides: {', '.join(game.sides)}; cells such as {some})")
    return Parsed(Strategy(strategy.draw, "; ".join(words)), tuple(best))
