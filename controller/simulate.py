"""Whole shoes through the real pipeline: simulated devices behind their URLs, the real drivers,
the table machine, the journal and the publishers (`tablectl simulate`).

This module is the simulation rig's composition root: it is the one place in controller/ that
builds simulator models (simulators.rig); the table, the games and the journal never see them,
and the drivers reach them only by URL.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from controller import procedures
from controller.app import Controller
from controller.cards import ordered_shoe
from controller.errors import CommandRefused, InputError
from controller.inputs import DrawTimer, command, from_device
from controller.logsetup import get_logger
from controller.profile import Profile
from controller.shoefile import ShoeFile, check_against_decks, check_cut, read_shoe_file

log = get_logger("controller.simulate")
MAX_HOLD_ACTIONS = 20        # a hold the virtual supervisor cannot clear stops the run
READ_WAIT_S = 2.0            # real seconds to wait for a pulled card's frame before giving up


@dataclass
class SimOptions:
    seed: int | None = None
    shoe_file: str | None = None
    shoes: int = 1
    faults: Sequence[Any] = ()
    demo_rounds: int = 0
    journal_path: str | None = None
    protocol: str = "beetek"
    use_shuffler: bool = True
    publishers: list = field(default_factory=list)
    crash_after: int | None = None


def _clear(drv) -> None:
    """Clear a shuffler error; a shuffler that refuses is left to the next shuffle command."""
    from drivers.errors import DeviceError
    try:
        drv.clear()
    except DeviceError as err:
        log.warning("shuffler did not clear", error=str(err))


def load_shoe_file(profile: Profile, path: str) -> ShoeFile:
    shoe = read_shoe_file(path)
    if profile.game == "andar_bahar":
        if len(shoe.cards) % 52:
            raise InputError(f"{path}: {len(shoe.cards)} cards; an Andar Bahar file holds whole "
                             f"52-card decks, one per round")
        for k in range(len(shoe.cards) // 52):
            check_against_decks(ShoeFile(path, shoe.cards[52 * k:52 * (k + 1)], None), 1)
        return shoe
    check_against_decks(shoe, profile.decks)
    cc = profile.cut_card
    check_cut(shoe, cc.min_from_end, cc.max_from_end, len(shoe.cards))
    return shoe


def run_simulation(profile: Profile, *, seed: int | None = None, shoe_file: str | None = None,
                   shoes: int = 1, faults: Sequence[Any] = (), demo_rounds: int = 0,
                   journal_path: str | None = None, protocol: str = "beetek",
                   use_shuffler: bool | None = None, crash_after: int | None = None,
                   **more: Any) -> Iterator[dict]:
    """Yield every domain event of `shoes` simulated shoes, in order.

    With `journal_path`, an existing journal is resumed: the table is rebuilt from it and the
    simulated shoe continues from the last card the journal holds. `crash_after=N` kills this
    process outright after its N-th journaled input (the `crash@N` fault).
    """
    opts = SimOptions(seed=seed, shoe_file=shoe_file, shoes=shoes, faults=faults,
                      demo_rounds=demo_rounds, journal_path=journal_path, protocol=protocol,
                      use_shuffler=(shoe_file is None) if use_shuffler is None else use_shuffler,
                      crash_after=crash_after, **more)
    yield from Simulation(profile, opts).events()


class Simulation:
    def __init__(self, profile: Profile, opts: SimOptions):
        from simulators.rig import SimRig   # the rig is built here and only here
        self.profile, self.opts = profile, opts
        if opts.demo_rounds > profile.demo_rounds_max:
            raise InputError(f"--demo-rounds {opts.demo_rounds}: the profile {profile.name} allows "
                             f"at most {profile.demo_rounds_max}")
        self.file = load_shoe_file(profile, opts.shoe_file) if opts.shoe_file else None
        seed = opts.seed if opts.seed is not None else 0
        self.rig = SimRig(decks=profile.decks, protocol=opts.protocol, seed=seed,
                          faults=tuple(opts.faults))
        self.journal = None
        if opts.journal_path:
            from controller.journal import Journal
            self.journal = Journal(opts.journal_path)
        self.ctl, self.recovery = Controller.open(profile, self.journal)
        self.ctl.crash_after = opts.crash_after
        self.out: list[dict] = []
        self.ctl.publishers.append(self)
        self.timer = DrawTimer()

    def publish(self, event: dict) -> None:
        if event["event"] != "prompt":
            self.out.append(event)

    def _flush(self) -> Iterator[dict]:
        out, self.out = self.out, []
        yield from out

    # ------------------------------------------------------------------ shoes
    def shoe_plan(self, index: int) -> tuple[list[str] | None, int | None]:
        """Cards and cut position of shoe `index` from the file; (None, cut) when shuffled."""
        if self.file is None:
            total = self.profile.cards
            return None, procedures.default_cut_position(self.profile, total)
        if self.profile.game == "andar_bahar":
            decks = len(self.file.cards) // 52
            if index >= decks:
                return [], None
            return self.file.codes[52 * index:52 * (index + 1)], None
        if index > 0:
            return [], None
        cut = self.file.cut_position
        if cut is None:
            cut = procedures.default_cut_position(self.profile, len(self.file.cards))
            cut = None if cut is None or cut >= len(self.file.cards) else cut
        return self.file.codes, cut

    def events(self) -> Iterator[dict]:
        try:
            start = 0
            if self.recovery.resumed:
                start = self.ctl.table.shoe_no
                open_shoe = self.ctl.table.state not in ("closed", "shoe_ended")
                if self.file is None:
                    # the seeded shuffler deals the same shoes again: skip those already dealt
                    for _ in range(start - (1 if open_shoe else 0)):
                        self._shuffle_order()
                if open_shoe:
                    yield from self.resume_shoe(start - 1)
            for index in range(start, self.opts.shoes):
                cards, cut = self.shoe_plan(index)
                if cards == []:
                    break
                yield from self.play_shoe(cards, cut)
        finally:
            self.rig.close()
            if self.journal is not None:
                self.journal.close()

    def play_shoe(self, cards: list[str] | None, cut: int | None, *,
                  started: bool = False) -> Iterator[dict]:
        demo = self.opts.demo_rounds
        if cards is None:
            cards = yield from self.shuffle(cut, demo, started=started)
        elif not started:
            self.ctl.submit(command("new_shoe", cut_position=cut, demo_rounds=demo))
        self.rig.load_shoe(cards, cut)
        yield from self._flush()
        shoe = self._open_shoe()
        try:
            self.ctl.ack = shoe.ack
            yield from self.deal(shoe)
        finally:
            self.ctl.ack = None
            shoe.close()

    def _open_shoe(self):
        from drivers.shoe import open_shoe
        return open_shoe(self.rig.shoe_url, self.opts.protocol, read_timeout_s=0.01,
                         reconnect_initial_s=0.01, reconnect_max_s=0.05, stamp=self.rig.clock)

    def resume_shoe(self, index: int) -> Iterator[dict]:
        """Continue the shoe the journal left open: the simulated shoe resumes at its next card."""
        cards, cut = self.shoe_plan(index)
        if self.ctl.table.state == "shuffling":     # the shuffle never reached the journal
            yield from self.play_shoe(cards, cut, started=True)
            return
        if cards is None:
            cards = self._shuffle_order()
        model = self.rig.load_shoe(cards, cut)
        for _ in range(self.recovery.cards_read):
            model.pull()
        model.discard_output()
        shoe = self._open_shoe()
        try:
            self.ctl.ack = shoe.ack
            yield from self.deal(shoe)
        finally:
            self.ctl.ack = None
            shoe.close()

    def _shuffle_order(self) -> list[str]:
        """The order the seeded simulated shuffler gives its next shoe (as its SHUFFLE would)."""
        self.rig.shuffler.shuffles += 1
        return self.rig.shuffler.shuffled([c.code for c in ordered_shoe(self.profile.decks)])

    def shuffle(self, cut: int | None, demo: int, *, started: bool = False) -> Iterator[dict]:
        """Shuffle through the shuffler's driver; the table sees its count before any card.

        A jam is cleared and the shoe reshuffled; an open door is waited out; a count that does
        not match holds the table until the supervisor accepts it or has the shoe reshuffled.
        """
        from drivers.shuffler import ShuffleCountError, ShufflerFault, open_shuffler
        if not started:
            self.ctl.submit(command("new_shoe", cut_position=cut, demo_rounds=demo, shuffler=True))
        drv = open_shuffler(self.rig.shuffler_url, response_timeout_s=1.0, poll_interval_s=0.0)
        table = self.ctl.table
        try:
            for _ in range(MAX_HOLD_ACTIONS):
                if table.state != "shuffling":
                    break
                drv.shuffle(self.profile.decks)
                done = None
                for _ in range(MAX_HOLD_ACTIONS):
                    try:
                        done = drv.wait_ready(timeout_s=30.0, decks=self.profile.decks)
                        break
                    except ShuffleCountError as err:
                        self._submit({"type": "shuffled", "device": "shuffler",
                                      "count": err.count, "composition": {}})
                        yield from self._flush()
                        yield from self.settle_holds(cards_out=0)
                        _clear(drv)
                        break
                    except ShufflerFault as err:
                        self._submit({"type": "alarm", "device": "shuffler",
                                      "code": err.status.state, "text": str(err)})
                        yield from self._flush()
                        if err.status.state != "door_open":
                            _clear(drv)      # a jam: clear it, then shuffle again
                            yield from self.settle_holds(cards_out=0)
                            break
                        yield from self.settle_holds(cards_out=0)
                if done is not None:
                    self._submit(from_device(done))
            order = drv.deliver() or []
        finally:
            drv.close()
        yield from self._flush()
        return order

    # ------------------------------------------------------------------ dealing
    def deal(self, shoe) -> Iterator[dict]:
        table = self.ctl.table
        dealer = self.rig.dealer()
        while table.state != "shoe_ended":
            if table.state == "hold":
                yield from self.settle_holds(cards_out=self.ctl.cards_read)
                continue
            if table.state in ("idle", "betting"):
                self._submit(command("open_bets" if table.state == "idle" else "close_bets"))
                continue
            codes = dealer.act(table.state)
            if not codes:
                self._submit(command("shoe_empty", reason="no card left in the shoe"))
                yield from self._flush()
                continue
            self.rig.clock.advance(1.0)
            self._read(shoe, len(codes))
            for _ in dealer.take_misplaced():
                self._submit(command("report_misplaced", detail="burn card placed on Player's box"))
            yield from self._flush()
        yield from self._flush()

    def _read(self, shoe, expected: int) -> None:
        """Feed the frames of `expected` pulled cards (and anything else) through the driver."""
        import time
        got = 0
        deadline = time.monotonic() + READ_WAIT_S
        while True:
            if got >= expected and self.rig.shoe.in_waiting == 0 and not shoe.buffered:
                return
            ev = shoe.read_event(timeout=0.01)
            if ev is None:
                if got >= expected and self.rig.shoe.in_waiting == 0:
                    return
                if time.monotonic() > deadline:
                    # the dealer sees cards on the table that the shoe never reported
                    log.warning("pulled card never arrived", expected=expected, got=got)
                    for _ in range(expected - got):
                        self._submit(command("report_unread", user="dealer", role="dealer",
                                             detail="no read arrived from the shoe"))
                    return
                self.rig.clock.advance(0.05)   # let simulated silences and drops run out
                continue
            inp = self.timer.annotate(from_device(ev), ev)
            if inp is None:
                continue
            if inp["type"] in ("card", "read_failed"):
                got += 1
            self._submit(inp)

    def _submit(self, inp: dict) -> None:
        try:
            self.ctl.submit(inp)
        except CommandRefused as err:
            log.warning("refused in simulation", input=inp, why=str(err))

    def settle_holds(self, cards_out: int) -> Iterator[dict]:
        table = self.ctl.table
        sup = self.rig.supervisor(self.profile.card_when_none_due, self.profile.face_up_card)
        for _ in range(MAX_HOLD_ACTIONS):
            if table.state != "hold":
                break
            act = sup.decide(table.hold_info, table.round_open(), self.ctl.cards_read - 1)
            self._submit(command(act["action"], user=act["user"], role=act["role"],
                                 reason=act["reason"], **act["args"]))
            yield from self._flush()
        else:
            raise InputError(f"the simulated table stayed on hold: {table.prompt()}")
