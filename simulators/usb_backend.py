"""A pyusb backend (usb.backend.IBackend) that exposes a ShufflerModel as a USB device.

Real pyusb code runs against it unchanged: `usb.core.find(idVendor=…, backend=b)` enumerates it,
`dev.set_configuration()`, `usb.util.claim_interface`, `dev.write(0x01, …)` and
`dev.read(0x81, …)` reach the model's protocol bytes, and `dev.serial_number` is answered by
GET_DESCRIPTOR control transfers. The device: one configuration, one vendor-specific interface
with a bulk OUT endpoint 0x01 and a bulk IN endpoint 0x81 (512-byte packets, high speed).

Errors are raised as libusb would: USBError with errno EBUSY (-6) for an interface claimed by
another handle, ENODEV (-4) after `unplug()`, EPIPE (-9) for an unsupported control request,
and USBTimeoutError (ETIMEDOUT, -7) for a bulk read with nothing to send. The model answers
synchronously, so a read never has to wait for data that a wait could produce.
"""
from __future__ import annotations

import array
import errno
from typing import Any, Iterator

import usb.backend
import usb.util
from usb.core import USBError, USBTimeoutError

from simulators import registry

#: the simulated shuffler's USB ids (invented for the simulator; not assigned by USB-IF)
SIM_VENDOR_ID = 0x7A5C
SIM_PRODUCT_ID = 0x5348
EP_OUT, EP_IN = 0x01, 0x81
PACKET = 512
MANUFACTURER = "tablectl simulator"
PRODUCT = "Simulated card shuffler"
LANGID_EN_US = 0x0409


class _Desc:
    """A descriptor record: pyusb copies its fields with getattr."""

    def __init__(self, **fields: Any):
        self.__dict__.update(fields)


def _error(text: str, code: int, err: int) -> USBError:
    return USBError(text, code, err)


class SimDevice:
    """One simulated USB device around a model with read/write/in_waiting."""

    def __init__(self, model: Any, *, vendor_id: int = SIM_VENDOR_ID,
                 product_id: int = SIM_PRODUCT_ID, serial: str | None = None, address: int = 1):
        self.model = model
        self.connected = True
        self.configuration = 0                      # 0 = unconfigured, as after plug-in
        self.claims: dict[int, object] = {}          # interface number -> handle
        identity = getattr(model, "identity", ("", "SIM", ""))
        self.strings = {1: MANUFACTURER, 2: PRODUCT, 3: serial or identity[1]}
        self.device = _Desc(
            bLength=18, bDescriptorType=usb.util.DESC_TYPE_DEVICE, bcdUSB=0x0200,
            bDeviceClass=0, bDeviceSubClass=0, bDeviceProtocol=0, bMaxPacketSize0=64,
            idVendor=vendor_id, idProduct=product_id, bcdDevice=0x0100,
            iManufacturer=1, iProduct=2, iSerialNumber=3, bNumConfigurations=1,
            bus=1, address=address, port_number=address, port_numbers=(address,),
            speed=usb.util.SPEED_HIGH)
        self.config = _Desc(
            bLength=9, bDescriptorType=usb.util.DESC_TYPE_CONFIG, wTotalLength=9 + 9 + 7 + 7,
            bNumInterfaces=1, bConfigurationValue=1, iConfiguration=0, bmAttributes=0x80,
            bMaxPower=50, extra_descriptors=[])
        self.interface = _Desc(
            bLength=9, bDescriptorType=usb.util.DESC_TYPE_INTERFACE, bInterfaceNumber=0,
            bAlternateSetting=0, bNumEndpoints=2, bInterfaceClass=0xFF, bInterfaceSubClass=0,
            bInterfaceProtocol=0, iInterface=0, extra_descriptors=[])
        self.endpoints = [
            _Desc(bLength=7, bDescriptorType=usb.util.DESC_TYPE_ENDPOINT, bEndpointAddress=ep,
                  bmAttributes=usb.util.ENDPOINT_TYPE_BULK, wMaxPacketSize=PACKET, bInterval=0,
                  bRefresh=0, bSynchAddress=0, extra_descriptors=[])
            for ep in (EP_OUT, EP_IN)]

    def unplug(self) -> None:
        """The cable is pulled: every later call on an open handle fails with ENODEV."""
        self.connected = False

    def plug(self) -> None:
        self.connected, self.configuration, self.claims = True, 0, {}


class _Handle:
    def __init__(self, device: SimDevice):
        self.device = device
        self.open = True


class SimUsbBackend(usb.backend.IBackend):
    """IBackend over a list of SimDevice objects."""

    def __init__(self, devices: list[SimDevice]):
        self.devices = devices

    # ---- enumeration and descriptors -----------------------------------------------------------

    def enumerate_devices(self) -> Iterator[SimDevice]:
        return iter([d for d in self.devices if d.connected])

    def get_parent(self, dev: SimDevice) -> None:
        return None

    def get_device_descriptor(self, dev: SimDevice) -> _Desc:
        return dev.device

    def get_configuration_descriptor(self, dev: SimDevice, config: int) -> _Desc:
        if config != 0:
            raise IndexError(f"configuration index {config} (the device has 1)")
        return dev.config

    def get_interface_descriptor(self, dev: SimDevice, intf: int, alt: int,
                                 config: int) -> _Desc:
        if config != 0 or intf != 0 or alt != 0:
            raise IndexError(f"interface {intf} alt {alt} of configuration {config}")
        return dev.interface

    def get_endpoint_descriptor(self, dev: SimDevice, ep: int, intf: int, alt: int,
                                config: int) -> _Desc:
        if config != 0 or intf != 0 or alt != 0 or not 0 <= ep < len(dev.endpoints):
            raise IndexError(f"endpoint {ep} of interface {intf}")
        return dev.endpoints[ep]

    # ---- handles, configuration, interfaces ----------------------------------------------------

    def _live(self, handle: _Handle) -> SimDevice:
        if not handle.open:
            raise _error("Invalid parameter (handle closed)", -2, errno.EINVAL)
        if not handle.device.connected:
            raise _error("No such device (it may have been disconnected)", -4, errno.ENODEV)
        return handle.device

    def open_device(self, dev: SimDevice) -> _Handle:
        if not dev.connected:
            raise _error("No such device (it may have been disconnected)", -4, errno.ENODEV)
        return _Handle(dev)

    def close_device(self, dev_handle: _Handle) -> None:
        dev = dev_handle.device
        for intf in [i for i, h in dev.claims.items() if h is dev_handle]:
            del dev.claims[intf]
        dev_handle.open = False

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        dev = self._live(dev_handle)
        if config_value not in (0, 1):
            raise _error("Entity not found (configuration value)", -5, errno.ENOENT)
        if dev.claims and config_value != dev.configuration:
            raise _error("Resource busy (interface claimed)", -6, errno.EBUSY)
        dev.configuration = config_value

    def get_configuration(self, dev_handle: _Handle) -> int:
        return self._live(dev_handle).configuration

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        self._live(dev_handle)
        if intf != 0 or altsetting != 0:
            raise _error("Entity not found (alternate setting)", -5, errno.ENOENT)

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        dev = self._live(dev_handle)
        if intf != 0:
            raise _error("Entity not found (interface)", -5, errno.ENOENT)
        owner = dev.claims.get(intf)
        if owner is not None and owner is not dev_handle:
            raise _error("Resource busy (interface claimed by another program)", -6, errno.EBUSY)
        dev.claims[intf] = dev_handle

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        dev = dev_handle.device
        if dev.claims.get(intf) is dev_handle:
            del dev.claims[intf]

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        self._live(dev_handle)
        return False

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        self._live(dev_handle)

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        self._live(dev_handle)

    # ---- transfers -----------------------------------------------------------------------------

    def _ready_for_io(self, dev_handle: _Handle, ep: int, intf: int, direction: int) -> SimDevice:
        dev = self._live(dev_handle)
        if dev.configuration != 1:
            raise _error("Input/Output error (device not configured)", -1, errno.EIO)
        if dev.claims.get(intf) is not dev_handle:
            raise _error("Resource busy (interface not claimed)", -6, errno.EBUSY)
        if ep != (EP_IN if direction == usb.util.ENDPOINT_IN else EP_OUT):
            raise _error(f"Pipe error (no endpoint 0x{ep:02x})", -9, errno.EPIPE)
        return dev

    def bulk_write(self, dev_handle: _Handle, ep: int, intf: int, data: array.array,
                   timeout: int) -> int:
        dev = self._ready_for_io(dev_handle, ep, intf, usb.util.ENDPOINT_OUT)
        return dev.model.write(bytes(data))

    def bulk_read(self, dev_handle: _Handle, ep: int, intf: int, buff: array.array,
                  timeout: int) -> int:
        dev = self._ready_for_io(dev_handle, ep, intf, usb.util.ENDPOINT_IN)
        if not dev.model.in_waiting:
            raise USBTimeoutError("Operation timed out", -7, errno.ETIMEDOUT)
        chunk = dev.model.read(len(buff) * buff.itemsize)
        buff[:len(chunk)] = array.array("B", chunk)
        return len(chunk)

    def ctrl_transfer(self, dev_handle: _Handle, bmRequestType: int, bRequest: int, wValue: int,
                      wIndex: int, data: array.array, timeout: int) -> int:
        dev = self._live(dev_handle)
        is_get_descriptor = bmRequestType == 0x80 and bRequest == 0x06
        if not is_get_descriptor or (wValue >> 8) != usb.util.DESC_TYPE_STRING:
            raise _error("Pipe error (request not supported)", -9, errno.EPIPE)
        index = wValue & 0xFF
        if index == 0:
            body = LANGID_EN_US.to_bytes(2, "little")
        elif index in dev.strings and wIndex == LANGID_EN_US:
            body = dev.strings[index].encode("utf-16-le")
        else:
            raise _error("Pipe error (no such string)", -9, errno.EPIPE)
        desc = bytes([2 + len(body), usb.util.DESC_TYPE_STRING]) + body
        n = min(len(desc), len(data))
        data[:n] = array.array("B", desc[:n])
        return n

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        dev = self._live(dev_handle)
        if ep == EP_OUT and hasattr(dev.model, "reset_input"):
            dev.model.reset_input()

    def reset_device(self, dev_handle: _Handle) -> None:
        dev = self._live(dev_handle)
        dev.configuration, dev.claims = 0, {}
        if hasattr(dev.model, "reset_input"):
            dev.model.reset_input()


_BACKENDS: dict[str, tuple[object, SimUsbBackend]] = {}


def backend_for(name: str) -> SimUsbBackend:
    """The backend exposing the model registered as NAME in simulators.registry.

    One backend per registered model, kept while the model stays registered, so a second
    opener meets the first one's claim (Busy) as with a real device.
    """
    try:
        model = registry.get(name)
    except LookupError as err:
        raise LookupError(err.args[0] if err.args else f"no simulator {name!r}") from None
    cached = _BACKENDS.get(name)
    if cached is not None and cached[0] is model:
        return cached[1]
    backend = SimUsbBackend([SimDevice(model)])
    _BACKENDS[name] = (model, backend)
    return backend
