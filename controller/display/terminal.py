"""The roads drawn in a terminal (rich Text): for `tablectl roads` and the supervisor's console.

Each road is 6 lines of 2-character cells at the cells' drawn positions: the bead plate as
coloured B / P / T (A / B for Andar Bahar), the big road as coloured discs with the tie count
on green, the derived roads as ○ (big eye boy), ● (small road) and ╱ (cockroach pig).
A road wider than `width` columns shows its last columns (the newest), and says so.
"""
from __future__ import annotations

from typing import Any, Mapping

from rich.text import Text

ROWS = 6
COLOUR = {"banker": "bold red", "player": "bold blue", "tie": "bold green",
          "andar": "bold red", "bahar": "bold blue", "red": "red", "blue": "blue"}
LETTER = {"banker": "B", "player": "P", "tie": "T", "andar": "A", "bahar": "B"}
DERIVED_MARK = {"big_eye_boy": "○", "small_road": "●", "cockroach_pig": "╱"}
TITLES = {"bead_plate": "Bead plate", "big_road": "Big road", "big_eye_boy": "Big eye boy",
          "small_road": "Small road", "cockroach_pig": "Cockroach pig"}


def _cells(road: str, data: Any) -> list[Mapping[str, Any]]:
    if road == "bead_plate":
        return [c for c in data or () if isinstance(c, Mapping)]
    return [c for c in (data or {}).get("entries", ()) if isinstance(c, Mapping)]


def _glyph(road: str, cell: Mapping[str, Any]) -> Text:
    if road == "bead_plate":
        winner = str(cell.get("winner"))
        pairs = ("'" if cell.get("banker_pair") else "") + ("," if cell.get("player_pair") else "")
        return Text(LETTER.get(winner, "?") + (pairs[:1] or " "), style=COLOUR.get(winner, ""))
    if road == "big_road":
        winner = str(cell.get("winner"))
        ties = int(cell.get("ties") or 0)
        if ties:
            mark = str(ties) if ties < 10 else "+"
            return Text(mark + " ", style=f"{COLOUR.get(winner, '')} on green")
        return Text("● ", style=COLOUR.get(winner, ""))
    colour = str(cell.get("colour"))
    return Text(DERIVED_MARK.get(road, "●") + " ", style=COLOUR.get(colour, ""))


def road_text(road: str, data: Any, width: int = 40) -> Text:
    """One road: its title, then 6 lines of cells."""
    cells = _cells(road, data)
    out = Text(f"{TITLES.get(road, road)}", style="bold")
    if not cells:
        out.append("  (empty)\n", style="dim")
        return out
    last = max(int(c.get("col", 0)) for c in cells)
    first = max(0, last + 1 - width)
    if first:
        out.append(f"  (the last {width} of {last + 1} columns)", style="dim")
    out.append("\n")
    grid: dict[tuple[int, int], Text] = {
        (int(c.get("col", 0)), int(c.get("row", 0))): _glyph(road, c) for c in cells}
    for row in range(ROWS):
        for col in range(first, last + 1):
            out.append_text(grid.get((col, row), Text("· ", style="dim")))
        out.append("\n")
    return out


def counts_text(roads: Mapping[str, Any]) -> Text:
    counts = roads.get("counts") or {}
    out = Text()
    for key, label in (("banker", "Banker"), ("player", "Player"), ("tie", "Tie"),
                       ("andar", "Andar"), ("bahar", "Bahar"), ("banker_pair", "B pair"),
                       ("player_pair", "P pair"), ("natural", "Naturals"),
                       ("rounds", "Rounds")):
        if key in counts:
            out.append(f"{label} ", style=COLOUR.get(key, "bold"))
            out.append(f"{counts[key]}   ")
    return out


def predict_text(roads: Mapping[str, Any]) -> Text:
    """Ask Banker / ask Player: the mark each derived road would add."""
    predict = roads.get("predict") or {}
    out = Text()
    for winner in ("banker", "player"):
        marks = predict.get(winner) or {}
        out.append(f"Ask {winner.capitalize()}: ", style=COLOUR[winner])
        for road in ("big_eye_boy", "small_road", "cockroach_pig"):
            colour = marks.get(road)
            out.append(DERIVED_MARK[road] if colour else "-",
                       style=COLOUR.get(str(colour), "dim"))
            out.append(" ")
        out.append("  ")
    return out


def roads_text(roads: Mapping[str, Any], width: int = 40,
               parts: tuple[str, ...] = ("bead_plate", "big_road", "big_eye_boy",
                                         "small_road", "cockroach_pig")) -> Text:
    """Every road present in `roads` (the roads JSON), then counts and predictions."""
    out = Text()
    for road in parts:
        if road in roads:
            out.append_text(road_text(road, roads[road], width))
    out.append_text(counts_text(roads))
    if "predict" in roads:
        out.append("\n")
        out.append_text(predict_text(roads))
    return out
