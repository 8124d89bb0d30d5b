"""Open a byte transport from a URL, with one clear error per way it can fail.

Serial always opens through `serial.serial_for_url`, so device paths (/dev/ttyUSB0,
/dev/serial/by-id/…), socket://, rfc2217://, loop:// and any scheme whose pyserial handler
package the application registered (`register_serial_handlers`, e.g. a simulator's shoesim://)
all work the same way. usb:// goes to drivers.usb_transport (imported only when asked for).
"""
from __future__ import annotations

import errno
import importlib
import importlib.util
import pkgutil
import re

import serial

from drivers.errors import (BadURL, Busy, DeviceError, DeviceIOError, DevicePermissionError,
                            NotFound)

_SCHEME = re.compile(r"[a-z][a-z0-9]*")
_NOT_FOUND = {errno.ENOENT, errno.ENODEV, errno.ENXIO}
_DENIED = {errno.EACCES, errno.EPERM}
_BUSY = {errno.EBUSY, errno.EAGAIN, errno.EWOULDBLOCK}
_UNREACHABLE = ("Connection refused", "Name or service not known", "No route to host",
                "timed out", "Temporary failure in name resolution")
PERMISSION_HINT = ("add the user to the dialout group (sudo usermod -aG dialout $USER, then log "
                   "in again) or install deploy/99-tablectl.rules (tablectl install)")


def register_serial_handlers(package: str) -> None:
    """Let serial URLs reach the pyserial handlers (`protocol_<scheme>.py`) in `package`.

    The drivers know no handler package of their own: the application registers the ones it
    wants (a simulator's), so a scheme nobody registered fails as unknown.
    """
    if package not in serial.protocol_handler_packages:
        serial.protocol_handler_packages.append(package)


def known_schemes() -> list[str]:
    """URL schemes pyserial can open here (its own handlers and ours), plus usb."""
    names = {"usb"}
    for package in serial.protocol_handler_packages:
        try:
            mod = importlib.import_module(package)
        except ImportError:
            continue
        for info in pkgutil.iter_modules(getattr(mod, "__path__", [])):
            if info.name.startswith("protocol_"):
                names.add(info.name[len("protocol_"):])
    return sorted(names)


def _check_scheme(url: str, scheme: str) -> None:
    """Fail with the URL and the reason before pyserial turns a cause into 'not known'."""
    if not _SCHEME.fullmatch(scheme):
        raise BadURL(f"{url}: {scheme!r} is not a URL scheme")
    for package in serial.protocol_handler_packages:
        name = f"{package}.protocol_{scheme}"
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:
            continue
        if spec is None:
            continue
        try:
            importlib.import_module(name)   # pyserial would swallow an error in here
        except ImportError as err:
            raise BadURL(f"{url}: the {scheme}:// handler failed to import: {err}") from err
        return
    raise BadURL(f"{url}: unknown scheme {scheme}:// (known: {', '.join(known_schemes())}, "
                 "or a device path such as /dev/ttyUSB0)")


def _check_host_port(url: str) -> None:
    """A network URL's host and port, checked here: pyserial's own message for a bad one
    lists its logging levels instead of the problem."""
    netloc = url.split("://", 1)[1].split("?", 1)[0].split("/", 1)[0]
    host, _, port = netloc.rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise BadURL(f"{url}: expected {url.split('://')[0]}://HOST:PORT with a TCP port from 1 "
                     "to 65535")


def _map_error(url: str, err: Exception) -> DeviceError:
    """pyserial/OS errors → the drivers.errors tree, one line naming the URL and why."""
    code = getattr(err, "errno", None)
    text = " ".join(str(err).split())
    if "expected a string in the form" in text:
        return BadURL(f"{url}: {text}")
    if code in _NOT_FOUND:
        if "://" in url:
            detail = getattr(err, "strerror", None) or text
            return NotFound(f"{url}: not found: {' '.join(str(detail).split())}")
        return NotFound(f"{url}: no such port; is the device plugged in and the path right? "
                        "(ls -l /dev/serial/by-id/)")
    if code in _DENIED:
        return DevicePermissionError(f"{url}: permission denied; {PERMISSION_HINT}")
    if code in _BUSY or "exclusively lock" in text:
        return Busy(f"{url}: port busy: another program holds it (see: fuser -v {url})")
    if any(marker in text for marker in _UNREACHABLE):
        return NotFound(f"{url}: nothing answers there ({text})")
    return DeviceIOError(f"{url}: {text}")


def open_serial(url: str, *, baudrate: int = 9600,
                timeout: float | None = 0.05) -> serial.SerialBase:
    """Open a serial port or serial URL; raise NotFound/DevicePermissionError/Busy/BadURL."""
    if not isinstance(url, str) or not url.strip():
        raise BadURL(f"{url!r}: empty device URL")
    scheme = url.split("://", 1)[0].lower() if "://" in url else None
    options: dict[str, object] = {}
    if scheme is None:
        options["exclusive"] = True     # two controllers on one shoe would split its reads
    else:
        _check_scheme(url, scheme)
        if scheme in ("socket", "rfc2217"):
            _check_host_port(url)
    try:
        return serial.serial_for_url(url, baudrate=baudrate, timeout=timeout, **options)
    except ValueError as err:
        raise BadURL(f"{url}: {' '.join(str(err).split())}") from err
    except OSError as err:      # SerialException is an OSError
        raise _map_error(url, err) from err


def check_url(url: str) -> None:
    """BadURL, naming what is wrong, for a device URL that cannot name a device (a bad scheme,
    host, port, or usb:// ids); nothing is opened. Whether the device is there is another
    matter, found when it is opened."""
    if not isinstance(url, str) or not url.strip():
        raise BadURL(f"{url!r}: empty device URL")
    if url.lower().startswith("usb://"):
        from drivers.usb_transport import parse_usb_url
        parse_usb_url(url)
        return
    if "://" in url:
        scheme = url.split("://", 1)[0].lower()
        _check_scheme(url, scheme)
        if scheme in ("socket", "rfc2217"):
            _check_host_port(url)


def open_transport(url: str) -> object:
    """Any device URL: usb://… through drivers.usb_transport, everything else open_serial."""
    if isinstance(url, str) and url.lower().startswith("usb://"):
        try:
            from drivers.usb_transport import open_usb
        except ImportError as err:
            raise BadURL(f"{url}: the USB transport failed to import: {err}") from err
        return open_usb(url)
    return open_serial(url)
