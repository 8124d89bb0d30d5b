"""One exception tree for every device; wrapped at the driver boundary with `raise … from err`."""


class DeviceError(Exception):
    """Any failure talking to a device."""


class NotFound(DeviceError):
    """The port or USB device does not exist (or the URL names an unknown scheme)."""


class DevicePermissionError(DeviceError):
    """The port exists but this user may not open it."""


class Busy(DeviceError):
    """Another process holds the device."""


class DeviceIOError(DeviceError):
    """Reading or writing failed after the device was opened."""


class Timeout(DeviceError):
    """No answer within the configured timeout."""


class ProtocolError(DeviceError):
    """Bytes that do not form a valid frame of the device's protocol."""

    def __init__(self, message: str, raw: bytes = b""):
        super().__init__(f"{message} (raw {raw.hex(' ') or '-'})" if raw else message)
        self.raw = raw


class BadURL(DeviceError):
    """A device URL that cannot be used; the message names the URL and why."""


class DriverUnavailable(DeviceError):
    """A driver named in config that no installed distribution offers, or one that fails to
    load; the message names it, where it came from and why."""
