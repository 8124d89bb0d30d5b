"""The table PC's monitoring: the table's metrics fed by its loop, served with the web
display or on `[metrics] listen` (controller/monitor)."""
from __future__ import annotations

import socket
from typing import Any

#: how long a scrape or a probe waits for the loop to build the health view
HEALTH_TIMEOUT_S = 2.0


class Monitoring:
    """Built after the table PC's parts (it reads their health view), before the display."""

    def __init__(self, asm: Any, health: Any, *, info: dict[str, str]):
        from controller.monitor.metrics import TableMetrics
        from controller.service.inputs import Query
        from controller.service.parts import Hook, Listener, Tap
        svc = asm.service

        def view() -> dict | None:
            # on the loop's thread, as `tablectl status` gets it; None if it does not answer
            q = Query(health.view)
            svc.submit(q)
            try:
                return q.reply.result(timeout=HEALTH_TIMEOUT_S)
            except Exception:
                return None
        self.metrics = TableMetrics(svc.name, health=view, info=info)
        svc.connect(self.metrics, Tap.OUTWARD)
        svc.connect(Listener(self.metrics.on_status), Tap.LISTENER)
        svc.connect(Hook("journal_write", self.metrics.journal_written))
        self.asm = asm
        self.server: Any = None

    def routes(self) -> list:
        from controller.monitor.web import routes
        return routes(self.metrics)

    def serve(self, sock: socket.socket) -> str:
        """On an address of their own; the URL of /metrics."""
        from controller.display.server import DisplayServer
        from controller.monitor.web import create_app
        self.server = DisplayServer(create_app(self.metrics), sock, _NoStreams(),
                                    where="metrics").start()
        self.asm.closing(self.server.close)
        return self.server.url + "metrics"


class _NoStreams:
    """The display server's hub hooks, for an app without event streams."""

    def attach(self, loop: Any) -> None:
        pass

    def close(self) -> None:
        pass
