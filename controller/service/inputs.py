"""What the loop's inbox takes besides the table's inputs: records that are not inputs,
questions, commands someone waits for, and what parts on other threads report back."""
from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, MutableMapping

from controller.table import Table
from controller.table.inputs import Input


@dataclass
class Note:
    """A record for the journal that is not a table input (a sign-in, an account change)."""
    kind: str
    data: dict
    durable: bool = False


@dataclass
class Query:
    """Run `fn(table)` on the loop's thread and hand its answer to `reply` (read-only)."""
    fn: Callable[[Table], Any]
    reply: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


@dataclass
class Submitted:
    """An input whose outcome someone waits for (a console command)."""
    input: Input
    reply: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


@dataclass(frozen=True)
class CursorMoved:
    """A publisher on a thread of its own got this far (the floor feed's acknowledged seq)."""
    name: str
    seq: int


@dataclass(frozen=True)
class OutletView:
    """What a publisher on a thread of its own reports for the state view (connected, …)."""
    name: str
    view: dict


@dataclass(frozen=True)
class Refusal:
    """The journal turned out not to verify while the table waited: the table stops."""
    error: Exception


@dataclass(frozen=True)
class Retell:
    """An event told again to the actors and listeners, not journaled again (a request to the
    shuffler that a restart found unanswered)."""
    event: dict


@dataclass(frozen=True)
class Proven:
    """The older part of the journal verified: it is signed, and the gate `gate` opens."""
    gate: str


class Reported(MutableMapping[str, Any]):
    """For a part on another thread that writes its position or its view into a mapping: each
    value set is sent through the inbox as a typed input, and only the loop's thread changes
    what the loop reads. Reads see what was last set here."""

    def __init__(self, submit: Callable[[Any], None], kind: type[CursorMoved] | type[OutletView]):
        self._submit, self._kind = submit, kind
        self._last: dict[str, Any] = {}

    def __setitem__(self, key: str, value: Any) -> None:
        self._last[key] = value
        self._submit(self._kind(key, value))

    def __getitem__(self, key: str) -> Any:
        return self._last[key]

    def __delitem__(self, key: str) -> None:
        raise TypeError("a reported position is replaced, never removed")

    def __iter__(self) -> Iterator[str]:
        return iter(dict(self._last))

    def __len__(self) -> int:
        return len(self._last)
