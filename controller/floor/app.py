"""`tablectl floor`: every table on the broker, one line each, refreshed every second. Tables on
hold, offline, with a link down or a feed behind stand out; the line above counts them."""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Footer, Static

from controller.floor.model import Floor, counts, result_words

COLUMNS = ("table", "game", "state", "shoe/round", "last result", "hold", "links", "feed",
           "status")


def _age(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)):
        return "?"
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else \
        f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def cells(row: dict) -> list[Text]:
    """A row's cells, styled: hold red, offline dim, link down and feed behind yellow."""
    offline = row["status"] != "online"
    dim = "dim" if offline else ""
    hold = row["hold"]
    shoe_round = f"{row['shoe'] if row['shoe'] is not None else '-'}/" \
                 f"{row['round'] if row['round'] is not None else '-'}"
    status = row["status"] + ("" if not offline or row["clean_exit"] else " (lost)")
    behind = row["feed_behind"]
    return [
        Text(row["table"], style="bold"),
        Text(str(row["game"] or ""), style=dim),
        Text(str(row["state"] or "?"), style="bold red" if hold else dim),
        Text(shoe_round, style=dim),
        Text(result_words(row["last_result"]), style=dim),
        Text(f"{hold['kind']} {_age(hold['age_s'])}" if hold else "", style="bold red"),
        Text(" ".join(f"{d} down" for d in row["links_down"]) or "ok",
             style="yellow" if row["links_down"] else dim),
        Text(f"behind {behind}" if behind else "ok", style="yellow" if behind else dim),
        Text(status, style="bold yellow" if offline else ""),
    ]


def summary(rows: list[dict], where: str, connected: bool) -> str:
    c = counts(rows)
    link = "" if connected else "   (broker connection lost: reconnecting)"
    return (f"{where}   {c['tables']} tables   {c['on_hold']} on hold   {c['offline']} offline"
            f"   {c['links_down']} link down   {c['feed_behind']} feed behind{link}")


class FloorApp(App):
    TITLE = "tablectl floor"
    BINDINGS = [("q", "quit", "Quit")]
    CSS = "#summary { padding: 0 1; background: $boost; } DataTable { height: 1fr; }"

    def __init__(self, floor: Floor, link: Any, where: str, refresh_s: float = 1.0):
        super().__init__()
        # `link`: the FloorWatch (not `watch`, which is Textual's own method)
        self.floor, self.link, self.where, self.refresh_s = floor, link, where, refresh_s

    def compose(self) -> ComposeResult:
        yield Static("", id="summary")
        yield DataTable(id="tables", zebra_stripes=True, cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for name in COLUMNS:
            table.add_column(name, key=name)
        self.redraw()
        self.set_interval(self.refresh_s, self.redraw)

    def redraw(self) -> None:
        table = self.query_one(DataTable)
        rows = self.floor.rows()
        for row in rows:
            values = cells(row)
            if row["table"] in table.rows:
                for name, value in zip(COLUMNS, values):
                    table.update_cell(row["table"], name, value, update_width=True)
            else:
                table.add_row(*values, key=row["table"])
        gone = set(table.rows) - {r["table"] for r in rows}
        for key in gone:
            table.remove_row(key)
        connected = getattr(self.link, "connected", True)
        self.query_one("#summary", Static).update(summary(rows, self.where, connected))
