"""Serving the web display from `tablectl run`: the listening socket, and uvicorn on a thread.

The socket is bound before the table starts, so a busy port is one line and exit 2 with
nothing dealt. The server runs its own event loop on a daemon thread; the table's loop only
hands it events (`DisplayHub`). Loopback unless an address is given.

The same server serves `/metrics` on `[metrics] listen` and the pit view (`floor --web`), to
whoever reaches the address, so what a client may hold is bounded (`Guarded`): at most
`MAX_CONNECTIONS` connections at once (one more is answered 503 and closed as it is
accepted), a connection that has not sent a whole request head `HEADER_TIMEOUT_S` after it
opened or after its last answer is answered 408 and closed (a client that connects and says
nothing, or sends its headers a byte at a time). Without them every such connection kept a
file descriptor for ever: a thousand idle ones took the process's last descriptors, and the
console, the journal's readers and the devices' reconnects with them. uvicorn's own lines go
to the table's log, and a line repeated by a flood of bad requests is logged a few times a
minute with its count (`Repeats`).
"""
from __future__ import annotations

import asyncio
import errno
import logging
import socket
import threading
import time
from typing import Any, Callable

from controller.errors import InputError
from controller.logsetup import get_logger
from controller.settings.listen import parse_listen

log = get_logger("controller.display")
START_TIMEOUT_S = 10.0
#: connections served at once: a few wall displays and browsers, each with a stream open and
#: a handful of requests, and the monitoring's scrapes
MAX_CONNECTIONS = 128
#: a browser sends its request as it connects; keep-alive waits as long for the next one
HEADER_TIMEOUT_S = 5.0
#: the same warning at most this often a minute; the next one says how many were not logged
REPEATS_A_MINUTE = 5
BACKLOG = 64                # connections the kernel holds until they are accepted


def bind(listen: str, where: str = "[display] listen") -> socket.socket:
    """The display's listening socket; InputError (one line) when it cannot be had."""
    host, port = parse_listen(listen, where)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
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


def _plain(status: int, reason: str, text: str) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection, for a client with no request."""
    body = (text + "\n").encode("utf-8")
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


class _Tally:
    """How often one kind of turned-away connection happened: logged at the first and every
    `every`-th, so that a flood is counted in a few lines (the loop's thread only)."""

    def __init__(self, event: str, every: int = 1000):
        self.event, self.every, self.count = event, every, 0

    def __call__(self, where: str, **fields: Any) -> None:
        self.count += 1
        if self.count == 1 or self.count % self.every == 0:
            log.warning(self.event, server=where, times=self.count, **fields)


def guarded(where: str, *, max_connections: int = MAX_CONNECTIONS,
            header_timeout_s: float = HEADER_TIMEOUT_S) -> type:
    """uvicorn's h11 protocol with the bounds the module's docstring gives."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    at_cap = _Tally("web connections at the cap; turning new ones away")
    too_slow = _Tally("web client sent no whole request in time; closed")

    class Guarded(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                at_cap(where, limit=max_connections)
                transport.write(_plain(503, "Service Unavailable", f"this server serves at "
                                       f"most {max_connections} connections at once; try "
                                       "again in a moment"))
                transport.close()
                return
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(header_timeout_s, self._no_request)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _no_request(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            if self.cycle is not None and not self.cycle.response_complete:
                return          # a request being answered (a stream): not this timer's
            too_slow(where, timeout_s=header_timeout_s)
            self.transport.write(_plain(408, "Request Timeout", f"no whole request within "
                                        f"{header_timeout_s:g} s; closing"))
            self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()     # the next request's head, on a kept-alive connection

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Guarded


class Repeats(logging.Filter):
    """Lets a message through at most `per_minute` times a minute; the first let through
    after some were held back says how many (a flood of bad requests is a few lines)."""

    def __init__(self, per_minute: int = REPEATS_A_MINUTE,
                 clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.per_minute, self.clock = per_minute, clock
        self._lock = threading.Lock()
        self._seen: dict[str, list[float]] = {}     # message → [window start, shown, held]

    def filter(self, record: logging.LogRecord) -> bool:
        key = str(record.msg)
        now = self.clock()
        with self._lock:
            seen = self._seen.get(key)
            if seen is None or now - seen[0] >= 60.0:
                held = int(seen[2]) if seen is not None else 0
                if len(self._seen) > 256:
                    self._seen.clear()
                seen = self._seen[key] = [now, 0.0, 0.0]
            else:
                held = 0
            if seen[1] >= self.per_minute:
                seen[2] += 1
                return False
            seen[1] += 1
        if held:
            record.msg = f"{record.getMessage()} ({held} more like it in the minute before " \
                         "were not logged)"
            record.args = ()
        return True


def _uvicorn_logs() -> None:
    """uvicorn's warnings into the table's log (they went to stderr in uvicorn's own format),
    held to `Repeats`; once a process."""
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, Repeats) for f in logger.filters):
        logger.addFilter(Repeats())


class DisplayServer:
    """uvicorn serving the display app on an already bound socket, on its own thread."""

    def __init__(self, app: Any, sock: socket.socket, hub: Any, *, where: str = "display",
                 max_connections: int = MAX_CONNECTIONS,
                 header_timeout_s: float = HEADER_TIMEOUT_S):
        import uvicorn

        class Server(uvicorn.Server):
            async def startup(self, sockets: Any = None) -> None:
                hub.attach(asyncio.get_running_loop())
                await super().startup(sockets=sockets)

            async def shutdown(self, sockets: Any = None) -> None:
                hub.close()
                await super().shutdown(sockets=sockets)

        _uvicorn_logs()
        protocol = guarded(where, max_connections=max_connections,
                           header_timeout_s=header_timeout_s)
        # log_config None: uvicorn's loggers propagate to the table's log; the backlog is the
        # bound socket's (uvicorn would listen again with 2048, and take as many at once)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                loop="asyncio", http=protocol, timeout_graceful_shutdown=1,
                                log_config=None, backlog=BACKLOG,
                                timeout_keep_alive=max(1, round(header_timeout_s)))
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
