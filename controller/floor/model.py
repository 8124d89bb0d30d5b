"""The floor as the broker tells it: every table's retained `state` and `status`, one row per
table for a person (`tablectl floor`) or a program (`--json`). Pure: no MQTT, no Textual."""
from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from typing import Any


def _age_s(utc: Any, now: datetime) -> float | None:
    """Seconds since an ISO UTC time (`…Z`); None when absent or unreadable."""
    if not isinstance(utc, str) or not utc:
        return None
    try:
        then = datetime.fromisoformat(utc.replace("Z", "+00:00"))
    except ValueError:
        return None
    return round(max(0.0, (now - then).total_seconds()), 1)


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
        return {
            "table": table, "game": s.get("game"), "profile": s.get("profile"),
            "state": s.get("state"), "shoe": s.get("shoe"), "round": s.get("round"),
            "last_result": s.get("last_result"), "road": s.get("road") or {},
            "hold": None if hold is None else {"kind": hold.get("kind"),
                                               "detail": hold.get("detail"),
                                               "age_s": _age_s(hold.get("since"), now)},
            "links_down": sorted(k for k, v in links.items() if v == "down"),
            "feed_behind": s.get("feed_behind"), "status": status,
            "clean_exit": st.get("clean") if status == "offline" else None,
            "state_age_s": _age_s(s.get("utc"), now)}

    def rows(self, now: datetime | None = None) -> list[dict]:
        now = now or datetime.now(timezone.utc)
        return [self.row(t, now) for t in self.names()]


def counts(rows: list[dict]) -> dict[str, int]:
    """Tables, those on hold, offline, with a link down, with a feed behind."""
    return {"tables": len(rows),
            "on_hold": sum(1 for r in rows if r["hold"] is not None),
            "offline": sum(1 for r in rows if r["status"] != "online"),
            "links_down": sum(1 for r in rows if r["links_down"]),
            "feed_behind": sum(1 for r in rows if r["feed_behind"])}
