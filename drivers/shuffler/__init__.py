"""Automatic shufflers, chosen by name in config ([shuffler] protocol); tablectl's own `framed`
protocol (protocol.py) and its driver (driver.py):

    open_shuffler("usb://7a5c:5348")                 a USB shuffler (bulk endpoints, pyusb)
    open_shuffler("usb://7a5c:5348?sim=shuffler")    the simulated one registered as "shuffler"
    open_shuffler("/dev/ttyUSB1"), ("socket://host:port"), …   the same framing over serial

Shufflers are plugins (drivers.registry): each name in the entry-point group
`tablectl.shufflers` is a function `open(url, **options)` returning a `ShufflerDriver`
(the protocol in drivers.interfaces); the built-in `framed` registers there too and opens a
`FramedShuffler`.
"""
from __future__ import annotations

from drivers.errors import DriverUnavailable
from drivers.interfaces import ShufflerDriver
from drivers.registry import SHUFFLERS, DriverRegistry
from drivers.shuffler.driver import (FramedShuffler, Link, SerialLink, ShuffleCountError,
                                     ShufflerFault, ShufflerRefused)

__all__ = ["open_shuffler", "FramedShuffler", "ShufflerDriver", "ShufflerRefused",
           "ShufflerFault", "ShuffleCountError", "SHUFFLER_PROTOCOLS"]

#: name → open(url, **options) of every installed shuffler driver
SHUFFLER_PROTOCOLS = DriverRegistry(SHUFFLERS, "shuffler protocol")


def open_shuffler(url: str, *, protocol: str = "framed", response_timeout_s: float = 1.0,
                  poll_interval_s: float = 0.1, retries: int = 2,
                  baudrate: int = 115200) -> ShufflerDriver:
    """Open the shuffler named by `url`, speaking `protocol` (ValueError when none is)."""
    if protocol not in SHUFFLER_PROTOCOLS:
        raise ValueError(SHUFFLER_PROTOCOLS.unknown(protocol))
    opener = SHUFFLER_PROTOCOLS[protocol]
    driver = opener(url, response_timeout_s=response_timeout_s, poll_interval_s=poll_interval_s,
                    retries=retries, baudrate=baudrate)
    if not isinstance(driver, ShufflerDriver):
        close = getattr(driver, "close", None)
        if callable(close):
            close()
        raise DriverUnavailable(
            f"shuffler protocol {protocol!r} ({SHUFFLER_PROTOCOLS.origin(protocol)}) opened a "
            f"{type(driver).__name__}, which lacks ShufflerDriver's methods (docs/drivers.md)")
    return driver


def open_framed_shuffler(url: str, *, response_timeout_s: float = 1.0,
                         poll_interval_s: float = 0.1, retries: int = 2,
                         baudrate: int = 115200) -> ShufflerDriver:
    """tablectl's own shuffler protocol: usb:// through pyusb, anything else as serial."""
    link: Link
    if url.startswith("usb:"):
        from drivers.usb_transport import open_usb
        link = open_usb(url, write_timeout_s=response_timeout_s)
    else:
        from drivers.transport import open_serial
        link = SerialLink(open_serial(url, baudrate=baudrate,
                                      timeout=min(SerialLink.POLL_S, response_timeout_s)))
    return FramedShuffler(link, url=url, response_timeout_s=response_timeout_s,
                          poll_interval_s=poll_interval_s, retries=retries)
