"""The roads drawn in a terminal (rich Text): for `tablectl roads` and the supervisor's console.

Each road is 6 lines of 2-character cells at the cells' drawn positions: the bead plate as
coloured B / P / T (A / B for Andar Bahar), the big road as coloured discs with the tie count
on green, the derived roads as ○ (big eye boy), ● (small road) and ╱ (cockroach pig).
A road wider than `width` columns shows its last columns (the newest), and says so. Titles,
counts and letters are the catalogue's, in `language` (a bead's letter that would not fit its
two cells stays the Latin one).
"""
from __future__ import annotations

from typing import Any, Mapping

from rich.cells import cell_len
from rich.text import Text

from controller.words.fields import number, word

ROWS = 6
COLOUR = {"banker": "bold red", "player": "bold blue", "tie": "bold green",
          "andar": "bold red", "bahar": "bold blue", "red": "red", "blue": "blue"}
LETTER = {"banker": "B", "player": "P", "tie": "T", "andar": "A", "bahar": "B"}
DERIVED_MARK = {"big_eye_boy": "○", "small_road": "●", "cockroach_pig": "╱"}


def _cells(road: str, data: Any) -> list[Mapping[str, Any]]:
    if road == "bead_plate":
        return [c for c in data or () if isinstance(c, Mapping)]
    return [c for c in (data or {}).get("entries", ()) if isinstance(c, Mapping)]


def _glyph(road: str, cell: Mapping[str, Any], language: str = "en") -> Text:
    if road == "bead_plate":
        winner = str(cell.get("winner"))
        pairs = ("'" if cell.get("banker_pair") else "") + ("," if cell.get("player_pair") else "")
        said = word(f"page.bead.{winner}", language) if winner in LETTER else "?"
        if cell_len(said) == 2:                 # a letter two cells wide (莊): no pair mark
            return Text(said, style=COLOUR.get(winner, ""))
        if cell_len(said) != 1:                 # it would not fit its two cells
            said = LETTER.get(winner, "?")
        return Text(said + (pairs[:1] or " "), style=COLOUR.get(winner, ""))
    if road == "big_road":
        winner = str(cell.get("winner"))
        ties = int(cell.get("ties") or 0)
        if ties:
            mark = str(ties) if ties < 10 else "+"
            return Text(mark + " ", style=f"{COLOUR.get(winner, '')} on green")
        return Text("● ", style=COLOUR.get(winner, ""))
    colour = str(cell.get("colour"))
    return Text(DERIVED_MARK.get(road, "●") + " ", style=COLOUR.get(colour, ""))


def road_text(road: str, data: Any, width: int = 40, language: str = "en") -> Text:
    """One road: its title, then 6 lines of cells."""
    cells = _cells(road, data)
    out = Text(word(f"page.{road}", language), style="bold")
    if not cells:
        out.append(f"  ({word('console.road_empty', language)})\n", style="dim")
        return out
    last = max(int(c.get("col", 0)) for c in cells)
    first = max(0, last + 1 - width)
    if first:
        out.append(f"  ({word('console.road_last', language, n=width, all=last + 1)})",
                   style="dim")
    out.append("\n")
    grid: dict[tuple[int, int], Text] = {
        (int(c.get("col", 0)), int(c.get("row", 0))): _glyph(road, c, language) for c in cells}
    for row in range(ROWS):
        for col in range(first, last + 1):
            out.append_text(grid.get((col, row), Text("· ", style="dim")))
        out.append("\n")
    return out


def counts_text(roads: Mapping[str, Any], language: str = "en") -> Text:
    counts = roads.get("counts") or {}
    out = Text()
    for key in ("banker", "player", "tie", "andar", "bahar", "banker_pair", "player_pair",
                "natural", "rounds"):
        if key in counts:
            out.append(f"{word(f'page.count.{key}', language)} ",
                       style=COLOUR.get(key, "bold"))
            value = counts[key]
            out.append(f"{number(value, language) if isinstance(value, int) else value}   ")
    return out


def predict_text(roads: Mapping[str, Any], language: str = "en") -> Text:
    """Ask Banker / ask Player: the mark each derived road would add."""
    predict = roads.get("predict") or {}
    out = Text()
    for winner in ("banker", "player"):
        marks = predict.get(winner) or {}
        out.append(f"{word(f'page.ask_{winner}', language)}: ", style=COLOUR[winner])
        for road in ("big_eye_boy", "small_road", "cockroach_pig"):
            colour = marks.get(road)
            out.append(DERIVED_MARK[road] if colour else "-",
                       style=COLOUR.get(str(colour), "dim"))
            out.append(" ")
        out.append("  ")
    return out


def roads_text(roads: Mapping[str, Any], width: int = 40,
               parts: tuple[str, ...] = ("bead_plate", "big_road", "big_eye_boy",
                                         "small_road", "cockroach_pig"),
               language: str = "en") -> Text:
    """Every road present in `roads` (the roads JSON), then counts and predictions."""
    out = Text()
    for road in parts:
        if road in roads:
            out.append_text(road_text(road, roads[road], width, language))
    out.append_text(counts_text(roads, language))
    if "predict" in roads:
        out.append("\n")
        out.append_text(predict_text(roads, language))
    return out
