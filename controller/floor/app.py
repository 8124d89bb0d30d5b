"""`tablectl floor`: every table on the broker, one line each, refreshed every second, in the
viewer's language. Tables on hold, stopped, with a device disconnected or a feed behind stand
out; the line above counts them."""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.css.query import NoMatches
from textual.widgets import DataTable, Footer, Static

from controller.floor.model import Floor
from controller.floor.words import COLUMNS, row_words, say, summary


def cells(row: dict, language: str = "en") -> list[Text]:
    """A row's cells, styled: hold red, stopped dim, link down and feed behind yellow."""
    stopped = row["status"] != "online"
    dim = "dim" if stopped else ""
    said = {**row_words(row, language), "table": str(row["table"])}
    styles = {"table": "bold", "state": "bold red" if row["hold"] and not stopped else dim,
              "hold": "bold red" if not stopped else dim,
              "links": "yellow" if row["links_down"] and not stopped else dim,
              "feed": "yellow" if row["feed_late"] else dim,
              "status": "bold yellow" if stopped else ""}
    return [Text(said[key], style=styles.get(key, dim)) for _, key in COLUMNS]


class FloorApp(App):
    TITLE = "tablectl floor"
    BINDINGS = [("q", "quit", "Quit")]
    CSS = "#summary { padding: 0 1; background: $boost; } DataTable { height: 1fr; }"

    def __init__(self, floor: Floor, link: Any, where: str, refresh_s: float = 1.0,
                 language: str = "en"):
        super().__init__()
        # `link`: the FloorWatch (not `watch`, which is Textual's own method)
        self.floor, self.link, self.where, self.refresh_s = floor, link, where, refresh_s
        self.language = language

    def compose(self) -> ComposeResult:
        yield Static("", id="summary")
        yield DataTable(id="tables", zebra_stripes=True, cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for code, key in COLUMNS:
            table.add_column(say(code, self.language), key=key)
        self.redraw()
        self.set_interval(self.refresh_s, self.redraw)

    def redraw(self) -> None:
        try:
            table = self.query_one(DataTable)
        except NoMatches:
            return          # the screen is being taken down (quit): nothing left to draw on
        rows = self.floor.rows()
        for row in rows:
            values = cells(row, self.language)
            if row["table"] in table.rows:
                for (_, key), value in zip(COLUMNS, values):
                    table.update_cell(row["table"], key, value, update_width=True)
            else:
                table.add_row(*values, key=row["table"])
        gone = set(table.rows) - {r["table"] for r in rows}
        for row_key in gone:
            table.remove_row(row_key)
        connected = getattr(self.link, "connected", True)
        self.query_one("#summary", Static).update(
            summary(rows, self.where, connected, self.language))
