"""The floor feed: the journal is the outbox.

On its own thread the feed reads the journal (a read-only connection) after the last `seq` the
broker acknowledged, publishes each public event in journal order at QoS 1 on the `events`
topic, and every record as journaled (kind, data, times and hash: the inputs, sign-ins and
notes too, cards of a round not yet revealed included) on the `records` topic, which the floor
store keeps and nobody else should be let read; and hands each new
"acknowledged up to" to the table's loop, which writes it (cursor "feed") in the transaction of
its next input (the working copy) and into the chain with every snapshot, a clean stop's
included. After a broker outage, a network cut or a restart of the controller the feed starts
again from the chain's position: nothing is lost, and what was in flight, or acknowledged
since the last snapshot, may arrive twice (consumers keep the last `seq` per table). Each connection is a fresh
MQTT session: what it had in flight is simply read from the journal again.

The table never waits for the broker: on the loop's thread the feed only notes the newest seq
and the table's view (`publish`, `on_state`) and wakes its thread. A broker that is down, slow or
refusing costs a warning (one line when the link fails, one when it is back) and a growing
"behind" figure in the state view, the console and the `state` topic.
"""
from __future__ import annotations

import collections
import json
import os
import select
import threading
import time
from typing import Any, MutableMapping

from controller.feed.broker import Broker, Failure, connect_error, new_client, refused
from controller.feed.public import PublicRecords
from controller.journal import Journal, JournalError, utc_now
from controller.journal.reading import unfold
from controller.logsetup import get_logger
from controller.schema import stamped

log = get_logger("controller.feed")

CURSOR = "feed"
WINDOW = 64                  # messages published and not yet acknowledged, at most
STATE_EVERY_S = 0.2          # the retained state is republished at most this often
BEHIND_EVERY_S = 0.5         # how often the "behind" figure is counted while behind
STILL_BEHIND_S = 60.0        # a reminder in the log while the broker stays away
#: a feed is late (the floor says "behind") when its oldest record the broker has not yet
#: acknowledged was journaled this long ago: a table in full flow is always a record or two
#: behind for some milliseconds, which is no lag
LATE_AFTER_S = 5.0


#: MQTT 5 DISCONNECT reasons a broker gives for refusing what the feed sends
_REFUSALS = {0x87: "not authorised", 0x90: "topic name invalid", 0x95: "packet too large",
             0x97: "quota exceeded", 0x99: "payload format invalid"}


def _json(obj: Any) -> bytes:
    return json.dumps(stamped(obj), separators=(",", ":"), ensure_ascii=False).encode()


class FloorFeed:
    """One table's feed. `start()` once the loop is wired; `close()` after the loop stopped."""

    def __init__(self, broker: Broker, journal: Journal, *, table: str,
                 cursors: MutableMapping[str, int], outlets: MutableMapping[str, dict],
                 private_kinds: frozenset[str], drain_timeout_s: float = 5.0,
                 retry_max_s: float = 30.0, pit: str = "", software: str = ""):
        self.broker, self.table, self.pit = broker, table, pit or None
        self.software = software                 # its SHA-256, told in the online message
        self.private_kinds = private_kinds       # journal records that are not public events
        self.journal_path = journal.path
        self.cursors, self.outlets = cursors, outlets
        self.drain_timeout_s, self.retry_max_s = drain_timeout_s, retry_max_s
        # where it stands is what the chain says (the latest snapshot's record): the working
        # copy in the cursors table may be ahead of it, or edited; resending is harmless
        start = journal.chained_cursors().get(CURSOR)
        if start is None:
            # the feed's first start on this journal (or one written before positions were
            # chained): what came before is not owed, and the position is in the chain before
            # anything after it is dealt (a crash then owes all)
            legacy = journal.cursor(CURSOR)
            start = journal.last_seq if legacy is None else min(legacy, journal.last_seq)
            journal.record_cursors({CURSOR: start})
        self.acked = start
        self.newest = journal.last_seq           # the newest seq journaled (set by the loop)
        self.cursors[CURSOR] = start
        self.topics = {leaf: broker.topic(table, leaf)
                       for leaf in ("events", "records", "state", "status")}
        self.client_id = f"tablectl-{broker.prefix}-{table}"[:64]
        self._wake = Wake()
        self._acks: collections.deque[int] = collections.deque()   # mids the broker acked
        self._connack: Any = None
        self._refusal: Failure | None = None     # a message the broker would not take
        self._connected = False
        self._lost = False
        self._state: dict | None = None          # the newest view (replaced, never mutated)
        self._state_sent: tuple = (None, 0, False)     # (view, behind, late) last sent
        self._state_at = 0.0
        self._closing = False
        self._finished = False                   # everything owed delivered, offline sent
        self._deadline = float("inf")
        self._failure: Failure | None = None
        self._failed_at = 0.0
        self._reminded_at = 0.0
        self.behind = 0
        self.late = False                        # the lag is older than LATE_AFTER_S
        self._behind_at = 0.0
        # when each record was journaled (the loop's monotonic clock): the lag's age is the
        # oldest one not yet acknowledged; what the journal held unsent at start counts from now
        self._noted: collections.deque[tuple[int, float]] = collections.deque(maxlen=100_000)
        if self.newest > self.acked:
            self._noted.append((self.newest, time.monotonic()))
        self._thread: threading.Thread | None = None
        self._reader: Journal | None = None
        self._report()

    # ------------------------------------------------------------------ the loop's side
    def publish(self, event: dict) -> None:
        """A publisher on the loop's thread: note the newest seq and wake the feed."""
        seq = event.get("seq")
        if seq:
            if seq > self.newest:
                self._noted.append((seq, time.monotonic()))
            self.newest = max(self.newest, seq)
            self._wake.set()

    def read_upto(self, seq: int) -> None:
        """Records up to `seq` were journaled, published or not (the journal's own records at
        a stop): the feed reads past them, so its position says all is delivered."""
        self.publish({"seq": seq})

    def on_state(self, view: dict) -> None:
        """The table's view changed (loop's thread): the feed sends the newest."""
        self._state = view
        self._wake.set()

    def _announce(self, client: Any) -> None:
        """The retained online message, with the software the table runs."""
        from controller import __version__
        software = {"software_sha256": self.software} if self.software else {}
        client.publish(self.topics["status"], _json(
            {"table": self.table, "pit": self.pit, "status": "online", "version": __version__,
             **software,
             "utc": utc_now()}), qos=1, retain=True)

    # ------------------------------------------------------------------ lifetime
    def start(self) -> "FloorFeed":
        self._thread = threading.Thread(target=self._run, name=f"feed-{self.table}",
                                        daemon=True)
        self._thread.start()
        return self

    def delivered(self, seq: int, timeout: float) -> bool:
        """Wait (the loop stopped) until the broker has acknowledged every record up to `seq`:
        True; False once `timeout` seconds passed, or at once for a broker that refuses the
        table (credentials, certificate, topics)."""
        deadline = time.monotonic() + timeout
        self._wake.set()
        while self.acked < seq:
            failure = self._failure
            if self._thread is None or (failure is not None and failure.lasting) \
                    or time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def close(self, drain_s: float | None = None) -> None:
        """Deliver what is owed (waiting at most `drain_s`, by default drain_timeout_s, for the
        broker), publish `offline`, and leave the acknowledged seq for the journal's last
        write."""
        if self._thread is None:
            return
        self._deadline = time.monotonic() + (self.drain_timeout_s if drain_s is None
                                             else max(0.0, drain_s))
        self._closing = True
        self._wake.set()
        self._thread.join(max(0.0, self._deadline - time.monotonic()) + 5.0)
        if not self._thread.is_alive():      # else its pipe stays open for it (a daemon)
            self._wake.close()
        self._thread = None
        self.cursors[CURSOR] = self.acked
        owed = self._count_behind()
        if owed:
            log.warning("feed stopped with events not delivered; they go out at the next start",
                        broker=self.broker.where, behind=owed, acknowledged_seq=self.acked)
        if self._reader is not None:
            self._reader.close()

    # ------------------------------------------------------------------ the feed's thread
    def _run(self) -> None:
        delay = 0.5
        while not self._done():
            try:
                self._reader = self._reader or Journal.open_readonly(self.journal_path)
                if self._session():
                    delay = 0.5
            except JournalError as err:     # the table's own journal: it stops the table itself
                self._fail(Failure(f"the journal cannot be read: {err}"))
            if self._done():
                return
            self._wait(delay if not self._closing else 0.2)
            delay = min(delay * 2, self.retry_max_s)

    def _done(self) -> bool:
        """Closing, and nothing more to wait for: all delivered, the drain's time up, or a
        broker that refuses the table (credentials, certificate, topics) until someone acts."""
        return self._closing and (self._finished or time.monotonic() >= self._deadline
                                  or (self._failure is not None and self._failure.lasting))

    def _wait(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self._done() and time.monotonic() < end:
            if self._closing:
                end = min(end, time.monotonic() + 0.2)     # a stop: the back-off is cut short
            self._wake.wait(min(0.5, end - time.monotonic()))
            self._count_behind_now()

    def _session(self) -> bool:
        """One connection: publish from the journal until it ends. True if the broker took
        anything (then the next attempt comes soon again; else the delay keeps growing)."""
        b = self.broker
        client = new_client(b, self.client_id)
        client.will_set(self.topics["status"], _json({"table": self.table,
                                                      "pit": self.pit, "status": "offline",
                                                      "clean": False}), qos=1, retain=True)
        client.max_inflight_messages_set(WINDOW)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        self._connack, self._lost, self._refusal = None, False, None
        self._acks.clear()
        try:
            client.connect(b.host, b.port, keepalive=b.keepalive_s, clean_start=True)
        except Exception as err:       # OSError, ssl.SSLError, paho's own: one line each
            self._fail(connect_error(b, err))
            return False
        try:
            end = time.monotonic() + 10.0
            while self._connack is None and not self._lost and time.monotonic() < end:
                self._pump(client, 0.2)
            code = self._connack
            if code is None or code.is_failure:
                self._fail(refused(b, code) if code is not None else Failure(
                    f"{b.where} did not answer as an MQTT broker (no CONNACK"
                    f"{'; a TLS listener needs mqtts://' if not b.tls else ''})"))
                return False
            self._connected = True
            self._report()
            return self._stream(client)
        finally:
            self._connected = False
            client.disconnect()
            if client.want_write():         # the DISCONNECT itself, so no last will is sent
                self._pump(client, 0.0)

    def _pump(self, client: Any, timeout: float) -> None:
        """The connection's traffic, on this thread (no network thread of the client's own:
        one thread a feed, and the table's thread never contends with two): wait for the
        broker, a wake from the loop, or `timeout`; then read, write and keep alive."""
        sock = client.socket()
        if sock is None:
            self._lost = True
            return
        pending = getattr(sock, "pending", None)      # TLS: bytes already decrypted
        if pending is not None and pending():
            timeout = 0.0
        try:
            readable, writable, _ = select.select(
                [sock, self._wake.fd], [sock] if client.want_write() else [], [], timeout)
        except (OSError, ValueError):
            self._lost = True
            return
        if self._wake.fd in readable:
            self._wake.drain()
        if sock in readable or (pending is not None and pending()):
            if client.loop_read() != 0:
                self._lost = True
                return
        if sock in writable and client.loop_write() != 0:
            self._lost = True
            return
        if client.loop_misc() != 0:
            self._lost = True

    def _stream(self, client: Any) -> bool:
        """Publish after the acknowledged seq, in order, WINDOW at most in flight. True if the
        broker acknowledged anything: the link is up only then (a broker that accepts the
        connection but refuses the table's topics is still a failure, said once)."""
        self._announce(client)
        # [seq, messages of it not yet acknowledged], in journal order
        pending: collections.deque[list] = collections.deque()
        in_flight: dict[int, list] = {}
        pos = self.acked
        assert self._reader is not None
        records = PublicRecords(self._reader, pos)       # result at reveal, from pos on
        self._state_sent = (None, 0, False)
        up = False
        while True:
            if self._lost:
                b = self.broker
                self._fail(self._refusal or (
                    Failure(f"the connection to {b.where} was lost") if up else
                    # Mosquitto closes, without saying why, on a message it may not take
                    Failure(f"the broker at {b.where} closed the connection before taking "
                            f"anything; does it let {b.username or 'an anonymous client'} "
                            f"publish to {b.prefix}/{self.table}/#? (its log says why)",
                            lasting=True)))
                return up
            if self._acks and not up:
                up = True
                self._up()
            while self._acks:                              # acknowledged by the broker
                entry = in_flight.pop(self._acks.popleft(), None)
                if entry is not None:
                    entry[1] -= 1
            while pending and pending[0][1] == 0:
                self.acked = pending.popleft()[0]
            if not pending:
                self.acked = max(self.acked, pos)
            self.cursors[CURSOR] = self.acked
            if pos < self.newest and len(in_flight) < WINDOW:
                pos = self._send(client, pos, pending, in_flight, records)
            self._count_behind_now()
            late = self.lag_s() >= LATE_AFTER_S
            if late != self.late:
                self.late = late
                self._report()
            self._send_state(client)
            if self._closing:
                if self.acked >= self.newest and not in_flight and \
                        self._state_sent[:2] == (self._state, self.behind):
                    self._goodbye(client)
                    return up
                if time.monotonic() >= self._deadline:
                    return up
            self._pump(client, STATE_EVERY_S if self._state_sent[0] is not self._state else 0.5)

    def _send(self, client: Any, pos: int, pending: collections.deque,
              in_flight: dict[int, list], records: PublicRecords) -> int:
        assert self._reader is not None
        room = WINDOW - len(in_flight)
        # each record as stored and hashed (the floor store checks the chain); the events in
        # it (a card read's input holds its card event: schema 5) each on the events topic
        for r in self._reader.records(after_seq=pos, stored=True):
            pos = r.seq
            entry = [r.seq, 0]
            pending.append(entry)
            messages = [(self.topics["records"], {
                "table": self.table, "pit": self.pit, "seq": r.seq,
                "utc": r.utc, "mono": r.mono, "kind": r.kind, "data": r.data, "hash": r.hash})]
            for e in unfold(r):
                if e.kind not in self.private_kinds:
                    messages.append((self.topics["events"], {
                        **records.public(e.seq, e.data), "seq": e.seq, "table": self.table,
                        "utc": e.utc}))
            for topic, body in messages:
                info = client.publish(topic, _json(body), qos=1)
                entry[1] += 1
                in_flight[info.mid] = entry
                room -= 1
            if room <= 0 or pos >= self.newest:
                break
        return pos

    def lag_s(self) -> float:
        """How long ago the oldest record the broker has not acknowledged was journaled (0 when
        nothing is owed)."""
        noted = self._noted
        while noted and noted[0][0] <= self.acked:
            noted.popleft()
        if self.acked >= self.newest or not noted:
            return 0.0
        return max(0.0, time.monotonic() - noted[0][1])

    def _send_state(self, client: Any) -> None:
        """The newest view with the feed's lag (events owed, and for how long), retained; at
        most every STATE_EVERY_S, and again when the lag turns late or back."""
        view, now = self._state, time.monotonic()
        lag = self.lag_s()
        sent = (view, self.behind, lag >= LATE_AFTER_S)
        if view is None or self._state_sent[0] is view and self._state_sent[1:] == sent[1:]:
            return
        if now - self._state_at < STATE_EVERY_S and not self._closing:
            return
        self._state_sent, self._state_at = sent, now
        client.publish(self.topics["state"], _json(
            {**view, "feed_behind": self.behind, "feed_lag_s": round(lag, 1),
             "utc": utc_now()}), qos=1, retain=True)

    def _goodbye(self, client: Any) -> None:
        info = client.publish(self.topics["status"], _json(
            {"table": self.table, "pit": self.pit, "status": "offline",
             "clean": True, "utc": utc_now()}), qos=1, retain=True)
        end = min(self._deadline, time.monotonic() + 2.0)
        while not info.is_published() and not self._lost and time.monotonic() < end:
            self._pump(client, 0.1)
        self._finished = True

    # ------------------------------------------------------------------ the client's callbacks
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                    properties: Any) -> None:
        self._connack = reason_code

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                       properties: Any) -> None:
        if getattr(reason_code, "value", None) in _REFUSALS and self._refusal is None:
            # the broker said why it closed the connection (MQTT 5 DISCONNECT)
            self._refusal = Failure(
                f"the broker at {self.broker.where} closed the connection ({reason_code})"
                + ("; check its access rules for "
                   f"{self.broker.prefix}/{self.table}/#" if reason_code.value == 0x87 else ""),
                lasting=reason_code.value == 0x87)
        self._lost = True

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason_code: Any,
                    properties: Any) -> None:
        if getattr(reason_code, "is_failure", False):
            # the broker will not take it (not authorised for the topic): it is not delivered,
            # so the feed stops here and starts again from the journal later
            self._refusal = Failure(f"the broker at {self.broker.where} refused the table's "
                                    f"messages ({reason_code}); check its access rules for "
                                    f"{self.broker.prefix}/{self.table}/#", lasting=True)
            self._lost = True
        else:
            self._acks.append(mid)

    # ------------------------------------------------------------------ health
    def _fail(self, failure: Failure) -> None:
        now = time.monotonic()
        # one line when the link fails (and when a passing failure turns into a lasting one)
        if self._failure is None or self._failure.lasting != failure.lasting:
            log.warning(f"feed: {failure.text}; the table deals on and the events wait in the "
                        f"journal", broker=self.broker.where, table=self.table)
            self._failed_at = self._reminded_at = now
        elif now - self._reminded_at >= STILL_BEHIND_S:
            self._reminded_at = now
            log.warning(f"feed still behind by {self._count_behind()}: {failure.text}",
                        broker=self.broker.where, table=self.table)
        self._failure = failure
        self._report()

    def _up(self) -> None:
        if self._failure is not None:
            log.warning("feed: the broker is back; sending what is owed",
                        broker=self.broker.where, table=self.table,
                        behind=self._count_behind(), down_s=round(time.monotonic()
                                                                 - self._failed_at, 1))
        else:
            log.info("feed connected", broker=self.broker.where, table=self.table)
        self._failure = None
        self._report()

    def _count_behind_now(self) -> None:
        now = time.monotonic()
        if self.acked >= self.newest:
            changed = self.behind != 0
            self.behind = 0
        elif now - self._behind_at >= BEHIND_EVERY_S:
            self._behind_at = now
            before = self.behind
            self.behind = self._count_behind()
            changed = before != self.behind
        else:
            return
        if changed:
            self._report()

    def _count_behind(self) -> int:
        """Public events journaled after the acknowledged seq."""
        if self.acked >= self.newest or self._reader is None:
            return 0 if self.acked >= self.newest else self.newest - self.acked
        try:
            return self._reader.count(after_seq=self.acked, exclude_kinds=self.private_kinds)
        except JournalError:
            return self.newest - self.acked

    def _report(self) -> None:
        """What the state view and the console show (a new dict each time)."""
        self.outlets["feed"] = {
            "broker": self.broker.where, "connected": self._connected,
            "behind": self.behind, "late": self.late, "acknowledged_seq": self.acked,
            "problem": self._failure.text if self._failure else None}


class Wake:
    """A pipe the table's thread writes one byte into (at most one until the feed has looked),
    so the feed's select() wakes at once; costs the table a flag test, at times a write."""

    def __init__(self) -> None:
        self.fd, self._w = os.pipe()
        os.set_blocking(self.fd, False)
        os.set_blocking(self._w, False)
        self._armed = False

    def set(self) -> None:
        if not self._armed:
            self._armed = True
            try:
                os.write(self._w, b"\0")
            except OSError:             # full (the feed will look anyway) or closed
                pass

    def drain(self) -> None:
        self._armed = False
        try:
            while os.read(self.fd, 4096):
                pass
        except OSError:
            pass

    def wait(self, timeout: float) -> None:
        try:
            select.select([self.fd], [], [], max(0.0, timeout))
        except (OSError, ValueError):
            return
        self.drain()

    def close(self) -> None:
        for fd in (self.fd, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
