"""The automatic shuffler as a pure device model: protocol bytes in, protocol bytes out.

Randomness: Fisher–Yates driven by `secrets.SystemRandom` (the OS CSPRNG; `randrange` uses
rejection sampling, so there is no modulo bias). A `seed` switches to `random.Random(seed)` for
reproducible tests and simulations; a seeded model must never shuffle a production shoe.
`weak=True` replaces the shuffle by one riffle of the input order (Gilbert–Shannon–Reeds), a
deliberately bad shuffle that the shuffle-quality checks must catch.

Cards: the input tray holds `decks` new decks (factory order) at first; `load()` puts cards in
it. SHUFFLE N takes what the tray holds into the machine and asks for a shoe of N decks, so a
tray that does not hold 52 × N cards is a true count mismatch. After DELIVER the machine is
empty: with `restock` (a test bench, the default) the tray holds new decks again; without it
(a table's shuffler) the tray keeps only what the dealer put in, and a SHUFFLE that finds it
empty waits (reported as shuffling) until the dealer loads the cards. `stack(order)`: the next
shuffle of those very cards delivers `order` (a shoe prepared in advance, for tests and demos).

Time: a shuffle takes `shuffle_time_s` on `clock` (0 = ready at the next STATUS poll; pass a fake
clock to watch idle → shuffling → ready).

Faults (`at` = 0-based number of the SHUFFLE command that meets the fault):
- jam: the shuffle stops in state `jam` (error 0x07); CLEAR returns to idle with the cards back
  in the input tray, and the host must SHUFFLE again.
- door_open: the shuffle pauses in state `door_open` (0x08) for `door_polls` STATUS polls (the
  operator closing the door), then resumes for a full `shuffle_time_s`. CLEAR cannot close it.
- count_mismatch: the card counter is off by `count_error` (default −1: one card missed, +1:
  one card read twice); the cards themselves are intact. With `self_check` (default) the device
  compares its count with 52 × decks and stops in state `error` (0x10), COUNT and COMPOSITION
  still answer, CLEAR returns to idle; with `self_check=False` it reports `ready` and leaves
  the host to notice.
"""
from __future__ import annotations

import random
import secrets
import time
from collections import Counter
from typing import Callable, Iterable, Sequence

from drivers.errors import ProtocolError
from drivers.shuffler import protocol as p
from simulators.faults import Fault, FaultError

SHUFFLER_FAULTS = ("jam", "door_open", "count_mismatch")
DEFAULT_IDENTITY = ("SIM-SHUFFLER-12", "SIM-000001", "sim-1.0.0")


def parse_shuffler_fault(text: str) -> Fault:
    """`jam@0` → Fault("jam", 0); FaultError with the accepted forms otherwise."""
    kind, _, at = text.strip().partition("@")
    if kind not in SHUFFLER_FAULTS:
        raise FaultError(f"{text!r}: unknown shuffler fault (one of {', '.join(SHUFFLER_FAULTS)})")
    try:
        n = int(at) if at else 0
    except ValueError:
        raise FaultError(f"{text!r}: the shuffle number after @ must be an integer") from None
    if n < 0:
        raise FaultError(f"{text!r}: the shuffle number after @ must be 0 or more")
    return Fault(kind, n)


def _as_fault(f: object) -> Fault:
    if isinstance(f, str):
        return parse_shuffler_fault(f)
    kind, at = getattr(f, "kind", None), getattr(f, "at", None)
    if kind not in SHUFFLER_FAULTS or not isinstance(at, int):
        raise FaultError(f"{f!r} is not a shuffler fault (kinds: {', '.join(SHUFFLER_FAULTS)})")
    return Fault(kind, at)


class ShufflerModel:
    """Shuffler state machine + framed protocol endpoint (read/write/in_waiting)."""

    def __init__(self, seed: int | None = None, decks: int = 8, faults: Iterable[object] = (),
                 *, weak: bool = False, reads_cards: bool = True, self_check: bool = True,
                 shuffle_time_s: float = 0.0, clock: Callable[[], float] = time.monotonic,
                 door_polls: int = 3, count_error: int = -1,
                 identity: tuple[str, str, str] = DEFAULT_IDENTITY, restock: bool = True):
        if not p.MIN_DECKS <= decks <= p.MAX_DECKS:
            raise ValueError(f"decks {decks} outside {p.MIN_DECKS}..{p.MAX_DECKS}")
        if count_error == 0:
            raise ValueError("count_error must be non-zero (it is the miscount)")
        self._rng: random.Random = secrets.SystemRandom() if seed is None else random.Random(seed)
        self.seeded = seed is not None
        self.decks, self.weak = decks, weak
        self.reads_cards, self.self_check = reads_cards, self_check
        self.shuffle_time_s, self.clock = shuffle_time_s, clock
        if door_polls < 1:
            raise ValueError("door_polls must be 1 or more")
        self.door_polls, self.count_error, self.identity = door_polls, count_error, identity
        self.faults: list[Fault] = [_as_fault(f) for f in faults]
        self.on_deliver: Callable[[list[str]], None] | None = None
        self.shuffles = 0                        # SHUFFLE commands accepted so far
        self.met: set[Fault] = set()      # the faults that have happened
        self.last_delivery: list[str] | None = None
        self._state, self._error = "idle", p.E_NONE
        self.restock = restock
        self._tray: list[str] | None = None      # cards in the input; None = `decks` new decks
        self._machine: list[str] = []            # the cards being shuffled or counted
        self._waiting = 0                        # decks a SHUFFLE asked for, tray still empty
        self._stacked: list[str] | None = None   # the order the next shuffle delivers
        self._order: list[str] = []              # the shuffled shoe (hidden until ready)
        self._requested = 0                      # decks asked for by the running shuffle
        self._counted: list[str] = []            # what the card reader counted
        self._done_at = 0.0
        self._door_left = 0
        self._reader = p.FrameReader()
        self._out = bytearray()

    # ---- the shuffle itself --------------------------------------------------------------------

    def shuffled(self, cards: Sequence[str]) -> list[str]:
        """A new list: `cards` in shuffled order (one riffle when weak)."""
        out = list(cards)
        if self.weak:
            return self._riffle(out)
        for i in range(len(out) - 1, 0, -1):    # Fisher–Yates, unbiased randrange
            j = self._rng.randrange(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def _riffle(self, cards: list[str]) -> list[str]:
        cut = sum(self._rng.getrandbits(1) for _ in cards)   # Binomial(n, 1/2)
        left, right = cards[:cut], cards[cut:]
        out: list[str] = []
        while left and right:                   # drop from a packet in proportion to its size
            src = left if self._rng.randrange(len(left) + len(right)) < len(left) else right
            out.append(src.pop(0))
        return out + left + right

    def load(self, cards: Sequence[str]) -> None:
        """The dealer puts these cards (e.g. the last shoe's discards) in the input tray, on
        top of what it holds; new decks there are replaced. A shuffle waiting for cards starts."""
        bad = [c for c in cards if c not in p.CARD_INDEX]
        if bad:
            raise ValueError(f"not card codes: {bad[:5]}")
        if len(cards) + len(self._tray or ()) > p.MAX_PAYLOAD - 5:
            raise ValueError(f"{len(cards)} cards do not fit the shuffler")
        self._tray = (self._tray or []) + list(cards)
        self._tick()

    def stack(self, order: Sequence[str]) -> None:
        """The next shuffle of exactly these cards delivers them in this order."""
        self._stacked = list(order)

    @property
    def tray(self) -> int:
        """Cards in the input tray."""
        return len(self._tray) if self._tray is not None else 52 * self.decks

    @property
    def holding(self) -> bool:
        """The machine holds cards it is shuffling, counting or keeps shuffled."""
        self._tick()
        return bool(self._machine or self._order)

    @property
    def busy(self) -> bool:
        """A shuffle is asked for, running, or waits shuffled to be delivered."""
        return bool(self._waiting) or self.holding or self.state in ("shuffling", "ready")

    def take_all(self) -> list[str]:
        """The dealer takes every card out of the input tray (to shuffle by hand)."""
        cards = self._tray if self._tray is not None else \
            [c for _ in range(self.decks) for c in p.CARD_CODES]
        self._tray = []
        return list(cards)

    def to_state(self, *, rng: bool = True) -> dict:
        """The device's memory, as JSON (its generator only when seeded; with rng=False, the
        rest, the generator's place left to the caller)."""
        state = None
        if rng and not isinstance(self._rng, secrets.SystemRandom):
            version, internal, gauss = self._rng.getstate()
            state = [version, list(internal), gauss]
        out = {"state": self._state, "error": self._error, "tray": self._tray,
                "machine": list(self._machine), "waiting": self._waiting,
                "stacked": self._stacked,
                "order": list(self._order), "counted": list(self._counted),
                "requested": self._requested, "shuffles": self.shuffles,
                "door_left": self._door_left}
        if rng:
            out["rng"] = state
        return out

    def load_state(self, d: dict) -> None:
        self._state, self._error, self._tray = d["state"], d["error"], d["tray"]
        self._machine, self._waiting = list(d.get("machine", [])), d.get("waiting", 0)
        self._stacked = d.get("stacked")
        self._order, self._counted = list(d["order"]), list(d["counted"])
        self._requested, self.shuffles = d["requested"], d["shuffles"]
        self._door_left = d["door_left"]
        if d["rng"] is not None and not isinstance(self._rng, secrets.SystemRandom):
            self._rng.setstate((d["rng"][0], tuple(d["rng"][1]), d["rng"][2]))

    def unload(self) -> None:
        """The dealer gathers every card of the table back into the input: the next shuffle
        takes the full set of decks."""
        self._tray = None
        self._tick()

    def inject(self, fault: object) -> None:
        self.faults.append(_as_fault(fault))

    # ---- state ---------------------------------------------------------------------------------

    @property
    def state(self) -> str:
        self._tick()
        return self._state

    @property
    def error_code(self) -> int:
        self._tick()
        return self._error

    def _fault_due(self, kind: str, index: int) -> bool:
        due = [f for f in self.faults if f.kind == kind and f.at == index]
        self.met.update(due)
        return bool(due)

    def unmet_faults(self) -> list[Fault]:
        """The faults asked for that no shuffle has met (yet)."""
        return [f for f in self.faults if f not in self.met]

    def _tick(self) -> None:
        if self._waiting and (self._tray is None or self._tray):
            decks, self._waiting = self._waiting, 0
            self._start(decks)                  # the cards are in: the shuffle begins
        if self._state == "shuffling" and not self._waiting and self.clock() >= self._done_at:
            self._finish()

    def _finish(self) -> None:
        counted = list(self._order)
        if self._fault_due("count_mismatch", self.shuffles - 1):
            if self.count_error < 0:
                counted = counted[:self.count_error]
            else:
                counted = counted[:self.count_error] + counted
        self._counted = counted
        if self.self_check and len(counted) != 52 * self._requested:
            self._state, self._error = "error", p.E_COUNT_MISMATCH
        else:
            self._state, self._error = "ready", p.E_NONE

    def _start(self, decks: int) -> None:
        if self._state == "ready":             # reshuffling a shoe that was not delivered
            self._tray = self._order + (self._tray or [])
            self._order = []
        if self._tray is not None and not self._tray:
            # nothing in the input: the shuffle starts when the dealer loads the cards
            self._state, self._error, self._waiting = "shuffling", p.E_NONE, decks
            self._requested = decks
            return
        cards = self._tray if self._tray is not None else \
            [c for _ in range(self.decks) for c in p.CARD_CODES]
        self._tray, self._machine = [], list(cards)
        self._requested = decks
        index = self.shuffles
        self.shuffles += 1
        if self._fault_due("jam", index):
            self._state, self._error = "jam", p.E_JAM
            return
        stacked, self._stacked = self._stacked, None
        if stacked is not None and Counter(stacked) == Counter(cards):
            self._order = list(stacked)
        else:
            self._order = self.shuffled(cards)
        if self._fault_due("door_open", index):
            self._state, self._error = "door_open", p.E_DOOR_OPEN
            self._door_left = self.door_polls
            return
        self._state, self._error = "shuffling", p.E_NONE
        self._done_at = self.clock() + self.shuffle_time_s

    # ---- commands ------------------------------------------------------------------------------

    def request(self, cmd: int, payload: bytes = b"") -> tuple[int, bytes]:
        """Execute one command; returns (response cmd, response payload)."""
        handler = self._HANDLERS.get(cmd)
        if handler is None:
            return self._nak(cmd, p.E_UNKNOWN_COMMAND)
        want = 1 if cmd == p.SHUFFLE else 0
        if len(payload) != want:
            return self._nak(cmd, p.E_BAD_LENGTH)
        self._tick()
        return handler(self, payload)

    @staticmethod
    def _nak(cmd: int, code: int) -> tuple[int, bytes]:
        return p.NAK, bytes([cmd & 0xFF, code])

    def _refusal(self) -> int | None:
        """Why a command needing a finished shoe cannot run now, or None."""
        return {"idle": p.E_NOT_READY, "shuffling": p.E_BUSY, "jam": p.E_JAM,
                "door_open": p.E_DOOR_OPEN}.get(self._state)

    def _identify(self, _: bytes) -> tuple[int, bytes]:
        return p.IDENTIFY | p.RESPONSE_BIT, p.encode_identity(*self.identity)

    def _shuffle(self, payload: bytes) -> tuple[int, bytes]:
        decks = payload[0]
        if not p.MIN_DECKS <= decks <= p.MAX_DECKS:
            return self._nak(p.SHUFFLE, p.E_BAD_ARGUMENT)
        busy = {"shuffling": p.E_BUSY, "jam": p.E_JAM, "door_open": p.E_DOOR_OPEN,
                "error": self._error}.get(self._state)
        if busy is not None:
            return self._nak(p.SHUFFLE, busy)
        self._start(decks)
        return p.SHUFFLE | p.RESPONSE_BIT, bytes([decks])

    def _status(self, _: bytes) -> tuple[int, bytes]:
        reply = bytes([p.STATE_CODES[self._state], self._error])
        if self._state == "door_open":
            self._door_left -= 1
            if self._door_left <= 0:            # the operator closed the door: carry on
                self._state, self._error = "shuffling", p.E_NONE
                self._done_at = self.clock() + self.shuffle_time_s
        return p.STATUS | p.RESPONSE_BIT, reply

    def _count(self, _: bytes) -> tuple[int, bytes]:
        why = self._refusal()
        if why is not None:
            return self._nak(p.COUNT, why)
        n = len(self._counted)
        return p.COUNT | p.RESPONSE_BIT, bytes([n >> 8, n & 0xFF])

    def _composition(self, _: bytes) -> tuple[int, bytes]:
        if not self.reads_cards:
            return self._nak(p.COMPOSITION, p.E_UNSUPPORTED)
        why = self._refusal()
        if why is not None:
            return self._nak(p.COMPOSITION, why)
        return p.COMPOSITION | p.RESPONSE_BIT, p.encode_composition(Counter(self._counted))

    def _deliver(self, _: bytes) -> tuple[int, bytes]:
        why = self._refusal() or (self._error if self._state == "error" else None)
        if why is not None:
            return self._nak(p.DELIVER, why)
        order = self._order
        self.last_delivery, self._order, self._machine = order, [], []
        if self.restock:
            self._tray = None                   # the bench puts new decks in for the next run
        self._state, self._error = "idle", p.E_NONE
        if self.on_deliver is not None:
            self.on_deliver(list(order))
        # The simulator appends the order (flag bit 0) so a simulated shoe can be loaded.
        return p.DELIVER | p.RESPONSE_BIT, p.encode_delivery(len(self._counted), order)

    def _clear(self, _: bytes) -> tuple[int, bytes]:
        if self._state == "door_open":
            return self._nak(p.CLEAR, p.E_DOOR_OPEN)
        if self._state == "shuffling":
            return self._nak(p.CLEAR, p.E_BUSY)
        if self._state in ("jam", "error"):    # the cards go back to the input tray
            self._state, self._error = "idle", p.E_NONE
            self._tray = self._machine + (self._tray or [])
            self._machine, self._order, self._counted = [], [], []
        return p.CLEAR | p.RESPONSE_BIT, bytes([p.STATE_CODES[self._state], self._error])

    _HANDLERS = {p.IDENTIFY: _identify, p.SHUFFLE: _shuffle, p.STATUS: _status, p.COUNT: _count,
                 p.COMPOSITION: _composition, p.DELIVER: _deliver, p.CLEAR: _clear}

    # ---- the byte interface (serial line or USB bulk endpoints) --------------------------------

    def write(self, data: bytes) -> int:
        """Host → device bytes; complete request frames are answered into the output queue."""
        self._reader.feed(bytes(data))
        while True:
            try:
                frame = self._reader.next_frame()
            except p.FrameCRCError as err:
                self._out += p.encode_frame(err.seq, p.NAK, bytes([err.cmd, p.E_BAD_CRC]))
                continue
            except ProtocolError:
                self._out += p.encode_frame(0, p.NAK, bytes([0, p.E_BAD_LENGTH]))
                continue
            if frame is None:
                return len(data)
            cmd, payload = self.request(frame.cmd, frame.payload)
            self._out += p.encode_frame(frame.seq, cmd, payload)

    def read(self, size: int) -> bytes:
        """Device → host bytes, at most `size`."""
        chunk = bytes(self._out[:size])
        del self._out[:size]
        return chunk

    @property
    def in_waiting(self) -> int:
        return len(self._out)

    def reset_input(self) -> None:
        """Drop a partial request (USB clear-halt / reset, or a serial break)."""
        self._reader.clear()
