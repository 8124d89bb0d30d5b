"""The service's clock and timers. Real time for a live table; virtual time for simulation,
where the loop jumps straight to the next thing that can happen instead of waiting for it."""
from __future__ import annotations

import heapq
import itertools
import time
from typing import Callable


class RealClock:
    virtual = False

    def __call__(self) -> float:
        return time.monotonic()

    def now(self) -> float:
        return time.monotonic()


class VirtualClock:
    """Simulated seconds: they pass only when the loop (or a device model's owner) says so."""
    virtual = True

    def __init__(self, start: float = 0.0):
        self.t = start

    def __call__(self) -> float:
        return self.t

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += max(0.0, seconds)

    def advance_to(self, t: float) -> None:
        self.t = max(self.t, t)


Clock = RealClock | VirtualClock


class Timers:
    """Callbacks due at clock times; used from the loop's thread only."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._n = itertools.count()
        self._cancelled: set[int] = set()

    def call_at(self, t: float, fn: Callable[[], None]) -> int:
        handle = next(self._n)
        heapq.heappush(self._heap, (t, handle, fn))
        return handle

    def cancel(self, handle: int) -> None:
        self._cancelled.add(handle)

    def next_time(self) -> float | None:
        heap, cancelled = self._heap, self._cancelled
        if cancelled:           # (nearly always none: a cancelled timer is rare)
            while heap and heap[0][1] in cancelled:
                cancelled.discard(heapq.heappop(heap)[1])
        return heap[0][0] if heap else None

    def pop_due(self, now: float) -> list[Callable[[], None]]:
        due = []
        heap, cancelled = self._heap, self._cancelled
        while heap and heap[0][0] <= now:
            _, handle, fn = heapq.heappop(heap)
            if handle in cancelled:
                cancelled.discard(handle)
            else:
                due.append(fn)
        return due

    def fire_due(self, now: float) -> bool:
        """Run the callbacks due at `now`, in their order; True when any ran."""
        due = self.pop_due(now)
        for fn in due:
            fn()
        return bool(due)

    def __len__(self) -> int:
        return len(self._heap) - len(self._cancelled)
