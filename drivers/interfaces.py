"""What the table calls on its devices: the typed seam between the controller and any shoe or
shuffler driver, tablectl's own or a vendor's plugin (docs/drivers.md).

The controller's device sources hold drivers only through these protocols. Every shoe
protocol, tablectl's and a plugin's, satisfies `ShoeDriver` by subclassing
`drivers.shoe.base.ShoeDriverBase` (which owns the read loop: timeouts, resync, reconnection;
`drivers.shoe.shoe_driver` refuses a class that does not). A shuffler plugin's `open` may return
any object with `ShufflerDriver`'s methods, as tablectl's `FramedShuffler` has; one without
them is refused by name when it is opened (`runtime_checkable`: the names must be there). A
type checker checks the signatures as well (the packages ship `py.typed`).
"""
from __future__ import annotations

from typing import Mapping, Protocol, runtime_checkable

from drivers.events import DeviceEvent, ShuffleDone, ShufflerIdentity, ShufflerStatus

__all__ = ["ShoeDriver", "ShufflerDriver"]


@runtime_checkable
class ShoeDriver(Protocol):
    """A card-recognition shoe: typed events out, acknowledgements of journaled reads in."""

    #: the shoe resends reads the controller has not acknowledged (nothing lost in flight)
    resends: bool
    #: the shoe says itself when cards were drawn together (no guessing from read times)
    flags_multiple_draws: bool

    def read_event(self, timeout: float | None = None) -> DeviceEvent | None:
        """One event, or None when none arrived within `timeout`; never raises: link trouble
        is a LinkLost / LinkBack event."""
        ...

    def ack(self, seq: int) -> None:
        """The read numbered `seq` is journaled (a no-op for shoes without acknowledgements)."""
        ...

    def resume(self, last_seq: int) -> None:
        """After a restart: reads up to `last_seq` are journaled already."""
        ...

    def cancel_read(self) -> None:
        """From another thread: the read under way returns None now, and so do later ones
        (the reader thread is stopping)."""
        ...

    def close(self) -> None: ...

    @property
    def buffered(self) -> bool:
        """Bytes or a decoded event wait inside the driver: read on before calling it quiet."""
        ...

    @property
    def connected(self) -> bool:
        """The port is open and the link not declared lost."""
        ...

    @property
    def reconnect_delay_s(self) -> float:
        """While the link is down: the seconds until the next attempt to open it again."""
        ...

    @property
    def stats(self) -> Mapping[str, int]:
        """Counters for the health view (frames, cards, checksum errors, timeouts, …)."""
        ...


@runtime_checkable
class ShufflerDriver(Protocol):
    """An automatic shuffler, one request at a time. Raises the exceptions of
    drivers.shuffler (ShufflerRefused, ShufflerFault, ShuffleCountError) and drivers.errors
    (the link)."""

    def identify(self) -> ShufflerIdentity: ...

    def status(self) -> ShufflerStatus: ...

    def clear(self) -> ShufflerStatus:
        """Clear a jam or an error; the state after it."""
        ...

    def shuffle(self, decks: int) -> None:
        """Start shuffling what the shuffler holds (`decks` decks expected)."""
        ...

    def poll_ready(self, *, decks: int | None = None) -> ShuffleDone | None:
        """The finished shuffle (count and composition checked against `decks`), or None
        while it is still under way."""
        ...

    def wait_ready(self, timeout_s: float, *, decks: int | None = None) -> ShuffleDone:
        """poll_ready until the shuffle is done; Timeout after `timeout_s`."""
        ...

    def deliver(self) -> list[str] | None:
        """Hand the shuffled cards out; their order when the shuffler reports it."""
        ...

    def close(self) -> None: ...
