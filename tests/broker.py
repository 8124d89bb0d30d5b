"""A real Mosquitto for the feed's tests: started on a free loopback port in the test's own
folder (persistence, password file, TLS certificates made here), stopped, killed and started
again on the same port; and a plain MQTT 5 subscriber (paho) with a persistent session.

Mosquitto is Debian's `mosquitto` package (.ci/run installs it when it is missing); without it
the tests that need a broker are skipped, saying so.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

MOSQUITTO = shutil.which("mosquitto") or next(
    (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if os.path.exists(p)), None)


def need_mosquitto() -> str:
    if MOSQUITTO is None:
        pytest.skip("Mosquitto is not installed: `apt-get install mosquitto` (.ci/run does it)")
    return MOSQUITTO


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out for a port 0 or an outgoing connection."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A loopback TCP port nobody listens on, for a server the test starts on it next. Below
    the kernel's ephemeral range: a port 0 (the rig's own listeners) or another process's
    connection, meanwhile, is never given it (a port 0 freed just now could be, and the
    table's display then found its port taken)."""
    low = _ephemeral_low()
    pick = random.SystemRandom()
    for _ in range(200):
        port = pick.randrange(10000, low) if low > 10001 else 0
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise RuntimeError("no free loopback port below the ephemeral range")


def make_certificates(where: Path, name: str = "ca") -> dict[str, Path]:
    """A CA and a server certificate for 127.0.0.1 signed by it (openssl, EC keys: fast)."""
    where.mkdir(parents=True, exist_ok=True)
    ca_key, ca_crt = where / f"{name}.key", where / f"{name}.crt"
    key, csr, crt = where / "server.key", where / "server.csr", where / "server.crt"
    ext = where / "san.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for cmd in (["req", "-x509", *ec, "-keyout", ca_key, "-out", ca_crt, "-days", "2",
                 "-subj", f"/CN=tablectl test {name}"],
                ["req", *ec, "-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"],
                ["x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
                 "-out", crt, "-days", "2", "-extfile", ext]):
        subprocess.run(["openssl", *map(str, cmd)], check=True, capture_output=True)
    return {"ca": ca_crt, "cert": crt, "key": key}


class Mosquitto:
    """One broker in `where`; `users` (name → password) turns anonymous access off."""

    def __init__(self, where: Path, *, users: dict[str, str] | None = None,
                 tls: dict[str, Path] | None = None, acl: str | None = None):
        self.exe = need_mosquitto()
        self.where = where
        where.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.tls = tls
        self.proc: subprocess.Popen | None = None
        lines = [f"listener {self.port} 127.0.0.1",
                 f"allow_anonymous {'false' if users else 'true'}",
                 "persistence true", f"persistence_location {where}/",
                 # saved every second, so a killed broker keeps the subscribers' sessions
                 "autosave_interval 1", "max_queued_messages 0", "max_inflight_messages 0",
                 f"log_dest file {where}/mosquitto.log", "log_type error", "log_type warning"]
        if os.geteuid() == 0:
            lines.append("user root")       # else it drops to `mosquitto`, who cannot read here
        if users:
            pw = where / "passwords"
            pw.write_text("")
            for name, secret in users.items():
                subprocess.run(["mosquitto_passwd", "-b", str(pw), name, secret], check=True,
                               capture_output=True)
            lines.append(f"password_file {pw}")
        if acl:
            (where / "acl").write_text(acl)
            lines.append(f"acl_file {where / 'acl'}")
        if tls:
            lines += [f"cafile {tls['ca']}", f"certfile {tls['cert']}", f"keyfile {tls['key']}"]
        self.conf = where / "mosquitto.conf"
        self.conf.write_text("\n".join(lines) + "\n")

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://127.0.0.1:{self.port}"

    def start(self) -> "Mosquitto":
        self.proc = subprocess.Popen([self.exe, "-c", str(self.conf)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                    log = (self.where / "mosquitto.log")
                    raise RuntimeError(f"mosquitto did not start on {self.port}: {err} "
                                       f"{log.read_text() if log.exists() else ''}")
                time.sleep(0.02)

    def wait_saved(self, since: float, timeout: float = 5.0) -> None:
        """Until the broker has saved its state (sessions, subscriptions) after `since`
        (time.time()), so that a kill keeps what was there then."""
        db = self.where / "mosquitto.db"
        deadline = time.monotonic() + timeout
        while not (db.exists() and db.stat().st_mtime > since):
            assert time.monotonic() < deadline, "mosquitto did not save its state"
            time.sleep(0.05)

    def stop(self, kill: bool = False) -> None:
        """SIGTERM (saves its state) or, with kill, SIGKILL (as a crash)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            self.proc.wait(10)
        self.proc = None


class Subscriber:
    """Collects every message on `topics` as (topic, JSON payload, retained), in arrival order;
    with `session`, a persistent MQTT 5 session that outlives the connection and the broker's
    restart (the broker keeps what arrives while it is away)."""

    def __init__(self, broker: Mosquitto, topics: list[str], *, session: str | None = None):
        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties
        self.messages: list[tuple[str, Any, bool]] = []
        self.cond = threading.Condition()
        self.subscribed = threading.Event()
        self.topics = topics
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2,
                                  client_id=session or "", protocol=mqtt.MQTTv5)
        self.client.on_connect = self._connected
        self.client.on_message = self._message
        self.client.on_subscribe = lambda *a: self.subscribed.set()
        self.client.reconnect_delay_set(0.05, 0.2)
        props = None
        if session:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 3600
        self.client.connect("127.0.0.1", broker.port, keepalive=5,
                            clean_start=not session, properties=props)
        self.client.loop_start()
        assert self.subscribed.wait(10), "the subscriber could not subscribe"
        self.since = time.time()

    def _connected(self, client, userdata, flags, reason_code, properties):
        if not flags.session_present:
            client.subscribe([(t, 1) for t in self.topics])
        else:
            self.subscribed.set()

    def _message(self, client, userdata, msg):
        with self.cond:
            self.messages.append((msg.topic, json.loads(msg.payload), bool(msg.retain)))
            self.cond.notify_all()

    def wait_for(self, done: Callable[[list], bool], timeout: float = 20.0,
                 why: Callable[[list], str] | None = None) -> list:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not done(self.messages):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out with {len(self.messages)} message(s): "
                                         f"{why(self.messages) if why else self.messages[-3:]}")
                self.cond.wait(left)
            return list(self.messages)

    def quiet(self, seconds: float, timeout: float = 20.0) -> None:
        """Until nothing has arrived for `seconds`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            n = len(self.messages)
            time.sleep(seconds)
            if len(self.messages) == n:
                return
        raise AssertionError("messages kept arriving")

    def payloads(self, leaf: str) -> list[Any]:
        with self.cond:
            return [p for t, p, _ in self.messages if t.endswith("/" + leaf)]

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def delivered_all(journal: Any) -> bool:
    """What a clean stop with the broker up leaves: every record acknowledged, the last one
    the feed's own position (put into the chain once the rest was delivered: the one record
    the next start sends again), and the working copy of the position at the journal's end."""
    from controller.feed.outbox import CURSOR
    last = journal.last_seq
    kinds = [r.kind for r in journal.records(after_seq=last - 1)]
    return journal.cursor(CURSOR) == last and kinds == ["cursors"] \
        and journal.chained_cursors().get(CURSOR) == last - 1
