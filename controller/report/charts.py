"""The report's pictures (matplotlib, no display needed): the roads, rounds per hour, hold
times, and the results beside the exact odds. Each returns a Figure; the PDF keeps them as
pages and the HTML as PNG images. Titles, labels and the roads' letters are the catalogue's
in the reader's language (`Speaker`), the numbers on the axes in the locale's digits; the
font for its script is chosen where the figures are drawn (`fonts.drawing`)."""
from __future__ import annotations

from collections import Counter
from typing import Any

import matplotlib

matplotlib.use("Agg")      # a report is written on a server: never a window

from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import ScalarFormatter  # noqa: E402

from controller.report.collect import Report, finished_holds  # noqa: E402
from controller.report.language import Speaker  # noqa: E402

COLOURS = {"banker": "#c62828", "player": "#1565c0", "tie": "#2e7d32", "andar": "#c62828",
           "bahar": "#1565c0", "red": "#c62828", "blue": "#1565c0"}
BEADS = ("banker", "player", "tie", "andar", "bahar")      # the page's letters: B, P, T…
A4 = (11.69, 8.27)          # landscape, inches


class _Numbers(ScalarFormatter):
    """An axis's numbers in the locale's digits (Bengali's ০–৯)."""

    def __init__(self, say: Speaker) -> None:
        super().__init__()
        self.say = say

    def __call__(self, x: Any, pos: Any = None) -> str:
        return self.say.digits(super().__call__(x, pos))


def _axis_numbers(axis: Any, say: Speaker) -> None:
    if say.digits("0123456789") != "0123456789":
        axis.set_major_formatter(_Numbers(say))


#: the columns a road's grid shows at least (a whole shoe always fits: its cells are made
#: smaller for a longer one)
BOARD_COLS = 30
ROADS = ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig")


def roads_figure(number: Any, roads: dict, say: Speaker | None = None) -> Figure:
    """One shoe's roads as the scoreboard draws them, one under the other on one grid: beads
    with their letters, the big road's rings with their tie slashes, the big eye boy's rings,
    the small road's dots and the cockroach pig's slashes (Andar Bahar: its bead plate)."""
    say = say or Speaker()
    fig = Figure(figsize=A4)
    fig.suptitle(say("report.roads_title", shoe=number), fontsize=14, x=0.02, ha="left")
    parts = [r for r in ROADS if r in roads]
    cells = {r: roads.get(r) or [] if r == "bead_plate" else (roads.get(r) or {}).get(
        "entries", []) for r in parts}
    cols = max([int(c.get("col", 0)) + 1 for group in cells.values() for c in group]
               + [BOARD_COLS])
    axes = fig.subplots(len(parts), 1, squeeze=False)[:, 0]
    fig.subplots_adjust(left=0.03, right=0.985, top=0.9, bottom=0.07, hspace=0.45)
    for ax, road in zip(axes, parts):
        _road(ax, road, cells[road], cols, say)
    counts = roads.get("counts") or {}
    fig.text(0.02, 0.015, "   ".join(f"{say.known('page.count', k)}: {say.number(v)}"
                                     for k, v in counts.items()), fontsize=9)
    return fig


def _road(ax: Any, road: str, cells: list[dict], cols: int, say: Speaker) -> None:
    """One road on its grid: the marks drawn as collections (one a colour and kind: a whole
    shoe is a few hundred marks), the grid as two sets of lines."""
    from matplotlib.collections import LineCollection
    fig = ax.figure
    box = ax.get_position()
    width_pt = box.width * fig.get_figwidth() * 72
    height_pt = box.height * fig.get_figheight() * 72
    # the cells as large as the axes allow; as many columns as fit at that size
    cell_pt = min(width_pt / cols, height_pt / 6)
    cols = max(cols, int(width_pt / cell_pt))
    ax.set_title(say(f"page.{road}"), fontsize=10, loc="left")
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(5.5, -0.5)
    ax.set_aspect("equal", anchor="W")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.vlines([x - 0.5 for x in range(cols + 1)], -0.5, 5.5, colors="#dddddd", lw=0.4)
    ax.hlines([y - 0.5 for y in range(7)], -0.5, cols - 0.5, colors="#dddddd", lw=0.4)
    line = max(0.6, cell_pt * 0.09)
    dots: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    slashes: dict[str, list] = {}
    for c in cells:
        x, y = c.get("col", 0), c.get("row", 0)
        colour = COLOURS.get(str(c.get("winner") or c.get("colour") or ""), "#555555")
        if road == "bead_plate":
            dots.setdefault((colour, True), []).append((x, y))
            winner = str(c.get("winner"))
            letter = say(f"page.bead.{winner}") if winner in BEADS else "?"
            ax.text(x, y, letter, color="white", fontsize=_letter_size(letter, cell_pt),
                    ha="center", va="center", fontweight="bold")
        elif road in ("big_road", "big_eye_boy"):
            dots.setdefault((colour, False), []).append((x, y))
            if road == "big_road" and c.get("ties"):
                slashes.setdefault(COLOURS["tie"], []).append(
                    [(x - 0.36, y + 0.36), (x + 0.36, y - 0.36)])
                if int(c["ties"]) > 1:
                    ax.text(x, y, say.number(int(c["ties"])), color=COLOURS["tie"],
                            fontsize=cell_pt * 0.45, ha="center", va="center",
                            fontweight="bold")
        elif road == "small_road":
            dots.setdefault((colour, True), []).append((x, y))
        else:
            slashes.setdefault(colour, []).append([(x - 0.34, y + 0.34), (x + 0.34, y - 0.34)])
    for (colour, filled), points in dots.items():
        # a marker's size is its diameter in points, squared: 0.84 of a cell for a bead,
        # 0.72 for a ring or a dot
        size = (cell_pt * (0.84 if road == "bead_plate" else 0.72)) ** 2
        xs, ys = zip(*points)
        if filled:
            ax.scatter(xs, ys, s=size, color=colour, linewidths=0, zorder=2)
        else:
            ax.scatter(xs, ys, s=size, facecolors="none", edgecolors=colour, linewidths=line,
                       zorder=2)
    for colour, segments in slashes.items():
        ax.add_collection(LineCollection(segments, colors=colour, linewidths=line * 1.3,
                                         capstyle="round", zorder=3))


def _letter_size(letter: str, cell_pt: float) -> float:
    """A bead's letter as large as its bead allows: a wide one (two letters, a script's
    conjunct) smaller, so that it stays inside the bead."""
    from matplotlib import rcParams
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties
    size = cell_pt * 0.5
    prop = FontProperties(family=list(rcParams["font.family"]), size=size, weight="bold")
    wide = RendererAgg(10, 10, 72).get_text_width_height_descent(letter, prop, ismath=False)[0]
    room = cell_pt * 0.7
    return size * room / wide if wide > room else size


def rounds_per_hour_figure(report: Report, say: Speaker | None = None) -> Figure:
    say = say or Speaker()
    hours = Counter(t.strftime("%m-%d %H:00") for t in report.result_times)
    fig = Figure(figsize=(A4[0], A4[1] / 2.2))
    ax = fig.subplots()
    labels = sorted(hours)
    ax.bar(labels, [hours[h] for h in labels], color="#455a64")
    ax.set_title(say("report.rounds_per_hour"), fontsize=11, loc="left")
    ax.set_ylabel(say("report.axis.rounds"))
    _axis_numbers(ax.yaxis, say)
    ax.tick_params(axis="x", labelrotation=45, labelsize=8)
    fig.tight_layout()
    return fig


def hold_figure(report: Report, say: Speaker | None = None) -> Figure:
    say = say or Speaker()
    holds = finished_holds(report)
    fig = Figure(figsize=(A4[0], A4[1] / 2.2))
    ax = fig.subplots()
    totals: dict[str, float] = {}
    for h in holds:
        kind = say.known("kind", h.kind)
        totals[kind] = totals.get(kind, 0.0) + (h.seconds or 0.0)
    labels = sorted(totals, key=totals.__getitem__, reverse=True)
    ax.barh(labels or [say("report.no_holds")], [totals[k] for k in labels] or [0],
            color="#ef6c00")
    ax.set_title(say("report.hold_time", n=len(holds),
                     seconds=say.fixed(sum(totals.values()), 1)), fontsize=11, loc="left")
    ax.set_xlabel(say("report.axis.hold_seconds"))
    _axis_numbers(ax.xaxis, say)
    fig.tight_layout()
    return fig


def odds_figure(observed: list[tuple[str, float, float, float, float]], rounds: int,
                say: Speaker | None = None) -> Figure:
    """Each outcome's observed frequency (bar, with its 95 % interval) beside the exact
    probability (marker)."""
    say = say or Speaker()
    fig = Figure(figsize=(A4[0], A4[1] / 2.2))
    ax = fig.subplots()
    names = [say.outcome(o[0]) for o in observed]
    seen = [o[2] for o in observed]
    # an interval's ends round to a hair's breadth past a share of 0 or 1: never below 0
    low = [max(0.0, o[2] - o[3]) for o in observed]
    high = [max(0.0, o[4] - o[2]) for o in observed]
    xs = range(len(names))
    ax.bar(xs, seen, color="#90a4ae", label=say("report.legend.observed"), yerr=[low, high],
           capsize=3)
    ax.scatter(xs, [o[1] for o in observed], color="#c62828", zorder=3, marker="D",
               label=say("report.legend.exact"))
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(say("report.axis.share"))
    _axis_numbers(ax.yaxis, say)
    ax.set_title(say("report.odds_chart", n=rounds), fontsize=11, loc="left")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
