"""Putting a table together: journal, table, the one service loop, devices by URL, publishers,
and — only where a URL names the simulator, or for `tablectl simulate` — the simulator rig and
the virtual people at the table. `run` and `simulate` both build their table here and both run
the same `TableService` loop; they differ in the clock, the devices' URLs and who acts.

This is the one place that builds a simulator rig; the drivers reach it only by its URLs.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from controller.errors import InputError
from controller.journal import Journal, JournalError
from controller.journal.anchor import Anchoring
from controller.journal.proof import BUDGET, StartCheck, check_at_start, check_rest
from controller.logsetup import get_logger
from controller.settings.profile import Profile
from controller.service.clock import RealClock, VirtualClock
from controller.service.control import ControlAdapter, Memory
from controller.service.cycle import BettingTimer, ShoeCycle, ShoePlan
from controller.service.devices import ShoeSource, ShufflerSource
from controller.service.loop import Gate, TableService
from controller.service.recovery import NOTE_KINDS, Recovery, open_table
from controller.table.inputs import Restarted, command, parse_input
from controller.table.states import CLOSED, SHOE_ENDED, SHUFFLING
from controller.words import Words

log = get_logger("controller.assembly")

#: the service condition while the older part of the journal is checked
JOURNAL_CHECK = "journal_check"


@dataclass
class DeviceSettings:
    shoe_url: str
    protocol: str = "beetek"
    shoe_options: dict = field(default_factory=dict)      # read_timeout_s, baudrate, …
    min_pull_interval_s: float = 0.15
    shuffler_url: str | None = None                       # None: hand-shuffled shoes
    shuffler_options: dict = field(default_factory=dict)  # response_timeout_s, retries, …
    approved_firmware: tuple[str, ...] = ()
    shuffle_timeout_s: float = 300.0
    wait_for_shoe: bool = False     # a shoe missing or busy at start is waited for (no_devices)


@dataclass
class Actors:
    """Who acts at a simulated table (all optional)."""
    dealer: bool = False
    dealer_pace_s: float = 1.0
    blind_pace_s: float | None = None    # a dealer who ignores the table (chaos tests)
    device_tick_s: float = 0.0
    hand_cards: Callable[[int], list[str] | None] | None = None
    supervisor: bool = False
    players: Any = None                  # simulators.dealer.VirtualPlayers
    idle_seconds: float | None = None    # an outside shoe silent this long is empty


class TableAssembly:
    def __init__(self, profile: Profile, *, journal_path: str | None, devices: DeviceSettings,
                 publishers: list, plan: Callable[[int], ShoePlan | None], shoes: int,
                 software: str = "", name: str = "T1", virtual: bool = False,
                 betting_seconds: float = 0.0, rig: Any = None, actors: Actors | None = None,
                 clock: Any = None,
                 count_resumed: bool = True, anchor_key: Any = None,
                 snapshot_every: int | None = None, check_budget: int | None = BUDGET,
                 fsync: bool = True):
        self.profile, self.devices, self.rig = profile, devices, rig
        self.actors = actors or Actors()
        self.clock = clock or (VirtualClock() if virtual else RealClock())
        self._scratch: str | None = None
        if journal_path is None:
            # a run nobody keeps still journals first, to a file of its own (memory stays flat
            # however many shoes it deals), deleted at the end; nothing in it needs an fsync
            self._scratch = tempfile.mkdtemp(prefix="tablectl-scratch-")
        # a writer takes the journal's lock before anything is read (a second one: exit 2)
        self.journal = Journal(journal_path or os.path.join(self._scratch, "journal.db"),
                               durable=fsync and journal_path is not None)
        self.journal_path = journal_path
        self.anchor_key = anchor_key
        try:
            # a journal that does not verify is never dealt on: what the restart builds on is
            # checked now, the rest now too, or (a long journal, live) before the first card
            self.start_check: StartCheck = check_at_start(
                self.journal, anchor_key, budget=None if self.clock.virtual else check_budget)
            table, self.recovery = open_table(profile, self.journal,
                                              snapshot=self.start_check.snapshot,
                                              auto_open=True, betting_seconds=betting_seconds)
        except BaseException:
            self.journal.close()
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
            raise
        self.service = TableService(table, self.journal, self.clock, name=name)
        self.service.inputs_since_snapshot = self.recovery.inputs_replayed
        self.service.durable = journal_path is not None
        if snapshot_every is not None:
            self.service.snapshot_every = snapshot_every
        if anchor_key is not None:
            self.service.anchoring = Anchoring(self.journal, anchor_key)
            if not self.start_check.pending:
                # what was just verified is signed, a checkpoint for the next start; the
                # floor feed reads it from the journal
                self.service.anchoring.proven = True
                self.service.anchor("start")
        self.service.publishers.extend(publishers)
        self.memory = Memory()
        if self.journal.last_seq:
            # the console's roads after a restart: the shoe's rounds delivered before it (the
            # undelivered ones are published again by `resume`)
            from controller.display.history import shoe_events
            for e in shoe_events(self.journal)[1]:
                if e["seq"] <= self.service.published_seq:
                    self.memory.roads.publish(e)
        self.service.publishers.append(self.memory)
        self.cycle = ShoeCycle(self.service, plan, shoes=shoes, software=software,
                               count_resumed=count_resumed)
        self.shoe: ShoeSource | None = None
        self.shuffler: ShufflerSource | None = None
        self.supervisor: Any = None
        self.control: Any = None
        self.adapter: Any = None
        self._closers: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ wiring
    def submit_dict(self, d: dict) -> None:
        """For the virtual people, who speak in plain command dicts."""
        self.service.submit(parse_input(d))

    def open_devices(self) -> None:
        from drivers.shoe import open_shoe
        from drivers.shuffler import open_shuffler
        d = self.devices
        virtual = self.clock.virtual
        timing: dict[str, Any] = {}
        if virtual:
            timing = {"clock": self.clock, "sleep": lambda s: None, "stamp": self.clock}
        elif self.rig is not None:
            timing = {"stamp": self.rig.clock}    # the simulated shoe keeps its own time
        self.shoe = ShoeSource(
            self.service.submit, lambda: open_shoe(d.shoe_url, d.protocol, **d.shoe_options,
                                                   **timing),
            protocol=d.protocol, min_pull_interval_s=d.min_pull_interval_s,
            read_timeout_s=0.0 if virtual else d.shoe_options.get("read_timeout_s", 0.2),
            clock=self.clock if virtual else None, url=d.shoe_url,
            wait=(d.shoe_options.get("reconnect_initial_s", 0.5),
                  d.shoe_options.get("reconnect_max_s", 10.0)) if d.wait_for_shoe else None,
            on_wait=self._shoe_waiting)
        self.service.acks["shoe"] = self.shoe.ack
        self._closers.append(self.shoe.close)
        if d.shuffler_url:
            url = d.shuffler_url
            opts = dict(d.shuffler_options)
            self.shuffler = ShufflerSource(
                self.service.submit, lambda: open_shuffler(url, **opts),
                decks=self.profile.decks, approved_firmware=d.approved_firmware,
                shuffle_timeout_s=d.shuffle_timeout_s, threaded=not virtual,
                clock=self.clock.now, poll_interval_s=opts.get("poll_interval_s", 0.1))
            self._closers.append(self.shuffler.close)

    def _shoe_waiting(self, why: str | None) -> None:
        """From the shoe's reader: the table waits for its shoe (why), or it is there (None)."""
        from controller.commands._tablepc import NO_DEVICES, NO_SHOE_WORDS, waiting_line
        text = None if why is None else waiting_line(why)
        self.service.submit(lambda: self.service.set_condition(NO_DEVICES, text, NO_SHOE_WORDS))

    def wire(self) -> None:
        svc = self.service
        a = self.actors
        if self.rig is not None and a.blind_pace_s is not None:
            from simulators.dealer import BlindDealer
            svc.actors.append(BlindDealer(self.rig, svc.call_later,
                                          pace_s=a.blind_pace_s).on_event)
        elif self.rig is not None and a.dealer:
            from simulators.dealer import VirtualDealer
            dealer = VirtualDealer(self.rig, self.submit_dict, svc.call_later,
                                   pace_s=a.dealer_pace_s, device_tick_s=a.device_tick_s,
                                   hand_cards=a.hand_cards, shuffler=self.shuffler is not None,
                                   after_inputs=svc.submit)
            svc.actors.append(dealer.on_event)
        if self.shuffler is not None:
            svc.subscribers.append(self.shuffler.on_event)
        if a.supervisor:
            from simulators.dealer import VirtualSupervisor
            self.supervisor = VirtualSupervisor(
                self.rig, self.submit_dict, svc.call_later,
                card_when_none_due=self.profile.card_when_none_due,
                face_up_card=self.profile.face_up_card)
            svc.actors.append(self.supervisor.on_event)
            svc.virtual_supervisor = True
        if a.players is not None:
            from simulators.dealer import PlayersActor
            svc.actors.append(PlayersActor(a.players, self.submit_dict,
                                           svc.call_later).on_event)
        if a.idle_seconds:
            svc.actors.append(IdleWatch(svc, a.idle_seconds).on_event)
        svc.actors.append(BettingTimer(svc).on_event)
        svc.actors.append(self.cycle.on_event)
        if self.clock.virtual:
            if self.shoe is not None:
                svc.pumps.append(self.shoe)
            if self.shuffler is not None:
                svc.pumps.append(self.shuffler)

    def start_sources(self) -> None:
        """Live: the shoe's reader thread starts (after `resume`, so a framed shoe's resent
        reads are checked against the journal from the first one)."""
        if not self.clock.virtual and self.shoe is not None:
            self.shoe.start()

    def start_control(self, socket_path: str, users_db: str, *, group: str | None,
                      reply_timeout_s: float, name: str) -> None:
        from controller.access.accounts import AccountStore
        from controller.access.server import ControlServer
        Path(users_db).parent.mkdir(parents=True, exist_ok=True)
        store = AccountStore(users_db)
        adapter = ControlAdapter(self.service, self.journal_path or ":memory:", self.memory,
                                 name=name, store=store)
        self.adapter = adapter
        self.control = ControlServer(socket_path, store, submit=adapter.submit, group=group,
                                     reply_timeout_s=reply_timeout_s,
                                     on_auth=adapter.on_auth).start()
        # closers run last first: the socket closes, then the open minute's sign-in failures
        # are written (the loop has stopped: this thread is the journal's only writer now)
        self._closers.append(lambda: self._write_notes("auth",
                                                       adapter.signins.due(everything=True)))
        self._closers.append(self.control.close)

    def _write_notes(self, kind: str, notes: list[dict]) -> None:
        if notes and self.service.writable:
            self.journal.append_many([(kind, n) for n in notes])

    def start_display(self, sock: Any, language: str = "en",
                      extra_routes: list | None = None, limits: dict | None = None) -> None:
        """The web display on a bound socket: first the current shoe's events from the
        journal (a table started again mid-shoe), then the live ones; the players' page names
        the table, its game and `limits` ({"min", "max"})."""
        from controller import display
        from controller.display.history import DISPLAY_KINDS, shoe_events
        history: list[dict] = []
        if self.journal_path and self.journal.last_seq:
            past = Journal.open_readonly(self.journal_path)
            try:
                history = list(shoe_events(past, kinds=DISPLAY_KINDS)[1])
            finally:
                past.close()
        hub, self.display = display.start(sock, reveal=self.profile.reveal, history=history,
                                          language=language, simulator=self.service.simulated,
                                          table=self.service.name, game=self.profile.game,
                                          limits=limits, extra_routes=extra_routes)
        self.service.publishers.append(hub)
        self.service.subscribers.append(hub.on_status)
        self._closers.append(self.display.close)

    def start_feed(self, broker: Any, *, drain_timeout_s: float = 5.0,
                   retry_max_s: float = 30.0, pit: str = "") -> None:
        """The floor feed: the journal's public events, every record for the floor store, the
        table's view and its status to an MQTT broker, on the feed's own thread
        (controller/feed); `pit`: the floor's pit the table stands in ([table] pit)."""
        from controller.feed.outbox import FloorFeed
        from controller.feed.view import TableView
        svc = self.service
        if not self.journal_path:
            raise InputError("the floor feed sends from the journal: give --journal")
        feed = FloorFeed(broker, self.journal, table=svc.name, cursors=svc.cursors,
                         outlets=svc.outlets, drain_timeout_s=drain_timeout_s,
                         retry_max_s=retry_max_s, pit=pit, software=_software_sha256(),
                         # the events the local publishers get, no more: not the inputs, nor
                         # the notes a restart does not republish either; but the anchors,
                         # so that a copy of the signed head exists off the table PC
                         private_kinds=(frozenset({"input"}) | NOTE_KINDS) - {"anchor"})
        view = TableView(svc.name, self.profile, feed.on_state, pit=pit)
        view.prime(self.journal)
        # the floor waits for each input as the table commits it: no batches of inputs, even
        # on a virtual clock (a simulated table then goes at its feed's pace, not ahead of it)
        svc.batch_inputs = 1
        svc.publishers.extend((feed, view))
        svc.subscribers.append(view.on_event)
        def close_feed() -> None:
            svc.finish()                        # the stop's anchor goes out with the rest
            feed.read_upto(self.journal.last_seq)   # past the stop's own records too
            feed.close()
        self._closers.insert(0, close_feed)     # closed last: after the devices, it drains
        feed.start()

    # ------------------------------------------------------------------ a restart
    def resume(self, *, devices_lost: bool) -> list[Words]:
        """What to do with a shoe the journal left open; what was resumed, in words (nothing
        for a new journal)."""
        rec: Recovery = self.recovery
        table = self.service.table
        if not rec.resumed:
            return []
        # what a crash left journaled but seen by nobody goes out first (at least once), to the
        # publishers and to the actors and devices that react to it
        self.service.publish(rec.undelivered)
        self.service.published_seq = self.journal.last_seq
        redone = {e.get("action") for e in rec.undelivered if e["event"] == "device_request"}
        where = {"path": self.journal_path, "seq": self.journal.last_seq,
                 "shoe": table.shoe_no}
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
        if devices_lost:
            # the embedded simulator died with the last process: its shoe is gone
            self.service.submit(command("abandon_shoe", reason="simulated devices restarted"))
            return line + [Words("run.restart_sim_closed")]
        if self.shoe is not None and rec.shoe_seq and self.shoe.resends:
            self.shoe.resume(rec.shoe_seq)
        # a shoe that cannot resend (Bee-Tek, barcode) may have lost a read in flight: the
        # table has the cards checked; a framed one resends what was never acknowledged
        resends = self.shoe.resends if self.shoe is not None else False
        self.service.submit(Restarted(resends=resends))
        for request in _pending_requests(table):
            if request not in redone:
                self.service.submit(lambda r=request: self._request(r))
        return line

    def _request(self, action: str) -> None:
        ev = {"event": "device_request", "device": "shuffler", "action": action}
        for sub in (*self.service.actors, *self.service.subscribers):
            sub(ev)

    # ------------------------------------------------------------------ the rest of the check
    def check_rest_meanwhile(self) -> Words | None:
        """The older part of the journal left by the start check, on a reader of its own while
        the table waits: cards and commands wait behind a gate, the prompt says how far it has
        got, and a journal that does not verify stops the table (the command exits 2). One
        line saying so, or None when nothing is left to check."""
        check, svc = self.start_check, self.service
        if not check.pending or not self.journal_path:
            return None
        total = check.pending
        svc.unproven = True
        svc.shut_gate(Gate(JOURNAL_CHECK, _checking_line(0, total), None,
                           Words("prompt.journal_check", {"done": 0, "total": total})))
        import threading
        import time
        said = [time.monotonic()]

        def progress(done: int) -> None:
            now = time.monotonic()
            if now - said[0] >= 1.0:
                said[0] = now
                svc.submit(lambda: svc.set_condition(
                    JOURNAL_CHECK, _checking_line(done, total),
                    Words("prompt.journal_check", {"done": done, "total": total})))

        def work() -> None:
            path = self.journal_path or ""
            try:
                with Journal.open_readonly(path) as reader:
                    check_rest(reader, check, self.anchor_key, progress)
            except JournalError as err:
                svc.submit(lambda e=err: self._refuse(e))
            except Exception as err:       # the check itself failed: never deal unchecked
                svc.submit(lambda e=JournalError(f"journal {path} could not be checked: "
                                                 f"{err!r}"): self._refuse(e))
            else:
                svc.submit(self._checked)

        threading.Thread(target=work, name="journal-check", daemon=True).start()
        return Words("run.checking_rest", {"total": total})

    def _checked(self) -> None:
        log.info("journal verified", records=self.start_check.pending)
        self.service.unproven = False
        if self.service.anchoring is not None:
            self.service.anchoring.proven = True
        self.service.anchor("start")       # the whole chain is proven now: sign it
        self.service.open_gate(JOURNAL_CHECK)

    def _refuse(self, err: JournalError) -> None:
        """The journal does not verify: nothing more is written to it, the table stops."""
        log.info("journal does not verify: the table stops", error=str(err))   # the command says it
        self.service.refusal = err
        self.service.stop("the journal does not verify")

    # ------------------------------------------------------------------ running
    def run(self) -> None:
        """Serve until the shoes are dealt (or stopped). TableStopped: the journal failed;
        JournalError: it turned out not to verify while the table waited for its first card."""
        try:
            self.service.run()
        finally:
            self.close()
        if self.service.refusal is not None:
            raise self.service.refusal

    def close(self) -> None:
        for close in reversed(self._closers):
            try:
                close()
            except Exception as err:       # closing one device must not skip the others
                log.warning("close failed", error=repr(err))
        self._closers.clear()
        self.service.close()
        self.journal.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
        if self.rig is not None:
            self.rig.close()


def _checking_line(done: int, total: int) -> str:
    return (f"CHECKING THE JOURNAL ({JOURNAL_CHECK}): {done} of {total} older records checked; "
            "dealing starts when every one is")


class IdleWatch:
    """A shoe outside this process that stays silent while a card is due is empty."""

    def __init__(self, service: TableService, idle_seconds: float):
        self.service, self.idle_seconds = service, idle_seconds
        self._handle: int | None = None
        self.expects: str | None = None

    def on_event(self, e: dict) -> None:
        if e["event"] != "status":
            return
        if self._handle is not None:
            self.service.cancel(self._handle)
            self._handle = None
        self.expects = e.get("expects")
        if self.expects in ("card", "count_back"):
            self._handle = self.service.call_later(self.idle_seconds, self._silent)

    def _silent(self) -> None:
        self._handle = None
        if self.expects in ("card", "count_back"):
            self.service.submit(command("shoe_empty", user="dealer", role="dealer",
                                        reason="the shoe has been silent"))


def _pending_requests(table: Any) -> list[str]:
    """What the shuffler was asked and may not have done when the last process died."""
    shoe = table.shoe
    if table.state == SHUFFLING:
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
