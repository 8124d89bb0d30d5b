"""The dealer of a separate-process rig (`tablectl devices`): the hands between the shoe, the
shuffler and the table, in the process that serves the devices.

`DisplayDealer` follows the table as a dealer does, through what the dealer's display shows:
the display's public event stream (`/dealer/events` of `tablectl run --http HOST:PORT`), never
the table's internals. It pulls a card only when the display asks for one and has shown the
last, at a human pace; waits while the table shuffles, holds or counts; loads into the shoe
what the shuffler delivers (or, at a table without a shuffler, shuffles the cards by hand);
and at a shoe's end puts the rest into the shuffler to be counted, then the cards dealt, for
the next shoe, or reads the rest back through the shoe.

`BlindDealer` ignores the table: it pulls a card every `pace_s` (or one per Enter) while a
controller has the shoe open, and what the shuffler delivers replaces the shoe's cards: a
test bench, and the dealer chaos tests need.

Both act on the rig's own thread (`act`), between the moments the server moves bytes.
"""
from __future__ import annotations

import collections
import http.client
import json
import os
import random
import threading
import time
from typing import Any, Callable, Protocol, Sequence
from urllib.parse import urlsplit


Say = Callable[[str], None]
#: the part of the dealer's view that moves when the table takes a card in
PROGRESS = ("state", "shoe", "round", "prompt", "prompt_code", "hold")


def events_url(text: str) -> tuple[str, int, str, str]:
    """(host, port, path, shown URL) of a dealer's display given as http://HOST:PORT[/…], or
    HOST:PORT; ValueError with the accepted forms otherwise."""
    raw = text.strip()
    parts = urlsplit(raw if "//" in raw else f"http://{raw}")
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"--dealer-display {text!r}: give the table's web display as "
                         f"http://HOST:PORT, e.g. http://127.0.0.1:8080")
    try:
        port = parts.port or 80
    except ValueError:
        raise ValueError(f"--dealer-display {text!r}: the port must be a number from 1 to "
                         f"65535") from None
    base = parts.path.rstrip("/")
    for tail in ("/dealer/events", "/dealer"):
        if base.endswith(tail):
            base = base[:-len(tail)]
    host = parts.hostname
    shown = f"http://{'[' + host + ']' if ':' in host else host}:{port}{base}/dealer"
    return host, port, f"{base}/dealer/events", shown


class DisplayFeed:
    """The dealer's display as its screen gets it: the server-sent `dealer` views, read on a
    thread of their own and handed over through a pipe the rig's loop waits on (only the
    newest matters: the stream itself skips to the latest)."""

    RETRY_S = 0.5

    def __init__(self, url: str, say: Say):
        self.host, self.port, self.path, self.url = events_url(url)
        self.say = say
        self._latest: collections.deque[dict] = collections.deque(maxlen=1)
        self._r, self._w = os.pipe()
        os.set_blocking(self._r, False)
        os.set_blocking(self._w, False)
        self._stop = threading.Event()
        self._conn: http.client.HTTPConnection | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="dealer-display")

    def start(self) -> "DisplayFeed":
        self._thread.start()
        return self

    def fileno(self) -> int:
        return self._r

    def take(self) -> dict | None:
        """The newest view that came since the last call (None: nothing new)."""
        try:
            while os.read(self._r, 4096):
                pass
        except BlockingIOError:
            pass
        try:
            return self._latest.popleft()
        except IndexError:
            return None

    def _hand_over(self, view: dict) -> None:
        self._latest.append(view)
        try:
            os.write(self._w, b"v")
        except BlockingIOError:
            pass                                # the loop has a wake-up waiting already

    def _run(self) -> None:
        waiting_said = followed = False
        while not self._stop.is_set():
            try:
                self._follow()
                followed = True
            except (OSError, http.client.HTTPException, ValueError) as err:
                if self._stop.is_set():
                    return
                if followed:
                    self.say(f"the dealer's display at {self.url} went away ({err}); "
                             f"waiting for it to come back")
                    followed = False
                elif not waiting_said:
                    self.say(f"waiting for the dealer's display at {self.url} (start the table "
                             f"with tablectl run --http {self.host}:{self.port})")
                waiting_said = True
            self._stop.wait(self.RETRY_S)

    def _follow(self) -> None:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=40)
        self._conn = conn
        try:
            conn.request("GET", self.path, headers={"Accept": "text/event-stream"})
            resp = conn.getresponse()
            if resp.status != 200:
                raise ValueError(f"{self.path} answered {resp.status} {resp.reason}")
            self.say(f"following the dealer's display at {self.url}")
            event, data = "", list[str]()
            while not self._stop.is_set():
                line = resp.readline()
                if not line:
                    raise ConnectionError("the stream ended")
                text = line.decode("utf-8").rstrip("\r\n")
                if not text:
                    if event == "dealer" and data:
                        self._hand_over(json.loads("\n".join(data)))
                    event, data = "", []
                elif text.startswith("event:"):
                    event = text[6:].strip()
                elif text.startswith("data:"):
                    data.append(text[5:].lstrip())
        finally:
            self._conn = None
            conn.close()

    def close(self) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(2)           # wakes the reader out of its readline
            except OSError:
                pass
        self._thread.join(timeout=2)
        os.close(self._r)
        os.close(self._w)


class RigDealer(Protocol):
    """What the device server drives: the files it waits on for the dealer, what it does
    when one is ready, what it does when due (returning when it wants to act next; None: on
    news only), and its end."""

    def fds(self) -> list[Any]: ...

    def on_ready(self, fd: Any) -> None: ...

    def act(self, now: float, shoe_open: bool) -> float | None: ...

    def close(self) -> None: ...


class Hands:
    """What both dealers hold: the shoe, the shuffler, the cut card's place and the log. A
    shoe the shuffler delivers goes into the shoe, then `on_loaded` hears of it."""

    def __init__(self, shoe: Any, shuffler: Any, *, cut_from_end: int | None, say: Say,
                 first: tuple[list[str], int | None] | None = None, seed: int | None = None,
                 faults: Sequence[Any] = (), on_loaded: Callable[[], None] | None = None):
        self.shoe, self.shuffler, self.cut_from_end, self.say = shoe, shuffler, cut_from_end, say
        self.first = first                          # the first shoe (a shoe file) and its cut
        self._faults = list(faults)                 # the shoe's faults: in its first shoe
        self.rng = random.Random(seed) if seed is not None else random.SystemRandom()
        self._on_loaded = on_loaded
        if shuffler is not None:
            shuffler.on_deliver = self._delivered

    def cut_for(self, cards: Sequence[str]) -> int | None:
        """Where the dealer puts the cut card: the shoe file's, else the house's place."""
        if self.first is not None and list(cards) == self.first[0]:
            return self.first[1]
        n = self.cut_from_end
        return len(cards) - n if n and n < len(cards) else None

    def load(self, cards: list[str], how: str) -> None:
        faults, self._faults = self._faults, []
        self.shoe.load(cards, cut_position=self.cut_for(cards), faults=faults)
        self.say(f"new shoe of {len(cards)} cards {how}")

    def _delivered(self, order: list[str]) -> None:
        self.load(list(order), "loaded from the shuffler")
        if self._on_loaded is not None:
            self._on_loaded()


class BlindDealer:
    """Pulls a card every `pace_s` while a controller has the shoe open, whatever the table
    says; `pace_s` 0: one card per Enter on `presses` (a person at a bench)."""

    def __init__(self, shoe: Any, shuffler: Any, *, pace_s: float, presses: Any = None,
                 **kw: Any):
        self.hands = Hands(shoe, shuffler, **kw)
        self.shoe, self.say = shoe, self.hands.say
        self.pace_s = pace_s
        self._stdin = presses if pace_s == 0 else None
        self._presses = 0
        self._next = 0.0
        first = self.hands.first
        if first is not None:
            self.hands.load(list(first[0]), "in the shoe")

    def fds(self) -> list[Any]:
        return [self._stdin] if self._stdin is not None else []

    def on_ready(self, fd: Any) -> None:
        if self._stdin is None or fd is not self._stdin:
            return
        data = os.read(self._stdin.fileno(), 1024)
        if not data:                            # stdin closed: no more presses will come
            self._stdin = None
            return
        self._presses += data.count(b"\n")

    def act(self, now: float, shoe_open: bool) -> float | None:
        if not shoe_open:
            self._next = 0.0                    # start afresh when a controller (re)connects
            return None
        if self._next == 0.0:
            self._next = now
        manual = self.pace_s == 0
        for _ in range(64):                     # bounded: the loop must keep moving bytes
            if getattr(self.shoe, "exhausted", False):
                self._presses = 0
                return None
            if manual:
                if not self._presses:
                    return None
                self._presses -= 1
            elif now < self._next:
                return self._next
            else:
                self._next += self.pace_s
            pulled = self.shoe.pull()
            if manual:
                self.say(f"pulled {' '.join(pulled) or 'nothing'} ({self.shoe.position} out, "
                         f"{self.shoe.remaining} left)")
            if getattr(self.shoe, "exhausted", False):
                self.say("the shoe is empty")
        return self._next if not manual else None

    def close(self) -> None:
        """The blind dealer holds nothing of its own to let go (stdin is the process's)."""


class DisplayDealer:
    """Deals as the dealer's display asks (see the module's docstring)."""

    READ_WAIT_S = 5.0

    def __init__(self, shoe: Any, shuffler: Any, *, display: str, pace_s: float, **kw: Any):
        self.hands = Hands(shoe, shuffler, on_loaded=self._delivered, **kw)
        self.shoe, self.shuffler, self.say = shoe, shuffler, self.hands.say
        self.pace_s = pace_s
        self.feed = DisplayFeed(display, self.say)
        self.view: dict | None = None
        self.discards: list[str] = []           # the cards dealt since the last gathering
        self.dealt_for: int | None = None       # the table's shoe the shoe's cards are for
        self._pulled_at: tuple | None = None    # the view when the last card was pulled
        self._next = 0.0
        self._counted_for: int | None = None    # the shoe whose rest went to the shuffler
        self._discards_due = False
        self._empty_for: int | None = None
        self._empty_at = 0.0
        self._shuffles_at_load = 0
        self._first_used = False
        self._pulled_time = 0.0
        self._slow_said = False

    def start(self) -> "DisplayDealer":
        self.feed.start()
        return self

    def fds(self) -> list[Any]:
        return [self.feed]

    def on_ready(self, fd: Any) -> None:
        view = self.feed.take()
        if view is not None:
            self.view = view

    def _delivered(self) -> None:
        self.dealt_for = None                   # a fresh shoe: for the shoe the table asks for
        self._shuffles_at_load = self.shuffler.shuffles

    def act(self, now: float, shoe_open: bool) -> float | None:
        view = self.view
        if view is None:
            return None
        shoe_no, state, code = view.get("shoe"), view.get("state"), view.get("prompt_code")
        if state == "shoe_ended" and code == "prompt.count_back_shuffler":
            self._rest_to_shuffler(shoe_no)
        if self._discards_due and self.shuffler.holding:
            # the rest is in the machine being counted: the cards dealt go in behind it
            self._discards_due = False
            if self.discards:
                self.shuffler.load(self.discards)
                self.discards = []
        expects = view.get("expects")
        if view.get("hold") is not None and self._pulled_at is not None:
            # the table is held with a card of ours out: the supervisor settles what lies on
            # the table (enters its read, or confirms the layout as it is), so once dealing
            # resumes the dealer deals on from the display rather than waiting for that read
            self._pulled_at = None
            self._next = max(self._next, now + self.pace_s)
        if expects not in ("card", "count_back") or not shoe_open:
            return None
        if expects == "card" and self.dealt_for != shoe_no:
            if self.dealt_for is not None or not (self.shoe.has_more):
                if self._shuffler_in_use():
                    return None                 # the shuffler hands the shoe over
                self._hand_shuffle()
            self.dealt_for = shoe_no
        key = tuple(view.get(k) for k in PROGRESS) + (len(view.get("cards") or ()),)
        if expects == "card" and key == self._pulled_at:
            # the display has not shown the last card yet: a dealer waits for it
            if not self._slow_said and now - self._pulled_time > self.READ_WAIT_S:
                self._slow_said = True
                self.say("the display has not shown the last card dealt; waiting (if its "
                         "read was lost, the supervisor enters it)")
            return now + self.READ_WAIT_S if not self._slow_said else None
        if self._pulled_at is not None:
            # the display shows the last card: the next follows a pace after the dealer saw it
            # (not after the pull), so no two reads come closer than the pace
            self._pulled_at = None
            self._next = max(self._next, now + self.pace_s)
        if now < self._next:
            return self._next
        if not self.shoe.has_more:
            if expects == "count_back":
                # the rest is all read: the table says so itself, unless cards are missing
                self._empty_at = self._empty_at or now + self.READ_WAIT_S
                if now < self._empty_at:
                    return self._empty_at
            self._shoe_is_empty(shoe_no)
            return None
        self._empty_at = 0.0
        self.discards += self.shoe.pull()
        self._pulled_at = key if expects == "card" else None
        self._pulled_time, self._slow_said = now, False
        self._next = now + self.pace_s
        return self._next if expects == "count_back" else None

    def _shuffler_in_use(self) -> bool:
        s = self.shuffler
        return s is not None and (s.busy or s.shuffles > self._shuffles_at_load)

    def _hand_shuffle(self) -> None:
        """A table without a shuffler: the dealer gathers the cards and shuffles them by hand
        (the shoe file's order, the first time)."""
        cards = self.discards + self.shoe.take_rest()
        self.discards = []
        if not cards:
            cards = self.shuffler.take_all()    # new decks, in the box beside the shuffler
        first = self.hands.first
        if first is not None and not self._first_used and sorted(cards) == sorted(first[0]):
            cards = list(first[0])
        else:
            self.hands.rng.shuffle(cards)
        self._first_used = True
        self.hands.load(cards, "shuffled by hand")
        self._shuffles_at_load = self.shuffler.shuffles

    def _rest_to_shuffler(self, shoe_no: Any) -> None:
        if self._counted_for == shoe_no:
            return
        self._counted_for = shoe_no
        rest = self.shoe.take_rest()
        if rest:
            self.shuffler.load(rest)
        self._discards_due = True
        self.say(f"the rest of the shoe ({len(rest)} cards) is in the shuffler to be counted")

    def _shoe_is_empty(self, shoe_no: Any) -> None:
        """The table wants a card and the shoe has none: the shoe says so, once."""
        if self._empty_for == shoe_no:
            return
        self._empty_for = shoe_no
        self.say("the shoe is empty")
        if getattr(self.shoe, "protocol", "") != "barcode":
            self.shoe.alarm("EMPTY", "shoe empty")

    def close(self) -> None:
        self.feed.close()
