"""A floor row (controller.floor.model) in the viewer's words: its game, state, hold (the kind
of hold, for how long), shoe and round, last result, devices, feed and connection, each from
the message catalogue in `language`. The pit view, the full-screen floor and `floor --once`
all say a table this way."""
from __future__ import annotations

from typing import Any, Mapping

from rich.cells import cell_len

from controller.floor.model import counts
from controller.words import Words, render
from controller.words.fields import field, join, number, template


def say(code: str, language: str, **fields: Any) -> str:
    return render(Words(code, fields), language)


def hold_text(hold: Mapping[str, Any] | None, language: str) -> str:
    """`a lost link, for 2 minutes`: the kind of hold, never its detail."""
    if not hold:
        return ""
    age = hold.get("age_s") or 0.0
    kind = hold.get("kind") or "unknown"
    return say("pit.hold_seconds", language, kind=kind, seconds=int(age)) if age < 60 else \
        say("pit.hold_minutes", language, kind=kind, n=int(age // 60))


def result_text(result: Any, language: str) -> str:
    """`Round 12: BANKER 7–9`, `Round 3: VOID`."""
    if not isinstance(result, dict) or result.get("round") is None:
        return ""
    head = say("console.round", language, n=result["round"]) + ": "
    if result.get("void"):
        return head + template("console.void", language)
    winner = result.get("winner")
    text = head + (template(f"console.winner.{winner}", language) if winner else "")
    if "player_total" in result and "banker_total" in result:
        text += (f" {number(result['player_total'], language)}–"
                 f"{number(result['banker_total'], language)}")
    if result.get("demo"):
        text += " " + template("console.demo_short", language)
    return text


def status_text(row: Mapping[str, Any], language: str) -> str:
    status = row.get("status")
    if status == "online":
        return say("pit.online", language)
    if status == "offline":
        return say("pit.offline" if row.get("clean_exit") else "pit.offline_lost", language)
    return say("pit.not_heard", language)


def row_words(row: Mapping[str, Any], language: str) -> dict[str, str]:
    """Each column of one table's row, in words."""
    state = row.get("state")
    heard = row.get("status") in ("online", "offline")
    dealing = row.get("status") == "online"
    down = row.get("links_down") or []
    where = ""
    if row.get("shoe") is not None:
        where = say("page.shoe", language, n=row["shoe"]) + (
            f" · {say('console.round', language, n=row['round'])}" if row.get("round") else "")
    return {
        "game": template(f"game.{row['game']}", language) if row.get("game") else "",
        "state": say("floor.stopped", language) if row.get("status") == "offline"
        else field("state", state, language) if state else "",
        "hold": hold_text(row.get("hold"), language),
        "where": where,
        "last": result_text(row.get("last_result"), language),
        "links": "" if not dealing else join([say("pit.link_down", language, device=d)
                                              for d in down], language)
        if down else say("pit.links_up", language),
        "feed": "" if not dealing or not heard else
        say("pit.feed_behind", language, n=row.get("feed_behind") or 0)
        if row.get("feed_late") else say("pit.feed_ok", language),
        "status": status_text(row, language),
    }


#: the columns of the floor's text, in order: (the column's title, the row's words for it)
COLUMNS = (("pit.col.table", "table"), ("pit.col.game", "game"), ("pit.col.state", "state"),
           ("pit.col.where", "where"), ("pit.col.last", "last"), ("pit.col.hold", "hold"),
           ("pit.col.links", "links"), ("pit.col.feed", "feed"),
           ("pit.col.status", "status"))


def summary(rows: list[dict], where: str, connected: bool, language: str) -> str:
    """The line above the tables: how many, on hold, stopped, with a device down, behind."""
    c = counts(rows)
    parts = [say("floor.count.tables", language, n=c["tables"]),
             say("floor.count.on_hold", language, n=c["on_hold"]),
             say("floor.count.offline", language, n=c["offline"]),
             say("floor.count.links_down", language, n=c["links_down"]),
             say("floor.count.feed_behind", language, n=c["feed_behind"])]
    line = f"{where}   " + "   ".join(parts)
    if not connected:
        line += "   " + say("floor.broker_lost", language)
    return line


def floor_text(rows: list[dict], where: str, language: str, connected: bool = True) -> str:
    """The floor as lines of text (`tablectl floor --once`): the summary, then a table's row
    a line, in columns as wide as the terminal shows them."""
    cells = [[say(code, language) for code, _ in COLUMNS]]
    for row in rows:
        said = {**row_words(row, language), "table": str(row["table"])}
        cells.append([said[key] for _, key in COLUMNS])
    widths = [max(cell_len(r[i]) for r in cells) for i in range(len(COLUMNS) - 1)]
    lines = [summary(rows, where, connected, language), ""]
    lines += ["  ".join([*(c + " " * (w - cell_len(c)) for c, w in zip(r, widths)),
                         r[-1]]).rstrip() for r in cells]
    if not rows:
        lines.append(say("floor.no_tables", language))
    return "\n".join(lines)
