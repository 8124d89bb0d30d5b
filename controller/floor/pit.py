"""The pit view's content: every table as the live feed tells it (game, state, hold and its age,
shoe and round, last result, devices, feed lag, online or not) with what the floor store counts
for the shift (hands an hour, time on hold, irregularities, per table and per dealer), and the
alerts (a hold longer than `hold_alert_s`, a table offline, a gap the store found), all in the
viewer's language. The store is read on a thread of its own every `refresh_s`; a store that
cannot be read is an alert, never a blank page.
"""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from typing import Any

from controller.display.changes import Changes
from controller.floor.figures import (KINDS, Figures, dealer_hold_share, dealer_pace,
                                      shift_figures)
from controller.floor.model import Floor
from controller.floor.words import row_words
from controller.logsetup import get_logger
from controller.words import Words, render
from controller.words.fields import join, number

log = get_logger("controller.floor.pit")


def shift_start(now: datetime, first: str = "06:00", hours: float = 8.0) -> datetime:
    """The start of the shift `now` falls in: shifts of `hours` from `first` (HH:MM, UTC)."""
    h, m = (int(x) for x in first.split(":"))
    base = now.replace(hour=h, minute=m, second=0, microsecond=0)
    if base > now:
        base -= timedelta(days=1)
    step = timedelta(hours=hours)
    while base + step <= now:
        base += step
    return base


class PitView:
    def __init__(self, floor: Floor, store_url: str | None = None, *,
                 hold_alert_s: float = 300.0, first_shift: str = "06:00",
                 shift_hours: float = 8.0, refresh_s: float = 5.0):
        self.floor, self.store_url = floor, store_url
        self.hold_alert_s, self.first_shift, self.shift_hours = hold_alert_s, first_shift, \
            shift_hours
        self.refresh_s = refresh_s
        self.tables: dict[str, Figures] = {}
        self.dealers: dict[str, Figures] = {}
        self.alarms: list[tuple] = []
        self.pits: dict[str, str | None] = {}
        self.store_problem: str | None = None
        self.on_change: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ the store's thread
    def start(self) -> "PitView":
        if self.store_url:
            self.refresh()
            self._thread = threading.Thread(target=self._loop, name="pit-store", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _loop(self) -> None:
        while not self._stop.wait(self.refresh_s):
            self.refresh()

    def refresh(self, now: datetime | None = None) -> None:
        """Read the shift's figures and the open alarms from the store."""
        from controller.errors import InputError
        from controller.floor.store.reader import open_alarms, open_store, pits, shift_records
        now = now or datetime.now(timezone.utc)
        try:
            with open_store(self.store_url, "--db") as (conn, _):
                records = shift_records(conn, shift_start(now, self.first_shift,
                                                          self.shift_hours), KINDS)
                alarms, known = open_alarms(conn), pits(conn)
        except InputError as err:
            if str(err) != self.store_problem:
                log.warning(f"pit view: {err}")
            self.store_problem = str(err)
        else:
            self.tables, self.dealers = shift_figures(
                records, now, shift_start(now, self.first_shift, self.shift_hours))
            self.alarms, self.pits, self.store_problem = alarms, known, None
        if self.on_change is not None:
            self.on_change()

    # ------------------------------------------------------------------ what the page shows
    def view(self, language: str, now: datetime | None = None) -> dict:
        now = now or datetime.now(timezone.utc)

        def say(code: str, **fields: Any) -> str:
            return render(Words(code, fields), language)

        names = sorted(set(self.floor.names()) | set(self.tables))
        rows: list[dict] = []
        alerts: list[dict] = []
        for name in names:
            rows.append(self._row(name, language, now, say, alerts))
        for table, kind, low, high in self.alarms:
            code = "pit.alert.gap" if kind == "gap" else "pit.alert.chain"
            alerts.append({"kind": kind, "table": table,
                           "text": say(code, table=table, low=low, high=high)})
        if self.store_problem:
            alerts.append({"kind": "store", "table": None,
                           "text": say("pit.alert.store", why=self.store_problem)})
        dealers = []
        for who, d in sorted(self.dealers.items()):
            dealers.append({"dealer": who, "tables": join(sorted(d.dealers), language),
                            "hands": number(d.hands_shift, language),
                            "pace": self._num(dealer_pace(d), language),
                            "hold_share": self._percent(dealer_hold_share(d), language),
                            "irregularities": number(d.irregularities, language)})
        start = shift_start(now, self.first_shift, self.shift_hours)
        return {"language": language, "tables": rows, "dealers": dealers, "alerts": alerts,
                "store": bool(self.store_url),
                "shift": say("pit.shift", time=f"{start:%Y-%m-%d %H:%M}"),
                "updated": say("pit.updated", time=f"{now:%H:%M:%S}")}

    def _row(self, name: str, language: str, now: datetime, say: Any,
             alerts: list[dict]) -> dict:
        live = self.floor.row(name, now)
        figures = self.tables.get(name, Figures())
        state = live.get("state")
        hold = live.get("hold")
        pit = self.floor.states.get(name, {}).get("pit") or self.pits.get(name)
        status = live["status"]
        said = row_words(live, language)
        if status == "offline":
            alerts.append({"kind": "offline", "table": name, "text": say(
                "pit.alert.offline" if live.get("clean_exit") else "pit.alert.offline_lost",
                table=name)})
        if hold is not None and status == "online":
            # a stopped table's hold is no longer ticking: its alert is that it stopped
            age = hold.get("age_s") or 0.0
            if age >= self.hold_alert_s:
                alerts.append({"kind": "hold", "table": name, "text": say(
                    "pit.alert.hold", table=name, n=max(1, int(age // 60)),
                    kind=hold.get("kind") or "unknown")})
        down = live.get("links_down") or []
        behind = (live.get("feed_behind") or 0) if live.get("feed_late") else 0
        pace_hour, pace_shift = figures.pace_hour(now), figures.pace_shift(now)
        share = figures.hold_share(now)
        return {
            "table": name, "pit": pit or "", "game": said["game"], "state": said["state"],
            "held": hold is not None and status == "online", "hold": said["hold"],
            "where": said["where"], "last": said["last"], "links": said["links"],
            "links_down": bool(down) and status == "online", "feed": said["feed"],
            "behind": behind, "online": status == "online", "status": said["status"],
            "pace_hour": self._num(pace_hour, language),
            "pace_shift": self._num(pace_shift, language),
            "hold_share": self._percent(share, language),
            "irregularities": number(figures.irregularities, language)
            if name in self.tables else "",
            "sort": {"table": name, "pit": pit or "", "game": live.get("game") or "",
                     "state": state or "", "held": hold.get("age_s") or 0 if hold else -1,
                     "pace_hour": pace_hour if pace_hour is not None else -1,
                     "pace_shift": pace_shift if pace_shift is not None else -1,
                     "hold_share": share if share is not None else -1,
                     "irregularities": figures.irregularities, "behind": behind,
                     "online": status == "online"}}

    @staticmethod
    def _num(value: float | None, language: str) -> str:
        return "" if value is None else number(int(round(value)), language)

    @staticmethod
    def _percent(value: float | None, language: str) -> str:
        return "" if value is None else f"{number(round(value * 100, 1), language)} %"


class PitHub:
    """Between the feed's and the store's threads and the web server: a version that moves
    when anything may have changed (and every `tick_s`, so ages move on), and each language's
    JSON made once per version."""

    def __init__(self, view: PitView, tick_s: float = 2.0):
        import json
        self.view, self.tick_s, self._dumps = view, tick_s, json.dumps
        self.version = 0
        self.changes = Changes()
        self.loop: Any = None
        self._cache: dict[str, tuple[int, str]] = {}
        self._ticker: Any = None

    def changed(self, *_: Any) -> None:
        """From any thread."""
        loop = self.loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._bump)
            except RuntimeError:
                pass

    def attach(self, loop: Any) -> None:
        self.loop = loop
        self._ticker = loop.call_later(self.tick_s, self._tick)

    def _tick(self) -> None:
        self._bump()
        if not self.closed:
            self._ticker = self.loop.call_later(self.tick_s, self._tick)

    def _bump(self) -> None:
        self.version += 1
        self.changes.wake()

    @property
    def closed(self) -> bool:
        return self.changes.closed

    async def wait(self, timeout: float) -> bool:
        return await self.changes.wait(timeout)

    def json(self, language: str) -> str:
        cached = self._cache.get(language)
        if cached is None or cached[0] != self.version:
            # (escaped to ASCII: text no encoder takes, half a surrogate in a record or in an
            # error's words, stays JSON the page reads, never a failed response)
            cached = self._cache[language] = (self.version, self._dumps(
                self.view.view(language), separators=(",", ":")))
        return cached[1]

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        self.version += 1
        self.changes.close()
