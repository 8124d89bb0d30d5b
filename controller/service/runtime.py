"""A table put together (controller/service/build.py builds it from its spec): journal, table,
the one service loop, devices by URL, outlets, the control socket; `run` and `simulate` both
run it, differing in the clock, the devices' URLs and who acts. The simulator rig and the
virtual people are made by the commands and reach the table only by URL and as outlets.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

from controller.errors import InputError, TableStopped
from controller.journal import Journal, JournalError
from controller.journal.proof import StartCheck, check_at_start
from controller.logsetup import get_logger
from controller.service.build import Started, TableSpec
from controller.service.clock import RealClock
from controller.service.conditions import Gate
from controller.service.control import ControlAdapter, Memory
from controller.service.cycle import BettingTimer, ShoeCycle
from controller.service.devices import ShoeSource, ShufflerSource
from controller.service.fault import CrashAfter
from controller.service import journal_check
from controller.service.idle import IdleWatch
from controller.service.inputs import Proven, Refusal, Retell
from controller.service.loop import LoopSettings, TableService
from controller.service.parts import Ack, Listener, Source, Tap
from controller.service.recovery import NOTE_KINDS, Recovery, open_table
from controller.service.tablepc import NO_DEVICES, NO_SHOE_WORDS, TablePC, waiting_line
from controller.table.holds import shuffler_answered
from controller.table.inputs import LinkBack, Restarted, command, parse_input
from controller.table.states import CLOSED, HOLD, SHOE_ENDED, SHUFFLING
from controller.words import Words

log = get_logger("controller.assembly")

#: the service condition while the older part of the journal is checked
JOURNAL_CHECK = "journal_check"
#: how long a clean stop waits for the check of the older records that runs while the table
#: deals (a year's journal takes 10–15 s on a table PC): within the service manager's stop
#: timeout (deploy/tablectl.service: 30 s)
STOP_WAITS_FOR_CHECK_S = 20.0


class TableRuntime:
    def __init__(self, spec: TableSpec):
        self.spec, self.profile, self.devices, self.rig = spec, spec.profile, spec.devices, \
            spec.rig
        self.clock = spec.clock or RealClock()
        self._scratch: str | None = None
        self._stop_failure: TableStopped | None = None   # a clean stop's records, unwritten
        journal_path = self.journal_path = spec.journal_path
        if journal_path is None:
            # a run nobody keeps still journals first, to a file of its own (memory stays flat
            # however many shoes it deals), deleted at the end; nothing in it needs an fsync
            self._scratch = tempfile.mkdtemp(prefix="tablectl-scratch-")
        # a writer takes the journal's lock before anything is read (a second one: exit 2)
        self.journal = Journal(journal_path or os.path.join(self._scratch or "", "journal.db"),
                               durable=spec.fsync and journal_path is not None)
        try:
            # a journal that does not verify is never dealt on: what the restart builds on is
            # checked now, the rest now too, or (a long journal, live) before the first card
            self.start_check: StartCheck = check_at_start(
                self.journal, spec.anchor_key,
                budget=None if self.clock.virtual else spec.check_budget)
            table, self.recovery = open_table(spec.profile, self.journal,
                                              snapshot=self.start_check.snapshot,
                                              auto_open=True,
                                              betting_seconds=spec.betting_seconds)
            settings = LoopSettings(
                name=spec.name, durable=journal_path is not None,
                snapshot_every=spec.snapshot_every or LoopSettings.snapshot_every,
                anchor_key=spec.anchor_key,
                # the floor waits for each input as the table commits it: no batches of
                # inputs, even on a virtual clock (a simulated table then goes at its feed's
                # pace, not ahead of it)
                batch_inputs=1 if spec.feed is not None else None,
                simulated=spec.simulated, virtual_supervisor=spec.virtual_supervisor,
                replayed=self.recovery.inputs_replayed, shoe_seq=self.recovery.shoe_seq,
                shoe_session=self.recovery.shoe_session,
                unproven=bool(self.start_check.pending and journal_path))
            self.service = TableService(table, self.journal, self.clock, settings)
        except BaseException:
            self.journal.close()
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
            raise
        svc = self.service
        for outlet in spec.outlets:
            svc.connect(outlet, Tap.OUTWARD)
        for listener in spec.listeners:
            svc.connect(listener, Tap.LISTENER)
        # what the control socket's state requests show (the roads, the last rounds, alarms,
        # overrides): kept only where the socket is served
        self.memory = Memory()
        if spec.control is not None:
            if self.journal.last_seq:
                # the console's roads after a restart: the shoe's rounds delivered before it
                # (the undelivered ones are published again by `resume`)
                from controller.display.history import shoe_events
                for e in shoe_events(self.journal)[1]:
                    self.memory.roads.publish(e)
            svc.connect(self.memory, Tap.OUTWARD)
        self.cycle = ShoeCycle(svc, spec.plan, shoes=spec.shoes, software=spec.software,
                               count_resumed=spec.count_resumed,
                               simulator=spec.simulator_shoes)
        self.shoe: ShoeSource | None = None
        self.shuffler: ShufflerSource | None = None
        self.pc: TablePC | None = None
        self.adapter: ControlAdapter | None = None
        self.control: Any = None                # the control socket's server, once open
        self.display: Any = None
        self.started = Started([], None)
        self._closers: list[Callable[[], None]] = []
        self._devices: list[Source] = []         # started live; pumped on a virtual clock
        self._check_apart: journal_check.CheckApart | None = None
        self._check_refused: str | None = None  # why it found the journal does not verify

    # ------------------------------------------------------------------ the start, in order
    def start(self) -> None:
        spec, svc = self.spec, self.service
        if spec.on_recovered is not None:
            spec.on_recovered(self.recovery, svc.table)
        if spec.table_pc is not None:
            # the software checked, the service manager, the clock and the health view
            p = spec.table_pc
            self.pc = TablePC(self, p.cfg, simulated=spec.simulated,
                              shoe_waiting=p.shoe_waiting, notifier=p.notifier,
                              clock_watch=p.clock_watch)
        self._open_devices()
        for hook in spec.hooks:
            svc.connect(hook)
        if spec.crash_after is not None:
            svc.connect(CrashAfter(spec.crash_after))
        if self.pc is not None:
            self.pc.wire()
        self._wire()
        monitoring = None
        pc = spec.table_pc
        if self.pc is not None and pc is not None and (spec.display is not None
                                                       or pc.metrics_sock is not None):
            from controller.service.monitoring import Monitoring
            monitoring = Monitoring(self, self.pc.health, info=pc.info)
            if pc.metrics_sock is not None:
                self.started.metrics_url = monitoring.serve(pc.metrics_sock)
        if spec.feed is not None:
            self._start_feed()
        if spec.display is not None:
            # before resume: the events a restart republishes reach the display too
            self._start_display(extra_routes=monitoring.routes() if monitoring else None)
            self.started.display_url = self.display.url
        self.started.checking = self._check_rest_meanwhile()
        self.started.said = self._resume()
        if not self.clock.virtual:
            # the devices' threads start after the resume, so that a framed shoe's resent
            # reads are checked against the journal from the first one
            for source in self._devices:
                source.start()
        if spec.control is not None:
            self._start_control()
        if self.pc is not None:
            if self.adapter is not None:
                self.pc.controlled(self.adapter)
            self.pc.start()

    def closing(self, fn: Callable[[], None]) -> None:
        """Run `fn` at close (last added, first run)."""
        self._closers.append(fn)

    def submit_dict(self, d: dict) -> None:
        """For the virtual people, who speak in plain command dicts."""
        self.service.submit(parse_input(d))

    def _open_devices(self) -> None:
        from drivers.shoe import open_shoe
        from drivers.shuffler import open_shuffler
        d, virtual = self.devices, self.clock.virtual
        timing: dict[str, Any] = {}
        if virtual:
            timing = {"clock": self.clock, "sleep": lambda s: None, "stamp": self.clock}
        elif self.rig is not None:
            timing = {"stamp": self.rig.clock}    # the simulated shoe keeps its own time
        wrap = d.shoe_driver or (lambda driver: driver)

        def open_driver() -> Any:
            return wrap(open_shoe(d.shoe_url, d.protocol, **d.shoe_options, **timing))
        self.shoe = ShoeSource(
            self.service.submit, open_driver,
            protocol=d.protocol, min_pull_interval_s=d.min_pull_interval_s,
            read_timeout_s=0.0 if virtual else d.shoe_options.get("read_timeout_s", 0.2),
            clock=self.clock if virtual else None, url=d.shoe_url,
            wait=(d.shoe_options.get("reconnect_initial_s", 0.5),
                  d.shoe_options.get("reconnect_max_s", 10.0)) if d.wait_for_shoe else None,
            on_wait=self._shoe_waiting)
        self.service.connect(Ack("shoe", self.shoe.ack))
        self._devices.append(self.shoe)
        self._closers.append(self.shoe.close)
        if d.shuffler_url:
            url, opts = d.shuffler_url, dict(d.shuffler_options)
            self.shuffler = ShufflerSource(
                self.service.submit, lambda: open_shuffler(url, **opts),
                decks=self.profile.decks, approved_firmware=d.approved_firmware,
                shuffle_timeout_s=d.shuffle_timeout_s, threaded=not virtual,
                clock=self.clock.now, poll_interval_s=opts.get("poll_interval_s", 0.1))
            self._devices.append(self.shuffler)
            self._closers.append(self.shuffler.close)

    def _shoe_waiting(self, why: str | None) -> None:
        """From the shoe's reader: the table waits for its shoe (why), or it is there (None)."""
        text = None if why is None else waiting_line(why)
        conditions = self.service.conditions
        self.service.submit(lambda: conditions.set(NO_DEVICES, text, NO_SHOE_WORDS))

    def _wire(self) -> None:
        svc, spec = self.service, self.spec
        for make in spec.people:
            svc.connect(make(self), Tap.ACTOR)
        if self.shuffler is not None:
            svc.connect(self.shuffler, Tap.LISTENER)
        if spec.idle_seconds:
            svc.connect(IdleWatch(svc, spec.idle_seconds), Tap.ACTOR)
        svc.connect(BettingTimer(svc), Tap.ACTOR)
        svc.connect(self.cycle, Tap.ACTOR)
        if self.clock.virtual:
            if self.shoe is not None:
                svc.connect(self.shoe)
            if self.shuffler is not None:
                svc.connect(self.shuffler)

    def _start_control(self) -> None:
        from controller.access.accounts import AccountStore
        from controller.access.server import ControlServer
        c = self.spec.control
        assert c is not None
        Path(c.users_db).parent.mkdir(parents=True, exist_ok=True)
        store = AccountStore(c.users_db)
        adapter = ControlAdapter(self.service, self.journal_path or ":memory:", self.memory,
                                 name=self.spec.name, store=store)
        self.adapter = adapter
        control = self.control = ControlServer(c.socket_path, store, submit=adapter.submit,
                                               group=c.group, reply_timeout_s=c.reply_timeout_s,
                                               on_auth=adapter.on_auth)
        # closers run last first: the socket closes, then the open minute's sign-in failures
        # are written (the loop has stopped: this thread is the journal's only writer now)
        self._closers.append(lambda: self._write_notes("auth",
                                                       adapter.signins.due(everything=True)))
        self._start(control)

    def _start(self, source: Source) -> None:
        """A source on threads of its own: started now, closed at the end."""
        source.start()
        self._closers.append(source.close)

    def _write_notes(self, kind: str, notes: list[dict]) -> None:
        if notes and self.service.writable:
            try:
                self.journal.append_many([(kind, n) for n in notes])
            except (JournalError, ValueError) as err:
                self._stopped(TableStopped(f"the journal cannot be written, so the table "
                                           f"stopped without its last records: {err}"))

    def _start_display(self, extra_routes: list | None = None) -> None:
        """The web display: first the current shoe's events from the journal (a table started
        again mid-shoe), then the live ones."""
        from controller import display
        from controller.display.history import DISPLAY_KINDS, shoe_events
        d = self.spec.display
        assert d is not None
        history: list[dict] = []
        if self.journal_path and self.journal.last_seq:
            past = Journal.open_readonly(self.journal_path)
            try:
                history = list(shoe_events(past, kinds=DISPLAY_KINDS)[1])
            finally:
                past.close()
        hub, self.display = display.start(d.sock, reveal=self.profile.reveal, history=history,
                                          language=d.language, simulator=self.spec.simulated,
                                          table=self.spec.name, game=self.profile.game,
                                          limits=d.limits, extra_routes=extra_routes)
        self.service.connect(hub, Tap.OUTWARD)
        self.service.connect(Listener(hub.on_status), Tap.LISTENER)
        self._closers.append(self.display.close)

    def _start_feed(self) -> None:
        """The floor feed: the journal's public events, every record for the floor store, the
        table's view and its status to an MQTT broker, on the feed's own thread
        (controller/feed); what it has delivered comes back through the inbox."""
        from controller.feed.outbox import FloorFeed
        from controller.feed.view import TableView
        from controller.service.inputs import CursorMoved, OutletView, Reported
        svc, f = self.service, self.spec.feed
        assert f is not None
        if not self.journal_path:
            raise InputError("the floor feed sends from the journal: give --journal")
        feed = FloorFeed(f.broker, self.journal, table=svc.name,
                         cursors=Reported(svc.submit, CursorMoved),
                         outlets=Reported(svc.submit, OutletView),
                         drain_timeout_s=f.drain_timeout_s, retry_max_s=f.retry_max_s,
                         pit=f.pit, software=_software_sha256(),
                         # the events the local publishers get, no more: not the inputs, nor
                         # the notes a restart does not republish either; but the anchors,
                         # so that a copy of the signed head exists off the table PC
                         private_kinds=(frozenset({"input"}) | NOTE_KINDS) - {"anchor"})
        view = TableView(svc.name, self.profile, feed.on_state, pit=f.pit)
        view.prime(self.journal)
        svc.connect(feed, Tap.OUTWARD)
        svc.connect(view, Tap.OUTWARD)
        svc.connect(Listener(view.on_event), Tap.LISTENER)

        def close_feed() -> None:
            svc.close()                         # the stop's anchor goes out with the rest
            feed.read_upto(self.journal.last_seq)   # past the stop's own records too
            end = time.monotonic() + f.drain_timeout_s
            feed.delivered(self.journal.last_seq, f.drain_timeout_s)
            # where the feed got to, into the chain, and out with the rest: the next start
            # resends that one record, nothing the broker had taken before
            svc.close(positions=True)
            feed.read_upto(self.journal.last_seq)
            feed.close(drain_s=end - time.monotonic())
        self._closers.insert(0, close_feed)     # closed last: after the devices, it drains
        feed.start()

    # ------------------------------------------------------------------ a restart
    def _resume(self) -> list[Words]:
        """What to do with a shoe the journal left open; what was resumed, in words (nothing
        for a new journal)."""
        rec: Recovery = self.recovery
        table = self.service.table
        if not rec.resumed:
            return []
        # what a crash left journaled but seen by nobody goes out first (at least once), to the
        # publishers and to the actors and devices that react to it
        self.service.republish(rec.undelivered)
        redone = {e.get("action") for e in rec.undelivered if e["event"] == "device_request"}
        where: dict[str, Any] = {"path": self.journal_path, "seq": self.journal.last_seq,
                                 "shoe": table.shoe_no}
        if self.shoe is not None and rec.shoe_seq and self.shoe.resends \
                and not self.spec.devices_lost:
            # the reads journaled whose acknowledgement the crash took come again: dropped,
            # between shoes too (there they were a card drawn when none was due); a shoe
            # started afresh meanwhile is told by its session (drivers/shoe/framed)
            self.shoe.resume(rec.shoe_seq, session=rec.shoe_session)
        state = table.state
        if state in (CLOSED, SHOE_ENDED) and not (table.shoe and table.shoe.counting):
            return [Words("run.restart_no_shoe", where)]
        if table.round is not None:
            where["round"] = table.round.number
        if table.hold is not None:
            where["kind"] = table.hold.last.kind
        else:
            where["state"] = state
        if "kind" in where:
            code = "run.restart_round_hold" if "round" in where else "run.restart_hold"
        else:
            code = "run.restart_round" if "round" in where else "run.restart_shoe"
        line = [Words(code, where)]
        if self.spec.devices_lost:
            # the embedded simulator died with the last process: its shoe is gone
            self.service.submit(command("abandon_shoe", reason="simulated devices restarted"))
            return line + [Words("run.restart_sim_closed")]
        # a shoe that cannot resend (Bee-Tek, barcode) may have lost a read in flight: the
        # table has the cards checked; a framed one resends what was never acknowledged
        resends = self.shoe.resends if self.shoe is not None else False
        self.service.submit(Restarted(resends=resends))
        hold = table.hold
        if hold is not None and "link_lost" in hold.kinds and not hold.link_back \
                and self.shoe is not None and self.shoe.link == "up":
            # the hold waits for the shoe's link to come back, and this start found it up: the
            # reads kept may be reviewed now (no driver reopened says so by itself)
            self.service.submit(LinkBack(device="shoe"))
        for request in _pending_requests(table):
            if request not in redone:
                # asked again of the shuffler (and whoever waits for it), not journaled again
                # (`retold`: a fault the shuffler is found stopped in may never have been
                # reported: it is reported now, not cleared)
                self.service.submit(Retell({"event": "device_request", "device": "shuffler",
                                            "action": request, "retold": True}))
        return line

    # ------------------------------------------------------------------ the rest of the check
    def _check_rest_meanwhile(self) -> Words | None:
        """The older part of the journal left by the start check, on a reader of its own while
        the table waits: cards and commands wait behind a gate, the prompt says how far it has
        got, and a journal that does not verify stops the table (the command exits 2). One
        line saying so, or None when nothing is left to check."""
        check, svc = self.start_check, self.service
        if not check.pending or not self.journal_path:
            return None
        total, conditions = check.pending, svc.conditions
        # sealed (seal.py): the file is as the writer left it with the chain proven; checked
        # all the same, while the table deals (a page rewritten through the write-ahead log
        # is found so); else cards and commands wait for it
        gated = not check.vouched
        if gated:
            if check.unsealed:
                log.info("journal seal does not vouch for the older records: they are checked "
                         "before the first card", why=check.unsealed)
            conditions.shut(Gate(JOURNAL_CHECK, _checking_line(0, total), None,
                                 Words("prompt.journal_check", {"done": 0, "total": total})))
        said = [time.monotonic()]

        def progress(done: int) -> None:
            now = time.monotonic()
            if gated and now - said[0] >= 1.0:
                said[0] = now
                svc.submit(lambda: conditions.set(
                    JOURNAL_CHECK, _checking_line(done, total),
                    Words("prompt.journal_check", {"done": done, "total": total})))

        path = self.journal_path

        def done(outcome: str, line: str) -> None:
            if outcome == journal_check.OK:
                log.info("journal verified", records=total)
                svc.submit(Proven(JOURNAL_CHECK))
                return
            if outcome == journal_check.FAILED:     # never deal unchecked
                line = f"journal {path} could not be checked: {line}"
            self._check_refused = line
            log.info("journal does not verify: the table stops", error=line)
            svc.submit(Refusal(JournalError(line)))

        if gated:
            # the table waits: on a thread of this process, the prompt counting its progress
            threading.Thread(target=lambda: done(*journal_check.outcome_of(
                path, check, self.spec.anchor_key, progress)),
                name="journal-check", daemon=True).start()
            return Words("run.checking_rest", {"total": total})
        # given up only once the service has closed: a clean stop waits for it (`run`)
        self._check_apart = journal_check.CheckApart(path, check, self.spec.anchor_key, done)
        log.info("journal sealed: its older records are checked while the table deals",
                 records=total, sealed_upto=check.vouched)
        return Words("run.checking_meanwhile", {"total": total})

    # ------------------------------------------------------------------ running
    def run(self) -> None:
        """Serve until the shoes are dealt (or stopped). TableStopped: the journal failed;
        JournalError: it turned out not to verify while the table waited for its first card."""
        try:
            self.service.run()
            self._await_check()
        finally:
            self.close()
        if self._stop_failure is not None:
            # the table stopped as asked, but the journal took not all of its stop: said as
            # any failed write is, not as a clean stop
            raise self._stop_failure
        if self._check_refused is not None:
            # reported as the table stopped (while the stop waited for it): never a clean stop
            raise JournalError(self._check_refused)

    def _await_check(self) -> None:
        """A clean stop while the older records are checked meanwhile: only a proven chain is
        signed and sealed, and the seal is what lets the next start deal at once; so the stop
        waits for the check (at most STOP_WAITS_FOR_CHECK_S), whose outcome the service's
        close then takes (what else arrives meanwhile is not applied, as after any stop)."""
        apart = self._check_apart
        if apart is None or apart.done or not self.service.writable:
            return
        log.info("stopping: waiting for the check of the journal's older records",
                 at_most_s=STOP_WAITS_FOR_CHECK_S)
        if not apart.wait(STOP_WAITS_FOR_CHECK_S):
            log.info("stopped before the journal's older records were checked: it is left "
                     "unsealed (the next start checks them before its first card)")

    def _stopped(self, err: TableStopped) -> None:
        """A clean stop's own records could not be written: the first failure is what `run`
        says (the closers after it go on: the devices are closed all the same)."""
        if self._stop_failure is None:
            self._stop_failure = err

    def close(self) -> None:
        for close in reversed(self._closers):
            try:
                close()
            except TableStopped as err:    # the floor feed's: the stop's records, unwritten
                self._stopped(err)
            except Exception as err:       # closing one device must not skip the others
                log.warning("close failed", error=repr(err))
        self._closers.clear()
        try:
            self.service.close()
        except TableStopped as err:
            self._stopped(err)
        if self._check_apart is not None:
            self._check_apart.stop()
            self._check_apart = None
        self.journal.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        if self.rig is not None:
            self.rig.close()
            self.rig = None


def _checking_line(done: int, total: int) -> str:
    return (f"CHECKING THE JOURNAL ({JOURNAL_CHECK}): {done} of {total} older records checked; "
            "dealing starts when every one is")


def _pending_requests(table: Any) -> list[str]:
    """What the shuffler was asked and may not have done when the last process died."""
    shoe, hold = table.shoe, table.hold
    if hold is not None and shuffler_answered(hold):
        # the shuffler answered (a jam, its door, a count): the hold's remedy asks again;
        # asked now, the shuffler would clear the fault under the hold before any remedy
        return []
    # a hold raised while the shuffler worked (a card drawn, the supervisor's own) goes back
    # to the shuffle: still owed, and without it asked again the table waits for ever
    if table.state == SHUFFLING or (table.state == HOLD and hold is not None
                                    and hold.resume_to == SHUFFLING):
        return ["shuffle"]
    if shoe is not None and shoe.counting == "shuffler":
        return ["count_rest"]
    return []


def _software_sha256() -> str:
    """The software's SHA-256 for the floor feed's online message, hashed before the feed
    starts (once a process: a table PC's start has hashed it already), so that the feed never
    waits for it while it owes events."""
    from controller.release.software import identity
    return identity()["software_sha256"]
