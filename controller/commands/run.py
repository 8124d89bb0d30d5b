"""`tablectl run`: the live table on real or simulated devices, chosen by URL."""
from __future__ import annotations

import argparse

from controller.config import load_config, override
from controller.feed import JsonFeed, TextFeed
from drivers.shoe import PROTOCOLS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the table on the configured shoe and shuffler",
                       description="Run the table: read the shoe and the shuffler by URL, apply "
                       "the profile's procedures, journal everything, print prompts and results.")
    p.add_argument("--config", help="table config (default config/table.toml or $TABLECTL_CONFIG)")
    p.add_argument("--profile", help="profile name or .toml path (overrides [table] profile)")
    p.add_argument("--shoe-url", help="serial device or URL of the shoe, e.g. /dev/ttyUSB0")
    p.add_argument("--shoe-protocol", choices=tuple(PROTOCOLS))
    p.add_argument("--shuffler-url", help="usb://VID:PID, a serial URL, or none (hand-shuffled)")
    p.add_argument("--journal", help="journal file (an existing one is resumed)")
    p.add_argument("--betting-seconds", type=float,
                   help="seconds bets stay open; 0 = close at once (unattended)")
    p.add_argument("--shoes", type=int, help="shoes to deal before exiting (0 = until stopped)")
    p.add_argument("--demo-rounds", type=int, help="demonstration rounds at each shoe start")
    p.add_argument("--pace", type=float, help="embedded simulator: seconds between cards")
    p.add_argument("--seed", type=int, help="embedded simulator: shuffler seed")
    p.add_argument("--socket", help="control socket path (overrides [console] socket)")
    p.add_argument("--no-control", action="store_true", help="do not open the control socket")
    p.add_argument("--json", action="store_true", help="print JSON Lines, one object per event")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # Imported when the command runs, so that `tablectl` starts fast.
    from controller.profile import load_profile_for_use
    cfg = load_config(args.config)
    cfg = override(cfg, "table", profile=args.profile, betting_seconds=args.betting_seconds,
                   shoes=args.shoes, demo_rounds=args.demo_rounds)
    cfg = override(cfg, "shoe", url=args.shoe_url, protocol=args.shoe_protocol)
    cfg = override(cfg, "shuffler", url=args.shuffler_url)
    cfg = override(cfg, "storage", journal=args.journal)
    cfg = override(cfg, "console", socket=args.socket)
    cfg = override(cfg, "simulator", pace_s=args.pace, seed=args.seed)
    if args.shoe_url and not args.shuffler_url and cfg.shuffler.url.endswith("sim=table-shuffler"):
        # a real shoe with the embedded simulated shuffler makes no sense: assume a manual shoe
        cfg = override(cfg, "shuffler", url="none")
    profile = load_profile_for_use(cfg.table.profile)
    from controller.runtime import run_table   # after the profile: a bad one stops here first
    feed = JsonFeed() if args.json else TextFeed(verbose=True)
    return run_table(cfg, profile, [feed], control=not args.no_control)
