"""Device sources: the shoe and the shuffler, reached by URL through their drivers.

Each source owns its device: only its own thread (live) or the loop's pump (simulated) calls
the driver. What the device says becomes a table input on the service's queue; what the table
asks of the device (acknowledge a journaled read, shuffle, deliver, count the rest) reaches the
source through its outbox or a published `device_request` event.
"""
from __future__ import annotations

import collections
import dataclasses
import threading
import time
from typing import Callable, Generator

from controller.logsetup import get_logger
from controller.table import inputs as ti
from drivers import events as ev
from drivers.errors import Busy, DeviceError, DeviceIOError, NotFound, Timeout
from drivers.interfaces import ShoeDriver, ShufflerDriver
from drivers.shoe.base import ShoeDriverBase
from drivers.shuffler import ShuffleCountError, ShufflerFault

#: a shuffler request under way: yields the seconds to wait before it goes on
Job = Generator[float, None, None]

log = get_logger("controller.devices")


def from_device(event: ev.DeviceEvent) -> ti.Input | None:
    """The table input for a device event: the event itself, or for a shuffler's status
    that stops it, the alarm it means (None for events that change nothing)."""
    if isinstance(event, ev.ShufflerStatus):
        if event.state in ("jam", "door_open", "error"):
            return ev.DeviceAlarm(device=event.device, code=event.state,
                                  text=f"shuffler {event.state.replace('_', ' ')} "
                                  f"(code {event.error_code})")
        return None
    return event if event.type else None


#: the reads of a card (or of a failed card): the events the draw timer looks at
_READS = (ev.CardRead, ev.ReadFailed)


class DrawTimer:
    """Marks a card read that came too soon after the previous one for a hand to pull.

    Reads that arrive in one burst, or closer than `min_pull_interval_s`, were drawn together
    (a double or triple draw): they keep their read order (top card first) and are flagged.
    The flag is decided here, once, and journaled with the input, so a replay agrees.
    """

    def __init__(self, min_pull_interval_s: float = 0.15):
        self.min_pull_interval_s = min_pull_interval_s
        self.last_t: float | None = None

    @classmethod
    def for_protocol(cls, protocol: str, min_pull_interval_s: float = 0.15) -> "DrawTimer":
        """A protocol that flags multiple draws itself (framed) needs no timing guess."""
        return cls(0.0 if _traits(protocol).flags_multiple_draws else min_pull_interval_s)

    def annotate(self, inp: ti.Input | None, event: ev.DeviceEvent) -> ti.Input | None:
        if not isinstance(inp, _READS):
            return inp
        t = event.t
        close = self.last_t is not None and t - self.last_t < self.min_pull_interval_s
        self.last_t = t
        if close and isinstance(inp, ti.CardRead):
            return dataclasses.replace(inp, with_previous=True)
        return inp


class ShoeSource:
    """The shoe: reads become inputs; journaled reads are acknowledged from the outbox.

    With `wait=(first_s, max_s)` a shoe that is not there yet (no such port, or another
    program holds it) is waited for: its reader thread tries again, the wait doubling from
    `first_s` up to `max_s`, and `on_wait` hears why it waits (a line) and when it is found
    (None). Without it, a port that cannot be opened raises at once.
    """

    def __init__(self, submit: Callable[[ti.Input], None],
                 open_driver: Callable[[], ShoeDriver], *, protocol: str,
                 min_pull_interval_s: float = 0.15, read_timeout_s: float = 0.2,
                 clock: Callable[[], float] | None = None, url: str = "",
                 wait: tuple[float, float] | None = None,
                 on_wait: Callable[[str | None], None] | None = None):
        self.submit, self.protocol, self.url = submit, protocol, url
        self.open_driver = open_driver
        self.wait, self.on_wait = wait, on_wait
        # for the health view (written by the reader, read by anyone): the link as last seen
        self.link = "down"                  # up | lost | waiting | down
        self.waiting = ""                   # why the shoe cannot be opened yet
        self.last_read_at: float | None = None      # wall time of the last card or failed read
        # the same on the monotonic clock, for its age: a wall clock set on an hour would have
        # a shoe that reads every card shown silent for an hour
        self.last_read_mono: float | None = None
        self.last_event_at: float | None = None     # wall time of anything from the shoe
        self.driver: ShoeDriver | None = None
        try:
            self.driver = open_driver()
            self.link = "up"
        except (NotFound, Busy) as err:
            if wait is None:
                raise
            self._waiting(str(err))
        self.timer = DrawTimer.for_protocol(protocol, min_pull_interval_s)
        self.read_timeout_s = read_timeout_s
        self.clock = clock
        self.outbox: collections.deque[int] = collections.deque()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.resume_seq: int | None = None
        self.resume_session: int | None = None
        self._session: int | None = None    # the shoe's run of read numbers, as put on record
        # the simulated port's news when a pump last found nothing (None: look every time)
        self._seen: tuple[int, float | None] | None = None
        self._port: object = None
        self._port_news: Callable[[], tuple[int, float, bool] | None] | None = None
        # the last pump found nothing, and nothing will arrive before something else than the
        # clock moves (no silence or drop running, nothing to acknowledge): see `Pump`
        self.steady = False

    @property
    def resends(self) -> bool:
        """Whether the protocol resends unacknowledged reads (nothing is lost in flight)."""
        return _traits(self.protocol).resends

    def ack(self, seq: int) -> None:
        """From the loop: this read is journaled (the owner's thread tells the shoe)."""
        self.outbox.append(seq)

    def resume(self, last_seq: int, session: int | None = None) -> None:
        """After a restart: reads up to `last_seq` are journaled already, numbered in the run
        `session` (None: not known)."""
        self.resume_seq, self.resume_session = last_seq, session

    def _waiting(self, why: str) -> None:
        first = not self.waiting
        self.waiting, self.link = why, "waiting"
        if first and self.on_wait is not None:
            self.on_wait(why)

    def _open_when_there(self) -> bool:
        """Reader thread: try the shoe until it opens (True) or the source closes (False)."""
        assert self.wait is not None
        delay, longest = self.wait
        while not self._stop.wait(delay):
            try:
                self.driver = self.open_driver()
            except DeviceError as err:    # still missing, or now e.g. permissions: say so
                log.debug("shoe not there yet", url=self.url, error=str(err), retry_in_s=delay)
                if str(err) != self.waiting:
                    self.waiting = str(err)
                    if self.on_wait is not None:
                        self.on_wait(self.waiting)
                delay = min(delay * 2, longest)
                continue
            log.info("shoe found", url=self.url)
            self.waiting, self.link = "", "up"
            if self.on_wait is not None:
                self.on_wait(None)
            return True
        return False

    def step(self, timeout: float) -> bool:
        """One read (owner's thread); True when it produced an input."""
        drv = self.driver
        if drv is None:             # not there yet: the reader thread is waiting for it
            return False
        if self.resume_seq is not None:
            # a driver that knows runs of numbers is told which one the journal's reads are of
            if self.resume_session is not None and \
                    (same := getattr(drv, "resume_session", None)) is not None:
                same(self.resume_session)
            drv.resume(self.resume_seq)
            self.resume_seq = None
        while self.outbox:
            drv.ack(self.outbox.popleft())
        event = drv.read_event(timeout=timeout)
        if event is None:
            return False
        if (session := getattr(drv, "session", None)) != self._session:
            # a shoe that numbers its reads in runs (framed) named a new one: on record before
            # the reads that follow it, for a restart to tell this shoe from one started afresh
            self._session = session
            if session is not None:
                self.submit(ev.ShoeSession(session=session))
        self.last_event_at = now = time.time()
        if isinstance(event, _READS):
            # nearly every event: a read, itself the table's input
            self.last_read_at, self.last_read_mono = now, time.monotonic()
            inp = self.timer.annotate(event, event)
            if inp is not None:
                self.submit(inp)
            return True
        if isinstance(event, ev.LinkLost):
            self.link = "lost"
        elif isinstance(event, ev.LinkBack):
            self.link = "up"
        inp = from_device(event)
        if inp is not None:
            self.submit(inp)
        return True

    def pump(self) -> float | None:
        """Simulated time: read everything the shoe has sent; when the link is down, the time
        to try again.

        A port that can say what changed since it was last found empty (the simulated shoe's
        `news`) is not looked at again until something did, or until a silence or a dropped
        link it reported may have ended: one look a card, not one every turn of the loop."""
        drv = self.driver
        self.steady = False
        if drv is None:
            return None
        seen = self._seen
        if seen is not None:
            # seen only when the last look left nothing inside the driver, through the port
            # it still has (only a look reads bytes or opens the port again)
            port_news = self._port_news
            news = port_news() if port_news is not None else None
            if news is not None and news[0] == seen[0] \
                    and (seen[1] is None or self.clock is None or self.clock() < seen[1]) \
                    and not self.outbox and self.resume_seq is None:
                self.steady = seen[1] is None
                return None         # nothing arrived since the last look found nothing
        step, buffered = self.step, False
        while True:
            if not step(0.0):
                buffered = drv.buffered
                if not buffered or not step(0.0):
                    news = self._news(drv)  # (bytes just read may hold a frame not decoded)
                    break
            if not drv.buffered:
                news = self._news(drv)
                if news is not None and not news[2]:
                    buffered = False
                    break           # all read: nothing is queued on the port
        if not drv.connected:
            self._seen = None
            if self.clock is not None:
                return self.clock() + max(drv.reconnect_delay_s, 0.01)
            return None
        if news is None or self.clock is None or (buffered and drv.buffered):
            self._seen = None
        else:
            # a silence or a drop still running holds back bytes until it ends: look then
            until = news[1]
            self._seen = seen = (news[0], until if until > 0.0 and until > self.clock() else None)
            self.steady = seen[1] is None and not self.outbox and self.resume_seq is None
        return None

    def _news(self, drv: ShoeDriver) -> tuple[int, float, bool] | None:
        port = getattr(drv, "transport", None)
        if port is not self._port:
            self._port = port
            self._port_news = getattr(port, "news", None)
        return self._port_news() if self._port_news is not None else None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True, name="shoe-reader")
        self._thread.start()

    def _run(self) -> None:
        if self.driver is None and not self._open_when_there():
            return
        while not self._stop.is_set():
            try:
                self.step(self.read_timeout_s)
            except Exception as err:     # never let device input kill the reader silently
                log.error("shoe reader error", error=repr(err), exc_info=err)
                self.submit(ev.LinkLost(device="shoe", reason=repr(err)))
                self._stop.wait(1.0)

    def close(self) -> None:
        self._stop.set()
        drv = self.driver
        if drv is not None and self._thread is not None:
            drv.cancel_read()   # the reader's blocking read ends now, not at its timeout
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.driver is not None:
            self.driver.close()

    @property
    def stats(self) -> dict[str, int]:
        return dict(self.driver.stats) if self.driver is not None else {}


#: a request that finds the shuffler paused with its door open waits this long (seconds) for
#: the door to be closed before the table is held for it again
DOOR_WAIT_S = 30.0


class ShufflerSource:
    """The shuffler: works through the table's `device_request`s (shuffle, deliver, count the
    rest) and reports identity, counts and alarms as inputs.

    Each request is a job that runs until it must wait for the shuffler (a shuffle under way):
    live, its thread sleeps between looks; simulated, `pump` says when to look again, so a
    shuffle takes its time on the virtual clock while the rest of the table goes on.

    Every request opens the device afresh, live and simulated alike: a shuffler unplugged and
    plugged back between shoes is found again, and one that is gone is an `open_failed` alarm.
    """

    def __init__(self, submit: Callable[[ti.Input], None],
                 open_driver: Callable[[], ShufflerDriver], *, decks: int,
                 approved_firmware: tuple[str, ...] = (),
                 shuffle_timeout_s: float = 300.0, threaded: bool = True,
                 clock: Callable[[], float] = time.monotonic, poll_interval_s: float = 0.1):
        self.submit, self.open_driver, self.decks = submit, open_driver, decks
        self.approved = tuple(approved_firmware)
        # for the health view: how the last request went
        self.link = "unused"                # unused (not asked yet) | ok | error
        self.last_contact_at: float | None = None
        self.last_contact_mono: float | None = None     # (its age, as the shoe's)
        self.last_error = ""
        self.shuffle_timeout_s = shuffle_timeout_s
        self.clock, self.poll_interval_s = clock, max(poll_interval_s, 0.01)
        #: (action, retold): retold, a request a restart found unanswered (see `_work`)
        self.requests: collections.deque[tuple[str, bool]] = collections.deque()
        self._job: Job | None = None
        self._look_at = 0.0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._threaded = threaded
        self.steady = False         # no request waiting nor under way: see `Pump`

    def start(self) -> None:
        """Live: the requests are worked on a thread of their own (simulated: pumped)."""
        if self._threaded and self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="shuffler")
            self._thread.start()

    def on_event(self, e: dict) -> None:
        """From the loop: the table asks something of the shuffler."""
        if e["event"] == "device_request" and e.get("device") == "shuffler":
            self.requests.append((e["action"], bool(e.get("retold"))))
            self._wake.set()

    publish = on_event      # an outlet at the listeners' tap
    takes = frozenset({"device_request"})

    def pump(self) -> float | None:
        """Simulated time: run the requests; the time to look again at a shuffle under way."""
        while True:
            if self._job is None:
                if not self.requests:
                    self.steady = True
                    return None
                self._job = self._work(*self.requests.popleft())
            elif self.clock() < self._look_at:
                return self._look_at
            wait = next(self._job, None)
            if wait is not None:
                self._look_at = self.clock() + wait
                return self._look_at
            self._job = None

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(0.5)
            self._wake.clear()
            while self.requests and not self._stop.is_set():
                for wait in self._work(*self.requests.popleft()):
                    if self._stop.wait(wait):
                        return

    def _work(self, action: str, retold: bool = False) -> Job:
        """One request; yields the seconds to wait before it goes on.

        A request asked afresh finds the shuffler stopped (a jam, an error) only after the
        table held for it and a remedy asked again: the fault is cleared. One `retold` by a
        restart may find it stopped on a fault whose report died with the last process: the
        fault is reported as the first asking would have reported it (the table holds), never
        cleared unseen, and a shuffle or count under way is not started again."""
        try:
            drv = self.open_driver()
        except DeviceError as err:     # a device that cannot be opened: tell the table
            self.link, self.last_error = "error", str(err)
            self.submit(ev.DeviceAlarm(device="shuffler", code="open_failed", text=str(err)))
            return
        try:
            if action == "shuffle":
                yield from self._shuffle(drv, retold)
            elif action == "deliver":
                self._deliver(drv)
            elif action == "count_rest":
                yield from self._count_rest(drv, retold)
            self.link, self.last_contact_at = "ok", time.time()
            self.last_contact_mono = time.monotonic()
        except DeviceError as err:
            self.link, self.last_error = "error", str(err)
            self.submit(ev.DeviceAlarm(device="shuffler", code="fault", text=str(err)))
        finally:
            drv.close()

    def _ready(self, drv: ShufflerDriver,
               decks: int | None) -> Generator[float, None, ev.ShuffleDone]:
        """Look at the shuffle every poll interval until it is done (its ShuffleDone is the
        generator's value); Timeout after `shuffle_timeout_s`."""
        deadline = self.clock() + self.shuffle_timeout_s
        while True:
            done = drv.poll_ready(decks=decks)
            if done is not None:
                return done
            if self.clock() >= deadline:
                raise Timeout(f"shuffler: still shuffling after {self.shuffle_timeout_s} s")
            yield self.poll_interval_s

    def _shuffle(self, drv: ShufflerDriver, retold: bool = False) -> Job:
        ident = drv.identify()
        self.submit(ident)
        if self.approved and ident.firmware not in self.approved:
            self.submit(ev.DeviceAlarm(device="shuffler", code="unapproved_firmware",
                                       text=f"firmware {ident.firmware!r} is not on the approved "
                                       f"list ({', '.join(self.approved)})"))
            return
        state = drv.status().state
        if state in ("jam", "error") and not retold:
            state = drv.clear().state
        if state == "door_open":
            state = yield from self._door_closed(drv, retold)
            if state == "door_open":
                return
        if state not in ("shuffling", "ready") and not (retold and state in ("jam", "error")):
            drv.shuffle(self.decks)
        try:
            done = yield from self._ready(drv, self.decks)
            self.submit(done)
        except ShuffleCountError as err:
            self.submit(ev.ShuffleDone(count=err.count, composition=tuple(dict(err.composition).items())))
        except ShufflerFault as err:
            self.submit(ev.DeviceAlarm(device="shuffler", code=err.status.state, text=str(err)))

    def _door_closed(self, drv: ShufflerDriver, retold: bool) -> Generator[float, None, str]:
        """The request found the shuffler paused with its door open: asked again by the
        remedy of the hold for that door (the supervisor resumed as the door is being closed),
        or asked while someone has it open. The shuffler goes on by itself once the door is
        closed, so the request waits for that, a warning said once, and holds the table again
        only when the door stays open DOOR_WAIT_S: one hold for one open door, not one a
        resume. One `retold` by a restart reports the door at once (the first asking's report
        may have died with the last process). The shuffler's state when the wait ends."""
        if not retold:
            self.submit(ev.DeviceWarning(device="shuffler", code="door_open",
                                         text="shuffler door still open: it goes on once "
                                         "the door is closed"))
            deadline = self.clock() + DOOR_WAIT_S
            while self.clock() < deadline:
                yield self.poll_interval_s
                state = drv.status().state
                if state != "door_open":
                    return state
        self.submit(ev.DeviceAlarm(device="shuffler", code="door_open",
                                   text="shuffler door open" if retold else
                                   f"shuffler door still open after {DOOR_WAIT_S:g} s"))
        return "door_open"

    def _deliver(self, drv: ShufflerDriver) -> None:
        try:
            drv.deliver()
        except (DeviceIOError, Timeout):
            # the link failed under the request: whether the shoe came out is not known, and
            # one still in the machine was waited for for ever (said only in a warning, the
            # shuffler shown as answering). The table holds; its remedy asks again, and a
            # shuffler that did hand the shoe over refuses, as below
            raise
        except DeviceError as err:
            log.warning("shuffler did not deliver; the shoe is taken by hand", error=str(err))

    def _count_rest(self, drv: ShufflerDriver, retold: bool = False) -> Job:
        """The rest of the ended shoe goes through the shuffler, which counts it card by card
        (a count that is not whole decks is what is expected here, the shuffler's `error`)."""
        state = drv.status().state
        if state == "door_open":
            # paused with the rest inside: the count goes on once the door is closed (a
            # SHUFFLE now is refused, and was held as a fault)
            state = yield from self._door_closed(drv, retold)
            if state == "door_open":
                return
        if state == "jam" and not retold:
            state = drv.clear().state   # (retold: the jam is looked at, reported, not cleared)
        if state not in ("shuffling", "ready", "jam", "error"):
            drv.shuffle(self.decks)
        # `error` is the count of the rest done (it is not whole decks) and not read yet: a
        # count that went on after a hold's door was closed; it is read, not counted again
        try:
            done = yield from self._ready(drv, None)
            count, comp = done.count, dict(done.composition)
        except ShuffleCountError as err:
            count, comp = err.count, dict(err.composition)
        except ShufflerFault as err:
            self.submit(ev.DeviceAlarm(device="shuffler", code=err.status.state, text=str(err)))
            return
        drv.clear()
        self.submit(ti.Remainder(comp, None if comp else count))

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._job is not None:
            self._job.close()
            self._job = None


def _traits(protocol: str) -> type[ShoeDriverBase]:
    """The shoe protocol's driver class, whose attributes say what the shoe does itself."""
    from drivers.shoe import shoe_driver
    return shoe_driver(protocol)
