"""The scoreboard's roads, updated one round at a time (pure: no I/O, no clock).

Punto Banco (and the banking games, which use its roads):

- **bead plate**: every round, ties included, down columns of 6 cells, left to right;
- **big road**: Banker and Player wins only. A new column when the winner changes; a tie adds to
  the tie count of the entry before it; ties before the first win go to the first entry (and are
  counted as `leading_ties`). A column that reaches row 6 or an occupied cell turns right and
  stays on that row for the rest of the streak (dragon tail); a new column starts at row 0 one
  grid column right of where the previous column began (further right if a tail holds that cell);
- **big eye boy, small road, cockroach pig** (k = 1, 2, 3): for each new big-road entry in logical
  column n at depth m (1-based), nothing before column k+1 depth 2 (or column k+2 depth 1); at
  m = 1, red when columns n−1 and n−k−1 have the same length, else blue; at m ≥ 2, with p the
  length of column n−k, red if m ≤ p, blue if m = p+1, red if m > p+1. Lengths are logical
  (dragon-tail cells count in their own column). Laid out like the big road.

Every mark depends only on finished columns and the current depth, so each round costs a few
dictionary operations whatever the shoe's length: nothing is ever recomputed from the start.
Coordinates are 0-based with row 0 at the top; `col`/`row` are where a cell is drawn,
`lcol`/`lrow` its logical column and depth. Andar Bahar keeps its own bead plate and counts.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

ROWS = 6
BANKER, PLAYER, TIE = "banker", "player", "tie"
ANDAR, BAHAR = "andar", "bahar"
RED, BLUE = "red", "blue"
#: the derived roads: JSON key and k (how many columns back each compares)
DERIVED: tuple[tuple[str, int], ...] = (("big_eye_boy", 1), ("small_road", 2),
                                        ("cockroach_pig", 3))
#: Andar Bahar deals a fresh deck every round: its plate keeps the last 10 full columns
ANDAR_BAHAR_COLUMNS = 10


class Grid:
    """Logical columns of equal values placed on a 6-row grid, with dragon tails."""

    __slots__ = ("taken", "lengths", "values", "cells", "_start", "_col", "_row", "_tail")

    def __init__(self) -> None:
        self.taken: set[int] = set()          # col * 8 + row of every drawn cell
        self.lengths: list[int] = []          # logical column lengths
        self.values: list[str] = []           # each logical column's value
        self.cells: list[tuple[int, int, int, int, str]] = []   # col, row, lcol, lrow, value
        self._start = self._col = self._row = 0
        self._tail = False

    def add(self, value: str) -> tuple[int, int, int, int, str]:
        taken = self.taken
        if not self.values or value != self.values[-1]:
            col = self._start + 1 if self.values else 0
            while col * 8 in taken:
                col += 1
            self._start, row, self._tail = col, 0, False
            self.lengths.append(1)
            self.values.append(value)
        else:
            col, row = self._col, self._row
            if not self._tail and row + 1 < ROWS and col * 8 + row + 1 not in taken:
                row += 1
            else:
                self._tail = True
                col += 1
                while col * 8 + row in taken:
                    col += 1
            self.lengths[-1] += 1
        self._col, self._row = col, row
        taken.add(col * 8 + row)
        cell = (col, row, len(self.lengths) - 1, self.lengths[-1] - 1, value)
        self.cells.append(cell)
        return cell

    def columns(self) -> list[list[str]]:
        return [[v] * n for v, n in zip(self.values, self.lengths)]


def derived_colour(lengths: list[int], n: int, m: int, k: int) -> str | None:
    """The colour road k adds for a big-road entry in column n at depth m (both 1-based),
    given the big road's column lengths (`lengths[n-1]` is column n); None: too early."""
    if n < k + 1 or (n == k + 1 and m < 2):
        return None
    if m == 1:
        return RED if lengths[n - 2] == lengths[n - k - 2] else BLUE
    p = lengths[n - k - 1]
    return BLUE if m == p + 1 else RED


class BigRoadEntry:
    __slots__ = ("cell", "ties", "player_pair", "banker_pair", "natural", "round")

    def __init__(self, cell: tuple, ties: int, player_pair: bool, banker_pair: bool,
                 natural: bool, round_no: Any):
        self.cell, self.ties = cell, ties
        self.player_pair, self.banker_pair, self.natural, self.round = \
            player_pair, banker_pair, natural, round_no


class Roads:
    """The five roads, the predictions and the counts of one Punto Banco shoe."""

    game = "punto_banco"

    def __init__(self) -> None:
        self.bead: list[tuple[str, Any, bool, bool, bool]] = []   # winner, round, pp, bp, nat
        self.big = Grid()
        self.entries: list[BigRoadEntry] = []
        self.leading_ties = 0
        self.derived = {name: Grid() for name, _ in DERIVED}
        self.counts = {BANKER: 0, PLAYER: 0, TIE: 0, "player_pair": 0, "banker_pair": 0,
                       "natural": 0, "rounds": 0}

    def add(self, winner: str, *, player_pair: bool = False, banker_pair: bool = False,
            natural: bool = False, round_no: Any = None) -> None:
        """One round's result (`winner` banker, player or tie)."""
        if winner not in (BANKER, PLAYER, TIE):
            raise ValueError(f"a round's winner is banker, player or tie, not {winner!r}")
        counts = self.counts
        counts[winner] += 1
        counts["rounds"] += 1
        counts["player_pair"] += player_pair
        counts["banker_pair"] += banker_pair
        counts["natural"] += natural
        self.bead.append((winner, round_no, player_pair, banker_pair, natural))
        if winner == TIE:
            if self.entries:
                self.entries[-1].ties += 1
            else:
                self.leading_ties += 1
            return
        cell = self.big.add(winner)
        ties = self.leading_ties if not self.entries else 0
        self.entries.append(BigRoadEntry(cell, ties, player_pair, banker_pair, natural,
                                         round_no))
        lengths = self.big.lengths
        n, m = len(lengths), lengths[-1]
        for name, k in DERIVED:
            colour = derived_colour(lengths, n, m, k)
            if colour is not None:
                self.derived[name].add(colour)

    def predict(self) -> dict[str, dict[str, str | None]]:
        """The colour each derived road would add if the next round were Banker, or Player."""
        lengths, values = self.big.lengths, self.big.values
        out: dict[str, dict[str, str | None]] = {}
        for winner in (BANKER, PLAYER):
            if not values:
                n = m = 1
            elif values[-1] == winner:
                n, m = len(lengths), lengths[-1] + 1
            else:
                n, m = len(lengths) + 1, 1
            out[winner] = {name: derived_colour(lengths, n, m, k) for name, k in DERIVED}
        return out

    def to_json(self, shoe: Any = None) -> dict[str, Any]:
        """The roads as `tablectl roads --json` and `/api/roads` give them."""
        bead = [{"col": i // ROWS, "row": i % ROWS, "winner": w, "round": r,
                 "player_pair": pp, "banker_pair": bp, "natural": nat}
                for i, (w, r, pp, bp, nat) in enumerate(self.bead)]
        entries = [{"col": e.cell[0], "row": e.cell[1], "lcol": e.cell[2], "lrow": e.cell[3],
                    "winner": e.cell[4], "ties": e.ties, "player_pair": e.player_pair,
                    "banker_pair": e.banker_pair, "natural": e.natural, "round": e.round}
                   for e in self.entries]
        out: dict[str, Any] = {
            "shoe": shoe, "game": self.game, "bead_plate": bead,
            "big_road": {"entries": entries, "columns": self.big.columns(),
                         "leading_ties": self.leading_ties}}
        for name, _ in DERIVED:
            grid = self.derived[name]
            out[name] = {"entries": [{"col": c, "row": r, "lcol": lc, "lrow": lr, "colour": v}
                                     for c, r, lc, lr, v in grid.cells],
                         "columns": grid.columns()}
        out["predict"] = self.predict()
        out["counts"] = dict(self.counts)
        return out


class AndarBaharRoads:
    """Andar Bahar's bead plate (Andar/Bahar) and counts. Every round is dealt from its own
    deck, so the plate runs across decks and keeps the last `ANDAR_BAHAR_COLUMNS` full
    columns: when a new column would pass them, the oldest column goes (the rest keep their
    rows); the counts are those of the rounds on the plate."""

    game = "andar_bahar"

    def __init__(self, columns: int = ANDAR_BAHAR_COLUMNS) -> None:
        self.keep = columns * ROWS
        self.bead: list[tuple[str, Any]] = []
        self.counts = {ANDAR: 0, BAHAR: 0, "rounds": 0}

    def add(self, winner: str, *, round_no: Any = None) -> None:
        if winner not in (ANDAR, BAHAR):
            raise ValueError(f"an Andar Bahar round is won by andar or bahar, not {winner!r}")
        if len(self.bead) >= self.keep and len(self.bead) % ROWS == 0:
            for old, _ in self.bead[:ROWS]:
                self.counts[old] -= 1
                self.counts["rounds"] -= 1
            del self.bead[:ROWS]
        self.bead.append((winner, round_no))
        self.counts[winner] += 1
        self.counts["rounds"] += 1

    def to_json(self, shoe: Any = None) -> dict[str, Any]:
        return {"shoe": shoe, "game": self.game,
                "bead_plate": [{"col": i // ROWS, "row": i % ROWS, "winner": w, "round": r}
                               for i, (w, r) in enumerate(self.bead)],
                "counts": dict(self.counts)}


# --------------------------------------------------------------------------- from round results
def _pair(cards: Any) -> bool:
    """The first two cards of a hand have the same rank ("TD" and "TS", not "TD" and "KD")."""
    return isinstance(cards, list) and len(cards) >= 2 and \
        str(cards[0])[:-1] == str(cards[1])[:-1]


def _banque_winner(result: Mapping[str, Any]) -> str | None:
    """Baccarat en Banque's two tableaux on one road: the bank against the punters — banker
    when the bank wins more tableaux than it loses, player when it loses more, tie when even."""
    sides = [result.get(f"{s}_winner") for s in ("right", "left")]
    if None in sides:
        return None
    won = sides.count("bank")
    lost = sum(1 for s in sides if s not in ("bank", "tie"))
    return BANKER if won > lost else PLAYER if lost > won else TIE


def entry_of(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a `round_result` adds to the roads, or None (void and demonstration rounds, and a
    result without a winner, do not enter the roads)."""
    if result.get("void") or result.get("demo"):
        return None
    game = result.get("game", "punto_banco")
    if game == "andar_bahar":
        winner = result.get("winner")
        return {"winner": winner, "round_no": result.get("round")} if winner else None
    if game == "baccarat_banque":
        winner = _banque_winner(result)
        natural = bool(result.get("naturals"))
    else:
        winner = result.get("winner")
        natural = bool(result.get("natural"))
    if winner is None:
        return None
    return {"winner": winner, "round_no": result.get("round"), "natural": natural,
            "player_pair": _pair(result.get("player")), "banker_pair": _pair(result.get("banker"))}


class ShoeRoads:
    """The roads of the current shoe, kept from the table's events: a `shoe_started` begins
    new roads (Andar Bahar's plate runs on across its one-deck shoes), a `round_result` adds
    to them. `publish` says whether the roads changed."""

    def __init__(self) -> None:
        self.shoe: Any = None
        self.roads: Roads | AndarBaharRoads = Roads()

    def publish(self, event: Mapping[str, Any]) -> bool:
        kind = event.get("event")
        if kind == "shoe_started":
            game = event.get("game", "punto_banco")
            if not (game == "andar_bahar" == self.roads.game):
                self.roads = AndarBaharRoads() if game == "andar_bahar" else Roads()
            self.shoe = event.get("shoe")
            return True
        if kind == "round_result":
            return self.add_result(event)
        return False

    def add_result(self, result: Mapping[str, Any]) -> bool:
        """A round's result, as the table shows it; False when it does not enter the roads."""
        entry = entry_of(result)
        if entry is None:
            return False
        if self.shoe is None:
            self.shoe = result.get("shoe")
        if (entry["winner"] in (ANDAR, BAHAR)) != (self.roads.game == "andar_bahar"):
            self.roads = AndarBaharRoads() if entry["winner"] in (ANDAR, BAHAR) else Roads()
        self.roads.add(**entry)
        return True

    def to_json(self) -> dict[str, Any]:
        return self.roads.to_json(self.shoe)


def roads_of(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The roads JSON after `events` (shoe_started and round_result; others are ignored)."""
    shoe = ShoeRoads()
    for e in events:
        shoe.publish(e)
    return shoe.to_json()
