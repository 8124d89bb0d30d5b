"""The pit view in the browser (`tablectl floor --web HOST:PORT`): Starlette and server-sent
events, like the table's own display.

    /              the page, in the viewer's language (`?lang=zh_Hant`, else the default)
    /api/floor     the same as JSON                 /events   its stream (SSE)
    /assets/…      the page's script and style, shipped with the package

Only GET exists; nothing here changes a table. A stream sends the view at once, then the newest
after every change (a slow browser skips to the latest), and a comment every 15 s.
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller.display.web import SecurityHeaders
from controller.floor.pit import PitHub
from controller.words import LANGUAGES, language_tag, normalise
from controller.words.fields import template

ASSETS = Path(__file__).with_name("assets")
TEMPLATE = Path(__file__).with_name("templates") / "pit.html"
KEEPALIVE_S = 15.0
#: each language named in its own words, for the page's chooser
NATIVE = {"en": "English", "zh_Hant": "繁體中文", "hi": "हिन्दी", "bn": "বাংলা", "th": "ไทย"}
LABELS = ("pit.title", "pit.col.table", "pit.col.pit", "pit.col.game", "pit.col.state",
          "pit.col.where", "pit.col.last", "pit.col.hold", "pit.col.links", "pit.col.feed",
          "pit.col.status", "pit.col.pace_hour", "pit.col.pace_shift", "pit.col.hold_share",
          "pit.col.irregularities", "pit.col.dealer", "pit.col.tables", "pit.col.hands",
          "pit.dealers", "pit.alerts", "pit.no_alerts", "pit.no_dealers", "pit.no_store",
          "page.connecting", "page.live", "page.reconnecting", "console.key.language")


def page(language: str) -> str:
    said = {code: template(code, language) for code in LABELS}
    chooser = " ".join(f"<a href='?lang={code}' lang='{language_tag(code)}'>"
                       f"{html.escape(NATIVE[code])}</a>" for code in LANGUAGES)
    data = json.dumps(said, ensure_ascii=False).replace("<", "\\u003c")
    text = TEMPLATE.read_text(encoding="utf-8")
    for code, words in said.items():
        text = text.replace("{{" + code + "}}", html.escape(words))
    return (text.replace("{{lang}}", language_tag(language)).replace("{{code}}", language)
            .replace("{{labels}}", data).replace("{{chooser}}", chooser))


def create_app(hub: PitHub, default_language: str) -> Any:
    pages: dict[str, str] = {}

    def language(request: Request) -> str:
        try:
            return normalise(request.query_params.get("lang") or default_language)
        except ValueError:
            return default_language

    async def index(request: Request) -> Response:
        lang = language(request)
        if lang not in pages:
            pages[lang] = page(lang)
        return HTMLResponse(pages[lang], headers={"cache-control": "no-cache"})

    async def api(request: Request) -> Response:
        return Response(hub.json(language(request)), media_type="application/json",
                        headers={"cache-control": "no-store"})

    async def events(request: Request) -> Response:
        return StreamingResponse(_stream(hub, language(request)),
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-store", "x-accel-buffering": "no"})

    app = Starlette(routes=[Route("/", index), Route("/api/floor", api),
                            Route("/events", events),
                            Mount("/assets", StaticFiles(directory=ASSETS))])
    return SecurityHeaders(app)


async def _stream(hub: PitHub, language: str) -> AsyncIterator[str]:
    yield "retry: 1000\n\n"
    seen = -1
    while not hub.closed:
        if hub.version != seen:
            seen = hub.version
            yield f"event: floor\ndata: {hub.json(language)}\n\n"
        elif not await hub.wait(KEEPALIVE_S) and not hub.closed:
            yield ": keep-alive\n\n"
