"""The service manager's side: systemd's notify protocol, spoken with the standard library.

Under `Type=notify` systemd passes a datagram socket in `$NOTIFY_SOCKET`; the table says
`READY=1` once it serves, `STATUS=…` when what it waits for changes, `WATCHDOG=1` from the
service loop's own thread (so a loop that hangs is restarted, not only a process that dies) and
`STOPPING=1` on its way out. Without `$NOTIFY_SOCKET` (a terminal, the tests) every call is a
no-op. See sd_notify(3).
"""
from __future__ import annotations

import os
import socket
from typing import Any, Callable

from controller.logsetup import get_logger

log = get_logger("controller.notify")


class Notifier:
    def __init__(self, address: str | None = None):
        self.address = address if address is not None else os.environ.get("NOTIFY_SOCKET", "")
        self.sent: list[str] = []          # what was said, for the status view

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def send(self, *fields: str) -> bool:
        """Send `KEY=value` lines in one datagram; False when there is no manager to tell."""
        if not self.address:
            return False
        addr = self.address
        if addr.startswith("@"):                  # an abstract socket: a leading NUL byte
            addr = "\0" + addr[1:]
        message = "\n".join(fields)
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(addr)
                sock.sendall(message.encode("utf-8"))
        except OSError as err:
            # the manager went away (or never was): the table deals on regardless
            log.warning("service manager not told", message=message[:80], error=str(err))
            return False
        self.sent.append(message)
        del self.sent[:-20]
        return True

    def ready(self, status: str = "") -> bool:
        return self.send("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={text}")

    def stopping(self, status: str = "") -> bool:
        return self.send("STOPPING=1", *([f"STATUS={status}"] if status else []))


def watchdog_interval_s(environ: dict[str, str] | None = None) -> float | None:
    """Half the watchdog period systemd asks for (`WatchdogSec=` → `$WATCHDOG_USEC`), or None
    when no watchdog is set for this process."""
    env = os.environ if environ is None else environ
    usec = env.get("WATCHDOG_USEC", "")
    pid = env.get("WATCHDOG_PID", "")
    if not usec.isdigit() or int(usec) == 0:
        return None
    if pid and pid.isdigit() and int(pid) != os.getpid():
        return None                     # meant for another process
    return int(usec) / 2e6


class Watchdog:
    """Pings the watchdog from the service loop's thread, on the loop's own timers: if the loop
    stops turning, the pings stop and the service manager restarts the table."""

    def __init__(self, call_later: Callable[[float, Callable[[], None]], Any], notifier: Notifier,
                 interval_s: float):
        self.call_later, self.notifier, self.interval_s = call_later, notifier, interval_s
        self.pings = 0

    def start(self) -> None:
        """From the loop's thread (submit it as a callable)."""
        self._ping()

    def _ping(self) -> None:
        if self.notifier.send("WATCHDOG=1"):
            self.pings += 1
        self.call_later(self.interval_s, self._ping)
