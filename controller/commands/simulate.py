"""`tablectl simulate`: whole shoes through the real pipeline on the simulated shoe and shuffler."""
from __future__ import annotations

from typing import Any
import argparse

from controller.settings.argtypes import count, positive, seconds
from controller.errors import InputError
from controller.feed import JsonFeed, TextFeed
from drivers.shoe import PROTOCOLS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="deal whole simulated shoes through the real pipeline",
                       description="Deal whole shoes through the simulator devices (behind their "
                       "URLs), the real drivers, the table machine and the journal.")
    p.add_argument("--profile", required=True, help="profile name (config/profiles) or .toml path")
    p.add_argument("--seed", type=int, help="seed of the simulated shuffler (same seed, same "
                   "shoes); with --shoe-file, of a continuous shuffler's returns (default: from "
                   "the file's cards, so the same file deals the same rounds)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--shoe-file", help="cards in draw order, one per line; CUT marks the cut card")
    src.add_argument("--shoe-url", help="read a shoe outside this process instead (a real shoe, "
                     "or a `tablectl devices` URL); the virtual supervisor still clears holds")
    p.add_argument("--shoes", type=positive, default=1,
                   help="how many shoes (Andar Bahar: decks/rounds)")
    p.add_argument("--fault", action="append", default=[], metavar="KIND@N",
                   help="inject a fault at card index N (shuffler faults: at shuffle N; crash@N: "
                   "the controller is killed after its N-th journaled input); repeatable")
    p.add_argument("--demo-rounds", type=count, default=0,
                   help="demonstration rounds at shoe start")
    p.add_argument("--shoe-protocol", default="beetek", choices=tuple(PROTOCOLS),
                   help="wire protocol of the simulated shoe (default beetek; beetek and barcode "
                   "lines carry no checksum, framed has a CRC: docs/protocols.md)")
    p.add_argument("--journal", help="journal file; an existing one is resumed")
    p.add_argument("--anchor-key", metavar="FILE", help="sign the journal's head with this key "
                   "(mode 0600; see tablectl anchor-key)")
    p.add_argument("--betting-seconds", type=seconds, default=0.0,
                   help="seconds bets stay open each round, in simulated time (default 0)")
    p.add_argument("--shuffler-url", choices=["sim", "none"], default="sim",
                   help="sim: the simulated shuffler over its USB URL (default); none: a "
                   "hand-shuffled shoe loaded without a shuffler")
    p.add_argument("--decisions", metavar="FILE",
                   help="chemin de fer / baccarat en banque: the players' and banker's decisions, "
                   "one per line '[SHOE:]ROUND NAME VALUE' (e.g. '3 player_draw stand'; # "
                   "comments); decisions not in the file follow the rules' default policy")
    p.add_argument("--feed", metavar="URL", help="also publish to this MQTT broker, "
                   "mqtt://HOST:PORT or mqtts://… (needs --journal; credentials and TLS from the "
                   "config's [feed])")
    p.add_argument("--json", action="store_true", help="print JSON Lines, one object per event")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.settings.profile import load_profile_for_use
    if args.seed is None and not args.shoe_file and not args.shoe_url:
        raise InputError("give --seed N, --shoe-file FILE (with or without --seed) or "
                         "--shoe-url URL")
    if args.seed is not None and args.shoe_url:
        raise InputError("--seed with --shoe-url: the shoe at that URL deals its own cards; "
                         "leave out --seed")
    profile = load_profile_for_use(args.profile)   # a bad profile stops before the pipeline loads
    from controller.commands._simulation import run_simulation
    from simulators.shoe import SHOE_FAULTS, FaultError, parse_fault
    if not 0 <= args.demo_rounds <= profile.demo_rounds_max:
        raise InputError(f"--demo-rounds {args.demo_rounds}: the profile {profile.name} allows "
                         f"0 to at most {profile.demo_rounds_max}")
    if args.shoes < 1:
        raise InputError(f"--shoes {args.shoes}: give at least 1")
    crash_after = None
    device_faults = []
    for text in args.fault:
        kind, _, at = text.partition("@")
        if kind == "crash":   # the controller itself dies (kill -9) after N journaled inputs
            if not at.isdigit() or int(at) < 1 or not args.journal:
                raise InputError(f"--fault {text}: write crash@N with N >= 1, and give --journal")
            if crash_after is not None:
                # the process dies at the first: a second is the next command's to give
                raise InputError(f"--fault {text}: one crash@N a command (crash@{crash_after} "
                                 f"is given already); give the next to the restart")
            crash_after = int(at)
        else:
            device_faults.append(text)
    try:
        faults = [parse_fault(f) for f in device_faults]
    except FaultError as err:
        raise InputError(f"--fault: {err}") from None
    for fault in faults:
        if fault.kind in SHOE_FAULTS and fault.at >= profile.cards:
            raise InputError(f"--fault {fault}: the shoe holds {profile.cards} cards; give a "
                             f"card index from 0 to {profile.cards - 1}")
    if args.journal:
        # never a directory, a device or a FIFO (the lock comes with the journal itself)
        from controller.settings.paths import refuse_special
        for side in ("", "-wal", "-shm", ".devices.json"):
            refuse_special(args.journal + side, "--journal")
    feed = JsonFeed() if args.json else TextFeed()
    # held to the ranges the config holds the same settings to
    from controller.settings.config import check_number
    check_number("--betting-seconds", "table.betting_seconds", args.betting_seconds)
    check_number("--shoes", "table.shoes", args.shoes)
    more = {"betting_seconds": args.betting_seconds}
    if args.anchor_key:
        from controller.journal.anchor import load_key
        more["anchor_key"] = load_key(args.anchor_key)
    if args.journal:
        # a kept journal is fsynced as a table's is, unless the house's [storage] fsync says not
        from controller.settings.config import load_config
        more["fsync"] = load_config().storage.fsync
    if args.shoe_url:
        more["shoe_url"] = args.shoe_url
    if args.shuffler_url == "none":
        more["use_shuffler"] = False
    if args.feed:
        more.update(feed_settings(args.feed, args.journal))
    # the contract's events; readable output shows rounds, not every card
    out = _Without(feed, {"prompt"} if args.json else {"prompt", "card"})
    run_simulation(profile, seed=args.seed, shoe_file=args.shoe_file, **more, shoes=args.shoes,
                   faults=faults, demo_rounds=args.demo_rounds, journal_path=args.journal,
                   protocol=args.shoe_protocol, crash_after=crash_after,
                   decisions=args.decisions, publishers=[out], keep_events=False)
    return 0


def feed_settings(url: str, journal: str | None) -> dict:
    """The broker of `--feed URL`, the rest of its settings from the config's [feed] section
    ($TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one, and TABLECTL_FEED_*), and
    the table's name from its [table] section (and its pit)."""
    from controller.settings.config import load_config
    from controller.feed.broker import broker_from
    if not journal:
        raise InputError("--feed: give --journal too (the feed sends from the journal)")
    cfg = load_config()
    return {"name": cfg.table.name,
            "feed": {"broker": broker_from(cfg.feed, url=url),
                     "drain_timeout_s": cfg.feed.drain_timeout_s,
                     "retry_max_s": cfg.feed.retry_max_s, "pit": cfg.table.pit}}


class _Without:
    """`feed` for every kind of event but `kinds`: the loop neither makes (a prompt) nor gives
    it those (`ignores`), so it is given the feed's own calls."""

    def __init__(self, feed: Any, kinds: set[str]) -> None:
        self.feed = feed
        self.ignores = frozenset(kinds)
        self.publish, self.flush = feed.publish, feed.flush
