"""FramedShuffler: request/response over the framed shuffler protocol, on USB or serial.

Each call sends one request frame and waits `response_timeout_s` for the response that echoes
its sequence number; stale or foreign frames are skipped. Read-only commands (IDENTIFY, STATUS,
COUNT, COMPOSITION) are retried `retries` times after a timeout or a corrupted answer; any
command is resent after the device NAKs it for a bad CRC (it was not executed). SHUFFLE,
DELIVER and CLEAR are never resent after a timeout, since the device may have acted on them.

The driver never trusts a count: `wait_ready` and `deliver` check the count against the decks
asked for and the composition against the count, and raise ShuffleCountError on any mismatch.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Protocol

import structlog

from drivers.errors import DeviceError, DeviceIOError, ProtocolError, Timeout
from drivers.events import ShuffleDone, ShufflerIdentity, ShufflerStatus
from drivers.shuffler import protocol as p

if TYPE_CHECKING:
    import serial

STAT_KEYS = ("requests", "responses", "retries", "timeouts", "bad_frames", "stale_frames", "naks")


class Link(Protocol):
    def write(self, data: bytes) -> int: ...
    def read(self, size: int, timeout_s: float) -> bytes: ...
    def close(self) -> None: ...


class ShufflerRefused(DeviceError):
    """The device answered NAK: it would not (or could not) do what was asked."""

    def __init__(self, command: int, code: int):
        super().__init__(f"shuffler refused {p.command_name(command)}: {p.error_text(code)} "
                         f"(error 0x{code:02x})")
        self.command, self.code = command, code


class ShufflerFault(DeviceError):
    """The shuffler stopped in a state that needs attention (jam, door open, error, idle)."""

    def __init__(self, status: ShufflerStatus, hint: str):
        super().__init__(f"shuffler {status.state.replace('_', ' ')}"
                         + (f" ({p.error_text(status.error_code)})" if status.error_code else "")
                         + f": {hint}")
        self.status = status


class ShuffleCountError(DeviceError):
    """The shuffled shoe's count or composition is wrong or impossible; never deal from it."""

    def __init__(self, problem: str, count: int, expected: int | None,
                 composition: tuple[tuple[str, int], ...] = ()):
        super().__init__(f"shuffler count rejected: {problem}")
        self.count, self.expected, self.composition = count, expected, composition


_FAULT_HINTS = {
    "jam": "clear the jam, then clear() and shuffle() again",
    "door_open": "close the door; the shuffle resumes by itself",
    "error": "clear() and shuffle() again",
    "idle": "no shuffle is running; call shuffle() first",
}


class SerialLink:
    """A pyserial port as a shuffler link.

    Reads wait the port's own (short) timeout, not the caller's: changing a pyserial timeout
    reconfigures the port (tcsetattr) every time, and the driver loops to its deadline anyway.
    """

    POLL_S = 0.05

    def __init__(self, port: serial.Serial) -> None:
        self.port = port

    def write(self, data: bytes) -> int:
        try:
            n = self.port.write(data)
            self.port.flush()
        except OSError as err:                  # pyserial's SerialException is an OSError
            raise DeviceIOError(f"shuffler {self.port.name}: link lost ({err})") from err
        return n if n is not None else len(data)

    def read(self, size: int, timeout_s: float) -> bytes:
        try:
            first = self.port.read(1)
            if not first:
                return b""
            more = min(size - 1, self.port.in_waiting)
            return first + (self.port.read(more) if more > 0 else b"")
        except OSError as err:
            raise DeviceIOError(f"shuffler {self.port.name}: link lost ({err})") from err

    def close(self) -> None:
        self.port.close()


class FramedShuffler:
    """Commands to one shuffler; every answer is checked before it is believed."""

    def __init__(self, link: Link, *, url: str = "", response_timeout_s: float = 1.0,
                 poll_interval_s: float = 0.1, retries: int = 2,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        if response_timeout_s <= 0 or poll_interval_s < 0 or retries < 0:
            raise ValueError("response_timeout_s must be > 0, poll_interval_s and retries >= 0")
        self.link, self.url = link, url
        self.response_timeout_s, self.poll_interval_s, self.retries = \
            response_timeout_s, poll_interval_s, retries
        self._clock, self._sleep = clock, sleep
        self._reader = p.FrameReader()
        self._seq = 0
        self.decks: int | None = None          # decks asked for by the last shuffle()
        self.stats: dict[str, int] = dict.fromkeys(STAT_KEYS, 0)
        self._log = structlog.get_logger("drivers.shuffler").bind(url=url)

    # ---- transactions ---------------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq = (self._seq + 1) & 0xFF
        return self._seq

    def _await(self, seq: int, cmd: int) -> p.Frame:
        deadline = self._clock() + self.response_timeout_s
        while True:
            frame = self._reader.next_frame()       # ProtocolError: a corrupted answer
            if frame is not None:
                if frame.seq == seq and frame.cmd in (cmd | p.RESPONSE_BIT, p.NAK):
                    return frame
                self.stats["stale_frames"] += 1
                self._log.info("shuffler_stale_frame", seq=frame.seq, cmd=frame.name,
                               raw=frame.raw.hex(" "))
                continue
            left = deadline - self._clock()
            if left <= 0:
                raise Timeout(f"shuffler {self.url}: no answer to {p.command_name(cmd)} "
                              f"within {self.response_timeout_s} s")
            self._reader.feed(self.link.read(1024, left))

    def _transact(self, cmd: int, payload: bytes = b"", *, read_only: bool = True) -> p.Frame:
        attempts = 1 + self.retries
        last: DeviceError | None = None
        for attempt in range(attempts):
            if attempt:
                self.stats["retries"] += 1
            seq = self._next_seq()
            self._reader.clear()                    # anything buffered now is stale
            self.stats["requests"] += 1
            self.link.write(p.encode_frame(seq, cmd, payload))
            try:
                frame = self._await(seq, cmd)
            except Timeout as err:
                self.stats["timeouts"] += 1
                last = err
            except ProtocolError as err:
                self.stats["bad_frames"] += 1
                self._log.warning("shuffler_bad_frame", error=str(err), raw=err.raw.hex(" "))
                last = err
            else:
                if frame.cmd != p.NAK:
                    self.stats["responses"] += 1
                    return frame
                self.stats["naks"] += 1
                _, code = p.decode_nak(frame.payload)
                if code != p.E_BAD_CRC:
                    raise ShufflerRefused(cmd, code)
                last = ShufflerRefused(cmd, code)   # our request was garbled: safe to resend
                continue
            if not read_only:
                raise last
        raise last if last is not None else Timeout(f"shuffler {self.url}: no attempt made")

    # ---- commands --------------------------------------------------------------------------------

    def identify(self) -> ShufflerIdentity:
        frame = self._transact(p.IDENTIFY)
        model, serial, firmware = p.decode_identity(frame.payload)
        return ShufflerIdentity(device="shuffler", model=model, serial=serial,
                                firmware=firmware, raw=frame.raw)

    def shuffle(self, decks: int) -> None:
        """Start shuffling a shoe of `decks` decks; returns once the device has accepted."""
        if not isinstance(decks, int) or not p.MIN_DECKS <= decks <= p.MAX_DECKS:
            raise ValueError(f"decks must be {p.MIN_DECKS}..{p.MAX_DECKS} (got {decks!r})")
        frame = self._transact(p.SHUFFLE, bytes([decks]), read_only=False)
        if frame.payload != bytes([decks]):
            raise ProtocolError(f"SHUFFLE acknowledged {frame.payload.hex()} for {decks} decks",
                                frame.raw)
        self.decks = decks

    def status(self) -> ShufflerStatus:
        frame = self._transact(p.STATUS)
        state, code = p.decode_status(frame.payload)
        return ShufflerStatus(device="shuffler", state=state, error_code=code, raw=frame.raw)

    def count(self) -> int:
        return p.decode_count(self._transact(p.COUNT).payload)

    def composition(self) -> tuple[tuple[str, int], ...]:
        """(code, copies) pairs; () when the device does not read cards."""
        try:
            return p.decode_composition(self._transact(p.COMPOSITION).payload)
        except ShufflerRefused as err:
            if err.code == p.E_UNSUPPORTED:
                return ()
            raise

    def clear(self) -> ShufflerStatus:
        """Acknowledge a jam or error; the device returns to idle."""
        frame = self._transact(p.CLEAR, read_only=False)
        state, code = p.decode_status(frame.payload)
        return ShufflerStatus(device="shuffler", state=state, error_code=code, raw=frame.raw)

    def wait_ready(self, timeout_s: float, *, decks: int | None = None) -> ShuffleDone:
        """Poll until the shoe is shuffled, then return its checked count and composition.

        Raises ShufflerFault (jam, door open, error, idle), ShuffleCountError (count or
        composition wrong), or Timeout after `timeout_s`.
        """
        deadline = self._clock() + timeout_s
        while True:
            done = self.poll_ready(decks=decks)
            if done is not None:
                return done
            if self._clock() >= deadline:
                raise Timeout(f"shuffler {self.url}: still shuffling after {timeout_s} s")
            self._sleep(min(self.poll_interval_s, max(0.0, deadline - self._clock())))

    def poll_ready(self, *, decks: int | None = None) -> ShuffleDone | None:
        """One look at a running shuffle: its checked count and composition once the shoe is
        shuffled, None while it still shuffles; raises as `wait_ready` does. (For a caller
        that waits on a clock of its own between looks.)"""
        expected_decks = decks if decks is not None else self.decks
        st = self.status()
        if st.state == "ready":
            count, comp = self.count(), self.composition()
            self._check(count, comp, expected_decks)
            return ShuffleDone(device="shuffler", count=count, composition=comp, raw=st.raw)
        if st.state == "error" and st.error_code == p.E_COUNT_MISMATCH:
            count, comp = self.count(), self.composition()
            expected = 52 * expected_decks if expected_decks else None
            raise ShuffleCountError(f"the shuffler reports a count mismatch: it counted "
                                    f"{count} cards", count, expected, comp)
        if st.state != "shuffling":
            raise ShufflerFault(st, _FAULT_HINTS.get(st.state, "clear() and shuffle()"))
        return None

    def deliver(self) -> list[str] | None:
        """Hand the shuffled shoe over; the card order when the device reports it (the
        simulator does, so a simulated shoe can be loaded), else None."""
        count, order = p.decode_delivery(self._transact(p.DELIVER, read_only=False).payload)
        if order is not None and len(order) != count:
            raise ShuffleCountError(f"the shuffler delivered {len(order)} cards but counted "
                                    f"{count}", count, len(order))
        if order is not None and self.decks is not None:
            self._check(len(order), _composition_of(order), self.decks)
        return order

    def close(self) -> None:
        self.link.close()

    # ---- checks ----------------------------------------------------------------------------------

    @staticmethod
    def _check(count: int, comp: tuple[tuple[str, int], ...], decks: int | None) -> None:
        expected = 52 * decks if decks else None
        if expected is not None and count != expected:
            raise ShuffleCountError(f"counted {count} cards, {decks} decks hold {expected}",
                                    count, expected, comp)
        if expected is None and (count == 0 or count % 52 or count > 52 * p.MAX_DECKS):
            raise ShuffleCountError(f"counted {count} cards, not a whole number of decks",
                                    count, None, comp)
        if not comp:
            return
        total = sum(n for _, n in comp)
        if total != count:
            raise ShuffleCountError(f"the composition holds {total} cards but the count is "
                                    f"{count}", count, expected, comp)
        per_card = count // 52
        odd = [f"{code}×{n}" for code, n in comp if n != per_card]
        missing = 52 - len(comp)
        if odd or missing:
            raise ShuffleCountError(
                f"composition is not {per_card} of each card ("
                + ", ".join(odd[:6] + ([f"{missing} card(s) absent"] if missing else [])) + ")",
                count, expected, comp)


def _composition_of(order: list[str]) -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = {}
    for code in order:
        counts[code] = counts.get(code, 0) + 1
    return tuple((c, counts[c]) for c in p.CARD_CODES if c in counts)
