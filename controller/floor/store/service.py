"""`tablectl floor-store`: every table's records from the broker into PostgreSQL, exactly once.

An MQTT 5 subscriber with a persistent session (QoS 1, optionally a shared subscription so
that several stores share a floor) hands each message to one writer thread. The writer stores
a batch in one transaction (`ingest.write`) and only then acknowledges its messages to the
broker: a store that dies, or a database that refuses, leaves the messages with the broker,
which delivers them again (to this store's session, or another member of its share). A
message of an earlier connection is stored but never acknowledged on a later one (its packet
id may mean another message there); the broker sends it again, and the store finds it has it.

A database that is down, full, read-only or refuses the store's credentials is one line (and
one more when it is back), retried with a doubling delay capped at `retry_max_s`; meanwhile
the broker stops sending once `RECEIVE_MAXIMUM` messages wait unacknowledged, so the store's
memory stays bounded and the rest waits in its session at the broker.

Every exchange with the database has a deadline (`query_timeout_s`): the server cancels a
statement that runs longer, and the store drops a connection whose server does not answer at
all (`deadline.py`), so a frozen database is one line and a retry, and a stop is never held up
by it.
"""
from __future__ import annotations

import queue
import socket
import threading
import time
from typing import Any, Callable

from controller.feed.broker import Broker, new_client, refused
from controller.floor.store import ingest, schema
from controller.floor.store.db import Backoff, Database, psycopg, refusal, unanswered
from controller.floor.store.deadline import Deadline
from controller.logsetup import get_logger

log = get_logger("controller.floor.store")

#: messages the broker may send before the store has acknowledged them (MQTT 5 flow control)
RECEIVE_MAXIMUM = 2000
#: how long the broker keeps the store's session (and what arrives for it) while it is away
SESSION_EXPIRY_S = 7 * 24 * 3600
BATCH = 1000                 # messages in one transaction, at most
GATHER_S = 0.02              # after the first message, wait this long for more of a batch
REPORT_EVERY_S = 60.0


def default_name() -> str:
    return f"store-{socket.gethostname()}"[:40]


class FloorStore:
    def __init__(self, broker: Broker, db: Database, *, name: str | None = None,
                 share: str | None = None, gap_after_s: float = 30.0,
                 retry_max_s: float = 30.0, query_timeout_s: float = 30.0,
                 on_commit: Callable[[ingest.Written, float], None] | None = None):
        self.broker, self.db = broker, db
        self.name = name or default_name()
        self.share = share
        self.gap_after_s, self.retry_max_s = gap_after_s, retry_max_s
        self.on_commit = on_commit
        p = broker.prefix
        self.topic = f"$share/{share}/{p}/+/records" if share else f"{p}/+/records"
        self.inbox: queue.Queue[ingest.Message] = queue.Queue()
        self.stopping = threading.Event()
        self.query_timeout_s = query_timeout_s
        self.deadline = Deadline(query_timeout_s, self.stopping)
        self.generation = 0
        self.connected = False
        self.counts = {"stored": 0, "duplicates": 0, "kept": 0, "batches": 0}
        self._conn: Any = None
        self._db_problem: str | None = None
        self._mqtt_problem: str | None = None
        self._client: Any = None
        self._gaps_at = 0.0
        self._reported_at = time.monotonic()

    # ------------------------------------------------------------------ lifetime
    def migrate(self) -> tuple[int, int]:
        """The schema made or brought up to date (SchemaError when the database's is newer);
        psycopg's errors when the database cannot be reached (the caller retries)."""
        conn = self._connect()
        try:
            with self.deadline.talk(conn):
                return schema.migrate(conn, where=self.db.where)
        finally:
            conn.close()

    def run(self) -> None:
        """Until `stop()`: subscribed at once, then the schema (waiting for the database),
        then the records. A store new to the broker subscribes before it can write: from then
        on the broker keeps what the tables send for it, none of it acknowledged before it is
        committed (waiting for the database first, it lost what was sent meanwhile)."""
        self._connect_broker()
        try:
            backoff = Backoff(0.5, self.retry_max_s)
            while not self.stopping.is_set():
                try:
                    found, now = self.migrate()
                    if found != now:
                        log.info(f"floor store schema {'created' if not found else 'migrated'}"
                                 f" at version {now}", db=self.db.where)
                    self._db_ok()
                    break
                except psycopg().Error as err:
                    if self.stopping.is_set():
                        break
                    self._db_failed(err)
                    backoff.wait(self.stopping)
            if not self.stopping.is_set():
                self._write_loop()
        finally:
            self._close()

    def stop(self) -> None:
        self.stopping.set()

    # ------------------------------------------------------------------ the broker's side
    def _connect_broker(self) -> None:
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties
        b = self.broker
        client = new_client(b, f"tablectl-{self.name}"[:64], reconnect=True, manual_ack=True)
        client.reconnect_delay_set(0.5, max(1, int(self.retry_max_s)))
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_connect_fail = self._on_connect_fail
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = SESSION_EXPIRY_S
        props.ReceiveMaximum = RECEIVE_MAXIMUM
        self._client = client
        client.connect_async(b.host, b.port, keepalive=b.keepalive_s, clean_start=False,
                             properties=props)
        client.loop_start()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                    properties: Any) -> None:
        if reason_code.is_failure:
            self._mqtt_failed(refused(self.broker, reason_code).text)
            return
        self.generation += 1
        self.connected = True
        client.subscribe([(self.topic, 1)])
        if self._mqtt_problem is not None:
            log.warning("floor store: the broker is back", broker=self.broker.where)
        else:
            log.info("floor store subscribed", broker=self.broker.where, topic=self.topic,
                     session_present=bool(getattr(flags, "session_present", False)))
        self._mqtt_problem = None

    def _on_connect_fail(self, client: Any, userdata: Any) -> None:
        self._mqtt_failed(f"cannot reach the broker at {self.broker.where}")

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                       properties: Any) -> None:
        was, self.connected = self.connected, False
        self.generation += 1          # what came on that connection is not acknowledged now
        if self.stopping.is_set():
            return
        if was:
            self._mqtt_failed(f"the connection to {self.broker.where} was lost "
                              f"({reason_code})")
        elif self._mqtt_problem is None:
            self._mqtt_failed(f"the broker at {self.broker.where} closed the connection "
                              f"before taking it ({reason_code})")
        # else: the end of a connection the broker refused, which has said why already

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        self.inbox.put(ingest.Message(msg.topic, msg.payload, msg.mid, self.generation,
                                      time.time()))

    def _mqtt_failed(self, text: str) -> None:
        if text != self._mqtt_problem:
            log.warning(f"floor store: {text}; the tables' records wait at the broker, "
                        f"retrying", broker=self.broker.where)
        self._mqtt_problem = text

    # ------------------------------------------------------------------ the writer
    def _take(self) -> list[ingest.Message]:
        try:
            first = self.inbox.get(timeout=0.5)
        except queue.Empty:
            return []
        batch = [first]
        end = time.monotonic() + GATHER_S
        while len(batch) < BATCH:
            try:
                batch.append(self.inbox.get(timeout=max(0.0, end - time.monotonic())))
            except queue.Empty:
                break
        return batch

    def _write_loop(self) -> None:
        backoff = Backoff(0.5, self.retry_max_s)
        while not self.stopping.is_set() or not self.inbox.empty():
            batch = self._take()
            self._maybe_check_gaps()
            if not batch:
                if self.stopping.is_set():
                    return
                continue
            while True:
                try:
                    conn = self._connection()
                    with self.deadline.talk(conn):
                        written = ingest.write(conn, batch, self.broker.prefix)
                    break
                except psycopg().Error as err:
                    self._drop_connection()
                    if self.stopping.is_set():
                        return          # nothing acknowledged: the broker keeps it all
                    self._db_failed(err)
                    backoff.wait(self.stopping)
            backoff.reset()
            self._db_ok()
            committed = time.time()
            self._acknowledge(batch)
            self._after(written, committed)

    def _acknowledge(self, batch: list[ingest.Message]) -> None:
        client, generation = self._client, self.generation
        for m in batch:
            if m.generation == generation and client is not None:
                client.ack(m.mid, 1)

    def _after(self, written: ingest.Written, committed: float) -> None:
        c = self.counts
        c["stored"] += len(written.stored)
        c["duplicates"] += written.duplicates
        c["kept"] += len(written.kept)
        c["batches"] += 1
        for name, seq in written.first_seen:
            log.info(f"floor store: table {name} first seen at seq {seq}"
                     + ("" if seq == 1 else "; its records before it were not on the feed"))
        for k in written.kept:
            log.warning(f"floor store: kept aside a payload ({k.reason})", topic=k.message.topic)
        for line in written.lines:
            log.warning(f"floor store: {line}")
        if self.on_commit is not None:
            self.on_commit(written, committed)
        now = time.monotonic()
        if now - self._reported_at >= REPORT_EVERY_S:
            self._reported_at = now
            log.info("floor store progress", **c)

    def _maybe_check_gaps(self) -> None:
        now = time.monotonic()
        if now - self._gaps_at < min(5.0, max(0.2, self.gap_after_s / 2)):
            return
        self._gaps_at = now
        try:
            conn = self._connection()
            with self.deadline.talk(conn):
                lines = ingest.raise_gaps(conn, self.gap_after_s)
            for line in lines:
                log.warning(f"floor store: {line}")
        except psycopg().Error as err:
            self._drop_connection()
            if not self.stopping.is_set():
                self._db_failed(err)

    def _connection(self) -> Any:
        """The writer's connection (made again after a failure). A schema another store
        migrated past this code's version raises SchemaError: this store stops, unacknowledged."""
        if self._conn is None or self._conn.closed:
            conn = self._connect()
            try:
                with self.deadline.talk(conn):
                    schema.require(conn, where=self.db.where)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def _connect(self) -> Any:
        return self.db.connect(statement_timeout_s=self.query_timeout_s)

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:          # a connection already broken closes as it can
                pass
        self._conn = None

    def _db_failed(self, err: BaseException) -> None:
        why = unanswered(self.db, self.query_timeout_s + self.deadline.grace_s) \
            if self.deadline.fired == "timeout" else refusal(self.db, err)
        self.deadline.fired = None
        if why.text != self._db_problem:
            log.warning(f"floor store: {why.text}; nothing is acknowledged to the broker until "
                        f"it is stored, retrying (at most every {self.retry_max_s:g} s)",
                        db=self.db.where)
        self._db_problem = why.text

    def _db_ok(self) -> None:
        if self._db_problem is not None:
            log.warning("floor store: the database is back; storing what waited",
                        db=self.db.where)
        self._db_problem = None

    def _close(self) -> None:
        if self._client is not None:
            self._client.disconnect()
            self._client.loop_stop()
        self._drop_connection()
        log.info("floor store stopped", **self.counts)
