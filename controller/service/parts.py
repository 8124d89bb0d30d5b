"""The seams between the loop and its parts, as protocols.

An `Outlet` receives what the loop publishes (events, the prompt, the status, notices); where it
is connected (`Tap`) says when: outward once committed, as a listener once committed, or as an
actor as each input is applied. A `Source` feeds inputs (a device reader, the control socket, a
timer, a simulated person) and is started and closed by the builder; a `Pump` is a source the
loop drives itself on a virtual clock. A `Watch` is told of each input as its records are staged
and may ask that they be made durable at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, Literal, Protocol, runtime_checkable


class Tap(Enum):
    OUTWARD = "outward"      # stdout, the feed, the display's hub: events, prompts, anchors
    LISTENER = "listener"    # devices, screens, metrics: events, status, notices, committed
    ACTOR = "actor"          # the loop's rhythm and simulated people: told as each input applies


@runtime_checkable
class Outlet(Protocol):
    def publish(self, event: dict) -> None: ...


@runtime_checkable
class Flushing(Protocol):
    """An outlet that buffers (stdout) and writes out what it was given when told."""
    def flush(self) -> None: ...


@runtime_checkable
class Source(Protocol):
    def start(self) -> object: ...
    def close(self) -> None: ...


@runtime_checkable
class Pump(Protocol):
    """A source on a virtual clock: reads what is due now; the next time it has something.

    A pump may say it is `steady` after a pump that wanted nothing: another pump would find
    nothing either until something other than the clock's passing (an input's events, a timer,
    a device acted on) changes it. One without the attribute is never taken for steady."""
    def pump(self) -> float | None: ...


def wake_times(sources: list[Pump]) -> tuple[list[float], bool]:
    """Every source pumped, in its order: the times they want to be looked at again, and
    whether every one of them is steady (the clock moving alone changes none of them)."""
    wakes = []
    steady = True
    for source in sources:      # (a loop: a comprehension would be a call of its own)
        if (wake := source.pump()) is not None:
            wakes.append(wake)
            steady = False
        elif steady:
            try:
                steady = source.steady      # type: ignore[attr-defined]
            except AttributeError:
                steady = False
    return wakes, steady


@runtime_checkable
class Watch(Protocol):
    def staged(self) -> bool:
        """An input's records are staged; True: commit them now."""
        ...

    def durable(self) -> None:
        """The input this watch asked for is committed (nothing of it announced yet)."""
        ...


@dataclass(frozen=True)
class Ack:
    """How a device hears that a read of its is journaled (`fn(seq)`, after the commit)."""
    device: str
    fn: Callable[[int], None]


@dataclass(frozen=True)
class Hook:
    """Told before each input ("before_input"), before each commit ("before_commit": e.g. a
    simulated rig saving its state), or how long each journal write took ("journal_write")."""
    when: Literal["before_input", "before_commit", "journal_write"]
    fn: Callable[..., None]


class Listener:
    """A function that takes events, as an outlet (only those of the kinds in `takes`, when
    it names them: the loop calls it for no other)."""
    __slots__ = ("publish", "takes")

    def __init__(self, fn: Callable[[dict], None], takes: frozenset[str] | None = None):
        self.publish = fn
        # a bound method's object may name them
        self.takes = takes if takes is not None else \
            getattr(getattr(fn, "__self__", None), "takes", None)
