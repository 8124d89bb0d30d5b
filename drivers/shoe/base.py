"""ShoeDriverBase: the public read loop shared by every shoe protocol.

`read_event()` owns the timeouts, the counting and logging of bad bytes, link-loss detection
and reconnection; a protocol subclass only says how to build its decoder (`_make_decoder`) and
how to turn decoded frames into events (`_decode`), plus two optional hooks (`_on_open`,
`_on_idle`).

Reconnection is a non-blocking retry schedule checked on each `read_event()` call while the
link is down: one `open()` attempt when the next attempt is due, then a wait no longer than the
caller's timeout. Nothing of it runs while the link is up, so the hot path is read + decode.

A read blocks in the port (pyserial waits on the descriptor, it does not poll); another thread
ends it at once with `cancel_read()` (pyserial's own `cancel_read` where the port has one), so a
reader thread stops without waiting out its timeout.
"""
from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from typing import Callable, Protocol

import structlog

from drivers.errors import DeviceError, DeviceIOError, ProtocolError
from drivers.events import CardRead, DeviceEvent, LinkBack, LinkLost
from drivers.shoe.codec import (BadCardCode, ChecksumMismatch, Decoder, Encoder, GarbageBytes,
                                MalformedFrame, UnknownToken)

#: a line that stays noisy is summarised at least this often (seconds)
NOISE_SUMMARY_S = 5.0

STAT_KEYS = ("frames", "cards", "checksum_errors", "garbage_bytes", "unknown_tokens", "timeouts",
             "bad_frames", "bad_codes", "duplicates", "seq_gaps", "link_lost", "reconnects",
             "internal_errors")

# ProtocolError subclass → (stats key, counts bytes instead of frames)
_ERROR_STATS: tuple[tuple[type, str, bool], ...] = (
    (GarbageBytes, "garbage_bytes", True),
    (ChecksumMismatch, "checksum_errors", False),
    (BadCardCode, "bad_codes", False),
    (UnknownToken, "unknown_tokens", False),
    (MalformedFrame, "bad_frames", False),
)


def _failed(what: str, err: BaseException) -> str:
    """`what` failed and why, said once: pyserial's own messages often say it already ("read
    failed: socket disconnected"), and the hold's words doubled it."""
    text = str(err)
    return text if text.startswith(f"{what} failed") else f"{what} failed: {text}"


class ByteStream(Protocol):
    """What a shoe driver needs of its port: pyserial's `Serial` (any `serial_for_url` URL)
    or anything a vendor opens that reads and writes the same way."""

    @property
    def in_waiting(self) -> int: ...
    def read(self, size: int = 1) -> bytes: ...
    def write(self, data: bytes) -> int | None: ...
    def close(self) -> None: ...
    # optional, as in pyserial: `cancel_read()` ends a blocking read() from another thread


class ShoeDriverBase(ABC):
    """Bytes from one shoe → typed device events, with timeouts, resync and reconnect."""

    protocol = ""
    #: the shoe's side of the protocol (actions → bytes): the simulator speaks through it
    encoder: type[Encoder]
    #: the shoe resends reads the controller has not acknowledged (nothing lost in flight)
    resends = False
    #: the shoe says itself when cards were drawn together (no guessing from read times)
    flags_multiple_draws = False

    def __init__(self, url: str, *, opener: Callable[[], ByteStream] | None = None,
                 read_timeout_s: float = 0.05, dead_after_timeouts: int = 0,
                 baudrate: int = 9600, reconnect_initial_s: float = 0.05,
                 reconnect_max_s: float = 2.0, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] | None = None,
                 stamp: Callable[[], float] | None = None):
        if read_timeout_s <= 0:
            raise ValueError(f"read_timeout_s must be > 0 (got {read_timeout_s})")
        if dead_after_timeouts < 0:
            raise ValueError(f"dead_after_timeouts must be >= 0 (got {dead_after_timeouts})")
        self.url = url
        self.read_timeout_s = read_timeout_s
        self.dead_after_timeouts = dead_after_timeouts
        self.reconnect_initial_s = reconnect_initial_s
        self.reconnect_max_s = max(reconnect_max_s, reconnect_initial_s)
        self.stats: dict[str, int] = dict.fromkeys(STAT_KEYS, 0)
        self._clock = clock
        # set by cancel_read() from another thread: reads return at once, for good
        self._cancelled = threading.Event()
        # the wait between reconnect attempts; by default one that cancel_read() cuts short
        self._sleep = sleep or self._cancelled.wait
        # events carry the time their bytes arrived: reads that came in one burst share it,
        # which is how a controller tells two cards pulled together from two pulls
        self._stamp = stamp or clock
        self._fed_at = self._stamp()
        if opener is None:
            from drivers.transport import open_serial

            def opener() -> ByteStream:
                return open_serial(url, baudrate=baudrate, timeout=read_timeout_s)
        self._opener = opener
        self._log = structlog.get_logger("drivers.shoe").bind(url=url, protocol=self.protocol)
        self._decoder = self._make_decoder()
        self._consecutive_timeouts = 0
        self._closed = False
        self._io_error: str | None = None      # set by a failed write from another thread
        self._lost = False                     # LinkLost reported, LinkBack not yet
        self._back_on_bytes = False            # lost by silence: back when bytes arrive again
        self._delay = reconnect_initial_s
        self._next_attempt = 0.0
        # line noise of the current burst (kind → count), logged as one summary when it ends
        self._noise: dict[str, int] = {}
        self._noise_since = 0.0
        self._noise_first = ""
        self._port: ByteStream | None = opener()    # a DeviceError here is the caller's to report
        self._on_open()

    # -- protocol hooks -------------------------------------------------------------------

    @abstractmethod
    def _make_decoder(self) -> Decoder:
        """The protocol's incremental decoder."""

    def _decode(self) -> DeviceEvent | None:
        """Next event from the buffered bytes, None when no complete frame is left."""
        return self._decoder.next()

    def _on_open(self) -> None:
        """Called after every successful (re)open, e.g. to ask the shoe to resync."""

    def _on_idle(self, consecutive_timeouts: int) -> None:
        """Called after each read that timed out without the link being declared lost."""

    # -- public API -----------------------------------------------------------------------

    @property
    def transport(self) -> object | None:
        """The open byte transport (a pyserial port), None while the link is down."""
        return self._port

    @property
    def buffered(self) -> bool:
        """True while bytes (or a decoded event) wait inside the driver: read them out before
        concluding that the shoe has gone quiet."""
        return self._decoder.pending > 0

    @property
    def connected(self) -> bool:
        """True while the transport is open and the link is not declared lost."""
        return self._port is not None

    def read_event(self, timeout: float | None = None) -> DeviceEvent | None:
        """One typed event, or None when no complete frame arrived within the timeout.

        `timeout` defaults to `read_timeout_s`. Never raises: bad bytes are counted and
        logged, link trouble becomes LinkLost / LinkBack events.
        """
        if self._closed or self._cancelled.is_set():
            return None
        try:
            if timeout is not None and timeout <= 0:
                return self._poll_event()
            return self._read_event(self.read_timeout_s if timeout is None else timeout)
        except Exception as err:  # the driver boundary: a bug must not stop the table's reader
            self.stats["internal_errors"] += 1
            self._log.exception("shoe driver fault", error=repr(err))
            return None

    def ack(self, seq: int) -> None:
        """Acknowledge a journaled read; a no-op for protocols without acknowledgements."""

    def resume(self, last_seq: int) -> None:
        """After a controller restart: reads up to `last_seq` are journaled already.

        Protocols with sequence numbers drop those reads when the shoe resends them and
        acknowledge them; the others have nothing to resume.
        """

    def cancel_read(self) -> None:
        """From another thread: the read under way returns now (None), and so does every
        later one; the reader thread then closes the driver. A port without pyserial's
        `cancel_read` (socket://) ends its read at its own timeout."""
        self._cancelled.set()
        port = self._port
        cancel = getattr(port, "cancel_read", None)
        if cancel is not None:
            try:
                cancel()
            except (OSError, DeviceError, ValueError, TypeError):
                pass    # the port closed under us: its read has ended already

    def close(self) -> None:
        self._flush_noise()
        self._closed = True
        self._close_port()

    def __enter__(self) -> "ShoeDriverBase":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the read loop --------------------------------------------------------------------

    def _read_event(self, timeout: float) -> DeviceEvent | None:
        deadline = self._clock() + timeout
        event: DeviceEvent | None
        cancelled = self._cancelled
        while True:
            if cancelled.is_set():
                return None
            if self._io_error is not None and self._port is not None:
                reason, self._io_error = self._io_error, None
                event = self._lose(reason, by_silence=False)
                if event is not None:
                    return event
                continue
            if self._port is None:
                event = self._reconnect(deadline)
                if event is not None or self._port is None:
                    return event
                continue
            event = self._next_decoded()
            if event is not None:
                return event
            try:
                if timeout <= 0:
                    # a poll: what has arrived, if anything; nothing is waited for
                    waiting = self._port.in_waiting
                    if not waiting:
                        return None
                    data = self._port.read(waiting)
                else:
                    data = self._read_bytes()
            except (OSError, DeviceError, ValueError, TypeError) as err:
                # pyserial raises SerialException (an OSError), or TypeError/ValueError from a
                # port closed under it; all mean the transport is gone.
                event = self._lose(_failed("read", err), by_silence=False)
                if event is not None:
                    return event
                continue
            if data:
                event = self._arrived(data)      # what just arrived, at once
                if event is not None:
                    return event
            elif cancelled.is_set():
                return None                 # cut short, not a silent line
            else:
                event = self._quiet()
                if event is not None:
                    return event
            if self._clock() >= deadline:
                return None

    def _poll_event(self) -> DeviceEvent | None:
        """`_read_event(0)` on its shortest way: while the link is up and nothing failed, what
        has arrived, if anything (a simulated table polls its shoe like this for every card);
        anything else (a failed write or read, the link down) goes the general way."""
        port = self._port
        if port is None or self._io_error is not None:
            return self._read_event(0.0)
        if self.buffered:
            event = self._next_decoded()
            if event is not None:
                return event
        try:
            waiting = port.in_waiting
            if not waiting:
                return None
            data = port.read(waiting)
        except (OSError, DeviceError, ValueError, TypeError) as err:
            event = self._lose(_failed("read", err), by_silence=False)
            return event if event is not None else self._read_event(0.0)
        if not data:
            if not self._cancelled.is_set():
                return self._quiet()
            return None
        return self._arrived(data)

    def _arrived(self, data: bytes) -> DeviceEvent | None:
        """Bytes read: fed to the decoder; the link back if it was down, else the first event
        they complete."""
        self._consecutive_timeouts = 0
        self._fed_at = self._stamp()
        self._decoder.feed(data)
        if self._back_on_bytes:
            self._back_on_bytes = False
            return self._back()
        return self._next_decoded()

    def _quiet(self) -> DeviceEvent | None:
        """A read found nothing: the burst of noise is over, and a line quiet for long enough
        is declared lost (LinkLost, once)."""
        self._flush_noise()
        self.stats["timeouts"] += 1
        self._consecutive_timeouts += 1
        n = self.dead_after_timeouts
        if n and self._consecutive_timeouts >= n and not self._lost:
            return self._lose(f"no data in {n} reads of {self.read_timeout_s} s",
                              by_silence=True)
        self._on_idle(self._consecutive_timeouts)
        return None

    def _read_bytes(self) -> bytes:
        port = self._port
        if port is None:
            raise DeviceIOError("the shoe's port is closed")
        waiting = port.in_waiting
        if waiting:
            return port.read(waiting)
        # nothing yet: block for the first byte, then take what came with it (a frame's rest
        # arrives together), so that one pass decodes the whole frame
        data = port.read(1)
        if data:
            try:
                more = port.in_waiting
                if more:
                    data += port.read(more)
            except (OSError, DeviceError, ValueError, TypeError):
                pass        # the byte read is kept; the next read reports the port's failure
        return data

    def _next_decoded(self) -> DeviceEvent | None:
        while True:
            try:
                event = self._decode()
            except ProtocolError as err:
                self._count_error(err)
                continue
            if event is None:
                return None
            if self._noise:
                self._flush_noise()         # a good frame ends a burst of noise
            self.stats["frames"] += 1
            if isinstance(event, CardRead):
                self.stats["cards"] += 1
            # the decoder made the event just now and hands it out once: it is stamped in
            # place (a copy made by dataclasses.replace cost as much as decoding it)
            object.__setattr__(event, "t", self._fed_at)
            return event

    def _count_error(self, err: ProtocolError) -> None:
        key, by_bytes = "bad_frames", False
        for cls, name, count_bytes in _ERROR_STATS:
            if isinstance(err, cls):
                key, by_bytes = name, count_bytes
                break
        n = len(err.raw) if by_bytes else 1
        self.stats[key] += n
        # a noisy cable sends a stray byte at a time: one summary line per burst, not a line
        # per byte (the counters have every one)
        now = self._clock()
        if not self._noise:
            self._noise_since, self._noise_first = now, f"{key}: {err}"
        self._noise[key] = self._noise.get(key, 0) + n
        if now - self._noise_since >= NOISE_SUMMARY_S:
            self._flush_noise()

    def _flush_noise(self) -> None:
        """Log the burst of bad bytes and frames that just ended (if any) in one line."""
        if not self._noise:
            return
        counts, self._noise = self._noise, {}
        self._log.warning("shoe line noise", **counts,
                          seconds=round(max(0.0, self._clock() - self._noise_since), 3),
                          first=self._noise_first[:200])

    def _send(self, data: bytes) -> bool:
        """Write to the shoe; a failure marks the link lost on the next read."""
        port = self._port
        if port is None:
            return False
        try:
            port.write(data)
        except (OSError, DeviceError, ValueError, TypeError) as err:
            self._io_error = _failed("write", err)
            return False
        return True

    # -- link loss and reconnection -------------------------------------------------------

    def _close_port(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (OSError, DeviceError, ValueError, TypeError):
                pass    # closing a port that already failed: nothing left to release

    def _lose(self, reason: str, *, by_silence: bool) -> LinkLost | None:
        """Close the transport and schedule reconnection; LinkLost unless already lost."""
        self._flush_noise()
        self._close_port()
        self._decoder.reset()
        self._consecutive_timeouts = 0
        self._back_on_bytes = by_silence
        self._delay = self.reconnect_initial_s
        self._next_attempt = self._clock() + self._delay
        if self._lost:
            self._log.debug("shoe transport failed again while lost", reason=reason)
            return None
        self._lost = True
        self.stats["link_lost"] += 1
        self._log.warning("shoe link lost", reason=reason)
        return LinkLost(reason=reason)

    def _back(self) -> LinkBack:
        self._lost = False
        self._delay = self.reconnect_initial_s
        self.stats["reconnects"] += 1
        self._log.info("shoe link back")
        return LinkBack()

    def _reconnect(self, deadline: float) -> DeviceEvent | None:
        """Try the transport again when the schedule says so; wait at most until deadline."""
        while True:
            now = self._clock()
            if now >= self._next_attempt:
                try:
                    port = self._opener()
                except DeviceError as err:
                    self._delay = min(self._delay * 2, self.reconnect_max_s)
                    self._next_attempt = now + self._delay
                    self._log.debug("shoe reconnect failed", error=str(err),
                                    retry_in_s=self._delay)
                else:
                    self._port = port
                    self._decoder.reset()
                    self._on_open()
                    return None if self._back_on_bytes else self._back()
            now = self._clock()
            if now >= deadline:
                return None
            self._sleep(max(0.0, min(self._next_attempt, deadline) - now))
            if self._cancelled.is_set():
                return None
            if self._clock() >= deadline and self._clock() < self._next_attempt:
                return None

    @property
    def reconnect_delay_s(self) -> float:
        """The wait before the next reconnect attempt (doubles per failure, capped)."""
        return self._delay
