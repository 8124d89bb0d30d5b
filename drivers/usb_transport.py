"""USB bulk transport through pyusb, opened from a URL.

    usb://VID:PID                   first device with these ids (hex, e.g. usb://7a5c:5348)
    usb://VID:PID?serial=SN         the one whose serial-number string is SN
    usb://VID:PID?sim=NAME          the device NAME of the pyusb backend the application
                                    registered for sim= (`register_backend`): a simulator's,
                                    reached through real pyusb calls

The transport uses the first interface's bulk OUT and bulk IN endpoints. pyusb and libusb errors
become the drivers.errors tree: NotFound, DevicePermissionError (with the udev hint), Busy,
DeviceIOError, Timeout, BadURL.
"""
from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Callable
from urllib.parse import parse_qs, urlsplit

import usb.backend
import usb.core
import usb.util

from drivers.errors import BadURL, Busy, DeviceIOError, DevicePermissionError, NotFound, Timeout

#: URL options that name a device of a registered pyusb backend instead of real hardware
BACKEND_OPTIONS = ("sim",)
_backends: dict[str, Callable[[str], object]] = {}

UDEV_HINT = ('install deploy/99-tablectl.rules (tablectl install --shuffler VID:PID), or add a '
             'udev rule, e.g. SUBSYSTEM=="usb", ATTR{idVendor}=="%04x", ATTR{idProduct}=="%04x", '
             'MODE="0660", GROUP="dialout", and add the user to dialout')


@dataclass(frozen=True)
class UsbURL:
    vendor_id: int
    product_id: int
    serial: str | None = None
    sim: str | None = None

    @property
    def ids(self) -> str:
        return f"{self.vendor_id:04x}:{self.product_id:04x}"


def parse_usb_url(url: str) -> UsbURL:
    """Parse usb://VID:PID[?serial=SN][&sim=NAME]; BadURL names what is wrong."""
    parts = urlsplit(url)
    if parts.scheme != "usb":
        raise BadURL(f"{url!r}: not a usb:// URL")
    vid, sep, pid = parts.netloc.partition(":")
    try:
        if not sep or not vid or not pid:
            raise ValueError
        vendor, product = int(vid, 16), int(pid, 16)
    except ValueError:
        raise BadURL(f"{url!r}: expected usb://VID:PID with hex ids, e.g. usb://7a5c:5348") \
            from None
    if not (0 <= vendor <= 0xFFFF and 0 <= product <= 0xFFFF):
        raise BadURL(f"{url!r}: vendor and product ids are 16-bit (0000-ffff)")
    if parts.path not in ("", "/"):
        raise BadURL(f"{url!r}: unexpected path {parts.path!r}")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"serial", "sim"})
    if unknown:
        raise BadURL(f"{url!r}: unknown option(s) {', '.join(unknown)} (known: serial, sim)")
    serial = query.get("serial", [None])[-1]
    sim = query.get("sim", [None])[-1]
    if sim == "" or serial == "":
        raise BadURL(f"{url!r}: an empty serial= or sim= value")
    return UsbURL(vendor, product, serial, sim)


def register_backend(key: str, factory: Callable[[str], object]) -> None:
    """usb://VID:PID?KEY=NAME opens through the pyusb backend `factory(NAME)`.

    The factory raises LookupError for a NAME it does not know. The drivers ship no backend
    of their own for these options: the application registers one (a simulator's).
    """
    if key not in BACKEND_OPTIONS:
        raise ValueError(f"{key!r} is not a usb:// backend option (known: "
                         f"{', '.join(BACKEND_OPTIONS)})")
    _backends[key] = factory


def _backend_for(url: str, parsed: UsbURL) -> object:
    """The registered pyusb backend a ?sim=NAME URL names; None (libusb) without one."""
    if parsed.sim is None:
        return None
    factory = _backends.get("sim")
    if factory is None:
        raise BadURL(f"{url!r}: sim= names a simulated device, and no simulator backend is "
                     "registered in this program")
    try:
        return factory(parsed.sim)
    except LookupError as err:
        raise NotFound(f"{url!r}: {err.args[0] if err.args else err}") from None


def _map_usb_error(err: usb.core.USBError, where: str, ids: str) -> Exception:
    code = getattr(err, "errno", None)
    if isinstance(err, usb.core.USBTimeoutError) or code == errno.ETIMEDOUT:
        return Timeout(f"USB device {ids}: {where} timed out")
    if code in (errno.EACCES, errno.EPERM):
        vid, pid = (int(x, 16) for x in ids.split(":"))
        return DevicePermissionError(f"USB device {ids}: permission denied ({where}); "
                                     + UDEV_HINT % (vid, pid))
    if code == errno.EBUSY:
        return Busy(f"USB device {ids}: busy ({where}); another program has claimed it")
    if code == errno.ENODEV:
        return DeviceIOError(f"USB device {ids}: disconnected ({where})")
    return DeviceIOError(f"USB device {ids}: {where} failed: {err}")


class UsbTransport:
    """Bulk OUT/IN byte pipe to one claimed USB interface."""

    def __init__(self, dev: usb.core.Device, interface: int, ep_out: int, ep_in: int,
                 packet_size: int, ids: str, write_timeout_s: float = 1.0):
        self.dev, self.interface = dev, interface
        self.ep_out, self.ep_in, self.packet_size = ep_out, ep_in, packet_size
        self.ids, self.write_timeout_s = ids, write_timeout_s
        self._closed = False

    def write(self, data: bytes) -> int:
        try:
            return self.dev.write(self.ep_out, data, int(self.write_timeout_s * 1000))
        except usb.core.USBError as err:
            raise _map_usb_error(err, "bulk write", self.ids) from err

    def read(self, size: int, timeout_s: float) -> bytes:
        """Up to `size` bytes from the bulk IN endpoint; b"" when none came within timeout_s."""
        # A bulk IN transfer must ask for whole packets, or a long answer overflows it.
        want = max(self.packet_size, -(-size // self.packet_size) * self.packet_size)
        try:
            data = self.dev.read(self.ep_in, want, max(1, int(timeout_s * 1000)))
        except usb.core.USBTimeoutError:
            return b""
        except usb.core.USBError as err:
            raise _map_usb_error(err, "bulk read", self.ids) from err
        return bytes(data)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            usb.util.release_interface(self.dev, self.interface)
        except usb.core.USBError:
            pass                      # an unplugged device cannot be released; nothing to undo
        usb.util.dispose_resources(self.dev)


def _find(url: UsbURL, backend: usb.backend.IBackend | None) -> usb.core.Device:
    try:
        found = list(usb.core.find(find_all=True, idVendor=url.vendor_id,
                                   idProduct=url.product_id, backend=backend))
    except usb.core.NoBackendError as err:
        raise NotFound(f"USB device {url.ids}: no USB backend available (install libusb-1.0, "
                       f"e.g. apt install libusb-1.0-0)") from err
    except usb.core.USBError as err:
        raise _map_usb_error(err, "enumeration", url.ids) from err
    where = f" (simulated device {url.sim!r})" if url.sim else ""
    if not found:
        raise NotFound(f"USB device {url.ids}{where} not found: is it plugged in and powered? "
                       f"`lsusb -d {url.ids}` lists it when it is")
    if url.serial is None:
        return found[0]
    serials = []
    for dev in found:
        try:
            sn = dev.serial_number
        except (usb.core.USBError, ValueError) as err:
            code = getattr(err, "errno", None)
            if code in (errno.EACCES, errno.EPERM) or isinstance(err, ValueError):
                raise DevicePermissionError(
                    f"USB device {url.ids}: cannot read its serial number (permission?); "
                    + UDEV_HINT % (url.vendor_id, url.product_id)) from err
            raise _map_usb_error(err, "reading the serial number", url.ids) from err
        if sn == url.serial:
            return dev
        serials.append(sn)
    raise NotFound(f"USB device {url.ids} with serial {url.serial!r} not found "
                   f"(present: {', '.join(map(repr, serials))})")


def open_usb(url: str, *, write_timeout_s: float = 1.0) -> UsbTransport:
    """Find, configure and claim the device named by `url`."""
    parsed = parse_usb_url(url)
    dev = _find(parsed, _backend_for(url, parsed))
    try:
        try:
            if dev.is_kernel_driver_active(0):
                dev.detach_kernel_driver(0)
        except NotImplementedError:
            pass                      # backends without kernel drivers (Windows, the simulator)
        try:
            cfg = dev.get_active_configuration()
        except usb.core.USBError:
            cfg = None                # unconfigured; setting it again could reset a live device
        if cfg is None:
            dev.set_configuration()
            cfg = dev.get_active_configuration()
        intf = cfg[(0, 0)]
        ep_out = usb.util.find_descriptor(intf, custom_match=lambda e: (
            usb.util.endpoint_direction(e.bEndpointAddress) == usb.util.ENDPOINT_OUT
            and usb.util.endpoint_type(e.bmAttributes) == usb.util.ENDPOINT_TYPE_BULK))
        ep_in = usb.util.find_descriptor(intf, custom_match=lambda e: (
            usb.util.endpoint_direction(e.bEndpointAddress) == usb.util.ENDPOINT_IN
            and usb.util.endpoint_type(e.bmAttributes) == usb.util.ENDPOINT_TYPE_BULK))
        if ep_out is None or ep_in is None:
            raise NotFound(f"USB device {parsed.ids}: interface {intf.bInterfaceNumber} has "
                           f"no bulk OUT/IN endpoint pair (is this the shuffler?)")
        usb.util.claim_interface(dev, intf)
    except usb.core.USBError as err:
        usb.util.dispose_resources(dev)
        raise _map_usb_error(err, "opening", parsed.ids) from err
    return UsbTransport(dev, intf.bInterfaceNumber, ep_out.bEndpointAddress,
                        ep_in.bEndpointAddress, ep_in.wMaxPacketSize, parsed.ids,
                        write_timeout_s)
