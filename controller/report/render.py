"""A report as tables and pictures, written as a PDF (matplotlib's PdfPages: text pages, then a
page of roads for each shoe and the charts) or as one HTML file (the pictures inline as PNG),
in the reader's language (`language.Speaker`; English by default)."""
from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.report import charts, fonts
from controller.report.collect import Report, finished_holds
from controller.report.language import Speaker
from controller.words import SOURCE, Words
from controller.words.problems import problem_words
from controller.words.record import house_burn_words, invalid_words


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


def _t(when: Any) -> str:
    return "" if when is None else when.strftime("%Y-%m-%d %H:%M:%S")


def exact_odds(report: Report) -> tuple[Any, Words | None]:
    """The exact odds of the report's profile (its first shoe's), or None; and a note on them
    (why there are none, or that the profile has changed since), in Words."""
    if not report.shoes:
        return None, None
    shoe = report.shoes[0]
    try:
        from controller.odds import GAMES, compute_odds
        from controller.settings.profile import load_profile
        if shoe.game not in GAMES:
            return None, Words("report.odds.not_computed", {"game": shoe.game})
        profile = load_profile(shoe.profile)
        note = None if not shoe.profile_sha256 or profile.sha256 == shoe.profile_sha256 else \
            Words("report.odds.changed", {"profile": shoe.profile})
        return compute_odds(profile), note
    except Exception as err:          # the profile file may be gone: the report goes on
        return None, Words("report.odds.none", {"why": str(err)})


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


def tables(report: Report, exact: Any, odds_note: Words | None,
           say: Speaker | None = None) -> list[Table]:
    say = say or Speaker()
    num = say.number
    out = [Table(say("report.shoes"),
                 [say("report.col.shoe"), say("report.col.game"), say("arg.profile"),
                  say("report.col.decks"), say("report.col.started"), say("report.col.ended"),
                  say("page.count.rounds"), say("report.col.end_reason"),
                  say("report.col.card_count")],
                 [[num(s.number), say(f"game.{s.game}"), s.profile, num(s.decks),
                   _t(s.start), _t(s.end), num(s.rounds),
                   say(f"end.{s.end_reason}") if s.end_reason else say("report.not_ended"),
                   "" if s.reconciliation is None else
                   (say("report.reconciled") if s.reconciliation.get("ok") else
                    say("report.differences", n=s.reconciliation.get("differences")))]
                  for s in report.shoes],
                 " ".join(invalid_note(s, say) for s in report.shoes
                          if s.end_reason == "invalid" and s.end_fields))]
    counted = report.counted
    counts = [[say.winner(w), num(n), say.percent(n / len(counted)) if counted else ""]
              for w, n in report.winners.most_common()]
    counts += [[say("report.void_rounds"), num(report.void), ""],
               [say("report.demo_rounds"), num(report.demo), ""]]
    out.append(Table(say("report.results"), [say("report.col.result"), say("page.count.rounds"),
                                              say("report.col.share")], counts))
    means = {bet: o.mean for bet, o in exact.bets.items()} if exact is not None else {}
    note = say("report.per_bet_note") + (f" {say.words(odds_note)}" if odds_note else "")
    out.append(Table(say("report.per_bet"),
                     [say("report.col.bet"), say("page.count.rounds"), say("report.col.net"),
                      say("report.col.mean"), say("report.col.exact_mean")],
                     [[say.bet(bet), num(n), say.fixed(total, 2, sign=True),
                       say.fixed(total / n, 4, sign=True) if n else "",
                       say.fixed(float(means[bet]), 4, sign=True) if bet in means else ""]
                      for bet, (total, n) in report.bets.items()], note))
    if exact is not None:
        out.append(Table(say("report.outcomes"),
                         [say("report.col.outcome"), say("report.col.exact"),
                          say("report.col.observed"), say("report.col.interval"),
                          say("report.col.within")],
                         [[say.outcome(name), say.fixed(p, 6), say.fixed(o, 6),
                           f"[{say.fixed(lo, 4)}, {say.fixed(hi, 4)}]",
                           say("report.yes") if lo <= p <= hi else say("report.no")]
                          for name, p, o, lo, hi in outcome_rows(report, exact)]))
    out.append(Table(say("report.irregularities"),
                     [say("report.col.time"), say("report.col.shoe"), say("report.col.round"),
                      say("report.col.what")],
                     [[_t(i["utc"]), num(i.get("shoe", "")), num(i.get("round", "")),
                       say.words(problem_words(i))] for i in report.irregularity_list]))
    out.append(Table(say("report.house_burns"),
                     [say("report.col.time"), say("report.col.shoe"), say("report.col.round"),
                      say("report.col.what")],
                     [[_t(b["utc"]), num(b.get("shoe", "")), num(b.get("round", "")),
                       say.words(house_burn_words(b))] for b in report.house_burns]))
    out.append(Table(say("report.holds"),
                     [say("report.col.from"), say("report.col.shoe"), say("report.col.round"),
                      say("report.col.why"), say("report.col.seconds"),
                      say("report.col.cleared_by")],
                     [[_t(h.start), num(h.shoe), num(h.round or ""),
                       say.words(problem_words(h.problem)),
                       say("report.open") if h.seconds is None else say.fixed(h.seconds, 1),
                       f"{h.cleared_by} ({say.known('action', h.cleared_with)})"
                       if h.cleared_by else ""]
                      for h in report.holds],
                     say("report.holds_note", n=len(finished_holds(report)),
                         seconds=say.fixed(sum(h.seconds or 0 for h in report.holds), 1))))
    out.append(Table(say("report.overrides"),
                     [say("report.col.time"), say("report.col.who"), say("report.col.role"),
                      say("report.col.action"), say("report.col.why")],
                     [[_t(o["utc"]), str(o.get("user", "")), say.known("role", o.get("role", "")),
                       say.known("action", o.get("action")), str(o.get("reason", ""))]
                      for o in report.overrides]))
    health = [[say.known("device", device), str(v.get("model") or ""),
               str(v.get("serial") or ""), str(v.get("firmware") or "")]
              for device, v in report.identities.items()]
    out.append(Table(say("report.devices"),
                     [say("report.col.device"), say("report.col.model"), say("report.col.serial"),
                      say("report.col.firmware")], health))
    out.append(Table(say("report.alarms"),
                     [say("report.col.source"), say("report.col.code"), say("report.col.severity"),
                      say("report.col.count")],
                     [[say.known("device", src), code, say.known("severity", sev), num(n)]
                      for (src, code, sev), n in report.alarms.most_common()]))
    return out


def invalid_note(shoe: Any, say: Speaker) -> str:
    return say.words(invalid_words(shoe.number, shoe.end_fields))


def figures(report: Report, exact: Any, say: Speaker | None = None) -> list[Any]:
    say = say or Speaker()
    figs = [charts.roads_figure(s.number, s.roads, say) for s in report.shoes if s.roads]
    # a chart only where there is something to draw: an empty one says nothing
    if report.result_times:
        figs.append(charts.rounds_per_hour_figure(report, say))
    if finished_holds(report):
        figs.append(charts.hold_figure(report, say))
    if exact is not None and report.counted:
        figs.append(charts.odds_figure(outcome_rows(report, exact), len(report.counted), say))
    if report.table:               # several tables in one report: each picture says whose
        for fig in figs:
            fig.text(0.01, 0.995, f"{say('report.col.table')} {report.table}", va="top",
                     ha="left", fontsize=9)
    return figs


def title(report: Report, say: Speaker) -> str:
    what = report.selection_words or report.selection
    return say("report.title", what=what)


def source(report: Report, say: Speaker) -> str:
    """Where the report's records come from: the journal, or the floor store's table."""
    if report.table:
        return say("report.store_table", table=report.table,
                   path=report.journal.rsplit(" table ", 1)[0])
    return say("report.journal", path=report.journal)


def floor_title(reports: list[Report], say: Speaker) -> str:
    what = reports[0].selection_words or reports[0].selection
    return say("report.floor_title", what=what, n=len(reports))


def summary(reports: list[Report], say: Speaker) -> Table:
    """One line a table: what a shift or pit report covers."""
    num = say.number
    return Table(say("report.tables"),
                 [say("report.col.table"), say("report.shoes"), say("page.count.rounds"),
                  say("report.void_rounds"), say("report.holds"), say("report.col.seconds"),
                  say("report.overrides"), say("report.irregularities")],
                 [[r.table or r.journal, num(len(r.shoes)), num(len(r.results)), num(r.void),
                   num(len(r.holds)), say.fixed(sum(h.seconds or 0 for h in r.holds), 1),
                   num(len(r.overrides)), num(len(r.irregularity_list))] for r in reports])


def _many(report: "Report | list[Report]") -> list[Report]:
    return list(report) if isinstance(report, list) else [report]


def write_pdf(report: "Report | list[Report]", path: Path, language: str = SOURCE) -> int:
    """The report as a PDF (several tables': the floor's first page and a line a table, then
    each table's report); its number of pages."""
    from controller.report import pdf
    say = Speaker(language)
    reports = _many(report)
    odds = {id(r): exact_odds(r) for r in reports}
    heading = title(reports[0], say) if len(reports) == 1 else floor_title(reports, say)
    return pdf.write(reports, path, language, heading,
                     parts=lambda r: tables(r, *odds[id(r)], say),
                     figures=lambda r: figures(r, odds[id(r)][0], say),
                     summary=summary(reports, say) if len(reports) > 1 else None,
                     sources=lambda r: source(r, say))


def write_html(report: "Report | list[Report]", path: Path, language: str = SOURCE) -> int:
    """The report as one HTML file (pictures inline); its number of pictures."""
    say = Speaker(language)
    reports = _many(report)
    heading = html.escape(title(reports[0], say) if len(reports) == 1
                          else floor_title(reports, say))
    out = [f"<!doctype html><html lang='{say.html_lang}'><head><meta charset='utf-8'>",
           f"<title>{heading}</title>",
           "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
           "margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:2px 8px;font-size:90%}"
           "th{background:#eee}img{max-width:100%}.simulator{background:#facc15;"
           "border:2px solid #111;padding:4px 10px;font-weight:bold;display:inline-block}"
           "dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 16px}"
           "dl.facts dt{font-weight:bold}dl.facts dd{margin:0}</style></head><body>",
           f"<h1>{heading}</h1>"]
    from controller.report.pdf import cover_facts, joined
    if any(r.simulated for r in reports):
        out.append(f"<p class='simulator'>{html.escape(say('report.cover.simulated'))}</p>")
    if len(reports) > 1:
        out += _facts([(say("report.tables"), ", ".join(r.table_name for r in reports))]
                      + cover_facts(joined(reports), say, table=False))
        out += _html_table(summary(reports, say), say)
    else:
        out += _facts(cover_facts(reports[0], say))
    images = 0
    for r in reports:
        images += _html_report(r, out, say, language, many=len(reports) > 1)
    out.append("</body></html>")
    path.write_text("\n".join(out), encoding="utf-8")
    return images


def _facts(rows: list[tuple[str, str]]) -> list[str]:
    return ["<dl class='facts'>" + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>"
                                            for k, v in rows) + "</dl>"]


def _html_table(t: Table, say: Speaker) -> list[str]:
    out = [f"<h2>{html.escape(t.title)}</h2>"]
    if not t.rows:
        return out + [f"<p>{html.escape(say('report.none'))}</p>"]
    out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in t.header)
               + "</tr>")
    out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
            for r in t.rows]
    out.append("</table>" + (f"<p>{html.escape(t.note)}</p>" if t.note else ""))
    return out


def _html_report(report: Report, out: list[str], say: Speaker, language: str, *,
                 many: bool) -> int:
    from controller.report.pdf import cover_facts
    exact, note = exact_odds(report)
    if many:
        out.append(f"<h1>{html.escape(say('report.table_section', table=report.table_name))}"
                   "</h1>")
        out += _facts(cover_facts(report, say, table=False))
    out.append(f"<p>{html.escape(source(report, say))}</p>")
    for t in tables(report, exact, note, say):
        out += _html_table(t, say)
    images = 0
    out.append(f"<h2>{html.escape(say('report.pictures'))}</h2>")
    alt = html.escape(say("report.picture"), quote=True)
    with fonts.drawing(language):
        for fig in figures(report, exact, say):
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=90)
            out.append(f"<img alt='{alt}' src='data:image/png;base64,"
                       f"{base64.b64encode(buf.getvalue()).decode()}'>")
            images += 1
    return images
