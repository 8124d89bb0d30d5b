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


def roads_figure(number: Any, roads: dict, say: Speaker | None = None) -> Figure:
    """One shoe's bead plate, big road and derived roads, as the scoreboard draws them."""
    say = say or Speaker()
    fig = Figure(figsize=A4)
    fig.suptitle(say("report.roads_title", shoe=number), fontsize=14, x=0.02, ha="left")
    parts = [(say("page.bead_plate"), roads.get("bead_plate") or [], "bead"),
             (say("page.big_road"), (roads.get("big_road") or {}).get("entries", []), "big")]
    for name in ("big_eye_boy", "small_road", "cockroach_pig"):
        if name in roads:
            parts.append((say(f"page.{name}"), (roads.get(name) or {}).get("entries", []),
                          "derived"))
    axes = fig.subplots(len(parts), 1, squeeze=False)[:, 0]
    for ax, (title, cells, kind) in zip(axes, parts):
        _grid(ax, title, cells, kind, say)
    counts = roads.get("counts") or {}
    fig.text(0.02, 0.01, "   ".join(f"{say.known('page.count', k)}: {say.number(v)}"
                                    for k, v in counts.items()), fontsize=9)
    fig.subplots_adjust(left=0.04, right=0.98, top=0.92, bottom=0.06, hspace=0.55)
    return fig


def _grid(ax: Any, title: str, cells: list[dict], kind: str, say: Speaker) -> None:
    cols = max([c.get("col", 0) for c in cells] + [20]) + 1
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(5.5, -0.5)
    ax.set_aspect("equal")
    ax.set_xticks([x - 0.5 for x in range(cols + 1)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(7)], minor=True)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(which="minor", color="#dddddd", lw=0.4)
    ax.tick_params(which="both", length=0)
    by_colour: dict[str, list[dict]] = {}
    for c in cells:
        by_colour.setdefault(COLOURS.get(c.get("winner") or c.get("colour") or "", "#555555"),
                             []).append(c)
    for colour, group in by_colour.items():
        xs, ys = [c.get("col", 0) for c in group], [c.get("row", 0) for c in group]
        if kind == "bead":
            ax.scatter(xs, ys, s=60, color=colour)
        elif kind == "big":
            ax.scatter(xs, ys, s=50, facecolors="none", edgecolors=colour, linewidths=1.5)
        else:
            ax.scatter(xs, ys, s=18, facecolors="none", edgecolors=colour, linewidths=1)
    if kind == "bead":
        for c in cells:
            winner = str(c.get("winner"))
            ax.text(c.get("col", 0), c.get("row", 0),
                    say(f"page.bead.{winner}") if winner in BEADS else "?",
                    color="white", fontsize=5, ha="center", va="center")
    if kind == "big":
        ties = [c for c in cells if c.get("ties")]
        for c in ties:
            x, y = c.get("col", 0), c.get("row", 0)
            ax.plot([x - 0.3, x + 0.3], [y + 0.3, y - 0.3], color=COLOURS["tie"], lw=1)


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
    low = [o[2] - o[3] for o in observed]
    high = [o[4] - o[2] for o in observed]
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
