"""The floor as the broker tells it: every table's retained `state` and `status`, one row per
table for a person (`tablectl floor`) or a program (`--json`). Pure: no MQTT, no Textual.

A table is behind only when its feed really lags: events are owed (by seq) and the oldest of
them was journaled `LATE_AFTER_S` ago or more (by time) — a table in full flow always owes a
record or two for a few milliseconds. A table that stopped (offline) is counted as stopped,
not as on hold, and a hold it stopped in keeps the age it had when it stopped."""
from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from typing import Any

#: the oldest event owed this many seconds: the feed is behind (the table's own threshold)
LATE_AFTER_S = 5.0
#: a table that does not say how old its lag is: behind from this many events owed
LATE_EVENTS = 20


def _when(utc: Any) -> datetime | None:
    if not isinstance(utc, str) or not utc:
        return None
    try:
        return datetime.fromisoformat(utc.replace("Z", "+00:00"))
    except ValueError:
        return None


def _age_s(utc: Any, now: datetime) -> float | None:
    """Seconds since an ISO UTC time (`…Z`); None when absent or unreadable."""
    then = _when(utc)
    if then is None:
        return None
    return round(max(0.0, (now - then).total_seconds()), 1)


def late(behind: Any, lag_s: Any) -> bool:
    """Whether a feed that owes `behind` events, the oldest `lag_s` seconds old, is behind."""
    if not isinstance(behind, int) or behind <= 0:
        return False
    if isinstance(lag_s, (int, float)):
        return lag_s >= LATE_AFTER_S
    return behind >= LATE_EVENTS


def result_words(result: Any) -> str:
    """The last result in a few words: `#12 BANKER 9-7`, `#3 VOID`."""
    if not isinstance(result, dict):
        return ""
    tag = f"#{result.get('round', '?')}"
    if result.get("void"):
        return f"{tag} VOID"
    winner = str(result.get("winner") or "").upper()
    if "player_total" in result and "banker_total" in result:
        winner += f" {result['player_total']}-{result['banker_total']}"
    return f"{tag} {winner}".rstrip() + (" (demo)" if result.get("demo") else "")


class Floor:
    """Messages in (from any thread), rows out."""

    def __init__(self, prefix: str = "tables"):
        self.prefix = prefix.strip("/")
        self.states: dict[str, dict] = {}
        self.statuses: dict[str, dict] = {}
        self.lock = threading.Lock()

    def message(self, topic: str, payload: bytes) -> str | None:
        """Take one message; the table it changed, or None when it is not a floor message."""
        head = self.prefix + "/"
        if not topic.startswith(head):
            return None
        table, _, leaf = topic[len(head):].rpartition("/")
        if not table or leaf not in ("state", "status"):
            return None
        if not payload:                     # a retained message cleared: the table is gone
            with self.lock:
                (self.states if leaf == "state" else self.statuses).pop(table, None)
            return table
        try:
            data = json.loads(payload)
        except ValueError:
            data = {"status": payload.decode("utf-8", "replace").strip()} \
                if leaf == "status" else None
        if not isinstance(data, dict):
            return None
        with self.lock:
            (self.states if leaf == "state" else self.statuses)[table] = data
        return table

    def names(self) -> list[str]:
        with self.lock:
            return sorted(set(self.states) | set(self.statuses))

    def row(self, table: str, now: datetime | None = None) -> dict:
        """One table as the floor shows it (ages from `now`, UTC)."""
        now = now or datetime.now(timezone.utc)
        with self.lock:
            s = dict(self.states.get(table) or {})
            st = dict(self.statuses.get(table) or {})
        hold = s.get("hold") if isinstance(s.get("hold"), dict) else None
        links: dict = s["links"] if isinstance(s.get("links"), dict) else {}
        status = str(st.get("status") or "unknown")
        # a stopped table's hold is as old as it was when the table stopped (a table lost
        # without a word: when it was last heard of)
        until = (_when(st.get("utc")) or _when(s.get("utc"))) if status == "offline" else None
        until = min(now, until) if until is not None else now
        return {
            "table": table, "game": s.get("game"), "profile": s.get("profile"),
            "state": s.get("state"), "shoe": s.get("shoe"), "round": s.get("round"),
            "last_result": s.get("last_result"), "road": s.get("road") or {},
            "hold": None if hold is None else {"kind": hold.get("kind"),
                                               "detail": hold.get("detail"),
                                               "age_s": _age_s(hold.get("since"), until)},
            "links_down": sorted(k for k, v in links.items() if v == "down"),
            "feed_behind": s.get("feed_behind"), "feed_lag_s": s.get("feed_lag_s"),
            "feed_late": status == "online" and late(s.get("feed_behind"), s.get("feed_lag_s")),
            "status": status, "clean_exit": st.get("clean") if status == "offline" else None,
            "state_age_s": _age_s(s.get("utc"), now)}

    def rows(self, now: datetime | None = None) -> list[dict]:
        now = now or datetime.now(timezone.utc)
        return [self.row(t, now) for t in self.names()]


def counts(rows: list[dict]) -> dict[str, int]:
    """Tables; of those dealing (online), the ones on hold, with a device disconnected, with
    a feed behind; and the ones stopped or not heard from (offline)."""
    online = [r for r in rows if r["status"] == "online"]
    return {"tables": len(rows),
            "on_hold": sum(1 for r in online if r["hold"] is not None),
            "offline": len(rows) - len(online),
            "links_down": sum(1 for r in online if r["links_down"]),
            "feed_behind": sum(1 for r in online if r["feed_late"])}
