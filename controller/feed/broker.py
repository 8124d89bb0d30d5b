"""The MQTT broker as the feed and the floor view reach it: URL, credentials and TLS checked once
at start (one line on a mistake), an MQTT 5 client (paho-mqtt) made for each connection, and
every way a connection fails said in one plain line.
"""
from __future__ import annotations

import os
import ssl
import urllib.parse
from dataclasses import dataclass
from typing import Any

from controller.errors import InputError

SCHEMES = {"mqtt": (1883, False), "mqtts": (8883, True)}


@dataclass(frozen=True)
class Broker:
    url: str
    host: str
    port: int
    tls: bool
    prefix: str = "tables"
    username: str = ""
    password: str = ""
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    keepalive_s: int = 15

    @property
    def where(self) -> str:
        """The URL without anything secret, for messages."""
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"

    def topic(self, table: str, leaf: str) -> str:
        return f"{self.prefix}/{table}/{leaf}"


def broker_from(cfg: Any, *, url: str | None = None) -> Broker:
    """The broker of a `[feed]` config section (`url` over its url); InputError, one line."""
    url = url if url is not None else cfg.url
    where = "feed"
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise InputError(f"{where} url {url!r}: write mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    if parts.path not in ("", "/") or parts.query or parts.password:
        raise InputError(f"{where} url {url!r}: only the scheme, host and port belong in it; "
                         f"give the user name and password file in [feed]")
    default_port, tls = SCHEMES[parts.scheme]
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:       # 0 (or out of range) is no port, not the default one
        raise InputError(f"{where} url {url!r}: the port is not a number from 1 to 65535")
    port = port or default_port
    prefix = cfg.topic_prefix.strip("/")
    if not prefix or any(c in prefix for c in "+#\0"):
        raise InputError(f"feed topic_prefix {cfg.topic_prefix!r}: give a topic level such as "
                         f"tables (no + or #)")
    username = parts.username or cfg.username
    password = ""
    if cfg.password_file:
        if not username:
            raise InputError("feed password_file: give the username it belongs to ([feed] "
                             "username)")
        try:
            with open(cfg.password_file, encoding="utf-8") as f:
                password = f.readline().rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(f"feed password_file {cfg.password_file}: cannot be read "
                             f"({err.strerror if isinstance(err, OSError) else err})") from None
    for key in ("ca_file", "cert_file", "key_file"):
        path = getattr(cfg, key)
        if path and not tls:
            raise InputError(f"feed {key}: TLS files go with an mqtts:// url, not {url}")
        if path and not os.path.isfile(path):
            raise InputError(f"feed {key} {path}: no such file")
    if bool(cfg.cert_file) != bool(cfg.key_file):
        raise InputError("feed cert_file and key_file: give both (the client certificate and "
                         "its key) or neither")
    if cfg.keepalive_s < 1:
        raise InputError(f"feed keepalive_s {cfg.keepalive_s}: give 1 or more")
    return Broker(url, parts.hostname, port, tls, prefix, username, password, cfg.ca_file,
                  cfg.cert_file, cfg.key_file, int(cfg.keepalive_s))


def new_client(broker: Broker, client_id: str, *, reconnect: bool = False,
               manual_ack: bool = False) -> Any:
    """An MQTT 5 client with credentials and TLS set. Without `reconnect` it serves one
    connection: the caller decides when to try again, and starts over from what it knows.
    With `manual_ack` a QoS 1 message is acknowledged only when the caller says so."""
    import paho.mqtt.client as mqtt
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                         protocol=mqtt.MQTTv5, reconnect_on_failure=reconnect,
                         manual_ack=manual_ack)
    client.connect_timeout = 5.0
    if broker.username:
        client.username_pw_set(broker.username, broker.password or None)
    if broker.tls:
        client.tls_set(ca_certs=broker.ca_file or None, certfile=broker.cert_file or None,
                       keyfile=broker.key_file or None, cert_reqs=ssl.CERT_REQUIRED,
                       tls_version=ssl.PROTOCOL_TLS_CLIENT)
    return client


@dataclass(frozen=True)
class Failure:
    """Why a connection failed, in one line; `lasting` when trying again soon will not cure it
    (credentials, certificates), so a stop does not wait for it."""
    text: str
    lasting: bool = False


def connect_error(broker: Broker, err: BaseException) -> Failure:
    """Why opening the connection failed."""
    if isinstance(err, ssl.SSLCertVerificationError):
        return Failure(f"TLS: the broker's certificate at {broker.where} is not trusted "
                       f"({err.verify_message}); check [feed] ca_file", lasting=True)
    if isinstance(err, ssl.SSLError):
        return Failure(f"TLS handshake with {broker.where} failed ({err.reason or err}); check "
                       f"the broker's TLS listener and [feed] ca_file, cert_file, key_file",
                       lasting=True)
    if isinstance(err, ConnectionRefusedError):
        return Failure(f"nothing listens at {broker.where} (connection refused)")
    if isinstance(err, (TimeoutError, OSError)) and "timed out" in str(err):
        return Failure(f"no answer from {broker.where} (timed out)")
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    return Failure(f"cannot reach {broker.where} ({text})")


#: CONNACK reasons about who the client is (MQTT 5 codes, and 3.1.1's 4 and 5)
_CREDENTIALS = {0x86, 0x87, 0x8C, 4, 5}


def refused(broker: Broker, reason_code: Any) -> Failure:
    """Why the broker refused the connection (its CONNACK reason)."""
    if getattr(reason_code, "value", None) in _CREDENTIALS:
        who = f"user {broker.username!r}" if broker.username else "an anonymous client"
        return Failure(f"the broker at {broker.where} refused {who}: {reason_code}; check "
                       f"[feed] username and password_file", lasting=True)
    return Failure(f"the broker at {broker.where} refused the connection: {reason_code}")
