"""A shoe outside this process (`tablectl devices`, a real one) that stays silent while a card
is due is empty: the dealer's shoe_empty, said for them."""
from __future__ import annotations

from controller.service.loop import TableService
from controller.table.inputs import command


class IdleWatch:
    """An actor: told every status; a timer while a card is due."""
    takes = frozenset({"status"})

    def __init__(self, service: TableService, idle_seconds: float):
        self.service, self.idle_seconds = service, idle_seconds
        self._handle: int | None = None
        self.expects: str | None = None

    def publish(self, e: dict) -> None:
        if e["event"] != "status":
            return
        if self._handle is not None:
            self.service.cancel(self._handle)
            self._handle = None
        self.expects = e.get("expects")
        if self.expects in ("card", "count_back"):
            self._handle = self.service.call_later(self.idle_seconds, self._silent)

    def _silent(self) -> None:
        self._handle = None
        if self.expects in ("card", "count_back"):
            self.service.submit(command("shoe_empty", user="dealer", role="dealer",
                                        reason="the shoe has been silent"))
