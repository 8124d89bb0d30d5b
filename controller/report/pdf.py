"""The report as a PDF to print: a first page that says what it covers, the tables flowing
over as many pages as they need, then the pictures (matplotlib's PdfPages, A4 landscape).

The tables are set in the report's font, proportional, every cell placed where its column
starts, as measured in that font: a column stays straight in every script (a Chinese letter
is wider than a Latin one, a Thai vowel sign has no width of its own). A cell too wide for
the page is wrapped in its column. A page is only begun for something to put on it.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from controller.report import charts, fonts
from controller.report.collect import Report, finished_holds
from controller.report.language import Speaker

PAGE_W, PAGE_H = charts.A4[0] * 72, charts.A4[1] * 72       # points
MARGIN = 40.0
BODY = 8.0                  # the tables' size, points
LEADING = 1.35              # a line's height, in sizes
GAP = 14.0                  # between two columns
BANNER = "#facc15"
_NUMBER = re.compile(r"[\d .,%+\-–−\[\]]+")        # a number or an interval (not a time)

Measure = Callable[[str, float, bool], float]


@dataclass
class Cell:
    lines: list[str]
    right: bool = False


class Writer:
    """Pages of text blocks, one below the other; a new page when the next does not fit."""

    def __init__(self, pdf: Any, measure: Measure, title: str) -> None:
        self.pdf, self.measure, self.title = pdf, measure, title
        self.fig: Any = None
        self.y = 0.0
        self.pages = 0

    # ------------------------------------------------------------------ pages
    def page(self) -> None:
        """Finish the page in hand (if any) and begin the next."""
        from matplotlib.figure import Figure
        self.finish()
        self.fig = Figure(figsize=charts.A4)
        self.y = PAGE_H - MARGIN
        self.pages += 1
        self.text(PAGE_W - MARGIN, MARGIN / 2, f"{self.title} · {self.pages}", 6.5,
                  right=True, colour="#666666")

    def finish(self) -> None:
        if self.fig is not None:
            self.pdf.savefig(self.fig)
            self.fig = None

    def room(self, height: float) -> None:
        """A page with `height` points left on it (the current one, or the next)."""
        if self.fig is None or self.y - height < MARGIN:
            self.page()

    # ------------------------------------------------------------------ drawing
    def text(self, x: float, y: float, text: str, size: float, *, bold: bool = False,
             right: bool = False, colour: str = "black", box: str | None = None) -> None:
        kw: dict[str, Any] = {}
        if box:
            kw["bbox"] = {"facecolor": box, "edgecolor": "black", "boxstyle": "round,pad=0.4"}
        self.fig.text(x / PAGE_W, y / PAGE_H, text, fontsize=size,
                      fontweight="bold" if bold else "normal", ha="right" if right else "left",
                      va="top", color=colour, **kw)

    def rule(self, y: float, x0: float = MARGIN, x1: float = PAGE_W - MARGIN,
             width: float = 0.6) -> None:
        from matplotlib.lines import Line2D
        self.fig.add_artist(Line2D([x0 / PAGE_W, x1 / PAGE_W], [y / PAGE_H, y / PAGE_H],
                                   linewidth=width, color="#888888"))

    def line(self, text: str, size: float, *, bold: bool = False, colour: str = "black",
             indent: float = 0.0, box: str | None = None) -> None:
        """A paragraph across the page, wrapped."""
        width = PAGE_W - 2 * MARGIN - indent
        for part in wrap(text, width, lambda t: self.measure(t, size, bold)):
            step = size * LEADING + (size * 0.8 if box else 0)
            self.room(step)
            self.text(MARGIN + indent + (size * 0.4 if box else 0), self.y, part, size,
                      bold=bold, colour=colour, box=box)
            self.y -= step

    def space(self, points: float) -> None:
        self.y -= points

    def facts(self, rows: list[tuple[str, str]], size: float = 11.0) -> None:
        """Label: value lines, the values in one column."""
        width = max((self.measure(label, size, True) for label, _ in rows), default=0.0)
        room = PAGE_W - 2 * MARGIN - width - GAP
        for label, value in rows:
            parts = wrap(value, room, lambda t: self.measure(t, size, False)) or [""]
            self.room(size * LEADING * len(parts))
            self.text(MARGIN, self.y, label, size, bold=True, colour="#333333")
            for part in parts:
                self.text(MARGIN + width + GAP, self.y, part, size)
                self.y -= size * LEADING
            self.y -= size * 0.35

    def table(self, title: str, header: list[str], rows: list[list[str]], note: str = "",
              none: str = "") -> None:
        """A table: its title, its header, its rows in columns (a row at a time onto the
        page, the title and header again on the next page), its note."""
        size, head = BODY, BODY * LEADING
        if not rows:
            self.room(11 * LEADING + head + 6)
            self._title(title)
            self.text(MARGIN + 6, self.y, none, size, colour="#444444")
            self.y -= head + 10
            return
        widths, cells = self._columns(header, rows, size)
        starts = [MARGIN]
        for w in widths[:-1]:
            starts.append(starts[-1] + w + GAP)

        def header_row() -> None:
            for x, w, h in zip(starts, widths, header):
                right = cells[0][header.index(h)].right if cells else False
                self.text(x + w if right else x, self.y, h, size, bold=True, right=right)
            self.y -= head
            self.rule(self.y + size * 0.25)
            self.y -= 2

        first = max(len(c.lines) for c in cells[0]) * head
        self.room(11 * LEADING + head + first + 2)
        self._title(title)
        header_row()
        for row in cells:
            height = max(len(c.lines) for c in row) * head
            if self.y - height < MARGIN:
                self.page()
                self._title(title)
                header_row()
            for x, w, c in zip(starts, widths, row):
                for i, text in enumerate(c.lines):
                    self.text(x + w if c.right else x, self.y - i * head, text, size,
                              right=c.right)
            self.y -= height
        if note:
            self.y -= 3
            self.line(note, size * 0.95, colour="#333333")
        self.y -= 10

    def _title(self, title: str) -> None:
        self.text(MARGIN, self.y, title, 11, bold=True)
        self.y -= 11 * LEADING + 2

    def _columns(self, header: list[str], rows: list[list[str]], size: float
                 ) -> tuple[list[float], list[list[Cell]]]:
        """Each column's width (the widest of its cells, the widest columns narrowed to fit
        the page, their cells wrapped) and the cells, numbers to the right."""
        n = len(header)

        def w(t: str, bold: bool = False) -> float:
            return self.measure(t, size, bold)
        right = [all(_NUMBER.fullmatch(r[i]) for r in rows if r[i]) and any(r[i] for r in rows)
                 for i in range(n)]
        widths = [max([w(header[i], True)] + [w(r[i]) for r in rows]) for i in range(n)]
        room = PAGE_W - 2 * MARGIN - GAP * (n - 1)
        while sum(widths) > room:
            widest = max(range(n), key=lambda i: widths[i])
            others = sum(widths) - widths[widest]
            floor = max(w(header[widest], True), 60.0)
            target = max(floor, room - others)
            if target >= widths[widest] - 0.5:
                break                               # nothing more to take from it
            widths[widest] = target
        cells = [[Cell(wrap(r[i], widths[i], w) or [""], right[i]) for i in range(n)]
                 for r in rows]
        return widths, cells


def wrap(text: str, width: float, measure: Callable[[str], float]) -> list[str]:
    """`text` in lines no wider than `width`: broken at spaces where there are any, else
    between letters (never before a combining sign, which belongs to the letter before)."""
    if measure(text) <= width:
        return [text]
    words = text.split(" ")
    lines: list[str] = []
    line = ""
    for word in words:
        trial = f"{line} {word}" if line else word
        if measure(trial) <= width:
            line = trial
            continue
        if line:
            lines.append(line)
        line = ""
        while measure(word) > width:
            cut = _cut(word, width, measure)
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    if line:
        lines.append(line)
    return lines


def _cut(word: str, width: float, measure: Callable[[str], float]) -> int:
    cut = 1
    for i in range(1, len(word)):
        if unicodedata.category(word[i])[0] == "M":
            continue                        # a sign stays with its letter
        if measure(word[:i]) > width:
            break
        cut = i
    return max(cut, 1)


def measurer(language: str) -> Measure:
    """How wide a text is, in points, in the report's font (called where the figures are
    drawn, `fonts.drawing`, so that the font is the one the page is set in)."""
    from matplotlib import rcParams
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties
    renderer = RendererAgg(10, 10, 72)
    family = list(rcParams["font.family"])

    @lru_cache(maxsize=8192)
    def measure(text: str, size: float, bold: bool) -> float:
        if not text.strip():
            return size * 0.3 * len(text)
        prop = FontProperties(family=family, size=size, weight="bold" if bold else "normal")
        return float(renderer.get_text_width_height_descent(text, prop, ismath=False)[0])
    return measure


def _period(report: Report) -> tuple[datetime | None, datetime | None, bool]:
    starts = [s.start for s in report.shoes if s.start]
    ends = [s.end for s in report.shoes if s.end]
    open_ = any(s.end is None for s in report.shoes)
    return (min(starts) if starts else None), (max(ends) if ends else None), open_


def _t(when: datetime | None) -> str:
    return "" if when is None else when.strftime("%Y-%m-%d %H:%M")


def cover_facts(report: Report, say: Speaker, *, table: bool = True) -> list[tuple[str, str]]:
    """What the report covers, for its first page: table, game, shoes, times, totals."""
    num = say.number
    rows: list[tuple[str, str]] = []
    if table and report.table_name:
        rows.append((say("report.col.table"), report.table_name))
    games = list(dict.fromkeys((s.game, s.profile) for s in report.shoes))
    if games:
        rows.append((say("report.col.game"), "; ".join(
            say("report.cover.game", game=g, profile=p) for g, p in games)))
    numbers = [s.number for s in report.shoes]
    if numbers:
        shoes = num(len(numbers)) if not table else num(numbers[0]) if len(numbers) == 1 \
            else f"{num(numbers[0])}–{num(numbers[-1])} ({num(len(numbers))})"
        rows.append((say("report.shoes"), shoes))
    start, end, still = _period(report)
    if start:
        rows.append((say("report.cover.period"), f"{_t(start)} – " + (
            say("report.not_ended") if still else _t(end))))
    counted = report.counted
    rows.append((say("page.count.rounds"), say("report.cover.rounds", n=len(report.results),
                                                  void=report.void, demo=report.demo)))
    if report.winners:
        rows.append((say("report.results"), " · ".join(
            f"{say.winner(w)} {num(n)} ({say.percent(n / len(counted))})"
            for w, n in report.winners.most_common())))
    done = finished_holds(report)
    rows.append((say("report.holds"), say("report.cover.holds", n=len(report.holds),
                                          seconds=say.fixed(sum(h.seconds or 0 for h in done),
                                                            1))))
    rows.append((say("report.overrides"), num(len(report.overrides))))
    rows.append((say("report.irregularities"), num(len(report.irregularity_list))))
    return rows


def write(reports: list[Report], path: Path, language: str, heading: str,
          parts: Callable[[Report], list[Any]], figures: Callable[[Report], list[Any]],
          summary: Any | None, sources: Callable[[Report], str]) -> int:
    """The PDF; its number of pages. `parts(report)`: its tables; `figures(report)`: its
    pictures; `summary`: the one table of several tables' reports (None for one report)."""
    from matplotlib.backends.backend_pdf import PdfPages
    say = Speaker(language)
    written = datetime.now(timezone.utc)
    with fonts.drawing(language), \
            PdfPages(path, metadata={"Title": heading, "Creator": "tablectl report"}) as pdf:
        out = Writer(pdf, measurer(language), heading)
        # the first page: what this is, whose, when, whether simulated, and its totals
        out.page()
        out.line(heading, 20, bold=True)
        out.space(6)
        if any(r.simulated for r in reports):
            out.line(say("report.cover.simulated"), 13, bold=True, box=BANNER)
            out.space(8)
        if summary is None:
            out.facts(cover_facts(reports[0], say))
        else:
            out.facts([(say("report.tables"), ", ".join(r.table_name for r in reports))]
                      + cover_facts(joined(reports), say, table=False))
        out.space(4)
        out.facts([(say("report.cover.source"), "; ".join(sources(r) for r in reports)),
                   (say("report.cover.written"), f"{written:%Y-%m-%d %H:%M} UTC")], size=9)
        if summary is not None:
            out.space(8)
            out.table(summary.title, summary.header, summary.rows, summary.note,
                      say("report.none"))
        # the tables of each report, then its pictures
        for r in reports:
            out.page()
            if summary is not None:
                out.line(say("report.table_section", table=r.table_name), 14, bold=True)
                out.facts(cover_facts(r, say, table=False), size=9)
                out.space(4)
            for t in parts(r):
                out.table(t.title, t.header, t.rows, t.note, say("report.none"))
            out.finish()
            for fig in figures(r):
                pdf.savefig(fig)
                out.pages += 1
    return out.pages


def joined(reports: list[Report]) -> Report:
    """Several tables' reports as one, for the first page's totals."""
    from collections import Counter
    first = reports[0]
    joined = Report(first.journal, first.selection, first.selection_words)
    joined.winners = Counter()
    for r in reports:
        joined.shoes += r.shoes
        joined.results += r.results
        joined.void += r.void
        joined.demo += r.demo
        joined.winners.update(r.winners)
        joined.holds += r.holds
        joined.overrides += r.overrides
        joined.irregularity_list += r.irregularity_list
    joined.shoes.sort(key=lambda s: (s.start or datetime.min.replace(tzinfo=timezone.utc)))
    return joined
