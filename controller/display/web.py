"""The web display (ASGI, Starlette): read-only pages, their JSON and server-sent events.

    /              the players' scoreboard          /dealer          the dealer's page
    /api/roads     the roads of the current shoe    /api/state       the dealer's view as JSON
    /events        scoreboard stream (SSE)          /dealer/events   dealer stream (SSE)
    /assets/…      the pages' scripts and styles, shipped with the package (no CDN)

The pages are written in the table's language once, when the app is made (`pages`): their
`lang`, their fixed words and the labels their scripts write with; the streams carry no words
but the prompt.

Only GET (and HEAD) exist; nothing here changes the table. Each stream sends the current view
at once, then the newest view after every change (a slow browser skips to the latest), and a
comment every 15 s so proxies keep it open; the browser's EventSource reconnects by itself.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller.display.hub import DisplayHub
from controller.display.pages import page as render_page

ASSETS = Path(__file__).with_name("assets")
KEEPALIVE_S = 15.0
#: the pages load nothing from elsewhere and are not framed by other sites
HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def create_app(hub: DisplayHub, extra_routes: list | None = None) -> Any:
    """The display's app; `extra_routes` are served beside it (the monitoring routes)."""
    pages = {name: render_page(name, hub.view.language) for name in ("index.html", "dealer.html")}

    async def page(request: Request) -> Response:
        name = "dealer.html" if request.url.path.rstrip("/") == "/dealer" else "index.html"
        return HTMLResponse(pages[name], headers={"cache-control": "no-cache"})

    async def roads(request: Request) -> Response:
        return _json(hub.json("roads"))

    async def state(request: Request) -> Response:
        return _json(hub.json("dealer"))

    def stream(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return StreamingResponse(_events(hub, name), media_type="text/event-stream",
                                     headers={"cache-control": "no-store",
                                              "x-accel-buffering": "no"})
        return endpoint

    app = Starlette(routes=[
        Route("/", page), Route("/dealer", page),
        Route("/api/roads", roads), Route("/api/state", state),
        Route("/events", stream("scoreboard")), Route("/dealer/events", stream("dealer")),
        Mount("/assets", StaticFiles(directory=ASSETS)),
        *(extra_routes or ()),
    ])
    return SecurityHeaders(app)


def _json(text: str) -> Response:
    return Response(text, media_type="application/json", headers={"cache-control": "no-store"})


async def _events(hub: DisplayHub, name: str) -> AsyncIterator[str]:
    yield "retry: 1000\n\n"
    seen = -1
    while not hub.closed:
        version = hub.versions[name]
        if version != seen:
            seen = version
            data = hub.json(name)
            if name == "scoreboard":
                # the server's clock as it sends, so that a page counts the betting window
                # down to the server's `closes_at` whatever its own clock says
                data = f'{{"now":{time.time():.3f},{data[1:]}'
            yield f"event: {name}\ndata: {data}\n\n"
        elif not await hub.wait(KEEPALIVE_S) and not hub.closed:
            yield ": keep-alive\n\n"


class SecurityHeaders:
    """Adds `HEADERS` to every response (ASGI middleware)."""

    def __init__(self, app: Any):
        self.app = app
        self.extra = [(k.encode(), v.encode()) for k, v in HEADERS.items()]

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = dict(message, headers=list(message.get("headers", [])) + self.extra)
            await send(message)
        await self.app(scope, receive, with_headers)
