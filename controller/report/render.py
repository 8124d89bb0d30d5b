"""A report as tables and pictures, written as a PDF (matplotlib's PdfPages: text pages, then a
page of roads for each shoe and the charts) or as one HTML file (the pictures inline as PNG)."""
from __future__ import annotations

import base64
import html
import io
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.report import charts
from controller.report.collect import Report, finished_holds
from controller.words import render as say
from controller.words.problems import problem_words


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


def _t(when: Any) -> str:
    return "" if when is None else when.strftime("%Y-%m-%d %H:%M:%S")


def _num(x: float, places: int = 4) -> str:
    return f"{x:+.{places}f}"


def exact_odds(report: Report) -> tuple[Any, str]:
    """The exact odds of the report's profile (its first shoe's), or None and why not."""
    if not report.shoes:
        return None, "no shoe"
    shoe = report.shoes[0]
    try:
        from controller.odds import GAMES, compute_odds
        from controller.profile import load_profile
        if shoe.game not in GAMES:
            return None, f"exact odds are computed for {', '.join(GAMES)}, not {shoe.game}"
        profile = load_profile(shoe.profile)
        note = "" if not shoe.profile_sha256 or profile.sha256 == shoe.profile_sha256 else \
            f"profile {shoe.profile} has changed since the shoe was dealt; odds of today's file"
        return compute_odds(profile), note
    except Exception as err:          # the profile file may be gone: the report goes on
        return None, f"no exact odds: {err}"


def outcome_rows(report: Report, exact: Any) -> list[tuple[str, float, float, float, float]]:
    """(outcome, exact p, observed share, low, high) for every outcome the odds know."""
    from controller.odds.simulation import round_outcomes, wilson
    counted = report.counted
    seen: dict[str, int] = {name: 0 for name in exact.outcomes}
    for r in counted:
        try:
            names = round_outcomes(r)
        except (KeyError, TypeError, ValueError):
            continue
        for name in names & seen.keys():
            seen[name] += 1
    n = len(counted)
    rows = []
    for name, p in exact.outcomes.items():
        low, high = wilson(seen[name], n)
        rows.append((name, float(p), seen[name] / n if n else 0.0, low, high))
    return rows


def tables(report: Report, exact: Any, odds_note: str) -> list[Table]:
    out = [Table("Shoes", ["Shoe", "Game", "Profile", "Decks", "Started (UTC)", "Ended (UTC)",
                           "Rounds", "Why it ended", "Card count"],
                 [[str(s.number), say({"code": f"game.{s.game}"}), s.profile, str(s.decks),
                   _t(s.start), _t(s.end), str(s.rounds),
                   say({"code": f"end.{s.end_reason}"}) if s.end_reason else "not ended",
                   "" if s.reconciliation is None else
                   ("reconciled" if s.reconciliation.get("ok") else
                    f"{s.reconciliation.get('differences')} difference(s)")]
                  for s in report.shoes])]
    counted = report.counted
    counts = [[say({"code": f"console.winner.{w}"}).capitalize(), str(n),
               f"{n / len(counted):.2%}" if counted else ""]
              for w, n in report.winners.most_common()]
    counts += [["void rounds", str(report.void), ""], ["demonstration rounds", str(report.demo),
                                                        ""]]
    out.append(Table("Results", ["Result", "Rounds", "Share"], counts))
    means = {bet: o.mean for bet, o in exact.bets.items()} if exact is not None else {}
    out.append(Table("Results per bet (per unit staked on every round)",
                     ["Bet", "Rounds", "Net", "Mean", "Exact mean"],
                     [[bet.replace("_", " "), str(n), _num(total, 2), _num(total / n) if n else "",
                       _num(float(means[bet])) if bet in means else ""]
                      for bet, (total, n) in report.bets.items()],
                     "Net is the players' result per unit: a negative mean is the house's "
                     "edge at work." + (f" {odds_note}" if odds_note else "")))
    if exact is not None:
        out.append(Table("Outcomes against the exact odds",
                         ["Outcome", "Exact", "Observed", "95 % interval", "Within"],
                         [[name.replace("_", " "), f"{p:.6f}", f"{o:.6f}", f"[{lo:.4f}, {hi:.4f}]",
                           "yes" if lo <= p <= hi else "NO"]
                          for name, p, o, lo, hi in outcome_rows(report, exact)]))
    out.append(Table("Irregularities", ["Time (UTC)", "Shoe", "Round", "What happened"],
                     [[_t(i["utc"]), str(i.get("shoe", "")), str(i.get("round", "")),
                       say(problem_words(i))] for i in report.irregularity_list]))
    out.append(Table("Holds", ["From (UTC)", "Shoe", "Round", "Why", "Seconds", "Cleared by"],
                     [[_t(h.start), str(h.shoe), str(h.round or ""), say(problem_words(h.problem)),
                       "open" if h.seconds is None else f"{h.seconds:.1f}",
                       f"{h.cleared_by} ({say({'code': f'action.{h.cleared_with}'})})"
                       if h.cleared_by else ""]
                      for h in report.holds],
                     f"{len(finished_holds(report))} cleared, "
                     f"{sum(h.seconds or 0 for h in report.holds):.1f} s on hold in all."))
    out.append(Table("Overrides", ["Time (UTC)", "Who", "Role", "Action", "Why"],
                     [[_t(o["utc"]), str(o.get("user", "")), str(o.get("role", "")),
                       say({"code": f"action.{o.get('action')}"}), str(o.get("reason", ""))]
                      for o in report.overrides]))
    health = [[device, str(v.get("model") or ""), str(v.get("serial") or ""),
               str(v.get("firmware") or "")] for device, v in report.identities.items()]
    out.append(Table("Devices", ["Device", "Model", "Serial", "Firmware"], health))
    out.append(Table("Device alarms", ["Source", "Code", "Severity", "Count"],
                     [[src, code, sev, str(n)] for (src, code, sev), n in
                      report.alarms.most_common()]))
    return out


def figures(report: Report, exact: Any) -> list[Any]:
    figs = [charts.roads_figure(s.number, s.roads) for s in report.shoes if s.roads]
    figs += [charts.rounds_per_hour_figure(report), charts.hold_figure(report)]
    if exact is not None and report.counted:
        figs.append(charts.odds_figure(outcome_rows(report, exact), len(report.counted)))
    return figs


def _lines(report: Report, parts: list[Table]) -> list[str]:
    lines = [f"Table report: {report.selection}", f"Journal {report.journal}", ""]
    for t in parts:
        lines += [t.title.upper()]
        if not t.rows:
            lines += ["  none", ""]
            continue
        widths = [max(len(h), *(len(r[i]) for r in t.rows)) for i, h in enumerate(t.header)]
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(t.header, widths)))
        for r in t.rows:
            lines += textwrap.wrap("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)),
                                   150, subsequent_indent="      ") or [""]
        if t.note:
            lines += textwrap.wrap("  " + t.note, 150, subsequent_indent="  ")
        lines.append("")
    return lines


def write_pdf(report: Report, path: Path) -> int:
    """The report as a PDF; its number of pages."""
    from matplotlib.backends.backend_pdf import PdfPages
    from matplotlib.figure import Figure
    exact, note = exact_odds(report)
    lines = _lines(report, tables(report, exact, note))
    pages = 0
    with PdfPages(path, metadata={"Title": f"Table report: {report.selection}",
                                  "Creator": "tablectl report"}) as pdf:
        per_page = 52
        for start in range(0, len(lines), per_page):
            fig = Figure(figsize=charts.A4)
            for i, line in enumerate(lines[start:start + per_page]):
                fig.text(0.03, 0.96 - i * 0.0178, line, family="monospace", fontsize=7.2,
                         va="top")
            pdf.savefig(fig)
            pages += 1
        for fig in figures(report, exact):
            pdf.savefig(fig)
            pages += 1
    return pages


def write_html(report: Report, path: Path) -> int:
    """The report as one HTML file (pictures inline); its number of pictures."""
    exact, note = exact_odds(report)
    out = ["<!doctype html><html><head><meta charset='utf-8'>",
           f"<title>Table report: {html.escape(report.selection)}</title>",
           "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
           "margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:2px 8px;font-size:90%}"
           "th{background:#eee}img{max-width:100%}</style></head><body>",
           f"<h1>Table report: {html.escape(report.selection)}</h1>",
           f"<p>Journal {html.escape(report.journal)}</p>"]
    for t in tables(report, exact, note):
        out.append(f"<h2>{html.escape(t.title)}</h2>")
        if not t.rows:
            out.append("<p>None.</p>")
            continue
        out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in t.header)
                   + "</tr>")
        out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
                for r in t.rows]
        out.append("</table>" + (f"<p>{html.escape(t.note)}</p>" if t.note else ""))
    images = 0
    out.append("<h2>Roads and charts</h2>")
    for fig in figures(report, exact):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=90)
        out.append(f"<img alt='chart' src='data:image/png;base64,"
                   f"{base64.b64encode(buf.getvalue()).decode()}'>")
        images += 1
    out.append("</body></html>")
    path.write_text("\n".join(out), encoding="utf-8")
    return images
