"""`tablectl run`: the live table on real or simulated devices, chosen by URL."""
from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from controller.settings.argtypes import count, seconds
from controller.settings.config import Config, ConfigError, load_config, origin, override
from controller.errors import InputError
from controller.feed import JsonFeed, TextFeed
from controller.words import normalise
from drivers.shoe import PROTOCOLS

if TYPE_CHECKING:
    from controller.journal.anchor import AnchorKey
    from controller.settings.profile import Profile


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the table on the configured shoe and shuffler",
                       description="Run the table: read the shoe and the shuffler by URL, apply "
                       "the profile's procedures, journal everything, print prompts and results.")
    p.add_argument("--config", help="table config (default $TABLECTL_CONFIG, else "
                   "/etc/tablectl/table.toml, else the shipped one)")
    p.add_argument("--profile", help="profile name or .toml path (overrides [table] profile)")
    p.add_argument("--shoe-url", help="serial device or URL of the shoe, e.g. /dev/ttyUSB0")
    p.add_argument("--shoe-protocol", choices=tuple(PROTOCOLS),
                   help="beetek and barcode lines carry no checksum (a damaged byte can read as "
                   "another card); framed has a CRC (docs/protocols.md)")
    p.add_argument("--shuffler-url", help="usb://VID:PID, a serial URL, or none (hand-shuffled)")
    p.add_argument("--journal", help="journal file (an existing one is resumed)")
    p.add_argument("--anchor-key", metavar="FILE", help="sign the journal's head with this key "
                   "(mode 0600; overrides [storage] anchor_key_file; see tablectl anchor-key)")
    p.add_argument("--betting-seconds", type=seconds,
                   help="seconds bets stay open; 0 = close at once (unattended)")
    p.add_argument("--shoes", type=count, help="shoes to deal before exiting (0 = until stopped)")
    p.add_argument("--demo-rounds", type=count, help="demonstration rounds at each shoe start")
    p.add_argument("--pace", type=seconds, help="embedded simulator: seconds between cards "
                   "(and at most the virtual players' pause before a decision)")
    p.add_argument("--seed", type=int, help="embedded simulator: shuffler seed")
    p.add_argument("--virtual-supervisor", action=argparse.BooleanOptionalAction,
                   help="a simulated supervisor clears every hold as the profile's defaults "
                   "say, and the prompts say so (default: on for the embedded simulator, off "
                   "for devices outside this process)")
    p.add_argument("--virtual-players", action="store_true",
                   help="chemin de fer and baccarat en banque on a rig: simulated players and "
                   "banker decide (draw or stand, who takes the bank) by the rules' defaults; "
                   "never at a table with real players")
    p.add_argument("--decisions", metavar="FILE",
                   help="with --virtual-players: their decisions, one per line, [SHOE:]ROUND "
                   "NAME VALUE (as tablectl simulate --decisions); the rest by the defaults")
    p.add_argument("--socket", help="control socket path (overrides [console] socket)")
    p.add_argument("--no-control", action="store_true", help="do not open the control socket")
    p.add_argument("--http", metavar="HOST:PORT", help="serve the web scoreboard and dealer page "
                   "here (overrides [display] listen; a bare PORT listens on loopback)")
    p.add_argument("--feed", metavar="URL", help="publish to this MQTT broker, mqtt://HOST:PORT "
                   "or mqtts://… (overrides [feed] url; credentials and TLS from [feed])")
    p.add_argument("--json", action="store_true", help="print JSON Lines, one object per event")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.settings.profile import load_profile_for_use
    cfg = load_config(args.config)
    cfg = override(cfg, "table", profile=args.profile, betting_seconds=args.betting_seconds,
                   shoes=args.shoes, demo_rounds=args.demo_rounds)
    cfg = override(cfg, "shoe", {"url": "--shoe-url", "protocol": "--shoe-protocol"},
                   url=args.shoe_url, protocol=args.shoe_protocol)
    cfg = override(cfg, "shuffler", {"url": "--shuffler-url"}, url=args.shuffler_url)
    cfg = override(cfg, "storage", {"anchor_key_file": "--anchor-key"}, journal=args.journal,
                   anchor_key_file=args.anchor_key)
    cfg = override(cfg, "console", socket=args.socket)
    cfg = override(cfg, "simulator", {"pace_s": "--pace"}, pace_s=args.pace, seed=args.seed)
    cfg = override(cfg, "feed", {"url": "--feed"}, url=args.feed)
    cfg = override(cfg, "display", {"listen": "--http"}, listen=args.http)
    if args.shoe_url and not args.shuffler_url and is_sim_url(cfg.shuffler.url):
        # a real shoe with the embedded simulated shuffler makes no sense: assume a manual shoe
        cfg = override(cfg, "shuffler", {"url": "--shoe-url"}, url="none")
    profile = load_profile_for_use(cfg.table.profile, config=args.config)
    if not 0 <= cfg.table.demo_rounds <= profile.demo_rounds_max:
        raise InputError(f"demo rounds {cfg.table.demo_rounds}: the profile {profile.name} "
                         f"allows 0 to at most {profile.demo_rounds_max} ([table] demo_rounds "
                         f"or --demo-rounds)")
    if cfg.table.shoes < 0:
        raise InputError(f"shoes {cfg.table.shoes}: give 0 (until stopped) or more")
    anchor_key = None
    if cfg.storage.anchor_key_file:
        from controller.journal.anchor import load_key
        anchor_key = load_key(cfg.storage.anchor_key_file, "--anchor-key" if args.anchor_key
                              else f"{cfg.path}: storage.anchor_key_file")
    players = None
    if args.decisions and not args.virtual_players:
        raise InputError("--decisions needs --virtual-players (the decisions are theirs)")
    if args.virtual_players:
        from controller.commands._simulation import virtual_players
        players = virtual_players(profile, args.decisions)
        if players is None:
            raise InputError(f"--virtual-players: {profile.game} asks no player or banker to "
                             "decide")
        if players.has_stakes() and cfg.table.betting_seconds <= 0:
            raise InputError("--decisions: its stakes are taken while bets are open; give a "
                             "betting window (--betting-seconds S)")
    language = normalise(cfg.table.language)
    if not args.json:
        log_apart(cfg, language)
    feed = JsonFeed() if args.json else TextFeed(verbose=True, language=language)
    return run_table(cfg, profile, [feed], control=not args.no_control, anchor_key=anchor_key,
                     virtual_supervisor=args.virtual_supervisor, players=players)


def log_apart(cfg: Config, language: str) -> None:
    """The readable lines are for the people at the table: where the log would be written
    among them (stderr is the same terminal, file or pipe as stdout, and not journald's),
    it goes to a file beside the journal instead, and one line says where."""
    import sys
    from pathlib import Path

    from controller import logsetup
    from controller.words.fields import word
    if logsetup.to_file_given() or not same_stream(sys.stdout, sys.stderr):
        return
    path = Path(cfg.storage.journal).parent / "tablectl.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        logsetup.to_file(str(path))
    except OSError:
        return          # no place for it there: the log stays on stderr (--log-file FILE)
    print(f"tablectl run: {word('run.log_file', language, path=str(path))}", file=sys.stderr,
          flush=True)


def same_stream(out: Any, err: Any) -> bool:
    """Whether two streams end in the same place, which is not systemd's journal."""
    import os
    try:
        a, b = os.fstat(out.fileno()), os.fstat(err.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    if not os.path.samestat(a, b):
        return False
    journal = os.environ.get("JOURNAL_STREAM", "")
    return journal != f"{b.st_dev}:{b.st_ino}"


def is_sim_url(url: str) -> bool:
    return url.startswith("shoesim:") or "sim=" in url


def run_table(cfg: Config, profile: Profile, publishers: list, *, control: bool = True,
              anchor_key: AnchorKey | None = None, virtual_supervisor: bool | None = None,
              players: Any = None) -> int:
    """The live table: devices by URL, the one service loop, until the shoes are dealt."""
    from controller.journal.lock import release
    from controller.journal.store import claim
    # one writer: the journal is locked before any device, port or file is touched, so a
    # second table on it stops here, in one line naming the first one's pid
    lock = claim(cfg.storage.journal)
    try:
        if control:
            _socket_path_free(cfg.console.socket)
        return _run_claimed(cfg, profile, publishers, control=control, anchor_key=anchor_key,
                            virtual_supervisor=virtual_supervisor, players=players)
    finally:
        release(lock)


def _socket_path_free(path: str) -> None:
    """The control socket's path is nothing yet or a socket (a stale one is cleared when the
    socket opens): anything else is refused before anything is opened."""
    import os
    import stat
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        from controller.settings.paths import kind_of
        raise InputError(f"control socket {path}: is {kind_of(st.st_mode)}, not a socket; "
                         "give another --socket ([console] socket), or remove it")


def _run_claimed(cfg: Config, profile: Profile, publishers: list, *, control: bool,
                 anchor_key: AnchorKey | None,
                 virtual_supervisor: bool | None = None, players: Any = None) -> int:
    import signal
    import sys
    from typing import Any

    from controller.commands._people import Actors, People
    from controller.games import procedure as procedures
    from controller.logsetup import get_logger
    from controller.service.build import (ControlSpec, DeviceSettings, DisplaySpec, FeedSpec,
                                          TablePCSpec, TableSpec, build)
    from controller.service.clock import RealClock
    from controller.service.cycle import ShoePlan
    from controller.service.parts import Listener
    from controller.service.tablepc import shoe_not_there
    from controller.release.software import release_digest
    from controller.words import english, render
    sim = is_sim_url(cfg.shoe.url) or is_sim_url(cfg.shuffler.url)
    c, s = cfg.shoe, cfg.shuffler
    shoe_options = dict(read_timeout_s=c.read_timeout_s, dead_after_timeouts=c.dead_after_timeouts,
                        baudrate=c.baudrate, reconnect_initial_s=c.reconnect_initial_s,
                        reconnect_max_s=c.reconnect_max_s)
    shoe_waiting = None
    if s.url != "none" and not is_sim_url(s.url):
        # a shuffler URL that cannot name a device is one line now, not a hold later
        from drivers.transport import check_url
        check_url(s.url)
    if not sim:
        # a wrong URL is one line, before anything is journaled; a shoe not plugged in yet (or
        # held by another program) is waited for: the table starts in no_devices
        shoe_waiting = shoe_not_there(c.url, c.protocol, read_timeout_s=c.read_timeout_s,
                                      baudrate=c.baudrate)
    rig = None
    if sim:
        from simulators.install import install
        from simulators.rig import DeviceClock, SimRig
        from simulators.shoe import SHOE_FAULTS, FaultError, parse_fault
        install()
        try:
            # the devices' time goes on with the dealer's pulls and with real time: a dropped
            # link or a silence ends while the dealer waits for the table (held for it)
            rig = SimRig(profile.decks, protocol=c.protocol,
                         seed=None if cfg.simulator.seed < 0 else cfg.simulator.seed,
                         faults=tuple(parse_fault(f) for f in cfg.simulator.faults),
                         name="table", continuous=profile.continuous_shuffler,
                         clock=DeviceClock(time.monotonic))
        except FaultError as err:
            raise InputError(f"{origin(cfg, 'simulator', 'faults')}: {err}") from None
        for fault in rig.faults:
            if fault.kind in SHOE_FAULTS and fault.at >= profile.cards:
                raise InputError(f"{origin(cfg, 'simulator', 'faults')}: {fault}: the shoe "
                                 f"holds {profile.cards} cards; give a card index from 0 to "
                                 f"{profile.cards - 1}")
    shuffler_url = None if s.url == "none" else s.url
    devices = DeviceSettings(
        shoe_url=c.url, protocol=c.protocol, shoe_options=shoe_options,
        min_pull_interval_s=c.min_pull_interval_s, shuffler_url=shuffler_url,
        shuffler_options=dict(protocol=s.protocol, response_timeout_s=s.response_timeout_s,
                              poll_interval_s=s.poll_interval_s, retries=s.retries,
                              baudrate=s.baudrate),
        approved_firmware=tuple(s.approved_firmware), shuffle_timeout_s=s.shuffle_timeout_s,
        wait_for_shoe=not sim)
    cut = None if profile.continuous_shuffler else \
        procedures.default_cut_position(profile, profile.cards)
    plan = ShoePlan(cut if shuffler_url or sim else None, shuffler=shuffler_url is not None,
                    demo_rounds=cfg.table.demo_rounds)
    listener = metrics_listener = None
    if cfg.display.listen:
        # bound before anything is journaled: a busy port is one line, and nothing dealt
        from controller.display.server import bind
        listener = bind(cfg.display.listen, "--http or [display] listen")
    if cfg.metrics.listen:
        from controller.display.server import bind
        metrics_listener = bind(cfg.metrics.listen, "[metrics] listen")
    broker = None
    if cfg.feed.url:
        # a bad feed setting is one line, before anything is journaled
        from controller.feed.broker import broker_from
        broker = broker_from(cfg.feed)
    language = normalise(cfg.table.language)
    display = None
    if listener is not None:
        t = cfg.table
        display = DisplaySpec(listener, language=language,
                              limits={"min": t.min_bet, "max": t.max_bet}
                              if t.min_bet or t.max_bet else None)
    control_spec = None
    if control:
        k = cfg.console
        control_spec = ControlSpec(k.socket, k.users_db, group=k.group or None,
                                   reply_timeout_s=k.reply_timeout_s)
    supervisor = sim if virtual_supervisor is None else virtual_supervisor
    # the virtual players think no longer than the simulated dealer takes for a card
    people = People(rig, Actors(dealer=sim, dealer_pace_s=cfg.simulator.pace_s,
                                device_tick_s=1.0, supervisor=supervisor, players=players,
                                players_pause_s=min(Actors.players_pause_s,
                                                    cfg.simulator.pace_s)),
                    profile)

    def recovered(recovery: Any, table: Any) -> None:
        if rig is not None and recovery.resumed:
            rig.reseed(table.shoe_no)
    from controller import __version__
    spec = TableSpec(
        profile, devices, plan=lambda number: plan, journal_path=cfg.storage.journal,
        outlets=tuple(publishers),
        # the readable lines: after every input
        listeners=tuple(Listener(p.on_status) for p in publishers if hasattr(p, "on_status")),
        shoes=cfg.table.shoes, software=release_digest(), name=cfg.table.name,
        clock=RealClock(), betting_seconds=cfg.table.betting_seconds, rig=rig,
        people=people.makers(), virtual_supervisor=supervisor, simulated=sim,
        # a shoe resumed on real devices is one of --shoes; the embedded simulator's cannot
        # be resumed (its devices died with the process)
        count_resumed=not sim, devices_lost=sim, anchor_key=anchor_key,
        snapshot_every=cfg.storage.snapshot_every, check_budget=cfg.storage.verify_before_start,
        fsync=cfg.storage.fsync,
        on_recovered=recovered,
        feed=FeedSpec(broker, drain_timeout_s=cfg.feed.drain_timeout_s,
                      retry_max_s=cfg.feed.retry_max_s, pit=cfg.table.pit)
        if broker is not None else None,
        display=display, control=control_spec,
        # the software checked, the service manager, the clock and the health view
        table_pc=TablePCSpec(cfg, shoe_waiting=shoe_waiting, metrics_sock=metrics_listener,
                             info={"version": __version__, "profile": profile.name,
                                   "simulator": str(sim).lower()}))
    rt = build(spec)
    started = rt.started
    if started.metrics_url:
        print(f"tablectl run: metrics at {started.metrics_url}", file=sys.stderr)
    if started.display_url:
        print(f"tablectl run: web display at {started.display_url}", file=sys.stderr)
    checking = started.checking
    for n, words in enumerate(started.said):
        # said to the people at the table in their language, and to the log in English;
        # the first line says too what is still to be checked
        line, detail = render(words, language), english(words)
        if checking and n == 0:
            line = f"{line.rstrip('.')}; {render(checking, language)}"
            detail = f"{detail.rstrip('.')}; {english(checking)}"
        print(f"tablectl run: {line}", file=sys.stderr)
        get_logger("controller.run").info("resumed", detail=detail)
    # a service manager stops the table with SIGTERM: a clean stop, like the end of the shoes
    # (what was delivered is recorded and a snapshot taken, so the next start replays nothing)
    signal.signal(signal.SIGTERM, lambda signum, frame: rt.service.stop("terminated"))
    rt.run()
    return 0
