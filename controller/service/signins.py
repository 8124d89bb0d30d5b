"""Sign-in attempts for the journal: failures summarised, locks and unlocks in full.

A flood of wrong PINs must not become a flood of durable records (the table's disk and its
fsyncs are the cards'). So a failed sign-in is counted, per account and per minute (UTC), and
each minute that saw failures becomes one record once it is over: how many, by refusal code,
by action asked and by peer (the client process: uid and pid), the first and last time. An
account being locked (its last allowed failure) and a lock found run out are security events:
each is its own durable record at once.
A successful sign-in for a command is journaled as before, one record each (the command itself
is journaled too); successful reads by a console are not. A request refused after a successful
sign-in, before it reached the table (`forbidden`: the role may not; `reason_required`;
`invalid_args`), has `refused` and `why` in its sign-in's record, written durably: the journal
keeps the attempt as it keeps a command the table refused.

All records are of kind "auth" (private: neither replayed nor sent on the floor feed); `event`
tells them apart: "auth" (a success), "auth_failures", "auth_lock", "auth_unlock".
"""
from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable

from controller.access.roles import READ_ACTIONS

MINUTE = 60.0


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


class SignInJournal:
    """`record(result)` from the connection threads; `write(data, durable)` journals one record
    (the service's queue while it runs); `due()` hands out the minutes that are over, `flush`
    writes them (and, at a stop, the current one too)."""

    def __init__(self, write: Callable[[dict, bool], None], *,
                 clock: Callable[[], float] = time.time,
                 mono: Callable[[], float] = time.monotonic):
        self.write, self.clock, self.mono = write, clock, mono
        self._lock = threading.Lock()
        # (minute start, account) -> summary
        self._minutes: dict[tuple[float, str], dict[str, Any]] = {}
        # (minute start, account) -> the monotonic time its first failure came: a minute is
        # over once a minute has passed on that clock too (a wall clock set back an hour
        # would hold its summary back an hour, out of the journal for a crash to lose)
        self._opened: dict[tuple[float, str], float] = {}

    def record(self, result: Any) -> None:
        if result.unlocked_at is not None:
            self.write({"event": "auth_unlock", "user": result.user,
                        "locked_until": _iso(result.unlocked_at), "noticed": _iso(result.at),
                        "by": "the lock ran out"}, True)
        if result.ok:
            # a request refused after its sign-in (a role's, a missing reason) is an attempt
            # the journal keeps durably, as it keeps a command the table refused
            if result.context not in READ_ACTIONS:
                self.write(result.record(), result.refused is not None)
            return
        self._count(result)
        if result.locked_now:
            self.write({"event": "auth_lock", "user": result.user, "at": _iso(result.at),
                        "failures": result.failures, "locked_minutes": result.locked_minutes,
                        "context": result.context}, True)

    def _count(self, result: Any) -> None:
        at = result.at or self.clock()
        minute = at - at % MINUTE
        with self._lock:
            s = self._minutes.get((minute, result.user))
            if s is None:
                self._opened[(minute, result.user)] = self.mono()
                s = self._minutes[(minute, result.user)] = {
                    "event": "auth_failures", "ok": False, "user": result.user,
                    "minute": _iso(minute), "count": 0, "codes": {}, "contexts": {},
                    "first": _iso(at)}
            s["count"] += 1
            s["codes"][result.code] = s["codes"].get(result.code, 0) + 1
            ctx = result.context or "?"
            s["contexts"][ctx] = s["contexts"].get(ctx, 0) + 1
            # which client asked: a flood from one process is not its account owner's doing
            peers = s.setdefault("peers", {})
            peer = getattr(result, "peer", "") or "?"
            if peer in peers or len(peers) < 16:
                peers[peer] = peers.get(peer, 0) + 1
            else:
                peers["others"] = peers.get("others", 0) + 1
            s["last"] = _iso(at)

    def due(self, *, everything: bool = False) -> list[dict]:
        """The summaries of minutes that are over (all of them at a stop), oldest first."""
        now, mono = self.clock(), self.mono()
        opened = self._opened
        with self._lock:
            keys = sorted(k for k in self._minutes if everything or k[0] + MINUTE <= now
                          or mono - opened.get(k, mono) >= MINUTE)
            for k in keys:
                opened.pop(k, None)
            return [self._minutes.pop(k) for k in keys]

    def flush(self, *, everything: bool = False) -> int:
        out = self.due(everything=everything)
        for summary in out:
            self.write(summary, False)
        return len(out)

    def pending(self) -> int:
        with self._lock:
            return len(self._minutes)
