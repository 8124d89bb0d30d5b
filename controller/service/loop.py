"""The table service: one loop, one queue, one thread that touches the table.

    sources (shoe, shuffler, control socket, timers, virtual actors) ──put──▶ inbox
    loop:  input ─▶ Table.apply_safely ─▶ journal (input + its events, one transaction,
           fsynced for durable inputs) ─▶ publish (events carry their journal seq) ─▶ device acks

Nothing is published, acknowledged or answered before its input and events are in the journal.
A journal that cannot be written stops the table (`TableStopped`): the state it had moved to in
memory is never seen, and a restart resumes from what is durable. The same loop runs live (real
clock; sources are threads) and simulated (virtual clock; the loop pumps the sources itself and
jumps to the next timer when nothing else can happen). Parts join it through `connect` before
it runs (controller/service/build.py); parts on other threads report back through the inbox.
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable, NoReturn

import structlog

from controller.errors import TableStopped
from controller.journal import Journal, JournalError
from controller.journal.anchor import AnchorKey
from controller.logsetup import get_logger
from controller.service.anchors import ANCHOR_EVERY, Anchors
from controller.service.announce import Announcement, Fanout
from controller.service.batches import Batches
from controller.service.clock import Clock, Timers
from controller.service.collector import Collector
from controller.service.conditions import Conditions, Gate
from controller.service.inputs import (CursorMoved, Note, OutletView, Proven, Query, Refusal,
                                       Retell, Submitted)
from controller.service.parts import Ack, Hook, Outlet, Pump, Tap, Watch, wake_times
from controller.service.prompt import Prompter
from controller.service.recovery import LOCAL_CURSOR, SNAPSHOT_FORMAT
from controller.service.writer import WRITTEN
from controller.table import Table
from controller.table.inputs import DURABLE, INPUT_TYPES, SHOE_READS, Input

__all__ = ["Gate", "LoopSettings", "Note", "Query", "Submitted", "TableService"]

log = get_logger("controller.service")
SNAPSHOT_EVERY = 1000      # inputs between snapshots: bounds replay work at restart
BATCH_INPUTS = 256         # inputs one transaction may hold on a virtual clock
#: events that make an input durable whatever its kind (an override or a hold must survive)
DURABLE_EVENTS = frozenset({"override", "hold"})
#: the events the loop itself acts on: those, a device asked something, a shoe's end
_NOTABLE = DURABLE_EVENTS | {"device_request", "shoe_ended"}


@dataclass(frozen=True)
class LoopSettings:
    name: str = "T1"
    # False for a scratch journal nobody keeps (a simulation without --journal): records
    # are still written before anything is applied, without waiting for the disk
    durable: bool = True
    snapshot_every: int = SNAPSHOT_EVERY        # [storage] snapshot_every
    anchor_key: AnchorKey | None = None         # the chain head is signed (anchors.py)
    anchor_every: int = ANCHOR_EVERY
    # inputs a batch may hold before it is committed (None: by the clock): on a virtual clock
    # many share one transaction; with the floor waiting for each input, and live, every input
    # is its own batch (live, those that come while one is written share the next: batches.py)
    batch_inputs: int | None = None
    simulated: bool = False             # a simulated table says so on every prompt
    virtual_supervisor: bool = False    # holds are cleared by one: its prompts say so
    replayed: int = 0                   # inputs a restart replayed since the last snapshot
    # where the shoe's numbering stood at the restart (a snapshot before its next read keeps it)
    shoe_seq: int = 0
    shoe_session: int | None = None
    published_seq: int | None = None    # None: everything journaled was published
    # the older part of the journal is being checked: nothing signs it until `Proven` says so
    unproven: bool = False


class TableService:
    def __init__(self, table: Table, journal: Journal, clock: Clock,
                 settings: LoopSettings = LoopSettings()):
        self.table, self.journal, self.clock = table, journal, clock
        s = self._settings = settings
        self.name = s.name
        self._inbox: queue.SimpleQueue = queue.SimpleQueue()
        self._timers = Timers()
        self._out = Fanout()
        self._out.published_seq = journal.last_seq if s.published_seq is None else \
            s.published_seq
        self._pumps: list[Pump] = []                # device sources driven by the loop
        self._watches: list[Watch] = []
        self._before_input: list[Callable[[], None]] = []
        self._batch = s.batch_inputs or (BATCH_INPUTS if clock.virtual else 1)
        self._durable = s.durable
        # positions of publishers on threads of their own (the feed's), through the inbox
        self._cursors: dict[str, int] = {}
        self._snapshot_cursors: dict[str, int] = {}     # the positions the last snapshot holds
        # what those publishers report for the state view (each value replaced)
        self.reports: dict[str, dict] = {}
        self._shoe_seq = s.shoe_seq
        self._shoe_session = s.shoe_session         # the shoe's run of read numbers, if known
        self._since_snapshot = s.replayed
        self.anchors = Anchors(journal, s.anchor_key, s.anchor_every)
        self.conditions = Conditions(self._publish_status, self._process)
        self.prompt = Prompter(table, self.conditions, simulated=s.simulated,
                               virtual_supervisor=s.virtual_supervisor)
        # the open batch: per input, what is announced once it is committed
        self._batches = b = Batches(journal, live=not clock.virtual, submit=self.submit,
                                    announce=self._announce, flush=self._out.flush,
                                    failed=self._journal_failed,
                                    waiting=lambda: not self._inbox.empty())
        self._commit = b.commit
        self._collector = Collector()
        self._context: tuple = ()           # the log context last bound (thread, shoe, round)
        self._prompting = True              # an outward outlet takes prompts (set by `run`)
        self._finished = self._stopped = self._failed = False
        self._refusal: Exception | None = None
        self._stop_reason = ""
        self.anchors.unproven = s.unproven
        if not s.unproven:
            # what was just verified is signed, a checkpoint for the next start; the floor
            # feed reads it from the journal
            self._sign("start")

    # ------------------------------------------------------------------ wiring (before run)
    def connect(self, part: Outlet | Pump | Watch | Ack | Hook, at: Tap | None = None) -> None:
        """A part joins the loop before it runs: an outlet at a tap, a pump, a watch, a
        device's acknowledgement of journaled reads, or a hook."""
        if at is not None:
            self._out.connect(part, at)     # type: ignore[arg-type]
        elif isinstance(part, Ack):
            self._out.acks[part.device] = part.fn
        elif isinstance(part, Hook):
            hooks: dict[str, list[Callable[..., None]]] = {
                "before_input": self._before_input, "before_commit": self._batches.before_commit,
                "journal_write": self._batches.write_observers}
            hooks[part.when].append(part.fn)
        elif isinstance(part, Pump):
            self._pumps.append(part)
        elif isinstance(part, Watch):
            self._watches.append(part)
        else:
            raise TypeError(f"{part!r}: an outlet needs its tap")

    # ------------------------------------------------------------------ for sources
    def submit(self, item: Any) -> None:
        """Queue an input (or a Note, Query, Submitted, report, or a callable to run on the
        loop); from any thread."""
        self._inbox.put(item)

    def call_later(self, delay: float, fn: Callable[[], None]) -> int:
        """Run `fn` on the loop's thread after `delay` seconds of the service's clock (from
        the loop's thread only; other threads submit a callable instead)."""
        return self._timers.call_at(self.clock.now() + delay, fn)

    def cancel(self, handle: int) -> None:
        self._timers.cancel(handle)

    def stop(self, reason: str = "") -> None:
        self._stopped = True
        self._stop_reason = reason or self._stop_reason
        self._inbox.put(None)            # wake the loop

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def writable(self) -> bool:
        """Whether the journal may take more records: not after a failed write, nor on a
        journal found not to verify (nothing may sign it)."""
        return not self._failed and self._refusal is None

    # ------------------------------------------------------------------ the loop
    def run(self) -> None:
        """Serve inputs until stopped (or, on a virtual clock, until nothing can happen).
        JournalError: the journal turned out not to verify while the table waited."""
        # nobody outward takes prompts (a simulation's output): none is made
        self._prompting = self._out.wants("prompt")
        self._publish_status()
        if not self.clock.virtual:
            self._collector.start()  # live: garbage collected while nothing waits
        try:
            while not self._stopped:
                item = self._next_virtual() if self.clock.virtual else self._next_real()
                if item is _IDLE:
                    break
                if item is not None:
                    self._handle(item)
            if self.writable:
                self._commit()       # the last batch: journaled, then announced
        finally:
            self._collector.stop()
        self._batches.close()
        if self._refusal is not None:
            raise self._refusal

    def _next_real(self) -> Any:
        # timers that are due run before the next input: a flood of inputs (a chattering
        # device, a busy socket) never holds back the betting timer or the watchdog
        if self._timers.fire_due(self.clock.now()):
            return None
        nxt = self._timers.next_time()
        timeout = 0.5 if nxt is None else min(0.5, max(0.0, nxt - self.clock.now()))
        if self._batches.kept:
            self._batches.settle()   # (at a table's pace no batch is kept open)
        self._collector.turn(self._inbox.empty())
        try:
            return self._inbox.get(timeout=timeout)
        except queue.Empty:
            self._timers.fire_due(self.clock.now())
            return None

    def _next_virtual(self) -> Any:
        polled: list[float] | None = None     # the devices' wake times, polled just now
        # (this loop alone takes from the inbox)
        inbox, timers, clock, pumps = self._inbox, self._timers, self.clock, self._pumps
        while True:
            if not inbox.empty():
                return inbox.get_nowait()
            if self._batches.urgent:
                self._commit()       # a device is asked something: it hears it now
                polled = None
                continue
            if polled is None:
                wakes, steady = wake_times(pumps)
                if not inbox.empty():
                    return inbox.get_nowait()
            else:
                # polled as the clock moved and nothing happened since: not polled again
                wakes, polled, steady = polled, None, False
            if (next_timer := timers.next_time()) is not None:
                if next_timer <= (now := clock.now()):
                    timers.fire_due(now)                # the timers due, then a look again
                    continue
                wakes.append(next_timer)
            if not wakes:
                if self._batches.pending:
                    self._commit()   # what is announced may set something going again
                    continue
                return _IDLE
            clock.advance_to(min(wakes))        # type: ignore[union-attr]
            if not steady:
                polled = wake_times(pumps)[0]   # what devices sent by then comes first
            elif inbox.empty():
                # steady devices would say what they just said: the timer due now goes on
                timers.fire_due(clock.now())

    def _handle(self, item: Any) -> None:
        if self.conditions.gates and isinstance(item, (*INPUT_TYPES, Submitted)) \
                and self.conditions.held(item):     # type: ignore[arg-type]
            return
        if isinstance(item, INPUT_TYPES):
            self._process(item)     # type: ignore[arg-type]
        elif isinstance(item, Submitted):
            out = self._process(item.input)
            self._commit()           # the answer waits for the journal
            action = getattr(item.input, "action", None)
            if out.refused is None and out.error is None and action is not None:
                self.conditions.opened_by(action)
            if out.refused is not None:
                item.reply.set_exception(out.refused)
            elif out.error is not None:
                item.reply.set_exception(out.error)
            else:
                item.reply.set_result({"state": self.table.state, "events": out.events})
        elif item is WRITTEN:
            self._batches.written(wait=False)
        elif isinstance(item, CursorMoved):
            self._cursors[item.name] = item.seq
        elif isinstance(item, OutletView):
            self.reports[item.name] = item.view
        elif isinstance(item, Note):
            self._journal_note(item)
        elif isinstance(item, Query):
            self._commit()           # nothing is told that is not journaled
            try:
                item.reply.set_result(item.fn(self.table))
            except Exception as err:       # a query never stops the loop
                item.reply.set_exception(err)
        elif isinstance(item, Refusal):
            # the journal does not verify: nothing more is written to it, the table stops
            self._refusal = item.error
            self.stop("the journal does not verify")
        elif isinstance(item, Retell):
            self._out.status(None, item.event)
        elif isinstance(item, Proven):
            # the whole chain is proven now: sign it, and the table may deal
            self.anchors.unproven = False
            self._anchor("start")
            self.conditions.open(item.gate)
        elif callable(item):
            item()

    def _drain_reports(self) -> None:
        """After the loop: what parts on other threads reported since (the feed's last
        acknowledgement at its close); anything else left in the inbox is not applied."""
        while True:
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, (CursorMoved, OutletView, Proven, Refusal)):
                self._handle(item)

    # ------------------------------------------------------------------ one input
    def process(self, inp: Input) -> Any:
        """Apply one input, journal it with its events (and what the open batch holds), then
        publish and acknowledge."""
        out = self._process(inp)
        self._commit()
        return out

    def _process(self, inp: Input) -> Any:
        """Apply one input and stage its records in the open batch; what it announces goes
        out once the batch is committed (at once on a real clock)."""
        for hook in self._before_input:
            hook()
        out = self.table.apply_safely(inp)
        record = inp.to_dict()
        refused = out.refused
        if refused is not None:
            record["refused"] = str(refused)
        if out.error is not None:
            record["error"] = repr(out.error)
            log.error("input could not be applied; " + (
                "it is refused and the table is as it was" if refused is not None
                else "the table is on hold"), input=record.get("action", inp.type),
                error=repr(out.error), exc_info=out.error)
        events = out.events
        # one look at the events' kinds for what they ask of the loop
        items: list[tuple[str, dict]] = [("input", record)]
        durable = urgent = ended = False
        for e in events:
            items.append((kind := e["event"], e))
            if kind in _NOTABLE:
                urgent, ended = urgent or kind == "device_request", ended or kind == "shoe_ended"
                durable = durable or kind in DURABLE_EVENTS
        durable = self._durable and (durable or DURABLE[inp.type])
        try:
            # the publishers' positions ride along as the working copy; what a restart trusts
            # is the chain's (the snapshots' records)
            seqs = self.journal.stage(items, durable=durable, cursors=self._cursors or None)
        except (JournalError, ValueError) as err:
            self._journal_failed(err)
        if inp.type in SHOE_READS and record.get("seq"):
            self._shoe_seq = record["seq"]
        elif inp.type == "shoe_session":
            self._shoe_session = record.get("session")
        for e, seq in zip(events, seqs[1:]):
            e["seq"] = seq
        notice = None
        if refused is not None:
            notice = {"event": "refused", "input": inp.type, "action": record.get("action"),
                      "user": record.get("user"), "why": str(refused)}
        prompt = self.prompt.event() if self._prompting else None
        told = Announcement(inp, events, self._status(), prompt, notice)
        # the simulated people and the loop's own rhythm react now, on either clock (a quick
        # dealer pulls the next card while this one is committed); nothing leaves the process
        # (printed, fed, acknowledged, sent to a device) before the commit
        self._out.tell(told)
        self._batches.pending.append(told)
        if urgent:
            self._batches.urgent = True
        self._after_journal(told, ended)
        return out

    def _after_journal(self, told: Announcement, ended: bool) -> None:
        self._since_snapshot += 1
        snapshot_due = ended or self._since_snapshot >= self._settings.snapshot_every
        asked = [w for w in self._watches if w.staged()] if self._watches else ()
        # a snapshot, a watch or an anchor ends the batch now; else a full batch does (live,
        # one input), unless it is kept open for the inputs that wait or the journal's writer
        # takes it while the loop goes on (batches.py)
        if not (snapshot_due or asked or self.anchors.due) and (
                len(self._batches.pending) < self._batch or self._batches.hand_over()):
            return
        self._batches.pending.pop()
        self._commit()               # this input and those before it; the others announced
        if snapshot_due:
            try:
                self._snapshot()
            except (JournalError, ValueError) as err:   # a full disk: stopped, as at a record
                self._journal_failed(err)
            # every snapshot is signed at once: the one a restart builds on is an anchor's
            told.anchor = self._sign("shoe_end" if ended else "snapshot")
        else:
            told.anchor = self._sign("records") if self.anchors.due else None
        for watch in asked:
            watch.durable()
        self._announce(told)
        self._out.flush()

    def _journal_failed(self, err: Exception, what: str = "") -> NoReturn:
        # the table moved in memory only: nobody sees it; the process stops here
        self._stopped = self._failed = True
        raise TableStopped(what or f"the journal cannot be written, so the table stopped "
                           f"before announcing anything more: {err}") from err

    def _announce(self, told: Announcement) -> None:
        # the log's context, bound again only when it changed (this loop binds it alone)
        if (context := (threading.get_ident(), told.context)) != self._context:
            self._context, (shoe, rnd) = context, told.context
            structlog.contextvars.bind_contextvars(table=self.name, shoe=shoe, round=rnd)
        self._out.announce(told)

    def republish(self, events: list[dict]) -> None:
        """What a crash left journaled but seen by nobody, to every outlet (at least once);
        everything journaled counts as published from now on."""
        self._out.publish(events)
        self._out.published_seq = self.journal.last_seq

    def _status(self) -> dict:
        status = self.table.status()
        if self.conditions.active:
            status["conditions"] = list(self.conditions.active)
        return status

    def _publish_status(self) -> None:
        """The prompt (when it changed) and the status, now: after what is pending."""
        self._commit()
        self._out.status(self.prompt.event() if self._prompting else None, self._status())

    def _journal_note(self, note: Note) -> None:
        if not self.writable:
            log.warning("journal closed to records: note dropped", kind=note.kind)
            return
        self._commit()               # in its order: after the inputs before it
        try:
            self.journal.append(note.kind, note.data, durable=note.durable)
        except (JournalError, ValueError) as err:
            self._journal_failed(err, f"the journal cannot be written: {err}")
        anchor = self._sign("records") if self.anchors.due else None
        if anchor is not None:
            self._out.anchor(anchor)

    def _sign(self, reason: str) -> dict | None:
        try:
            return self.anchors.sign(reason)
        except TableStopped:
            self._stopped = self._failed = True
            raise

    def _anchor(self, reason: str) -> None:
        event = self._sign(reason)
        if event is not None:
            self._out.anchor(event)

    # ------------------------------------------------------------------ snapshots and the end
    def _snapshot(self) -> None:
        """The table's state, and how far each publisher has got, bound into the chain."""
        self.journal.snapshot({"format": SNAPSHOT_FORMAT, "table": self.table.snapshot(),
                               "shoe_seq": self._shoe_seq, "shoe_session": self._shoe_session},
                              self.journal.last_seq,
                              cursors={**self._cursors, LOCAL_CURSOR: self._out.published_seq})
        self._since_snapshot = 0
        self._snapshot_cursors = dict(self._cursors)

    def _finish(self) -> None:
        """A clean stop's last records, once: a snapshot of where everything stands (so a
        restart replays nothing) and the anchor that signs it, while the publishers are still
        open (the floor feed closes after it, so the last signed head leaves the table PC)."""
        self._drain_reports()           # (a check of the older records the stop waited for)
        if self._finished or not self.writable or self.anchors.unproven:
            return
        self._finished = True
        self._commit()
        self._drain_reports()
        # a restart replays nothing: the inputs since the last snapshot (those a restart
        # replayed included) and the publishers' positions are in the stop's snapshot
        if self.journal.last_seq and (self._since_snapshot
                                      or self._cursors != self._snapshot_cursors):
            self._snapshot()
        signer = self.anchors.signer
        anchor = signer.sign("stop") if signer is not None else None
        if anchor is not None:
            self._out.anchor(anchor)

    def close(self, *, positions: bool = False) -> None:
        """A clean stop's last records, once: a snapshot of where everything stands and the
        anchor that signs it, while the outlets are still open; then, each call, where the
        publishers got to: into the working copy or, with `positions` (the floor feed has
        drained since the snapshot), into the chain, all a restart trusts (else it resends)."""
        if not self.writable:
            return                  # leave the journal as it is on disk
        try:
            self._finish()
            self._drain_reports()
            if positions and self._finished and self._cursors != self._snapshot_cursors:
                self.journal.record_cursors({**self._cursors,
                                             LOCAL_CURSOR: self._out.published_seq})
                self._snapshot_cursors = dict(self._cursors)
            elif self.journal.last_seq and self._cursors:
                self.journal.set_cursors(self._cursors, durable=True)
        except (JournalError, ValueError) as err:
            self._failed = True     # nothing more is written; said as any failed write (exit 3)
            raise TableStopped(f"the journal cannot be written, so the table stopped without "
                               f"its last records (a restart replays from the last snapshot): "
                               f"{err}") from err


_IDLE = object()
