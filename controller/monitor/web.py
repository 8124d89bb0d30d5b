"""`/metrics`, `/healthz` and `/readyz` as Starlette routes: added to the web display's app,
or served alone on `[metrics] listen`. GET only, no credentials, nothing secret (no cards,
no bets, no names).

    /metrics   Prometheus' text format (prometheus-client)
    /healthz   200 {"live": true} while the table's loop answers, else 503
    /readyz    200 {"ready": true} when the loop answers, every device is linked and no
               service condition stops dealing (the shoe waited for, software not accepted);
               else 503 with the reasons
"""
from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from controller.monitor.metrics import CONTENT_TYPE_LATEST, TableMetrics


#: the device links a table deals with (a shuffler answers when asked: "unused" until then)
READY_LINKS = {"shoe": ("up",), "shuffler": ("ok", "unused", "none")}


def readiness(view: dict | None) -> list[str]:
    """Why the table is not ready to deal (empty when it is)."""
    if view is None:
        return ["the table's loop did not answer"]
    why = []
    for device, d in (view.get("devices") or {}).items():
        link = d.get("link", "none")
        if link not in READY_LINKS.get(device, ()):
            why.append(f"{device} link {link}")
    why += [f"condition {name}" for name in view.get("conditions") or {}]
    return why


def _json(body: dict, ok: bool) -> Response:
    return Response(json.dumps(body), status_code=200 if ok else 503,
                    media_type="application/json", headers={"cache-control": "no-store"})


def routes(metrics: TableMetrics) -> list[Route]:
    import asyncio

    async def scrape(request: Request) -> Response:
        # the health view is built on the table's loop: wait for it off the server's loop
        text = await asyncio.to_thread(metrics.text)
        return Response(text, media_type=CONTENT_TYPE_LATEST,
                        headers={"cache-control": "no-store"})

    async def healthz(request: Request) -> Response:
        view = await asyncio.to_thread(metrics.health) if metrics.health else None
        return _json({"live": view is not None}, view is not None)

    async def readyz(request: Request) -> Response:
        view = await asyncio.to_thread(metrics.health) if metrics.health else None
        why = readiness(view)
        return _json({"ready": not why, "why": why}, not why)

    return [Route("/metrics", scrape), Route("/healthz", healthz), Route("/readyz", readyz)]


def create_app(metrics: TableMetrics) -> Any:
    """The three routes alone, for `[metrics] listen`."""
    return Starlette(routes=routes(metrics))
