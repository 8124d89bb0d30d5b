"""Telling what the journal holds: each committed input's events, its anchor, the prompt and
the status it left, to the outlets at each tap in their order, then the device's
acknowledgement."""
from __future__ import annotations

from typing import Callable

from controller.logsetup import get_logger
from controller.service.parts import Flushing, Outlet, Tap
from controller.table.inputs import SHOE_READS, Input

log = get_logger("controller.service")


class Announcement:
    """What one journaled input has to tell once its batch is committed."""
    __slots__ = ("input", "events", "status", "prompt", "notice", "anchor", "context")

    def __init__(self, inp: Input, events: list[dict], status: dict, prompt: dict | None,
                 notice: dict | None):
        self.input, self.events, self.status, self.prompt = inp, events, status, prompt
        self.notice = notice
        self.anchor: dict | None = None
        # the log's context as it was when the input was applied
        self.context = (status.get("shoe"), status.get("round"))


class Fanout:
    """The outlets by tap, and the devices' acknowledgements of journaled reads."""

    def __init__(self) -> None:
        self.outward: list[Outlet] = []
        self.listeners: list[Outlet] = []
        self.actors: list[Outlet] = []
        self.acks: dict[str, Callable[[int], None]] = {}
        self._flushing: list[Flushing] = []
        self.published_seq = 0
        # per event kind, the outward outlets, the actors and the listeners that take it (see
        # `takers`)
        self._outward = _ByKind(self.outward)
        self._acting = _ByKind(self.actors)
        self._listening = _ByKind(self.listeners)

    def connect(self, part: Outlet, at: Tap) -> None:
        {Tap.OUTWARD: self.outward, Tap.LISTENER: self.listeners,
         Tap.ACTOR: self.actors}[at].append(part)
        if at is Tap.OUTWARD and isinstance(part, Flushing):
            self._flushing.append(part)
        self._outward.clear()
        self._acting.clear()
        self._listening.clear()

    def acting(self, kind: str) -> tuple[Outlet, ...]:
        """The actors that take events of `kind`, in their order."""
        return self._acting[kind]

    def listening(self, kind: str) -> tuple[Outlet, ...]:
        """The listeners that take events of `kind`, in their order."""
        return self._listening[kind]

    def publish(self, events: list[dict], *, actors: bool = True) -> None:
        """Journaled events (each with its seq) to the outward outlets, the listeners and
        (unless they were told as the input was applied: `tell`) the actors."""
        outward, listening, acting = self._outward, self._listening, self._acting
        for e in events:
            kind = e["event"]
            for pub in outward[kind]:
                pub.publish(e)
            for sub in listening[kind]:
                sub.publish(e)
            if actors:
                for actor in acting[kind]:
                    actor.publish(e)
            seq = e.get("seq")
            if seq and seq > self.published_seq:
                self.published_seq = seq

    def wants(self, kind: str) -> bool:
        """Whether an outward outlet takes events of `kind` (see `takers`)."""
        return bool(self._outward[kind])

    def outward_only(self, event: dict) -> None:
        for pub in self._outward[event["event"]]:
            pub.publish(event)

    def anchor(self, event: dict) -> None:
        """To the outward outlets (stdout, the floor feed): a copy of the head off the PC."""
        log.info("journal anchored", seq=event["seq"], upto_seq=event["upto_seq"],
                 reason=event["reason"])
        self.outward_only(event)
        self.published_seq = max(self.published_seq, event["seq"])
        self.flush()

    def status(self, prompt: dict | None, status: dict) -> None:
        """The prompt (when it changed) and the status, now."""
        if prompt is not None:
            self.outward_only(prompt)
        kind = status["event"]       # (a request retold goes the same way)
        for listener in (*self._acting[kind], *self._listening[kind]):
            listener.publish(status)
        self.flush()

    def tell(self, told: Announcement) -> None:
        """The actors, as the input is applied (its batch still open)."""
        acting = self._acting
        for e in told.events:
            for actor in acting[e["event"]]:
                actor.publish(e)
        status = told.status
        for actor in acting["status"]:
            actor.publish(status)
        if told.notice is not None:
            for actor in acting["refused"]:
                actor.publish(told.notice)

    def announce(self, told: Announcement) -> None:
        """One committed input: its events, its anchor, the prompt and status it left."""
        events = told.events
        for e in events:
            if e["event"] in _LOGGED:
                _log_event(e)
        # `publish(events, actors=False)` written out (the actors were told: `tell`)
        outward, listening = self._outward, self._listening
        for e in events:
            kind = e["event"]
            for pub in outward[kind]:
                pub.publish(e)
            for sub in listening[kind]:
                sub.publish(e)
            seq = e.get("seq")
            if seq and seq > self.published_seq:
                self.published_seq = seq
        if told.anchor is not None:
            self.anchor(told.anchor)
        if told.prompt is not None:
            self.outward_only(told.prompt)
        for sub in self._listening["status"]:
            sub.publish(told.status)
        inp = told.input
        if inp.type in SHOE_READS:
            ack = self.acks.get(getattr(inp, "device", ""))
            seq = getattr(inp, "seq", None)
            if ack is not None and seq:
                ack(seq)
        if told.notice is not None:
            log.warning("input refused", input=told.notice["action"] or inp.type,
                        why=told.notice["why"])
            for sub in self.listening("refused"):
                sub.publish(told.notice)

    def flush(self) -> None:
        """Outlets that buffer (stdout) write out what they were given."""
        for pub in self._flushing:
            pub.flush()


class _ByKind(dict[str, tuple[Outlet, ...]]):
    """Event kind → the outlets of `outlets` that take it (`takers`), found at the first
    event of that kind: a lookup after that is the dict's own."""

    def __init__(self, outlets: list[Outlet]):
        super().__init__()
        self.outlets = outlets

    def __missing__(self, kind: str) -> tuple[Outlet, ...]:
        found = self[kind] = takers(self.outlets, kind)
        return found


def takers(outlets: list[Outlet], kind: str) -> tuple[Outlet, ...]:
    """The outlets that take events of `kind`: an outlet may name the only kinds it acts on
    in `takes` (a frozenset), or the kinds it leaves aside in `ignores`, which spares it a
    call for every other event; with neither, it takes everything."""
    return tuple(o for o in outlets
                 if ((takes := getattr(o, "takes", None)) is None or kind in takes)
                 and kind not in getattr(o, "ignores", ()))


#: the kinds of event `_log_event` may log
_LOGGED = frozenset({"hold", "shoe_started", "shoe_ended", "override", "alarm"})


def _log_event(e: dict) -> None:
    """The events a technician looks for in the log (the journal has them all)."""
    kind = e["event"]
    if kind == "hold":
        log.warning("table on hold", reason=e.get("reason"), detail=e.get("detail"),
                    seq=e.get("seq"))
    elif kind in ("shoe_started", "shoe_ended"):
        log.info(kind.replace("_", " "), reason=e.get("reason"), seq=e.get("seq"))
    elif kind == "override":
        log.info("override", action=e.get("action"), user=e.get("user"), seq=e.get("seq"))
    elif kind == "alarm" and e.get("severity") == "error":
        log.warning("device alarm", source=e.get("source"), code=e.get("code"),
                    text=e.get("text"), seq=e.get("seq"))
