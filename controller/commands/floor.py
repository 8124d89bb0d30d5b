"""`tablectl floor`: every table publishing to an MQTT broker, live (see docs/floor-feed.md)."""
from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("floor", help="watch every table on the floor feed's broker",
                       description="Every table publishing to the broker: game, state, "
                       "shoe/round, last result, hold and its age, links, feed lag, offline "
                       "tables. Full screen, or JSON Lines with --json.")
    p.add_argument("--feed", metavar="URL", help="the broker, mqtt://HOST:PORT or mqtts://… "
                   "(default [feed] url; credentials and TLS from [feed])")
    p.add_argument("--config", help="config whose [feed] section to use (default "
                   "$TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one)")
    p.add_argument("--json", action="store_true", help="print one JSON object per table change "
                   "(a table's whole row) instead of the full screen")
    p.add_argument("--once", action="store_true", help="with --json: print every table once, "
                   "as the broker has them now, and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.config import load_config
    from controller.errors import InputError
    from controller.feed.broker import broker_from
    cfg = load_config(args.config).feed
    url = args.feed or cfg.url
    if not url:
        raise InputError("give --feed mqtt://HOST:PORT (or set [feed] url in the config)")
    if args.once and not args.json:
        raise InputError("--once goes with --json")
    broker = broker_from(cfg, url=url)
    from controller.floor.model import Floor
    from controller.floor.watch import FloorWatch
    floor = Floor(broker.prefix)
    if args.json:
        return _lines(broker, floor, once=args.once)
    watch = FloorWatch(broker, floor).start()
    try:
        from controller.floor.app import FloorApp
        FloorApp(floor, watch, broker.where).run()
    finally:
        watch.close()
    return 0


def _lines(broker, floor, *, once: bool) -> int:
    import json
    import sys
    import threading

    from controller.floor.watch import FloorWatch

    def print_row(table: str) -> None:
        # on the MQTT client's one thread, as each message comes: nothing else writes here
        sys.stdout.write(json.dumps(floor.row(table), separators=(",", ":")) + "\n")
        sys.stdout.flush()
    watch = FloorWatch(broker, floor, on_change=None if once else print_row).start()
    try:
        if once:
            watch.settle()
            for row in floor.rows():
                print(json.dumps(row, separators=(",", ":")), flush=True)
            return 0
        threading.Event().wait()        # until Ctrl-C or SIGTERM: the rows come by themselves
        return 0
    finally:
        watch.close()
