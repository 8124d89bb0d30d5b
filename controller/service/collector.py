"""Python's garbage collector, run by the live loop while nothing waits for it.

CPython collects reference cycles whenever enough objects have been made since the last
collection, wherever that happens to fall: in the middle of a card's apply or its journal
write, a collection of the younger objects takes about a millisecond, more than the rest of
the card's latency. Live, the loop instead collects when its inbox is empty (the card just
announced, the next one not yet read), with the same generations and thresholds CPython
would use, and start-up's objects (modules, classes, the profile) are set aside once so that
no collection walks them again. A loop that never finds its inbox empty (a flood of inputs)
still collects, once many times the usual number of objects has been made, so memory stays
bounded whatever comes.

On the virtual clock nothing outside waits for a card: the collector is left as it is.
"""
from __future__ import annotations

import gc
import threading

__all__ = ["Collector"]

#: collect even with inputs waiting once this many times the youngest generation's threshold
#: has been made: a flood does not grow the heap without bound
FLOOD_FACTOR = 20

# the collector is the process's: with two live loops in one process (tests, a rig) it comes
# back on when the last one stops
_lock = threading.Lock()
_users = 0


class Collector:
    """`start` before the loop's first input, `turn(idle)` each time it looks for the next,
    `stop` after the last (in a `finally`: the process gets its automatic collector back)."""

    def __init__(self) -> None:
        first, second, third = gc.get_threshold()
        self._thresholds = (max(first, 1), max(second, 1), max(third, 1))
        self.running = False
        self.collections = [0, 0, 0]            # made here, by generation

    def start(self) -> None:
        global _users
        if self.running:
            return
        with _lock:
            if _users == 0:
                if not gc.isenabled() or gc.get_threshold()[0] <= 0:
                    return          # the process turned collection off itself: left so
                gc.collect()
                gc.freeze()         # start-up's objects: never walked again
                gc.disable()
            _users += 1
        self.running = True

    def turn(self, idle: bool) -> None:
        """The loop looks for its next input: a collection due is made now if nothing waits
        (`idle`), or whatever waits once far more than due."""
        if not self.running:
            return
        young, middle, old = gc.get_count()
        first, second, third = self._thresholds
        if young < first or (not idle and young < first * FLOOD_FACTOR):
            return
        generation = 2 if old >= third else 1 if middle >= second else 0
        gc.collect(generation)
        self.collections[generation] += 1

    def stop(self) -> None:
        global _users
        if not self.running:
            return
        self.running = False
        with _lock:
            _users -= 1
            if _users == 0:
                gc.unfreeze()       # as the process was: what start-up made is collectable
                gc.enable()
