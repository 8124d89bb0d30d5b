"""`tablectl floor`: every table publishing to an MQTT broker, live (see docs/floor-feed.md)."""
from __future__ import annotations

from typing import Any
import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("floor", help="watch every table on the floor feed's broker",
                       description="Every table publishing to the broker: game, state, "
                       "shoe/round, last result, hold and its age, devices, feed lag, stopped "
                       "tables, in the viewer's language. Full screen; --once: the floor as it "
                       "is now, as text; --json: JSON Lines (language-neutral); --web: the pit "
                       "view in a browser.")
    p.add_argument("--feed", metavar="URL", help="the broker, mqtt://HOST:PORT or mqtts://… "
                   "(default [feed] url; credentials and TLS from [feed])")
    p.add_argument("--config", help="config whose [feed] section to use (default "
                   "$TABLECTL_CONFIG, /etc/tablectl/table.toml or the shipped one)")
    p.add_argument("--json", action="store_true", help="print one JSON object per table change "
                   "(a table's whole row) instead of the full screen")
    p.add_argument("--once", action="store_true", help="print every table once, as the broker "
                   "has them now, and exit (as text; with --json one JSON object a table)")
    p.add_argument("--web", metavar="HOST:PORT", help="serve the pit view to browsers instead "
                   "(port 0: any free port; the URL is printed)")
    p.add_argument("--db", metavar="URL", help="with --web: the floor store, for hands an "
                   "hour, time on hold, irregularities, dealers and its gaps (default "
                   "$TABLECTL_FLOOR_DB)")
    p.add_argument("--language", metavar="LANG", help="the floor's language: en, zh_Hant, hi, "
                   "bn or th (with --web: when the browser asks for none, ?lang=; default "
                   "[table] language)")
    p.add_argument("--hold-alert-min", type=float, default=5.0, metavar="N",
                   help="with --web: a hold longer than N minutes is an alert (default 5)")
    p.add_argument("--shift-start", default="06:00", metavar="HH:MM",
                   help="with --web: when the first shift of the day starts, UTC (default "
                   "06:00)")
    p.add_argument("--shift-hours", type=float, default=8.0, metavar="H",
                   help="with --web: how long a shift lasts (default 8)")
    p.add_argument("--refresh-s", type=float, default=5.0, metavar="S",
                   help="with --web: how often the shift's figures are read from the store "
                   "(default 5)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.settings.config import load_config
    from controller.errors import InputError
    from controller.feed.broker import broker_from
    config = load_config(args.config)
    cfg = config.feed
    url = args.feed or cfg.url
    if not url:
        raise InputError("give --feed mqtt://HOST:PORT (or set [feed] url in the config)")
    broker = broker_from(cfg, url=url)
    if args.web:
        return _web(args, broker, config)
    from controller.floor.model import Floor
    from controller.floor.watch import FloorWatch
    from controller.words import normalise
    try:
        language = normalise(args.language or config.table.language)
    except ValueError as err:
        raise InputError(f"--language: {err}") from None
    floor = Floor(broker.prefix)
    if args.json:
        return _lines(broker, floor, once=args.once)
    if args.once:
        from controller.floor.words import floor_text
        watch = FloorWatch(broker, floor).start()
        try:
            watch.settle()
            print(floor_text(floor.rows(), broker.where, language), flush=True)
        finally:
            watch.close()
        return 0
    watch = FloorWatch(broker, floor).start()
    try:
        from controller.floor.app import FloorApp
        FloorApp(floor, watch, broker.where, language=language).run()
    finally:
        watch.close()
    return 0


def _lines(broker: Any, floor: Any, *, once: bool) -> int:
    import json
    import sys
    import threading

    from controller.floor.watch import FloorWatch
    gone = threading.Event()                # the reader closed the pipe (`floor --json | head`)

    def print_row(table: str) -> None:
        # on the MQTT client's one thread, as each message comes: nothing else writes here
        if gone.is_set():
            return
        try:
            sys.stdout.write(json.dumps(floor.row(table), separators=(",", ":")) + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            gone.set()
    watch = FloorWatch(broker, floor, on_change=None if once else print_row).start()
    try:
        if once:
            watch.settle()
            for row in floor.rows():
                print(json.dumps(row, separators=(",", ":")), flush=True)
            return 0
        gone.wait()                     # until Ctrl-C, SIGTERM or the reader goes away
        raise BrokenPipeError
    finally:
        watch.close()


def _web(args: argparse.Namespace, broker: Any, config: Any) -> int:
    """The pit view: the live feed and the floor store, served until Ctrl-C or SIGTERM."""
    import math
    import os
    import re
    import signal
    import sys
    import threading

    from controller.display.server import DisplayServer, bind
    from controller.errors import InputError
    from controller.floor.model import Floor
    from controller.floor.pit import PitHub, PitView
    from controller.floor.watch import FloorWatch
    from controller.floor.web import create_app
    from controller.words import normalise
    if args.json or args.once:
        raise InputError("--web serves a page to browsers: leave out --json and --once (or "
                         "leave out --web to print the floor)")
    if not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", args.shift_start):
        raise InputError(f"--shift-start {args.shift_start!r}: give HH:MM, e.g. 06:00")
    for flag, value, top in (("--shift-hours", args.shift_hours, 24),
                             ("--hold-alert-min", args.hold_alert_min, 24 * 60),
                             ("--refresh-s", args.refresh_s, 3600)):
        if not math.isfinite(value) or not 0 < value <= top:
            raise InputError(f"{flag} {value}: give a number above 0, at most {top}")
    try:
        language = normalise(args.language or config.table.language)
    except ValueError as err:
        raise InputError(f"--language: {err}") from None
    db_url = args.db or os.environ.get("TABLECTL_FLOOR_DB")
    if db_url:
        from controller.floor.store.db import database, psycopg
        database(db_url, "--db")
        psycopg()
    sock = bind(args.web, "--web")
    floor = Floor(broker.prefix)
    view = PitView(floor, db_url, hold_alert_s=args.hold_alert_min * 60,
                   first_shift=args.shift_start, shift_hours=args.shift_hours,
                   refresh_s=args.refresh_s)
    hub = PitHub(view)
    view.on_change = hub.changed
    watch = FloorWatch(broker, floor, on_change=hub.changed).start()
    server = None
    try:
        view.start()
        server = DisplayServer(create_app(hub, language), sock, hub, where="pit view").start()
        print(f"tablectl floor: pit view at {server.url}", file=sys.stderr, flush=True)
        done = threading.Event()
        signal.signal(signal.SIGTERM, lambda signum, frame: done.set())
        try:
            done.wait()
        except KeyboardInterrupt:
            pass
        return 0
    finally:
        if server is not None:
            server.close()
        view.close()
        watch.close()
