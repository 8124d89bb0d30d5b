"""Serving the web display from `tablectl run`: the listening socket, and uvicorn on a thread.

The socket is bound before the table starts, so a busy port is one line and exit 2 with
nothing dealt. The server runs its own event loop on a daemon thread; the table's loop only
hands it events (`DisplayHub`). Loopback unless an address is given.
"""
from __future__ import annotations

import asyncio
import errno
import socket
import threading
import time
from typing import Any

from controller.errors import InputError
from controller.logsetup import get_logger
from controller.settings.listen import parse_listen

log = get_logger("controller.display")
START_TIMEOUT_S = 10.0


def bind(listen: str, where: str = "[display] listen") -> socket.socket:
    """The display's listening socket; InputError (one line) when it cannot be had."""
    host, port = parse_listen(listen, where)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(64)
    except OSError as err:
        sock.close()
        busy = err.errno == errno.EADDRINUSE
        why = "the port is already in use (another program, or another table, listens " \
              "there)" if busy else err.strerror or str(err)
        fix = f"give another HOST:PORT ({where})" + (", or stop what listens there" if busy
                                                      else "")
        raise InputError(f"display: cannot listen on {host}:{port}: {why}; {fix}") from None
    sock.set_inheritable(True)
    return sock


class DisplayServer:
    """uvicorn serving the display app on an already bound socket, on its own thread."""

    def __init__(self, app: Any, sock: socket.socket, hub: Any):
        import uvicorn

        class Server(uvicorn.Server):
            async def startup(self, sockets: Any = None) -> None:
                hub.attach(asyncio.get_running_loop())
                await super().startup(sockets=sockets)

            async def shutdown(self, sockets: Any = None) -> None:
                hub.close()
                await super().shutdown(sockets=sockets)

        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                loop="asyncio", http="h11", timeout_graceful_shutdown=1)
        self.server = Server(config)
        self.sock, self.hub = sock, hub
        host, port = sock.getsockname()[:2]
        self.url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
        self.thread = threading.Thread(target=self._run, name="display", daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        except BaseException as err:       # reported by start(), or logged once running
            self.error = err
            log.error("display server stopped", error=repr(err))

    def start(self) -> "DisplayServer":
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise InputError(f"display: the web server did not start ({self.error!r})")
            time.sleep(0.01)
        log.info("display serving", url=self.url)
        return self

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=5)
        self.sock.close()
