"""Whole shoes through the real pipeline on a simulated table (`tablectl simulate`).

The same loop as `tablectl run` (`TableService`), on a virtual clock: the simulated shoe and
shuffler behind their URLs, the real drivers, the table machine, the journal and the
publishers; a virtual dealer, supervisor and players act on what the table publishes.
"""
from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from typing import Any, Sequence

from controller.games import procedure as procedures
from controller.commands._people import Actors, People
from controller.errors import InputError
from controller.journal import JournalError
from controller.logsetup import get_logger
from controller.settings.profile import Profile
from controller.service.build import DeviceSettings, FeedSpec, TableSpec, build
from controller.service.clock import Clock, RealClock, VirtualClock
from controller.service.cycle import ShoePlan
from controller.service.parts import Hook
from controller.shoe.shoefile import ShoeFile, check_against_decks, check_cut, read_shoe_file
from controller.release.software import release_digest

log = get_logger("controller.simulate")


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
    fsync: bool = True                  # [storage] fsync: durable records fsynced
    anchor_key: Any = None              # journal.anchor.AnchorKey: the journal's head is signed
    feed: dict | None = None            # build.FeedSpec's fields: the floor feed
    name: str = "T1"                    # the table's name (on the floor feed's topics)
    keep_events: bool = True            # return every event (not for a long run: its memory)


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


class Plan:
    """Which shoes the simulation deals: from the file, or shuffled (seeded)."""

    def __init__(self, profile: Profile, opts: SimOptions):
        self.profile, self.opts = profile, opts
        self.file = load_shoe_file(profile, opts.shoe_file) if opts.shoe_file else None

    def seed(self) -> int | None:
        """The rig's seed: the one given, else for a continuous shuffler dealing a shoe file,
        one drawn from the file's cards (its returns are then the same on every run); None
        leaves the rig to the operating system's randomness."""
        if self.opts.seed is not None:
            return self.opts.seed
        if self.file is not None and self.profile.continuous_shuffler:
            digest = hashlib.sha256("\n".join(self.file.codes).encode()).digest()
            return int.from_bytes(digest[:8], "big")
        return None

    def count(self) -> int:
        if self.file is not None:
            return len(self.file.cards) // 52 if self.profile.game == "andar_bahar" else 1
        return self.opts.shoes

    def shoe(self, number: int) -> ShoePlan | None:
        """The plan for the table's shoe `number` (1-based, across restarts)."""
        if number > self.count():
            return None
        p = self.profile
        cut = None if p.continuous_shuffler else \
            procedures.default_cut_position(p, p.cards)
        if self.file is not None:
            if p.game != "andar_bahar" and not p.continuous_shuffler:
                cut = self.file.cut_position
                if cut is None:
                    cut = procedures.default_cut_position(p, len(self.file.cards))
                    cut = None if cut is None or cut >= len(self.file.cards) else cut
            return ShoePlan(cut, shuffler=False, demo_rounds=self.opts.demo_rounds)
        if self.opts.shoe_url:
            return ShoePlan(None, shuffler=False, demo_rounds=self.opts.demo_rounds)
        return ShoePlan(cut, shuffler=self.opts.use_shuffler, demo_rounds=self.opts.demo_rounds)

    def cards(self, number: int) -> list[str] | None:
        """The cards the dealer loads by hand into shoe `number`; None: shuffle them."""
        if self.file is None:
            return None
        if self.profile.game == "andar_bahar":
            return self.file.codes[52 * (number - 1):52 * number]
        return self.file.codes


class Collect:
    ignores = frozenset({"prompt"})

    def __init__(self) -> None:
        self.events: list[dict] = []

    def publish(self, event: dict) -> None:
        self.events.append(event)       # (never a prompt: the loop gives it none, `ignores`)


def run_simulation(profile: Profile, **kw: Any) -> list[dict]:
    """Deal the simulated shoes; every published event (prompts aside), in order (none with
    keep_events=False: the publishers have them as they come)."""
    opts = SimOptions(**kw)
    if not opts.journal_path:
        return _simulate(profile, opts)
    # one writer: locked before anything of the journal's is read or printed
    from controller.journal.lock import release
    from controller.journal.store import claim
    from controller.settings.paths import refuse_special
    lock = claim(opts.journal_path)
    try:
        refuse_special(f"{opts.journal_path}.devices.json", "the simulated devices' state")
        return _simulate(profile, opts)
    finally:
        release(lock)


def virtual_players(profile: Profile, decisions: str | None) -> Any:
    """The simulated players and banker of a game that asks them to decide (chemin de fer,
    baccarat en banque): from the decisions file when given, else the rules' defaults; None for
    a game that asks nothing. InputError (one line) for a decisions file such a game cannot
    take, or one that does not read."""
    from simulators.dealer import DecisionsFileError, VirtualPlayers, read_decisions
    if not tuple(getattr(profile_rules(profile), "decisions", ())):
        if decisions:
            raise InputError(f"--decisions: {profile.game} takes no decisions")
        return None
    script = []
    if decisions:
        rules = profile_rules(profile)
        try:
            script = read_decisions(decisions, rules.draw_decisions, rules.seat_decisions,
                                    stakes=hasattr(rules, "pool_stakes"))
        except DecisionsFileError as err:
            raise InputError(str(err)) from None
    return VirtualPlayers(script)


def _simulate(profile: Profile, opts: "SimOptions") -> list[dict]:
    from simulators.install import install
    from simulators.rig import SimRig
    plan = Plan(profile, opts)
    players = virtual_players(profile, opts.decisions)
    if players is not None and players.has_stakes() and opts.betting_seconds <= 0:
        # stakes are taken while bets are open: a simulated window of one second
        opts.betting_seconds = 1.0
    collect = Collect()
    install()
    external = bool(opts.shoe_url)
    clock: Clock = RealClock() if external else VirtualClock()
    rig = None
    shoe_url = opts.shoe_url or ""
    if not external:
        from simulators.shoe import FaultError
        try:
            rig = SimRig(profile.decks, protocol=opts.protocol, seed=plan.seed(),
                         faults=tuple(opts.faults), clock=clock,
                         continuous=profile.continuous_shuffler)
        except FaultError as err:
            raise InputError(f"--fault {err}; give an index within the shoe") from None
        shoe_url = rig.shoe_url
    devices = DeviceSettings(
        shoe_url=shoe_url, protocol=opts.protocol,
        shoe_options=dict(read_timeout_s=0.2) if external else
        dict(read_timeout_s=0.01, reconnect_initial_s=0.01, reconnect_max_s=0.05),
        # a shoe file is loaded by hand: the shuffler plays no part
        shuffler_url=rig.shuffler_url if rig is not None and opts.use_shuffler
        and plan.file is None else None,
        shuffler_options=dict(response_timeout_s=1.0))
    rig_state = f"{opts.journal_path}.devices.json" if opts.journal_path and rig else None

    def recovered(recovery: Any, table: Any) -> None:
        if rig is not None and rig_state and recovery.resumed:
            # the devices outlived the controller: they stand where they stood, before the
            # drivers open them (a framed shoe then resends what was never acknowledged)
            rig.restore(rig_state)
    people = People(rig, Actors(dealer=rig is not None, hand_cards=plan.cards,
                                supervisor=True, players=players), profile)
    spec = TableSpec(
        profile, devices, plan=plan.shoe, journal_path=opts.journal_path,
        outlets=(*opts.publishers, *((collect,) if opts.keep_events else ())),
        shoes=0, software=release_digest(), name=opts.name, clock=clock,
        betting_seconds=opts.betting_seconds, rig=rig, people=people.makers(),
        virtual_supervisor=True, idle_seconds=opts.idle_seconds if external else None,
        simulator_shoes=True,           # every shoe it deals is a simulation's, on record
        anchor_key=opts.anchor_key, crash_after=opts.crash_after, fsync=opts.fsync,
        on_recovered=recovered,
        # the devices' state as it stands when each batch is committed: never behind the
        # journal (a restart would deal cards again), ahead of it only by reads in flight
        hooks=(Hook("before_commit", lambda: _save_devices(rig, rig_state, opts.journal_path)),)
        if rig is not None and rig_state else (),
        feed=FeedSpec(**opts.feed) if opts.feed else None)
    rt = build(spec)
    rt.run()
    if rig is not None:
        never_met(rig, shuffler_used=devices.shuffler_url is not None)
    if rt.cycle.error:
        raise InputError(rt.cycle.error)
    if not rt.cycle.done:
        raise InputError(people.stuck or f"the simulated table stopped at: "
                         f"{rt.service.table.prompt()}")
    return collect.events


def _save_devices(rig: Any, path: str, journal: str | None) -> None:
    """The simulated devices' state, saved with each batch: on the journal's disk, and as much
    a part of what a restart deals on, so one that cannot be written (the disk full) stops the
    table as the journal would, before the batch is committed or anything of it announced."""
    try:
        rig.save(path)
    except OSError as err:
        raise JournalError(f"journal {journal}: the simulated devices' state beside it ({path}) "
                           f"cannot be written: {err.strerror or err}") from err


def never_met(rig: Any, *, shuffler_used: bool) -> None:
    """Say which shuffler faults the run asked for and never met (a fault at a shuffle the run
    did not reach, or a run without the shuffler): a test that relies on one would otherwise
    pass without it."""
    unmet = rig.shuffler.unmet_faults() if shuffler_used else list(rig.shuffler.faults)
    for f in unmet:
        why = (f"the shuffler shuffled {rig.shuffler.shuffles} time(s), numbered from 0"
               if shuffler_used else "this run loads its shoe without the shuffler")
        log.warning("fault never met", fault=f"{f.kind}@{f.at}", why=why)
        print(f"tablectl simulate: --fault {f.kind}@{f.at} was never met: {why}",
              file=sys.stderr)


def profile_rules(profile: Profile) -> Any:
    from controller.games import get_rules
    return get_rules(profile.game)
