"""Make the simulators reachable by URL: shoesim:// (pyserial) and usb://VID:PID?sim=NAME.

The drivers know nothing of the simulators; a program that builds a simulator rig (or a test)
calls `install()` once, and the drivers then open the simulated devices like real ones.
"""
from __future__ import annotations

from drivers.transport import register_serial_handlers
from drivers.usb_transport import register_backend
from simulators import serial_handlers
from simulators.usb_backend import backend_for


def install() -> None:
    """Register the shoesim:// handler and the ?sim= USB backend with the drivers (idempotent)."""
    register_serial_handlers(serial_handlers.__name__)
    register_backend("sim", backend_for)
