"""Card-recognition shoe drivers, one module per wire protocol, chosen by name in config.

The protocols are plugins (drivers.registry): tablectl's own (beetek, barcode, framed) and any
other installed distribution's register in the entry-point group `tablectl.shoe_protocols`,
each a subclass of `ShoeDriverBase` (the shared read loop); what the table holds is the
`ShoeDriver` protocol (drivers.interfaces).
"""
from __future__ import annotations

import time
from typing import Callable

from drivers.errors import BadURL
from drivers.registry import SHOE_PROTOCOLS, DriverRegistry
from drivers.interfaces import ShoeDriver
from drivers.shoe.base import ShoeDriverBase

#: The one list of shoe protocols: name → driver class (config, command lines and simulators
#: use it); a driver's module is imported when it is first used.
PROTOCOLS = DriverRegistry(SHOE_PROTOCOLS, "shoe protocol")

__all__ = ["PROTOCOLS", "ShoeDriver", "ShoeDriverBase", "open_shoe", "shoe_driver"]


def shoe_driver(protocol: str) -> type[ShoeDriverBase]:
    """The driver class of `protocol`; ValueError naming the known ones when there is none."""
    if protocol not in PROTOCOLS:
        raise ValueError(PROTOCOLS.unknown(protocol))
    cls = PROTOCOLS[protocol]
    if not (isinstance(cls, type) and issubclass(cls, ShoeDriverBase)):
        raise ValueError(f"shoe protocol {protocol!r} ({PROTOCOLS.origin(protocol)}) is not a "
                         f"ShoeDriverBase subclass")
    return cls


def open_shoe(url: str, protocol: str = "beetek", *, read_timeout_s: float = 0.05,
              dead_after_timeouts: int = 0, baudrate: int = 9600,
              reconnect_initial_s: float = 0.05, reconnect_max_s: float = 2.0,
              clock: Callable[[], float] = time.monotonic,
              sleep: Callable[[float], None] | None = None,
              stamp: Callable[[], float] | None = None) -> ShoeDriver:
    """Open the shoe at `url` speaking `protocol`.

    `reconnect_initial_s` and `reconnect_max_s` bound the backoff between reconnections;
    `clock`, `sleep` and `stamp` give the driver another time than the wall's (a simulated
    table's). Raises a DeviceError
    (NotFound, DevicePermissionError, Busy, BadURL, DriverUnavailable) when the port cannot be
    opened or the driver loaded, and ValueError for an unknown protocol.
    """
    cls = shoe_driver(protocol)
    if url.lower().startswith("usb://"):
        raise BadURL(f"{url}: a shoe is a serial device; give its serial port "
                     "(e.g. /dev/serial/by-id/…) instead of usb://")
    return cls(url, read_timeout_s=read_timeout_s, dead_after_timeouts=dead_after_timeouts,
               baudrate=baudrate, reconnect_initial_s=reconnect_initial_s,
               reconnect_max_s=reconnect_max_s, clock=clock, sleep=sleep, stamp=stamp)
