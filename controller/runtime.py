"""`tablectl run`: the live table. One queue, one thread applying it to the table machine.

Threads: the shoe reader (driver → typed events → inputs), the shuffler worker (shuffle,
count, deliver), the control socket (authenticated commands), and — only when a URL names the
simulator — the embedded virtual dealer. Each only puts items on the queue; the main thread
is the only one that touches the table, the journal and the publishers.
"""
from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from controller import procedures
from controller.app import Controller
from controller.config import Config
from controller.errors import CommandRefused, InputError
from controller.inputs import DrawTimer, command, from_device
from controller.logsetup import get_logger
from controller.software import release_digest
from controller.profile import Profile
from controller.state_view import StateView

log = get_logger("controller.runtime")
READ_ACTIONS = ("state", "recall", "audit")


@dataclass
class Stop:
    reason: str


def is_sim_url(url: str) -> bool:
    return url.startswith("shoesim:") or "sim=" in url


class TableRuntime:
    def __init__(self, cfg: Config, profile: Profile, journal: Any, publishers: list,
                 *, control: bool = True):
        self.cfg, self.profile = cfg, profile
        self.q: queue.Queue = queue.Queue()
        self.ctl, self.recovery = Controller.open(profile, journal)
        self.view = StateView(cfg.table.name)
        self.ctl.publishers.extend([self.view, *publishers])
        self.stop_event = threading.Event()
        self.shoes_started = 0
        self.rig = None
        self.reader: threading.Thread | None = None
        self.reader_stop = threading.Event()
        self.driver = None
        self.server = None
        self.control = control
        self.betting_deadline: float | None = None
        self.shuffle_thread: threading.Thread | None = None
        self.pending_cut: int | None = None
        self.draw_timer = DrawTimer.for_protocol(cfg.shoe.protocol, cfg.shoe.min_pull_interval_s)
        if is_sim_url(cfg.shoe.url) or is_sim_url(cfg.shuffler.url):
            self._build_rig()

    # ------------------------------------------------------------------ devices
    def _build_rig(self) -> None:
        from simulators.rig import SimRig   # the embedded simulator, reached only by its URLs
        from simulators.install import install; install()   # its URLs reach its models
        from simulators.shoe import parse_fault
        seed = None if self.cfg.simulator.seed < 0 else self.cfg.simulator.seed
        self.rig = SimRig(decks=self.profile.decks, protocol=self.cfg.shoe.protocol, seed=seed,
                          faults=tuple(parse_fault(f) for f in self.cfg.simulator.faults),
                          name="table")

    def _ensure_shuffling(self) -> None:
        """A table back in `shuffling` (count rejected, jam cleared) gets a new shuffle."""
        if self.ctl.table.state == "shuffling" and self.cfg.shuffler.url != "none" and (
                self.shuffle_thread is None or not self.shuffle_thread.is_alive()):
            self._start_shuffle(self.pending_cut)

    def start_shoe(self) -> None:
        """Shuffle (or take a hand-shuffled shoe), load it, start reading."""
        self.shoes_started += 1
        cut = procedures.default_cut_position(self.profile, self.profile.cards)
        demo = self.cfg.table.demo_rounds
        if self.cfg.shuffler.url == "none":
            self.ctl.submit(command("new_shoe", cut_position=None, demo_rounds=demo,
                                    software=release_digest()))
            if self.rig is not None:
                import random
                cards = [c.code for c in _factory(self.profile.decks)]
                random.SystemRandom().shuffle(cards)
                self.rig.load_shoe(cards, cut)
            self._start_reader()
            return
        self.ctl.submit(command("new_shoe", cut_position=cut, demo_rounds=demo, shuffler=True,
                                software=release_digest()))
        self._start_shuffle(cut)

    def _start_shuffle(self, cut: int | None) -> None:
        self.pending_cut = cut
        self.shuffle_thread = threading.Thread(target=self._shuffle_worker, args=(cut,),
                                               daemon=True, name="shuffler")
        self.shuffle_thread.start()

    def _shuffle_worker(self, cut: int | None) -> None:
        """Shuffle, report the count, and deliver once the table has accepted the shoe.

        A jam or an open door is reported as an alarm (the table holds); when the supervisor
        resumes, the table is back in `shuffling` and a new worker carries on.
        """
        from drivers.shuffler import ShuffleCountError, ShufflerFault, open_shuffler
        s = self.cfg.shuffler
        try:
            drv = open_shuffler(s.url, response_timeout_s=s.response_timeout_s,
                                poll_interval_s=s.poll_interval_s, retries=s.retries,
                                baudrate=s.baudrate)
        except Exception as err:   # a device that cannot be opened: tell the table, keep running
            self.q.put({"type": "alarm", "device": "shuffler", "code": "open_failed",
                        "text": str(err)})
            return
        try:
            ident = drv.identify()
            self.q.put(from_device(ident))
            approved = s.approved_firmware
            if approved and ident.firmware not in approved:
                self.q.put({"type": "alarm", "device": "shuffler", "code": "unapproved_firmware",
                            "text": f"firmware {ident.firmware!r} is not on the approved list "
                                    f"({', '.join(approved)})"})
                return
            state = drv.status().state
            if state in ("jam", "error"):
                state = drv.clear().state
            deadline = time.monotonic() + s.shuffle_timeout_s
            while state == "door_open" and time.monotonic() < deadline:
                time.sleep(s.poll_interval_s)       # the operator closes the door
                state = drv.status().state
            if state not in ("shuffling", "ready"):
                drv.shuffle(self.profile.decks)
            try:
                done = drv.wait_ready(s.shuffle_timeout_s, decks=self.profile.decks)
                self.q.put(from_device(done))
            except ShuffleCountError as err:
                self.q.put({"type": "shuffled", "device": "shuffler", "count": err.count,
                            "composition": {}})
            except ShufflerFault as err:
                self.q.put({"type": "alarm", "device": "shuffler", "code": err.status.state,
                            "text": str(err)})
                return
            if not self._wait_for(lambda st: st != "shuffling" and st != "hold", s.shuffle_timeout_s) \
                    or self.ctl.table.state == "shuffling":
                return                               # rejected: a new worker reshuffles
            try:
                order = drv.deliver()
            except Exception as err:
                log.warning("shuffler did not deliver; the shoe is taken by hand", error=str(err))
                order = None
            if self.rig is not None:
                if not order:
                    import random
                    order = [c.code for c in _factory(self.profile.decks)]
                    random.SystemRandom().shuffle(order)
                self.rig.load_shoe(order, cut)
            self.q.put(("reader", None))
        except Exception as err:
            self.q.put({"type": "alarm", "device": "shuffler", "code": "fault", "text": str(err)})
        finally:
            drv.close()

    def _wait_for(self, ok: Callable[[str], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not self.stop_event.is_set():
            if ok(self.ctl.table.state):
                return True
            time.sleep(0.05)
        return False

    def _start_reader(self) -> None:
        from drivers.shoe import open_shoe
        self._stop_reader()
        c = self.cfg.shoe
        # the embedded simulator keeps simulated time: one second a pull, whatever the pace
        stamp = {"stamp": self.rig.clock} if self.rig is not None and is_sim_url(c.url) else {}
        self.driver = open_shoe(c.url, c.protocol, read_timeout_s=c.read_timeout_s,
                                dead_after_timeouts=c.dead_after_timeouts, baudrate=c.baudrate,
                                reconnect_initial_s=c.reconnect_initial_s,
                                reconnect_max_s=c.reconnect_max_s, **stamp)
        self.ctl.ack = self.driver.ack
        if self.recovery.resumed and self.recovery.last_seq and self.shoes_started <= 1:
            # reads up to here are journaled: their resends are acknowledged, not applied again
            self.driver.resume(self.recovery.last_seq)
        self.reader_stop = threading.Event()
        self.reader = threading.Thread(target=self._read_loop, args=(self.driver, self.reader_stop),
                                       daemon=True, name="shoe-reader")
        self.reader.start()
        if self.rig is not None:
            threading.Thread(target=self._dealer_loop, args=(self.reader_stop,), daemon=True,
                             name="virtual-dealer").start()

    def _stop_reader(self) -> None:
        if self.reader is not None:
            self.reader_stop.set()
            self.reader.join(timeout=5)
            self.reader = None
        if self.driver is not None:
            self.ctl.ack = None
            self.driver.close()
            self.driver = None

    def _read_loop(self, driver: Any, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                ev = driver.read_event(timeout=0.2)
            except Exception as err:     # never let device input kill the reader silently
                log.error("shoe reader error", error=repr(err))
                self.q.put({"type": "link_lost", "device": "shoe", "reason": repr(err)})
                stop.wait(1.0)
                continue
            if ev is not None:
                inp = self.draw_timer.annotate(from_device(ev), ev)
                if inp is not None:
                    self.q.put(inp)

    def _dealer_loop(self, stop: threading.Event) -> None:
        from simulators.dealer import wants_card
        model = self.rig.shoe
        pulled = self.ctl.cards_read
        while not stop.wait(self.cfg.simulator.pace_s):
            self.rig.clock.advance(1.0)       # simulated silences and drops run out
            if model is None or not wants_card(self.ctl.table.state):
                continue
            if pulled > self.ctl.cards_read:      # the last card is still on its way
                continue
            codes = model.pull()
            if not codes:
                self.q.put(command("shoe_empty", user="dealer", role="dealer",
                                   reason="no card left in the shoe"))
                return
            pulled += len(codes)

    def _start_control(self) -> None:
        from controller.accounts import AccountStore
        from controller.control_api import ControlServer
        c = self.cfg.console
        Path(c.socket).parent.mkdir(parents=True, exist_ok=True)
        Path(c.users_db).parent.mkdir(parents=True, exist_ok=True)
        self.server = ControlServer(c.socket, AccountStore(c.users_db), submit=self.q.put,
                                    group=c.group or None, reply_timeout_s=c.reply_timeout_s,
                                    on_auth=self._on_auth).start()

    def _on_auth(self, result: Any) -> None:
        # a console reads the state every second: journaling each successful read would bury
        # the journal; failures, and sign-ins for commands that change something, are kept
        if getattr(result, "ok", False) and getattr(result, "context", "") in READ_ACTIONS:
            return
        record = getattr(result, "record", None)
        self.q.put(("auth", record() if callable(record) else {"user": getattr(result, "user", "")}))

    # ------------------------------------------------------------------ the loop
    def run(self, shoes: int) -> int:
        if self.control:
            self._start_control()
        try:
            if self.recovery.resumed and self.ctl.table.state not in ("closed", "shoe_ended"):
                self._resume_after_restart()
            else:
                self.start_shoe()
            while not self.stop_event.is_set():
                self._tick()
                if self.ctl.table.state == "shoe_ended":
                    if shoes and self.shoes_started >= shoes:
                        break
                    self._stop_reader()
                    self.start_shoe()
            return 0
        finally:
            self._stop_reader()
            if self.server is not None:
                self.server.close()

    def _resume_after_restart(self) -> None:
        log.info("resuming the shoe in progress", state=self.ctl.table.state)
        self.shoes_started = 1
        if self.rig is not None:
            # the embedded simulator died with the process: its shoe cannot be reconciled
            self.ctl.submit(command("abandon_shoe", reason="simulated devices restarted"))
            return
        self._start_reader()

    def _tick(self) -> None:
        timeout = 0.5
        if self.betting_deadline is not None:
            timeout = max(0.0, min(timeout, self.betting_deadline - time.monotonic()))
        try:
            item = self.q.get(timeout=timeout)
        except queue.Empty:
            item = None
        if item is not None:
            self._handle(item)
        self._betting_timer()
        self._ensure_shuffling()

    def _betting_timer(self) -> None:
        table = self.ctl.table
        if table.state != "betting":
            self.betting_deadline = None
            return
        if self.betting_deadline is None:
            self.betting_deadline = time.monotonic() + self.cfg.table.betting_seconds
        elif time.monotonic() >= self.betting_deadline:
            self.betting_deadline = None
            self._submit(command("close_bets", user="timer", role="system"))

    def _handle(self, item: Any) -> None:
        if isinstance(item, tuple):
            kind, data = item
            if kind == "reader":
                self._start_reader()
            elif kind == "auth" and self.ctl.journal is not None:
                self.ctl.journal.append("auth", dict(data), durable=True)
            return
        if isinstance(item, dict):
            self._submit(item)
            return
        self._command(item)      # a control_api.Command

    def _submit(self, inp: dict) -> list[dict]:
        try:
            return self.ctl.submit(inp)
        except CommandRefused as err:
            log.warning("refused", input=inp.get("action", inp["type"]), why=str(err))
            return []
        except Exception as err:    # journaled and on hold already: the table keeps running
            log.error("input failed; the table is on hold", error=repr(err))
            return []

    def _command(self, cmd: Any) -> None:
        try:
            if cmd.action in READ_ACTIONS:
                cmd.reply.set_result(self._read_action(cmd.action, dict(cmd.args)))
                return
            if cmd.action == "users":
                from controller.accounts import users_action
                result = users_action(self.server.store, dict(cmd.args), by=cmd.user)
                if self.ctl.journal is not None:
                    self.ctl.journal.append("account", {"user": cmd.user, "reason": cmd.reason,
                                                        **dict(cmd.args)}, durable=True)
                cmd.reply.set_result(result)
                return
            out = self.ctl.submit(command(cmd.action, user=cmd.user, role=cmd.role,
                                          reason=cmd.reason, **dict(cmd.args)))
            cmd.reply.set_result({"state": self.ctl.table.state,
                                  "events": [o for o in out if o["event"] != "prompt"]})
        except (CommandRefused, InputError) as err:
            cmd.reply.set_exception(err)
        except Exception as err:    # a defect: answer the client, keep the table running
            log.error("command failed; the table is on hold", action=cmd.action, error=repr(err))
            cmd.reply.set_exception(err)

    def _read_action(self, action: str, args: dict) -> dict:
        last = int(args.get("count") or args.get("limit") or 10)
        if action == "state":
            return self.view.state(self.ctl.table)
        if action == "audit":
            return {"overrides": list(self.view.overrides)[-last:]}
        from controller.recall import last_rounds
        return {"rounds": last_rounds(self.ctl.journal, last) if self.ctl.journal else []}


def _factory(decks: int):
    from controller.cards import ordered_shoe
    return ordered_shoe(decks)


def preflight(cfg: Config) -> None:
    """Open a real shoe's port once before anything is journaled: a wrong URL is one line."""
    from drivers.shoe import open_shoe
    c = cfg.shoe
    if not is_sim_url(c.url):
        open_shoe(c.url, c.protocol, read_timeout_s=c.read_timeout_s, baudrate=c.baudrate).close()


def run_table(cfg: Config, profile: Profile, publishers: list, *, control: bool = True,
              journal_factory: Callable[[str], Any] | None = None) -> int:
    from controller.journal import Journal
    preflight(cfg)
    Path(cfg.storage.journal).parent.mkdir(parents=True, exist_ok=True)
    journal = (journal_factory or Journal)(cfg.storage.journal)
    try:
        rt = TableRuntime(cfg, profile, journal, publishers, control=control)
        return rt.run(cfg.table.shoes)
    finally:
        journal.close()
