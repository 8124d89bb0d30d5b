"""Watching the floor: an MQTT 5 subscriber to every table's retained `state` and `status`.
Retained messages give the floor as it is at once; live ones follow. After a lost connection
the client reconnects by itself and subscribes again (the retained messages come again)."""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from controller.errors import InputError
from controller.feed.broker import Broker, Failure, connect_error, new_client, refused
from controller.floor.model import Floor


class FloorWatch:
    def __init__(self, broker: Broker, floor: Floor,
                 on_change: Callable[[str], None] | None = None):
        import os
        self.broker, self.floor, self.on_change = broker, floor, on_change
        self.client = new_client(broker, f"tablectl-floor-{os.getpid()}", reconnect=True)
        self.client.reconnect_delay_set(0.5, 10)
        self.client.on_connect = self._connected
        self.client.on_disconnect = self._disconnected
        self.client.on_message = self._message
        self.client.on_subscribe = self._subscribed
        self._answer: Any = None
        self._answered = threading.Event()
        self.subscribed = threading.Event()
        self.connected = False
        self.last_message = time.monotonic()

    def start(self, timeout_s: float = 10.0) -> "FloorWatch":
        """Connect and subscribe; a broker that cannot be reached or refuses is one line."""
        b = self.broker
        try:
            self.client.connect(b.host, b.port, keepalive=b.keepalive_s, clean_start=True)
        except Exception as err:
            raise InputError(f"--feed: {connect_error(b, err).text}") from None
        self.client.loop_start()
        self._answered.wait(timeout_s)
        code = self._answer
        if code is None or code.is_failure:
            self.close()
            failure = refused(b, code) if code is not None else \
                Failure(f"no answer from {b.where} (CONNACK)")
            raise InputError(f"--feed: {failure.text}")
        return self

    def settle(self, quiet_s: float = 0.3, max_s: float = 3.0) -> None:
        """Until subscribed and the retained messages have come (quiet for quiet_s)."""
        end = time.monotonic() + max_s
        self.subscribed.wait(max_s)
        while time.monotonic() < end and time.monotonic() - self.last_message < quiet_s:
            time.sleep(0.05)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    # ------------------------------------------------------------------ paho's thread
    def _connected(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                   properties: Any) -> None:
        self._answer = reason_code
        self._answered.set()
        if not reason_code.is_failure:
            self.connected = True
            self.last_message = time.monotonic()
            p = self.broker.prefix
            client.subscribe([(f"{p}/+/state", 1), (f"{p}/+/status", 1)])

    def _disconnected(self, client: Any, userdata: Any, flags: Any, reason_code: Any,
                      properties: Any) -> None:
        self.connected = False
        self._answered.set()

    def _subscribed(self, *args: Any) -> None:
        self.last_message = time.monotonic()
        self.subscribed.set()

    def _message(self, client: Any, userdata: Any, msg: Any) -> None:
        self.last_message = time.monotonic()
        table = self.floor.message(msg.topic, msg.payload)
        if table is not None and self.on_change is not None:
            self.on_change(table)
