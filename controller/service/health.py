"""The table PC's health at a glance: what `tablectl status` prints and the console's panel.

Built on the loop's thread (a `Query`, microseconds): each device's link as its source last saw
it, when the shoe last read a card, the shoe driver's counters, reads kept while a link was
down, the journal's size and last seq and whether its head is signed, the floor feed's lag, the clock, and the software.
"""
from __future__ import annotations

import os
import time
from typing import Any

#: the driver counters the health view shows (all of them are in `devices.shoe.stats`)
SHOE_COUNTERS = ("frames", "cards", "bad_frames", "garbage_bytes", "checksum_errors",
                 "bad_codes", "unknown_tokens", "timeouts", "link_lost", "reconnects")


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _age(t: float | None, now: float) -> float | None:
    """Seconds since `t`, both on the monotonic clock (the wall clock's jumps are not ages)."""
    return None if t is None else round(max(0.0, now - t), 1)


class Health:
    """Knows where each part keeps its state; `view(table)` reads them all."""

    def __init__(self, service: Any, *, journal_path: str | None, shoe: Any = None,
                 shuffler: Any = None, shuffler_url: str | None = None, clock: Any = None,
                 software: dict | None = None):
        self.service, self.journal_path = service, journal_path
        self.shoe, self.shuffler, self.shuffler_url = shoe, shuffler, shuffler_url
        self.clock = clock
        self.software = software or {}
        self.started_at = time.time()
        # how long it has been up is counted on the monotonic clock: a wall clock set back an
        # hour would have it up for minus an hour
        self._started_mono = time.monotonic()

    def view(self, table: Any) -> dict[str, Any]:
        svc = self.service
        hold = table.hold
        mono = time.monotonic()
        return {
            "table": svc.name, "state": table.state, "simulator": svc.prompt.simulated,
            "conditions": dict(svc.conditions.active),
            "up_s": round(mono - self._started_mono, 1),
            "devices": {"shoe": self._shoe(mono), "shuffler": self._shuffler(mono)},
            "reads_queued": len(hold.queued) if hold is not None else 0,
            "journal": self._journal(),
            "feed": self._feed(),
            "clock": self.clock.view() if self.clock is not None else None,
            "software": dict(self.software),
        }

    def _shoe(self, now: float) -> dict[str, Any]:
        """`now`: the monotonic clock's."""
        src = self.shoe
        if src is None:
            return {"link": "none"}
        stats = src.stats
        return {"url": src.url, "protocol": src.protocol, "link": src.link,
                "waiting": src.waiting or None,
                "last_read": _iso(src.last_read_at),
                "last_read_age_s": _age(src.last_read_mono, now),
                "counters": {k: stats.get(k, 0) for k in SHOE_COUNTERS}}

    def _shuffler(self, now: float) -> dict[str, Any]:
        src = self.shuffler
        if src is None:
            return {"link": "none", "url": self.shuffler_url}
        return {"url": self.shuffler_url, "link": src.link,
                "last_contact": _iso(src.last_contact_at),
                "last_contact_age_s": _age(src.last_contact_mono, now),
                "last_error": src.last_error or None}

    def _journal(self) -> dict[str, Any]:
        path = self.journal_path
        size = None
        if path and path != ":memory:":
            size = 0
            for suffix in ("", "-wal", "-shm"):
                try:
                    size += os.path.getsize(path + suffix)
                except OSError:
                    pass
        # False while the older records are still being checked (the table deals meanwhile
        # on a sealed journal: controller/journal/seal.py)
        return {"path": path, "bytes": size, "last_seq": self.service.journal.last_seq,
                "proven": not self.service.anchors.unproven, "anchors": self._anchors()}

    def _anchors(self) -> dict[str, Any] | None:
        """Whether the journal's head is signed (None: no anchor key) and how far behind."""
        a = self.service.anchors.signer
        if a is None:
            return None
        return {"key_id": a.key.key_id, "count": a.n, "last_seq": a.seq or None,
                "since_last": a.unanchored}

    def _feed(self) -> dict[str, Any] | None:
        feed = self.service.reports.get("feed")
        if not feed:
            return None
        out = dict(feed)
        out["lag_events"] = feed.get("behind", 0)
        return out
