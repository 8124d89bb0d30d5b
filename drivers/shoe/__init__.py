"""Card-recognition shoe drivers, one module per wire protocol, chosen by name in config."""
from __future__ import annotations

from drivers.errors import BadURL
from drivers.shoe.barcode import BarcodeDriver
from drivers.shoe.base import ShoeDriver
from drivers.shoe.beetek import BeetekDriver
from drivers.shoe.framed import FramedDriver

#: The one list of shoe protocols: name → driver (config, command lines and simulators use it).
PROTOCOLS: dict[str, type[ShoeDriver]] = {
    "beetek": BeetekDriver,
    "barcode": BarcodeDriver,
    "framed": FramedDriver,
}

__all__ = ["PROTOCOLS", "ShoeDriver", "open_shoe"]


def open_shoe(url: str, protocol: str = "beetek", *, read_timeout_s: float = 0.05,
              dead_after_timeouts: int = 0, baudrate: int = 9600, **options: float) -> ShoeDriver:
    """Open the shoe at `url` speaking `protocol`.

    `options` tune reconnection (`reconnect_initial_s`, `reconnect_max_s`). Raises a DeviceError
    (NotFound, DevicePermissionError, Busy, BadURL) when the port cannot be opened, and ValueError
    for an unknown protocol.
    """
    cls = PROTOCOLS.get(protocol)
    if cls is None:
        raise ValueError(f"unknown shoe protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    if url.lower().startswith("usb://"):
        raise BadURL(f"{url}: a shoe is a serial device; give its serial port "
                     "(e.g. /dev/serial/by-id/…) instead of usb://")
    return cls(url, read_timeout_s=read_timeout_s, dead_after_timeouts=dead_after_timeouts,
               baudrate=baudrate, **options)
