"""Whole shoes through the real pipeline: simulated devices behind their URLs, the real drivers,
the table machine, the journal and the publishers (`tablectl simulate`).

This module is the simulation rig's composition root: it is the one place in controller/ that
builds simulator models (simulators.rig); the table, the games and the journal never see them,
and the drivers reach them only by URL.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from controller import procedures
from controller.app import Controller
from controller.cards import ordered_shoe
from controller.errors import CommandRefused, InputError
from controller.inputs import DrawTimer, command, from_device
from controller.logsetup import get_logger
from controller.software import release_digest
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
    betting_seconds: float = 0.0
    shoe_url: str | None = None        # a shoe outside this process (real, or `tablectl devices`)
    idle_seconds: float = 30.0         # with shoe_url: silence this long means the shoe is empty
    decisions: str | None = None        # decisions file for the virtual players (banking games)


def _clear(drv) -> None:
    """Clear a shuffler error; a shuffler that refuses is left to the next shuffle command."""
    from drivers.errors import DeviceError
    try:
        drv.clear()
    except DeviceError as err:
        log.warning("shuffler did not clear", error=str(err))


def load_shoe_file(profile: Profile, path: str) -> ShoeFile:
    """A shoe file checked against the profile: whole decks, the cut card where it may lie.

    Andar Bahar: one 52-card deck per round, as many as the file holds. A continuous shuffler:
    the order the machine is loaded in, with no cut card.
    """
    shoe = read_shoe_file(path)
    if profile.continuous_shuffler:
        if shoe.cut_position is not None:
            raise InputError(f"{path}: a CUT line, but the profile {profile.name} deals from a "
                             f"continuous shuffler, which has no cut card; remove the line")
        check_against_decks(shoe, profile.decks)
        return shoe
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
                   decisions: str | None = None, **more: Any) -> Iterator[dict]:
    """Yield every domain event of `shoes` simulated shoes, in order.

    `decisions`: a decisions file for the virtual players and banker of a banking game
    (format: simulators/dealer.py); without one they follow the rules' default policy.

    With `journal_path`, an existing journal is resumed: the table is rebuilt from it and the
    simulated shoe continues from the last card the journal holds. `crash_after=N` kills this
    process outright after its N-th journaled input (the `crash@N` fault).
    """
    opts = SimOptions(seed=seed, shoe_file=shoe_file, shoes=shoes, faults=faults,
                      demo_rounds=demo_rounds, journal_path=journal_path, protocol=protocol,
                      use_shuffler=(shoe_file is None) if use_shuffler is None else use_shuffler,
                      crash_after=crash_after, decisions=decisions, **more)
    yield from Simulation(profile, opts).events()


def virtual_players(profile: Profile, path: str | None):
    """The virtual players and banker, with the decisions file if one is given."""
    from controller.games import get_rules
    from simulators.dealer import DecisionsFileError, VirtualPlayers, read_decisions
    if path is None:
        return VirtualPlayers()
    rules = get_rules(profile.game)
    draws = tuple(getattr(rules, "draw_decisions", ()))
    seats = tuple(d for d in getattr(rules, "decisions", ()) if d not in draws)
    if not draws and not seats:
        raise InputError(f"--decisions {path}: {profile.game} takes no decisions")
    try:
        return VirtualPlayers(read_decisions(path, draws, seats))
    except DecisionsFileError as err:
        raise InputError(str(err)) from None


class Simulation:
    def __init__(self, profile: Profile, opts: SimOptions):
        from simulators.rig import SimRig   # the rig is built here and only here
        from simulators.install import install; install()   # its URLs reach its models
        self.profile, self.opts = profile, opts
        if opts.demo_rounds > profile.demo_rounds_max:
            raise InputError(f"--demo-rounds {opts.demo_rounds}: the profile {profile.name} allows "
                             f"at most {profile.demo_rounds_max}")
        self.file = load_shoe_file(profile, opts.shoe_file) if opts.shoe_file else None
        self.players = virtual_players(profile, opts.decisions)
        seed = opts.seed if opts.seed is not None else 0
        self.rig = SimRig(decks=profile.decks, protocol=opts.protocol, seed=seed,
                          faults=tuple(opts.faults))
        self.journal = None
        if opts.journal_path:
            from controller.journal import Journal
            self.journal = Journal(opts.journal_path)
        # betting time passes in simulated time: bets close when the round's timer runs out
        self.ctl, self.recovery = Controller.open(profile, self.journal,
                                                  betting_seconds=opts.betting_seconds)
        self.ctl.crash_after = opts.crash_after
        self.out: list[dict] = []
        self.ctl.publishers.append(self)
        self.timer = DrawTimer()

    def publish(self, event: dict) -> None:
        if event["event"] == "cards_returned" and self.rig.shoe is not None:
            # the dealer puts the round's cards back into the continuous shuffler
            self.rig.shoe.return_cards(event["cards"])
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
        if self.profile.continuous_shuffler:
            return self.file.codes, None
        cut = self.file.cut_position
        if cut is None:
            cut = procedures.default_cut_position(self.profile, len(self.file.cards))
            cut = None if cut is None or cut >= len(self.file.cards) else cut
        return self.file.codes, cut

    def shoe_count(self) -> int:
        """Shoes to deal: --shoes, except that an Andar Bahar file plays every deck it holds.

        A continuous shuffler's "shoe" is one machine load dealt: the table ends it after the
        round in which the 52 × decks-th card comes out (every round's cards go back in)."""
        if self.file is not None and self.profile.game == "andar_bahar":
            return len(self.file.cards) // 52
        return self.opts.shoes

    def events(self) -> Iterator[dict]:
        if self.opts.shoe_url:
            yield from self.external_shoes()
            return
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
            for index in range(start, self.shoe_count()):
                cards, cut = self.shoe_plan(index)
                if cards == []:
                    break
                yield from self.play_shoe(cards, cut)
        finally:
            self.rig.close()
            if self.journal is not None:
                self.journal.close()

    def external_shoes(self) -> Iterator[dict]:
        """Shoes dealt by a device outside this process, read through its URL: a hand-shuffled
        shoe is assumed loaded; the device's own pace, cut card and faults drive the table."""
        import time
        from drivers.shoe import open_shoe
        timer = DrawTimer.for_protocol(self.opts.protocol)
        shoe = open_shoe(self.opts.shoe_url, self.opts.protocol, read_timeout_s=0.2)
        try:
            self.ctl.ack = shoe.ack
            for _ in range(self.opts.shoes):
                self.ctl.submit(command("new_shoe", cut_position=None,
                                        demo_rounds=self.opts.demo_rounds,
                                        software=release_digest()))
                yield from self._flush()
                quiet_since = time.monotonic()
                while self.ctl.table.state != "shoe_ended":
                    if self.ctl.table.state == "hold":
                        yield from self.settle_holds(cards_out=self.ctl.cards_read)
                        continue
                    ev = shoe.read_event(timeout=0.2)
                    if ev is None:
                        if time.monotonic() - quiet_since > self.opts.idle_seconds:
                            self._submit(command("shoe_empty", user="dealer", role="dealer",
                                                 reason="the shoe has been silent"))
                        yield from self._flush()
                        continue
                    quiet_since = time.monotonic()
                    inp = timer.annotate(from_device(ev), ev)
                    if inp is not None:
                        self._submit(inp)
                    yield from self._flush()
        finally:
            self.ctl.ack = None
            shoe.close()
            self.rig.close()
            if self.journal is not None:
                self.journal.close()

    def play_shoe(self, cards: list[str] | None, cut: int | None, *,
                  started: bool = False) -> Iterator[dict]:
        demo = self.opts.demo_rounds
        if cards is None and not self.opts.use_shuffler:
            cards = self._shuffle_order()           # a hand-shuffled shoe (--shuffler-url none)
        if cards is None:
            cards = yield from self.shuffle(cut, demo, started=started)
        elif not started:
            self.ctl.submit(command("new_shoe", cut_position=cut, demo_rounds=demo,
                                    software=release_digest()))
        self.rig.load_shoe(cards, cut, continuous=self.profile.continuous_shuffler)
        yield from self._flush()
        yield from self.deal_through_driver()

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
        yield from self.deal_through_driver()

    def deal_through_driver(self) -> Iterator[dict]:
        """Open the shoe by its URL, deal until the shoe ends, then count the remainder."""
        shoe = self._open_shoe()
        try:
            self.ctl.ack = shoe.ack
            yield from self.deal(shoe)
        finally:
            self.ctl.ack = None
            shoe.close()
        yield from self.reconcile()

    def reconcile(self) -> Iterator[dict]:
        """The undealt rest goes back to the shuffler, which counts it card by card."""
        if self.ctl.table.state == "shoe_ended" and self.rig.shoe is not None:
            from collections import Counter
            rest = Counter(self.rig.shoe.undealt())
            self._submit({"type": "remainder", "device": "shuffler", "composition": dict(rest)})
            yield from self._flush()

    def _open_shoe(self):
        from drivers.shoe import open_shoe
        return open_shoe(self.rig.shoe_url, self.opts.protocol, read_timeout_s=0.01,
                         reconnect_initial_s=0.01, reconnect_max_s=0.05, stamp=self.rig.clock)

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
            self.ctl.submit(command("new_shoe", cut_position=cut, demo_rounds=demo, shuffler=True,
                                    software=release_digest()))
        drv = open_shuffler(self.rig.shuffler_url, response_timeout_s=1.0, poll_interval_s=0.0)
        table = self.ctl.table
        try:
            self._submit(from_device(drv.identify()))
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
                if table.state == "betting":
                    self.rig.clock.advance(self.opts.betting_seconds)
                self._submit(command("open_bets" if table.state == "idle" else "close_bets",
                                     user="timer" if table.state == "betting" else "dealer",
                                     role="system"))
                continue
            if (yield from self.decide(table)):
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

    def decide(self, table) -> Iterator[dict]:
        """The virtual players' and banker's decisions due now, through the `decide` command;
        True when any was given (the table may have moved on)."""
        if not table.state.startswith("dealing.") or table.round is None:
            return False
        phase = table.state.split(".", 1)[1]
        pending = table.decision_due()
        default = table.default_decision() if pending else None
        acts = self.players.act(table.shoe_no, table.round.number, phase, pending, default)
        for act in acts:
            inp = command("decide", user=act["user"], role=act["role"], reason=act["reason"],
                          **act["args"])
            inp["args"]["user"] = act["user"]
            self._submit(inp)
        yield from self._flush()
        if pending is not None and table.decision_due() == pending:
            raise InputError(f"the simulated table still waits for {pending}: {table.prompt()}")
        return bool(acts)

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
