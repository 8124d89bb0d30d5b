"""Between the table's loop and the web server: events in on one thread, views out on another.

The table's loop calls `publish` (events) and `on_status` (its status after every input) on its
own thread; they only append to a queue and, when the queue was empty, ask the server's event
loop to drain it — a few microseconds, never a wait. What one input published (its events, the
prompt, then the status that ends it) enters the queue as one batch, so no view ever shows
half an input (a card without the state it led to): a dealer who follows the page never sees
a card asked for that the table no longer wants. Everything else happens on the server's
event loop: the public view is updated there, each view's JSON is made once per change, and
every open stream is woken to send the newest (a slow browser skips to the latest, so nothing
piles up).
"""
from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from typing import Any, Callable

from controller.display.changes import Changes
from controller.display.public import PublicView
from controller.schema import stamped

VIEWS = ("scoreboard", "dealer")


class DisplayHub:
    def __init__(self, view: PublicView, clock: Callable[[], float] = time.time):
        self.view = view
        self.clock = clock
        self.loop: asyncio.AbstractEventLoop | None = None
        self.versions = {name: 0 for name in VIEWS}
        self.changes = Changes()
        self._inbox: deque[tuple[list[dict], float]] = deque()
        self._batch: list[dict] = []        # the input being published, until its status
        self._scheduled = False
        self._json: dict[str, tuple[int, str]] = {}

    # ------------------------------------------------------------------ the table's thread
    def publish(self, event: dict) -> None:
        self._batch.append(event)

    def on_status(self, event: dict) -> None:
        """A subscriber: only the table's status (its events come through `publish`), which
        ends what one input published."""
        if event.get("event") == "status":
            self._batch.append(event)
            self.flush()

    def flush(self) -> None:
        """What was published so far goes to the views (the table's status does this)."""
        if self._batch:
            batch, self._batch = self._batch, []
            self._put(batch)

    def _put(self, batch: list[dict]) -> None:
        self._inbox.append((batch, self.clock()))
        loop = self.loop
        if loop is not None and not self._scheduled:
            self._scheduled = True
            try:
                loop.call_soon_threadsafe(self._drain)
            except RuntimeError:        # the server has stopped: nobody is watching
                pass

    # ------------------------------------------------------------------ before the server runs
    def feed(self, events: Any) -> None:
        """Events read back from the journal, before the server starts."""
        for e in events:
            self.view.publish(e)

    # ------------------------------------------------------------------ the server's loop
    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._scheduled = True
        loop.call_soon(self._drain)

    def _drain(self) -> None:
        self._scheduled = False
        changed: set[str] = set()
        while self._inbox:
            batch, at = self._inbox.popleft()
            for event in batch:
                changed |= self.view.publish(event, at)
        for name in changed:
            self.versions[name] += 1
        if changed:
            self.changes.wake()

    @property
    def closed(self) -> bool:
        return self.changes.closed

    async def wait(self, timeout: float) -> bool:
        """Until a view changes (True) or `timeout` seconds pass (False)."""
        return await self.changes.wait(timeout)

    def json(self, name: str) -> str:
        """A view's JSON ("scoreboard", "dealer" or "roads"), made once per change."""
        version = self.versions["scoreboard" if name == "roads" else name]
        cached = self._json.get(name)
        if cached is None or cached[0] != version:
            data = {"scoreboard": self.view.scoreboard, "dealer": self.view.dealer,
                    "roads": self.view.roads_json}[name]()
            cached = self._json[name] = (version, json.dumps(stamped(data),
                                                             separators=(",", ":")))
        return cached[1]

    def close(self) -> None:
        """Streams end (called on the server's loop as it stops)."""
        self.changes.close()
