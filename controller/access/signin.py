"""What keeps sign-ins from being raced or flooded: per-account turns, rate limits.

- `Turns`: one sign-in per account at a time, in arrival order (a ticket queue), so the failure
  count and the lock are decided on what the attempts before it did: 30 wrong PINs sent at
  once are checked one after the other, five of them, and the rest find the account locked;
  a right PIN queued behind five wrong ones finds it locked too.
- `RateLimit`: token buckets per key (a peer's uid, an account name); an attempt takes a
  token before it is checked and gives it back when it succeeds, so only failures (and
  attempts still in flight) spend the budget. Keys whose bucket is full again are forgotten,
  so a flood of made-up names costs memory only while it lasts.

The scrypt computations themselves are bounded by a semaphore in `AccountStore`.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator


class _Queue:
    __slots__ = ("next", "serving", "gone", "users")

    def __init__(self) -> None:
        self.next = 0           # the ticket the next arrival takes
        self.serving = 0        # the ticket whose turn it is
        self.gone: set[int] = set()     # tickets whose holders stopped waiting
        self.users = 0          # holders and waiters


class Turns:
    """Per-key turns in arrival order. `turn(key, timeout)` yields True once it is this
    caller's turn, or False when `timeout` ran out first (the caller then gives up)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queues: dict[str, _Queue] = {}

    def waiting(self, key: str) -> int:
        """How many callers hold or wait for `key`'s turn (for tests and the state view)."""
        with self._cond:
            q = self._queues.get(key)
            return q.users if q is not None else 0

    @contextmanager
    def turn(self, key: str, timeout: float) -> Iterator[bool]:
        with self._cond:
            q = self._queues.setdefault(key, _Queue())
            ticket = q.next
            q.next += 1
            q.users += 1
            got = self._cond.wait_for(lambda: q.serving == ticket, timeout)
            if not got:
                q.gone.add(ticket)
        try:
            yield got
        finally:
            with self._cond:
                if got:
                    q.serving += 1
                while q.serving in q.gone:      # skip those who stopped waiting
                    q.gone.discard(q.serving)
                    q.serving += 1
                q.users -= 1
                if q.users == 0:
                    del self._queues[key]
                self._cond.notify_all()


class RateLimit:
    """Token buckets: `capacity` attempts at once, refilled at `per_minute` a minute."""

    def __init__(self, capacity: int, per_minute: float, *,
                 clock: Callable[[], float] = time.monotonic, keep: int = 4096):
        if capacity < 1 or per_minute <= 0:
            raise ValueError(f"a rate limit needs capacity >= 1 and a refill > 0, got "
                             f"{capacity}, {per_minute}")
        self.capacity, self.rate = float(capacity), per_minute / 60.0
        self.clock, self.keep = clock, keep
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}     # key -> (tokens, at)

    def _level(self, key: str, now: float) -> float:
        tokens, at = self._buckets.get(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - at) * self.rate)

    def take(self, key: str) -> float:
        """Take a token: 0.0 when there was one, else the seconds until there is."""
        now = self.clock()
        with self._lock:
            tokens = self._level(key, now)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return (1.0 - tokens) / self.rate
            self._buckets[key] = (tokens - 1.0, now)
            if len(self._buckets) > self.keep:
                self._forget_full(now)
            return 0.0

    def give_back(self, key: str) -> None:
        now = self.clock()
        with self._lock:
            self._buckets[key] = (min(self.capacity, self._level(key, now) + 1.0), now)

    def _forget_full(self, now: float) -> None:
        full = [k for k in self._buckets if self._level(k, now) >= self.capacity]
        for k in full:
            del self._buckets[k]
