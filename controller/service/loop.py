"""The table service: one loop, one queue, one thread that touches the table.

    sources (shoe, shuffler, control socket, timers, virtual actors) ──put──▶ inbox
    loop:  input ─▶ Table.apply_safely ─▶ journal (input + its events, one transaction,
           fsynced for durable inputs) ─▶ publish (events carry their journal seq) ─▶ device acks

Nothing is published, acknowledged or answered before its input and events are in the journal.
A journal that cannot be written stops the table (`TableStopped`): the state it had moved to in
memory is never seen, and a restart resumes from what is durable. The same loop runs live (real
clock; sources are threads) and simulated (virtual clock; the loop pumps the sources itself and
jumps to the next timer when nothing else can happen).
"""
from __future__ import annotations

import concurrent.futures
import queue
import time
from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn, Protocol

import structlog

from controller.errors import CommandRefused, TableStopped
from controller.journal import Journal, JournalError
from controller.logsetup import get_logger
from controller.service.clock import Clock, Timers
from controller.service.recovery import LOCAL_CURSOR, SNAPSHOT_FORMAT
from controller.table import Table
from controller.table.inputs import DURABLE, Input
from controller.table.states import HOLD
from controller.words import Words, english

log = get_logger("controller.service")
SNAPSHOT_EVERY = 1000      # inputs between snapshots: bounds replay work at restart
BATCH_INPUTS = 256         # inputs one transaction may hold on a virtual clock
ANCHOR_EVERY = 1000        # records between two anchors (with an anchor key)
#: events that make an input durable whatever its kind (an override or a hold must survive)
DURABLE_EVENTS = frozenset({"override", "hold"})


class Publisher(Protocol):
    def publish(self, event: dict) -> None: ...


class Pump(Protocol):
    def pump(self) -> float | None: ...


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
class Gate:
    """Nothing reaches the table until a person applies `opens_on` (e.g. a manager's
    accept_software), or the service opens it itself (`opens_on` None: the journal's check
    done): device inputs wait in their order, other commands are refused with `reason`, which
    is also the service condition `name` while the gate is shut."""
    name: str
    reason: str
    opens_on: str | None
    words: Words | None = None       # the condition for people, in their language


@dataclass
class Submitted:
    """An input whose outcome someone waits for (a console command)."""
    input: Input
    reply: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


class TableService:
    def __init__(self, table: Table, journal: Journal, clock: Clock, *, name: str = "T1",
                 published_seq: int | None = None):
        self.table, self.journal, self.clock, self.name = table, journal, clock, name
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.timers = Timers()
        self.publishers: list[Publisher] = []        # outward: stdout, the console's memory
        # what reacts to journaled events and the status: devices, screens, metrics; told
        # once the input's records are committed
        self.subscribers: list[Callable[[dict], None]] = []
        # the loop's own rhythm (shoe cycle, betting timer) and simulated people: they only
        # queue inputs and set timers on this loop. On a virtual clock they are told as each
        # input is applied (its batch still open); otherwise with the subscribers.
        self.actors: list[Callable[[dict], None]] = []
        self.pumps: list[Pump] = []                  # device sources driven by the loop
        self.acks: dict[str, Callable[[int], None]] = {}      # device → ack a journaled read
        self.before_input: list[Callable[[], None]] = []
        self.before_commit: list[Callable[[], None]] = []   # e.g. a simulated rig saving itself
        # inputs a batch may hold before it is committed: on a virtual clock nothing outside
        # waits, so many inputs share one transaction (and one fsync); live, every input is
        # committed before the next is taken
        self.batch_inputs = BATCH_INPUTS if clock.virtual else 1
        # told how long each input's journal write took (seconds): the metrics' histogram
        self.write_observers: list[Callable[[float], None]] = []
        self.published_seq = journal.last_seq if published_seq is None else published_seq
        # positions of publishers on threads of their own (the floor feed's "acknowledged up
        # to"): they set the values, the loop writes them with its next input and at close
        self.cursors: dict[str, int] = {}
        # what those publishers report for the state view (each value replaced, never mutated)
        self.outlets: dict[str, dict] = {}
        self.shoe_seq = 0
        self.crash_after: int | None = None          # fault injection: die after N inputs
        self.inputs_since_snapshot = 0
        self.snapshot_every = SNAPSHOT_EVERY        # [storage] snapshot_every
        # with an anchor key (controller.journal.anchor.Anchoring): the chain head is signed
        # every `anchor_every` records, at every shoe's end and at a clean stop
        self.anchoring: Any = None
        self.anchor_every = ANCHOR_EVERY
        # while the older part of the journal is still being checked nothing signs it, and a
        # stop leaves it as it is (controller/commands/_assembly.py check_rest_meanwhile)
        self.unproven = False
        self.last_prompt = ""
        self._prompt_key: Any = None        # what the last prompt was made from
        self._prompt_texts: dict[Any, str] = {}     # prompts rendered before, by their words
        # the open batch: per input, what is announced once it is committed
        self._pending: list[_Announcement] = []
        self._urgent = False                # the batch holds a request to a device
        # what the table cannot see but the people at it must: a shoe the table waits for at
        # start ("no_devices"), software not accepted ("software"); name → one line. While any
        # holds, it is the prompt, and no new shoe is started.
        self.conditions: dict[str, str] = {}
        self.condition_words: dict[str, Words] = {}     # each condition for people
        self.condition_hooks: list[Callable[[dict[str, str]], None]] = []
        self.simulated = False              # a simulated table says so on every prompt
        self.gates: list[Gate] = []         # shut gates, oldest first
        self.virtual_supervisor = False     # holds are cleared by one: its prompts say so
        # False for a scratch journal nobody keeps (a simulation without --journal): records
        # are still written before anything is applied, without waiting for the disk
        self.durable = True
        self._parked: list[Input] = []
        self._finished = False
        self._snapshot_cursors: dict[str, int] = {}     # the positions the last snapshot holds
        # a journal that turned out not to verify while the table waited (JournalError): the
        # table stopped, and the command says why
        self.refusal: Exception | None = None
        self._stopped = False
        self.stop_reason = ""
        self.journal_failed = False         # a failed write: nothing more goes to the journal

    # ------------------------------------------------------------------ for sources
    def submit(self, item: Any) -> None:
        """Queue an input (or a Note, Query, Submitted, or a callable to run on the loop)."""
        self.inbox.put(item)

    def call_later(self, delay: float, fn: Callable[[], None]) -> int:
        """Run `fn` on the loop's thread after `delay` seconds of the service's clock (from
        the loop's thread only; other threads submit a callable instead)."""
        return self.timers.call_at(self.clock.now() + delay, fn)

    def cancel(self, handle: int) -> None:
        self.timers.cancel(handle)

    def stop(self, reason: str = "") -> None:
        self._stopped = True
        self.stop_reason = reason or self.stop_reason
        self.inbox.put(None)            # wake the loop

    @property
    def stopped(self) -> bool:
        return self._stopped

    @property
    def writable(self) -> bool:
        """Whether the journal may take more records: not after a failed write, nor on a
        journal found not to verify (nothing may sign it)."""
        return not self.journal_failed and self.refusal is None

    # ------------------------------------------------------------------ the loop
    def run(self) -> None:
        """Serve inputs until stopped (or, on a virtual clock, until nothing can happen)."""
        self._publish_status()
        while not self._stopped:
            item = self._next_virtual() if self.clock.virtual else self._next_real()
            if item is _IDLE:
                break
            if item is not None:
                self._handle(item)
        if self.writable:
            self.commit()           # the last batch: journaled, then announced

    def _next_real(self) -> Any:
        # timers that are due run before the next input: a flood of inputs (a chattering
        # device, a busy socket) never holds back the betting timer or the watchdog
        if self._fire_due():
            return None
        nxt = self.timers.next_time()
        timeout = 0.5 if nxt is None else min(0.5, max(0.0, nxt - self.clock.now()))
        try:
            return self.inbox.get(timeout=timeout)
        except queue.Empty:
            self._fire_due()
            return None

    def _next_virtual(self) -> Any:
        polled: list[float] | None = None     # the devices' wake times, polled just now
        while True:
            try:
                return self.inbox.get_nowait()
            except queue.Empty:
                pass
            if self._urgent:
                self.commit()       # a device is asked something: it hears it now
                polled = None
                continue
            if polled is None:
                wakes = [w for w in (p.pump() for p in self.pumps) if w is not None]
                if not self.inbox.empty():
                    continue
            else:
                # polled as the clock moved and nothing happened since: not polled again
                wakes, polled = polled, None
            if self._fire_due():
                continue
            times = wakes + [t for t in (self.timers.next_time(),) if t is not None]
            if not times:
                if self._pending:
                    self.commit()   # what is announced may set something going again
                    continue
                return _IDLE
            self.clock.advance_to(min(times))       # type: ignore[union-attr]
            # what devices sent by then comes first
            polled = [w for w in (p.pump() for p in self.pumps) if w is not None]

    def _fire_due(self) -> bool:
        due = self.timers.pop_due(self.clock.now())
        for fn in due:
            fn()
        return bool(due)

    @property
    def gate(self) -> Gate | None:
        """The gate shut first (None when every gate is open)."""
        return self.gates[0] if self.gates else None

    def _handle(self, item: Any) -> None:
        if self.gates and isinstance(item, (Input, Submitted)) and self._held(item):
            return
        if isinstance(item, Input):
            self._process(item)
        elif isinstance(item, Submitted):
            out = self._process(item.input)
            self.commit()           # the answer waits for the journal
            action = getattr(item.input, "action", None)
            if out.refused is None and out.error is None and action is not None:
                for gate in [g for g in self.gates if g.opens_on == action]:
                    self.open_gate(gate.name)
            if out.refused is not None:
                item.reply.set_exception(out.refused)
            elif out.error is not None:
                item.reply.set_exception(out.error)
            else:
                item.reply.set_result({"state": self.table.state, "events": out.events})
        elif isinstance(item, Note):
            self._journal_note(item)
        elif isinstance(item, Query):
            self.commit()           # nothing is told that is not journaled
            try:
                item.reply.set_result(item.fn(self.table))
            except Exception as err:       # a query never stops the loop
                item.reply.set_exception(err)
        elif callable(item):
            item()

    # ------------------------------------------------------------------ conditions and the gate
    def set_condition(self, name: str, text: str | None, words: Words | None = None) -> None:
        """From the loop's thread: a service condition begins (its line for the log, and the
        words people are told) or ends (None)."""
        if words is not None:
            self.condition_words[name] = words
        if text is None:
            self.condition_words.pop(name, None)
            if self.conditions.pop(name, None) is None:
                return
        elif self.conditions.get(name) == text:
            return
        else:
            self.conditions[name] = text
        for hook in self.condition_hooks:
            hook(dict(self.conditions))
        self._publish_status()

    def shut_gate(self, gate: Gate) -> None:
        """From the loop's thread (or before it runs)."""
        self.gates = [g for g in self.gates if g.name != gate.name] + [gate]
        self.set_condition(gate.name, gate.reason, gate.words)

    def open_gate(self, name: str | None = None) -> None:
        """Open the gate `name` (the first one when None); once none is shut, what came
        meanwhile is applied in its order."""
        gate = next((g for g in self.gates if name is None or g.name == name), None)
        if gate is None:
            return
        self.gates.remove(gate)
        self.set_condition(gate.name, None)
        if self.gates:
            return
        parked, self._parked = self._parked, []
        for inp in parked:          # what came while the gate was shut, in its order
            self._process(inp)

    def _held(self, item: Input | Submitted) -> bool:
        inp = item.input if isinstance(item, Submitted) else item
        action = getattr(inp, "action", None)
        closed = next((g for g in self.gates if g.opens_on is None or g.opens_on != action),
                      None)
        if closed is None:
            return False            # the command every shut gate opens on
        if isinstance(item, Submitted):
            item.reply.set_exception(CommandRefused(closed.reason))
        else:
            self._parked.append(item)
        return True

    def prompt_words(self) -> Words | None:
        """The prompt for people: the first service condition's words in place of the table's
        own (None: a condition that has no words, whose English line is all there is)."""
        if self.conditions:
            return self.condition_words.get(next(iter(self.conditions)))
        words = self.table.prompt_words()
        if self.virtual_supervisor and self.table.state == HOLD:
            return Words("prompt.virtual_supervisor", {"problem": words})
        return words

    def prompt_text(self) -> str:
        """The dealer's prompt as shown: a service condition in place of the table's own, and
        on a simulated table SIMULATOR first."""
        text = next(iter(self.conditions.values()), None)
        if text is None:
            text = english(self.prompt_words() or self.table.prompt_words())
        return f"SIMULATOR: {text}" if self.simulated else text

    # ------------------------------------------------------------------ one input
    def process(self, inp: Input) -> Any:
        """Apply one input, journal it with its events (and what the open batch holds), then
        publish and acknowledge."""
        out = self._process(inp)
        self.commit()
        return out

    def _process(self, inp: Input) -> Any:
        """Apply one input and stage its records in the open batch; what it announces goes
        out once the batch is committed (at once on a real clock)."""
        for hook in self.before_input:
            hook()
        out = self.table.apply_safely(inp)
        record = inp.to_dict()
        if out.refused is not None:
            record["refused"] = str(out.refused)
        if out.error is not None:
            record["error"] = repr(out.error)
            log.error("input could not be applied; " + (
                "it is refused and the table is as it was" if out.refused is not None
                else "the table is on hold"), input=record.get("action", inp.type),
                error=repr(out.error), exc_info=out.error)
        events = out.events
        durable = self.durable and (DURABLE[inp.type]
                                    or any(e["event"] in DURABLE_EVENTS for e in events))
        try:
            # the publishers' positions ride along as the working copy; what a restart trusts
            # is the chain's (the snapshots' records)
            seqs = self.journal.stage(
                [("input", record)] + [(e["event"], e) for e in events], durable=durable,
                cursors=self.cursors or None)
        except (JournalError, ValueError) as err:
            self._journal_failed(err)
        if inp.type == "card" and record.get("seq"):
            self.shoe_seq = record["seq"]
        for e, seq in zip(events, seqs[1:]):
            e["seq"] = seq
        notice = None
        if out.refused is not None:
            notice = {"event": "refused", "input": inp.type, "action": record.get("action"),
                      "user": record.get("user"), "why": str(out.refused)}
        status = self._status()
        batched = self.batch_inputs > 1
        told = _Announcement(inp, events, status, self._prompt_event(), notice, batched)
        if batched:
            # the simulated people and the loop's own rhythm react now; nothing leaves the
            # process (printed, fed, acknowledged, sent to a device) before the commit
            self._tell(self.actors, told)
        self._pending.append(told)
        self._urgent = self._urgent or any(e["event"] == "device_request" for e in events)
        self._after_journal(told)
        return out

    def _after_journal(self, told: "_Announcement") -> None:
        self.inputs_since_snapshot += 1
        ended = any(e["event"] == "shoe_ended" for e in told.events)
        snapshot_due = self.inputs_since_snapshot >= self.snapshot_every or ended
        if self.crash_after is not None:
            self.crash_after -= 1
        crash = self.crash_after is not None and self.crash_after <= 0
        anchor_due = self.anchoring is not None and \
            self.anchoring.unanchored >= self.anchor_every
        if not (snapshot_due or crash or anchor_due or len(self._pending) >= self.batch_inputs):
            return
        self._pending.pop()
        self.commit()               # this input and those before it; the others announced
        if snapshot_due:
            self.snapshot()
            # every snapshot is signed at once: the one a restart builds on is an anchor's
            told.anchor = self.anchor("shoe_end" if ended else "snapshot")
        else:
            told.anchor = self._anchor_if_due()
        if crash:
            _die()
        self._announce(told)
        self._flush()

    def commit(self) -> None:
        """Commit the open batch (one transaction), then announce its inputs in their order:
        publishers, subscribers, device acknowledgements. A commit that fails stops the table
        with nothing of the batch announced."""
        if self.journal.staged:
            for hook in self.before_commit:
                hook()
            started = time.perf_counter()
            try:
                self.journal.commit()
            except (JournalError, ValueError) as err:
                self._pending = []
                self._journal_failed(err)
            took = time.perf_counter() - started
            for observe in self.write_observers:
                observe(took)
        pending, self._pending, self._urgent = self._pending, [], False
        for told in pending:
            self._announce(told)
        if pending:
            self._flush()

    def _journal_failed(self, err: Exception) -> NoReturn:
        # the table moved in memory only: nobody sees it; the process stops here
        self._stopped = self.journal_failed = True
        raise TableStopped(f"the journal cannot be written, so the table stopped before "
                           f"announcing anything more: {err}") from err

    def _announce(self, told: "_Announcement") -> None:
        """One committed input: its events, its anchor, the prompt and status it left."""
        self._bind_context(told.context)
        for e in told.events:
            _log_event(e)
        self.publish(told.events, actors=not told.batched)
        if told.anchor is not None:
            self._publish_anchor(told.anchor)
        if told.prompt is not None:
            for pub in self.publishers:
                pub.publish(told.prompt)
        if not told.batched:
            for actor in self.actors:
                actor(told.status)
        for sub in self.subscribers:
            sub(told.status)
        inp = told.input
        if inp.type == "card":
            ack = self.acks.get(getattr(inp, "device", ""))
            seq = getattr(inp, "seq", None)
            if ack is not None and seq:
                ack(seq)
        if told.notice is not None:
            log.warning("input refused", input=told.notice["action"] or inp.type,
                        why=told.notice["why"])
            for sub in self.subscribers:
                sub(told.notice)
            if not told.batched:
                for actor in self.actors:
                    actor(told.notice)

    def _tell(self, listeners: list[Callable[[dict], None]], told: "_Announcement") -> None:
        for e in told.events:
            for listener in listeners:
                listener(e)
        for listener in listeners:
            listener(told.status)
        if told.notice is not None:
            for listener in listeners:
                listener(told.notice)

    def _flush(self) -> None:
        """Publishers that buffer (stdout) write out what they were given."""
        for pub in self.publishers:
            flush = getattr(pub, "flush", None)
            if flush is not None:
                flush()

    def publish(self, events: list[dict], *, actors: bool = True) -> None:
        """Hand journaled events (each with its seq) to the publishers, the subscribers and
        (unless they were told as the input was applied) the actors."""
        for e in events:
            for pub in self.publishers:
                pub.publish(e)
            for sub in self.subscribers:
                sub(e)
            if actors:
                for actor in self.actors:
                    actor(e)
            if e.get("seq"):
                self.published_seq = max(self.published_seq, e["seq"])

    def _status(self) -> dict:
        status = self.table.status()
        if self.conditions:
            status["conditions"] = list(self.conditions)
        return status

    def _prompt_event(self) -> dict | None:
        """The prompt event when the prompt changed, else None (rendered only then)."""
        table = self.table
        words = self.prompt_words()
        key = (_words_key(words), next(iter(self.conditions.values()), None), self.simulated)
        if key == self._prompt_key:
            return None
        self._prompt_key = key
        prompt = self._prompt_texts.get(key)
        if prompt is None:
            prompt = self.prompt_text()
            if len(self._prompt_texts) >= 1024:
                self._prompt_texts.clear()
            self._prompt_texts[key] = prompt
        if prompt == self.last_prompt:
            return None
        self.last_prompt = prompt
        ev = {"event": "prompt", "shoe": table.shoe_no, "state": table.state,
              "text": prompt, "expects": table.expects()}
        # language-neutral: the message's code and fields; each screen puts them into
        # its reader's language (`text` is their English)
        if words is not None:
            ev["words"] = words.as_dict()
        if self.simulated:
            ev["simulator"] = True
        if self.conditions:
            ev["condition"] = next(iter(self.conditions))
        return ev

    def _publish_status(self) -> None:
        """The prompt (when it changed) and the status, now: after what is pending."""
        self.commit()
        prompt, status = self._prompt_event(), self._status()
        if prompt is not None:
            for pub in self.publishers:
                pub.publish(prompt)
        for listener in (*self.actors, *self.subscribers):
            listener(status)
        self._flush()

    def _bind_context(self, context: tuple[int, int | None] | None = None) -> None:
        t = self.table
        shoe, rnd = context or (t.shoe_no, t.round.number if t.round else None)
        structlog.contextvars.bind_contextvars(table=self.name, shoe=shoe, round=rnd)

    def _journal_note(self, note: Note) -> None:
        if not self.writable:
            log.warning("journal closed to records: note dropped", kind=note.kind)
            return
        self.commit()               # in its order: after the inputs before it
        try:
            self.journal.append(note.kind, note.data, durable=note.durable)
        except (JournalError, ValueError) as err:
            self._stopped = self.journal_failed = True
            raise TableStopped(f"the journal cannot be written: {err}") from err
        anchor = self._anchor_if_due()
        if anchor is not None:
            self._publish_anchor(anchor)

    # ------------------------------------------------------------------ anchors
    def _anchor_if_due(self) -> dict | None:
        a = self.anchoring
        if a is None or a.unanchored < self.anchor_every:
            return None
        return self.anchor("records")

    def anchor(self, reason: str) -> dict | None:
        """Sign the journal's head now (with an anchor key); the anchor event, or None."""
        if self.anchoring is None or self.unproven:
            return None
        try:
            return self.anchoring.sign(reason)
        except (JournalError, ValueError) as err:
            self._stopped = self.journal_failed = True
            raise TableStopped(f"the journal cannot be written: {err}") from err

    def _publish_anchor(self, event: dict) -> None:
        """To the publishers (stdout, the floor feed): a copy of the head off the table PC."""
        log.info("journal anchored", seq=event["seq"], upto_seq=event["upto_seq"],
                 reason=event["reason"])
        for pub in self.publishers:
            pub.publish(event)
        self.published_seq = max(self.published_seq, event["seq"])
        self._flush()

    # ------------------------------------------------------------------ snapshots and the end
    def snapshot(self) -> None:
        """The table's state, and how far each publisher has got, bound into the chain."""
        self.journal.snapshot({"format": SNAPSHOT_FORMAT, "table": self.table.snapshot(),
                               "shoe_seq": self.shoe_seq}, self.journal.last_seq,
                              cursors={**self.cursors, LOCAL_CURSOR: self.published_seq})
        self.inputs_since_snapshot = 0
        self._snapshot_cursors = dict(self.cursors)

    def finish(self) -> None:
        """A clean stop's last records, once: a snapshot of where everything stands (so a
        restart replays nothing) and the anchor that signs it, while the publishers are still
        open (the floor feed closes after it, so the last signed head leaves the table PC)."""
        if self._finished or not self.writable or self.unproven:
            return
        self._finished = True
        self.commit()
        try:
            # a restart replays nothing: the inputs since the last snapshot (those a restart
            # replayed included) and the publishers' positions are in the stop's snapshot
            if self.journal.last_seq and (self.inputs_since_snapshot
                                          or self.cursors != self._snapshot_cursors):
                self.snapshot()
            anchor = self.anchoring.sign("stop") if self.anchoring is not None else None
        except (JournalError, ValueError) as err:
            log.error("journal could not be closed cleanly", error=str(err))
            return
        if anchor is not None:
            self._publish_anchor(anchor)

    def close(self) -> None:
        """A clean stop (finish, if not done yet), then the publishers' last positions into
        the working copy (the feed's last acknowledgement came after the stop's snapshot)."""
        if not self.writable:
            return                  # leave the journal as it is on disk
        self.finish()
        try:
            if self.journal.last_seq and self.cursors:
                self.journal.set_cursors(self.cursors, durable=True)
        except JournalError as err:
            log.error("journal could not be closed cleanly", error=str(err))


_IDLE = object()


def _words_key(value: Any) -> Any:
    """Words (and what their fields hold) as a value that can be a dict's key."""
    if isinstance(value, Words):
        return (value.code, tuple((k, _words_key(v)) for k, v in value.fields.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_words_key(v) for v in value)
    if isinstance(value, dict):
        return ("", tuple((k, _words_key(v)) for k, v in value.items()))
    if value is None or isinstance(value, (str, int, float)):
        return value
    return (type(value).__name__, repr(value))     # anything else, by what it says


class _Announcement:
    """What one journaled input has to tell once its batch is committed."""
    __slots__ = ("input", "events", "status", "prompt", "notice", "batched", "anchor",
                 "context")

    def __init__(self, inp: Input, events: list[dict], status: dict, prompt: dict | None,
                 notice: dict | None, batched: bool):
        self.input, self.events, self.status, self.prompt = inp, events, status, prompt
        self.notice, self.batched = notice, batched
        self.anchor: dict | None = None
        # the log's context as it was when the input was applied
        self.context = (status.get("shoe"), status.get("round"))


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


def _die() -> None:
    """The `crash@N` fault: the process is killed outright, as by a power cut or kill -9."""
    import os
    import signal
    os.kill(os.getpid(), signal.SIGKILL)
