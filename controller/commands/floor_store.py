"""`tablectl floor-store`: keep every table's record in one PostgreSQL database (docs/floor-store.md).

Subscribes to every table's records on the floor feed's broker (persistent session, QoS 1;
`--share GROUP` for a shared subscription, so several stores share a floor) and writes each into
the database once by (table, seq), in order per table; a missing record is an alarm, a payload
that is not a known record is kept aside with why. Nothing is acknowledged to the broker before
the database has committed it. The schema is created and migrated by the command itself.
Runs until stopped (Ctrl-C, SIGTERM); `--migrate-only` makes the schema and exits.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("floor-store", help="keep every table's records in a PostgreSQL "
                       "database (the floor store)", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--feed", metavar="URL", help="the broker, mqtt://HOST:PORT or mqtts://… "
                   "(default [feed] url; credentials and TLS from [feed])")
    p.add_argument("--db", metavar="URL", help="the database, postgresql://USER@HOST[:PORT]/DB "
                   "(default $TABLECTL_FLOOR_DB; the password from ~/.pgpass or PGPASSFILE)")
    p.add_argument("--config", help="config whose [feed] section to use (default "
                   "config/table.toml or $TABLECTL_CONFIG)")
    p.add_argument("--share", metavar="GROUP", help="share the floor with the other stores of "
                   "GROUP (an MQTT shared subscription)")
    p.add_argument("--name", help="this store's name on the broker: its session survives a "
                   "restart under the same name (default store-HOSTNAME)")
    p.add_argument("--gap-after-s", type=float, default=30.0, metavar="S",
                   help="a record missing this long (later ones arrived) is an alarm "
                   "(default 30)")
    p.add_argument("--retry-max-s", type=float, default=30.0, metavar="S",
                   help="the longest wait between tries when the database refuses (default 30)")
    p.add_argument("--query-timeout-s", type=float, default=30.0, metavar="S",
                   help="the longest the database may take over one write: the server cancels "
                   "a statement after S, and the store drops a connection whose server has "
                   "not answered by S plus up to 5 s, then tries again (default 30)")
    p.add_argument("--migrate-only", action="store_true",
                   help="create or migrate the schema, then exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import math

    from controller.errors import InputError
    from controller.floor.store.db import database, psycopg, refusal
    for flag, value in (("--gap-after-s", args.gap_after_s),
                        ("--retry-max-s", args.retry_max_s),
                        ("--query-timeout-s", args.query_timeout_s)):
        if not math.isfinite(value) or not 0 < value <= 86400:
            raise InputError(f"{flag} {value}: give seconds above 0, at most 86400")
    db = database(args.db or os.environ.get("TABLECTL_FLOOR_DB"))
    psycopg()                                   # one line saying what to install
    from controller.floor.store import schema
    from controller.floor.store.service import FloorStore
    if args.migrate_only:
        try:
            conn = db.connect(statement_timeout_s=args.query_timeout_s)
            try:
                found, now = schema.migrate(conn, where=db.where)
            finally:
                conn.close()
        except schema.SchemaError as err:
            raise InputError(str(err)) from None
        except psycopg().Error as err:
            print(f"tablectl floor-store: {refusal(db, err).text}", file=sys.stderr)
            return 1
        print(f"tablectl floor-store: {db.where}: floor schema version {now}"
              + (" (already)" if found == now else f" (was {found})"))
        return 0
    from controller.settings.config import load_config
    from controller.feed.broker import broker_from
    cfg = load_config(args.config).feed
    url = args.feed or cfg.url
    if not url:
        raise InputError("give --feed mqtt://HOST:PORT (or set [feed] url in the config)")
    broker = broker_from(cfg, url=url)
    if args.share is not None and (not args.share or any(c in args.share for c in "/+#")):
        raise InputError(f"--share {args.share!r}: give a group name (no / + #)")
    store = FloorStore(broker, db, name=args.name, share=args.share,
                       gap_after_s=args.gap_after_s, retry_max_s=args.retry_max_s,
                       query_timeout_s=args.query_timeout_s)
    signal.signal(signal.SIGTERM, lambda signum, frame: store.stop())
    try:
        store.run()
    except schema.SchemaError as err:
        raise InputError(str(err)) from None
    except KeyboardInterrupt:
        store.stop()
    return 0
