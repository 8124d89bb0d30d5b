"""The table's web display: the players' scoreboard and the dealer's page, fed live from the
table's published events (`public` decides what may be shown, `hub` carries events from the
table's loop to the web server, `web` is the ASGI app, `pages` writes its pages in the table's
language, `server` runs it, `history` reads a shoe's events back from the journal, `terminal`
draws the roads in a terminal)."""
from __future__ import annotations

import socket
from typing import Any, Iterable


def start(sock: socket.socket, *, reveal: str = "on_read", history: Iterable[dict] = (),
          language: str = "en", simulator: bool = False, table: str = "",
          game: str | None = None, limits: dict | None = None,
          extra_routes: list | None = None) -> tuple[Any, Any]:
    """(hub, server): the display serving on `sock`, its view first fed `history` (the current
    shoe's journaled events), its pages in `language` (the table's), with a SIMULATOR ribbon
    when `simulator` (the table runs on the simulator), and `extra_routes` served beside the
    pages (monitoring); the players' page names the `table`, its `game` and its `limits`
    ({"min", "max"}, or None). The caller adds `hub.publish` to the
    service's publishers and `hub.on_status` to its subscribers, and closes the server when
    the table stops."""
    from controller.display.hub import DisplayHub
    from controller.display.public import PublicView
    from controller.display.server import DisplayServer
    from controller.display.web import create_app
    hub = DisplayHub(PublicView(reveal, language, simulator=simulator, table=table, game=game,
                                limits=limits))
    hub.feed(history)
    return hub, DisplayServer(create_app(hub, extra_routes), sock, hub).start()
