"""The shoe model: card order, cut card, faults, and the wire protocol's bytes out and in.

A pure device model: the dealer's `pull()` queues the frames the real shoe would send, `read()`
hands them out (device → controller), `write()` takes the controller's bytes (framed acks and
HELLO requests). Time enters only through the injected `clock`, which ends silences and link
drops. Adapters (the shoesim:// pyserial handler, the TCP/pty server) carry the bytes.

Output is a list of segments: one `read()` never returns bytes from two segments, which is how
a `split` fault cuts a frame across reads.
"""
from __future__ import annotations

import secrets
import threading
import time
from collections import Counter
from functools import partial
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Iterable, Sequence

from drivers.errors import ProtocolError
from drivers.shoe import PROTOCOLS
from drivers.shoe.codec import check_code
from drivers.shoe.framed import AckFrame, FramedDecoder, HelloFrame, next_seq, seq_at_or_before
from simulators.faults import Fault, FaultError

__all__ = ["ShoeModel", "Fault", "FaultError", "parse_fault", "FAULT_KINDS", "SHOE_FAULTS",
           "ENCODERS"]

FAULT_KINDS = ("misread", "double_draw", "triple_draw", "skip_burn", "noise", "split", "drop",
               "silence", "jam", "door_open", "count_mismatch", "foreign_card", "face_up")
# the kinds this model acts on; skip_burn is the virtual dealer's, the rest the shuffler's
SHOE_FAULTS = ("misread", "double_draw", "triple_draw", "noise", "split", "drop", "silence",
               "foreign_card", "face_up")
#: protocol name → its encoder, for every protocol the drivers speak
class _Encoders(Mapping[str, Any]):
    """protocol name → the shoe's side of it (its driver's `encoder`): the simulator speaks
    every installed protocol, a plugin's included, through the driver's own encoder."""

    def __getitem__(self, name: str) -> Any:
        return PROTOCOLS[name].encoder

    def __iter__(self) -> Iterator[str]:
        return iter(PROTOCOLS)

    def __len__(self) -> int:
        return len(PROTOCOLS)


ENCODERS = _Encoders()


def parse_fault(text: str) -> Fault:
    """`"double_draw@40"` → Fault("double_draw", 40); FaultError with the reason otherwise."""
    kind, sep, at = text.strip().partition("@")
    if not sep or kind not in FAULT_KINDS or not at.isdigit():
        raise FaultError(f"{text!r} is not a fault: write KIND@N with N a card index >= 0 and "
                         f"KIND one of {', '.join(FAULT_KINDS)}")
    return Fault(kind, int(at))


class ShoeModel:
    """A card-recognition shoe holding `cards` in draw order, speaking `protocol`."""

    def __init__(self, cards: Sequence[str], *, protocol: str = "beetek",
                 cut_position: int | None = None, faults: Iterable[Fault] = (),
                 clock: Callable[[], float] = time.monotonic, silence_s: float = 0.5,
                 drop_s: float = 0.3, session: int | None = None):
        if protocol not in ENCODERS:
            raise ValueError(f"unknown shoe protocol {protocol!r} (known: {', '.join(ENCODERS)})")
        self._cards = [check_code(c) for c in cards]
        if cut_position is not None and not 0 <= cut_position <= len(self._cards):
            raise ValueError(f"cut_position {cut_position} outside 0…{len(self._cards)}")
        self.protocol = protocol
        self.cut_position = cut_position
        self.silence_s = silence_s
        self.drop_s = drop_s
        self.session = secrets.randbits(32) if session is None else session
        self.written = bytearray()            # every byte the controller sent, for tests
        self.link_generation = 0              # bumped when the link drops: old handles die
        # moves whenever what a read could return changes other than by reading it (bytes
        # queued or dropped, the link dropped, a silence begun): see `news`
        self.changes = 0
        self._enc = ENCODERS[protocol]()
        self._clock = clock
        # held with `with self._lock` (a C lock: the model is read on every turn of a simulated
        # loop); the condition over it wakes a reader waiting for bytes
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._readers = 0                   # readers waiting on the condition for bytes
        self._segments: list[bytearray] = []
        self._pos = 0
        self._cut_out = False
        self._faults: dict[int, list[str]] = {}
        self._injected: list[Fault] = []
        self._seq = 0
        self._unacked: list[tuple[int, bytes]] = []
        self._last_acked = 0
        self._silent_until = 0.0
        self._down_until = 0.0
        # the later of the two: until then nothing reaches the controller (0.0: never held
        # back, and no clock to read)
        self._held_until = 0.0
        self._controller = FramedDecoder()
        if protocol == "framed":
            with self._lock:
                self._emit(self._enc.hello(self.session, 0))     # power-on announcement
        for fault in faults:
            self.inject(fault)

    def load(self, cards: Sequence[str], *, cut_position: int | None = None,
             faults: Iterable[Fault] = ()) -> None:
        """The dealer loads a new shoe into the same device: new cards, cut card and faults;
        the link, the session and the sequence numbers carry on."""
        cards = [check_code(c) for c in cards]
        if cut_position is not None and not 0 <= cut_position <= len(cards):
            raise ValueError(f"cut_position {cut_position} outside 0…{len(cards)}")
        with self._lock:
            self._cards, self.cut_position = cards, cut_position
            self._pos, self._cut_out = 0, False
            self._faults, self._injected = {}, []
        for fault in faults:
            self.inject(fault)

    def memory(self) -> dict:
        """What the device holds across a controller's restart, as JSON: its cards and cut card,
        how far it has dealt, its faults to come, and (framed) its session, its read numbers
        and the reads it sent that were never acknowledged."""
        with self._lock:
            return {"cards": list(self._cards), "cut_position": self.cut_position,
                    "faults": {str(k): list(v) for k, v in self._faults.items()},
                    **self.progress()}

    def progress(self) -> dict:
        """The part of `memory` that changes with every card and acknowledgement."""
        with self._lock:
            return {"position": self._pos, "cut_out": self._cut_out, "session": self.session,
                    "seq": self._seq, "last_acked": self._last_acked,
                    "unacked": [[seq, frame.hex()] for seq, frame in self._unacked]}

    def recall(self, memory: dict) -> None:
        """Stand exactly where `memory` says (see `memory`); nothing is on the wire: a link
        opened afterwards asks the shoe to resend what was never acknowledged."""
        with self._lock:
            if "cards" in memory:
                self._cards = [check_code(c) for c in memory["cards"]]
                self.cut_position = memory["cut_position"]
                self._faults = {int(k): list(v) for k, v in memory.get("faults", {}).items()}
            self._pos, self._cut_out = memory["position"], memory["cut_out"]
            self.session, self._seq = memory["session"], memory["seq"]
            self._last_acked = memory["last_acked"]
            self._unacked = [(seq, bytes.fromhex(frame)) for seq, frame in memory["unacked"]]
            self._segments.clear()
            self.changes += 1

    def take_rest(self) -> list[str]:
        """The dealer takes the undealt rest out of the shoe (to count it back)."""
        with self._lock:
            rest, self._pos = self._cards[self._pos:], len(self._cards)
            return rest

    # -- state ----------------------------------------------------------------------------

    @property
    def position(self) -> int:
        """Cards out of the shoe so far."""
        return self._pos

    @property
    def remaining(self) -> int:
        return len(self._cards) - self._pos

    @property
    def exhausted(self) -> bool:
        return self._pos >= len(self._cards)

    @property
    def has_more(self) -> bool:
        """A pull would still bring something out: a card, or the cut card behind the last."""
        return not self.exhausted or (self.cut_position == self._pos and not self._cut_out)

    @property
    def cut_card_out(self) -> bool:
        return self._cut_out

    @property
    def faults(self) -> tuple[Fault, ...]:
        return tuple(self._injected)

    @property
    def unacked(self) -> list[int]:
        """Sequence numbers sent but not yet acknowledged (framed)."""
        return [seq for seq, _ in self._unacked]

    @property
    def link_up(self) -> bool:
        down = self._down_until
        return down <= 0.0 or self._clock() >= down     # (never dropped: no clock to read)

    @property
    def silent(self) -> bool:
        return self._clock() < self._silent_until

    def card_at(self, index: int) -> str | None:
        """The code at 0-based draw index (after any foreign-card fault), None outside the shoe."""
        return self._cards[index] if 0 <= index < len(self._cards) else None

    def cards(self) -> list[str]:
        """Every code loaded, in draw order (foreign cards included)."""
        return list(self._cards)

    def undealt(self) -> list[str]:
        """Codes still in the shoe, in draw order (foreign cards included)."""
        return list(self._cards[self._pos:])

    # -- faults ---------------------------------------------------------------------------

    def inject(self, fault: Fault) -> None:
        """Schedule a fault at card index `fault.at`; one already passed is refused."""
        if fault.kind not in FAULT_KINDS:
            raise FaultError(f"unknown fault kind {fault.kind!r} (known: {', '.join(FAULT_KINDS)})")
        with self._lock:
            self._schedule(fault)

    def _schedule(self, fault: Fault) -> None:
        if fault.kind in SHOE_FAULTS:
            if not self._pos <= fault.at < len(self._cards):
                raise FaultError(f"{fault}: card index outside {self._pos}…"
                                 f"{len(self._cards) - 1} (cards still in the shoe)")
            if fault.kind == "foreign_card":
                self._cards[fault.at] = self._foreign_code(fault.at)
        self._faults.setdefault(fault.at, []).append(fault.kind)
        self._injected.append(fault)

    def _foreign_code(self, index: int) -> str:
        """An extra copy of the shoe's most plentiful code: one more than the shoe can hold."""
        own = self._cards[index]
        counts = Counter(self._cards)
        first: dict[str, int] = {}
        for i, code in enumerate(self._cards):
            first.setdefault(code, i)
        for code in sorted(counts, key=lambda c: (-counts[c], first[c])):
            if code != own:
                return code
        return "KD" if own != "KD" else "QD"

    # -- the dealer and the device's own messages -----------------------------------------

    def pull(self, *, manual_burn: bool = False) -> list[str]:
        """The dealer draws: the codes that left the shoe (2–3 on a double/triple draw fault)."""
        with self._lock:
            start = self._pos
            if start >= len(self._cards):
                if self.cut_position == start and not self._cut_out:
                    self._cut_out = True
                    self._emit_read(self._enc.cut)
                return []
            if start not in self._faults and self.cut_position != start:
                # one card, no fault, not the cut card's place: nearly every pull
                code = self._cards[start]
                if self._enc.sequenced:
                    self._emit_read(self._enc.card, code, manual_burn=manual_burn)
                else:               # (`_emit_read` without a number to give or keep)
                    self._emit(self._enc.card(code, seq=0, manual_burn=manual_burn))
                self._pos = start + 1
                return [code]
            kinds = self._faults.get(start, [])
            if "drop" in kinds:
                self._down_until = self._clock() + self.drop_s
                self._held_until = max(self._held_until, self._down_until)
                self.link_generation += 1
                self.changes += 1
                self._segments.clear()          # bytes on the wire die with the link
            if "silence" in kinds:
                self._silent_until = self._clock() + self.silence_s
                self._held_until = max(self._held_until, self._silent_until)
                self.changes += 1
            if "noise" in kinds:
                self._emit(self._enc.noise())
            count = 3 if "triple_draw" in kinds else 2 if "double_draw" in kinds else 1
            codes = self._cards[start:start + count]
            multiple = len(codes) if len(codes) > 1 else 0
            for index, code in enumerate(codes, start):
                if self.cut_position == index and not self._cut_out:
                    self._cut_out = True
                    self._emit_read(self._enc.cut)
                here = self._faults.get(index, [])
                if "misread" in here:
                    build = partial(self._enc.failed)
                else:
                    build = partial(self._enc.card, code, face_up="face_up" in here,
                                    manual_burn=manual_burn, multiple=multiple)
                self._emit_read(build, split="split" in here)
            self._pos += len(codes)
            return list(codes)

    def alarm(self, code: str, text: str) -> None:
        """The shoe raises an alarm (e.g. "E3", "Card Not Read"); not on barcode."""
        with self._lock:
            self._emit(self._enc.alarm(code, text))

    def warning(self, code: str, text: str = "") -> None:
        """The shoe reports a warning (e.g. "W0x12"); not on barcode."""
        with self._lock:
            self._emit(self._enc.warning(code, text))

    def emit_raw(self, data: bytes) -> None:
        """Put arbitrary bytes on the wire (tests of the driver's robustness)."""
        with self._lock:
            self._emit(data)

    def _emit_read(self, build: Callable[..., bytes], *args: Any, split: bool = False,
                   **kw: Any) -> None:
        """A read's frame, `build(*args, seq=…, **kw)`: numbered and kept until acknowledged
        when the protocol numbers its reads."""
        seq = 0
        if self._enc.sequenced:
            seq = self._seq = next_seq(self._seq)
        frame = build(*args, seq=seq, **kw)
        if seq:
            self._unacked.append((seq, frame))
        self._emit(frame, split=split)

    def _emit(self, data: bytes, *, split: bool = False) -> None:
        if not self.link_up:
            return      # nobody listens; framed reads stay unacknowledged and come back later
        self.changes += 1
        if not self._segments:
            self._segments.append(bytearray())
        if split and len(data) > 1:
            half = len(data) // 2
            self._segments[-1] += data[:half]
            self._segments.append(bytearray(data[half:]))
        else:
            self._segments[-1] += data
        if self._readers:
            self._cond.notify_all()

    # -- the wire -------------------------------------------------------------------------

    @property
    def in_waiting(self) -> int:
        """Bytes one read() can return now (0 while silent or while the link is down)."""
        with self._lock:
            segments = self._segments
            # nothing while held back (silent, or the link down)
            if not segments or not segments[0] or \
                    ((until := self._held_until) > 0.0 and self._clock() < until):
                return 0
            return len(segments[0])

    def read(self, size: int) -> bytes:
        """Up to `size` queued bytes, never across a split; b"" while silent or down."""
        with self._lock:
            if size <= 0 or not self._segments or \
                    ((until := self._held_until) > 0.0 and self._clock() < until):
                return b""
            first = self._segments[0]
            data = bytes(first[:size])
            del first[:size]
            if not first and len(self._segments) > 1:
                self._segments.pop(0)
            return data

    def news(self) -> tuple[int, float, bool]:
        """What a reader needs to know that a look now would find what its last look found:
        `changes` (unmoved while nothing was queued, dropped or silenced), the time until
        which a silence or a dropped link holds back what is queued, and whether anything
        is queued at all."""
        # read without the lock: `changes` first, so that bytes queued meanwhile by another
        # thread move it past what the reader keeps
        changes, segments = self.changes, self._segments
        try:
            queued = bool(segments[0]) if segments else False
        except IndexError:          # emptied just now by another thread
            queued = False
        return changes, self._held_until, queued

    def wait_output(self, timeout: float, cancel: threading.Event | None = None) -> bool:
        """Block up to `timeout` s (real time) until read() has bytes; True when it has.
        False at once when `cancel` is set (and `interrupt()` called: a port's cancel_read)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                if not self.silent and self.link_up and self._segments and self._segments[0]:
                    return True
                if cancel is not None and cancel.is_set():
                    return False
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                # short slices: silences and drops end by the model's clock, not by a notify
                self._readers += 1
                try:
                    self._cond.wait(min(left, 0.01))
                finally:
                    self._readers -= 1

    def interrupt(self) -> None:
        """Wake every wait_output(), so that it looks at its `cancel` again."""
        with self._cond:
            self._cond.notify_all()

    def discard_output(self) -> None:
        """Drop queued output (a port's input-buffer reset on the controller's side)."""
        with self._lock:
            self._segments.clear()
            self.changes += 1

    def connect(self) -> bool:
        """An adapter (re)opens the link: True when the shoe is reachable again."""
        return self.link_up

    def write(self, data: bytes) -> int:
        """Controller → shoe bytes: ACKs retire reads; a HELLO request gets HELLO + resends."""
        with self._lock:
            self.written += data
            if self.protocol != "framed":
                return len(data)
            self._controller.feed(data)
            while True:
                try:
                    frame = self._controller.next()
                except ProtocolError:
                    continue        # a real shoe ignores what it cannot parse
                if frame is None:
                    break
                if isinstance(frame, AckFrame) and frame.seq:
                    self._unacked = [(s, f) for s, f in self._unacked
                                     if not seq_at_or_before(s, frame.seq)]
                    self._last_acked = frame.seq
                elif isinstance(frame, HelloFrame) and frame.session is None:
                    self._emit(self._enc.hello(self.session, self._last_acked))
                    for _, resend in self._unacked:
                        self._emit(resend)
            return len(data)
