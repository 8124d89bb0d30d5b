"""The table's rhythm, as sources that react to what the table publishes: new shoes while more
are wanted, and the betting window's timer."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from controller.service.loop import TableService
from controller.table.inputs import command
from controller.table.states import BETTING, CLOSED, HOLD, SHOE_ENDED


@dataclass(frozen=True)
class ShoePlan:
    cut_position: int | None
    shuffler: bool
    demo_rounds: int = 0


class ShoeCycle:
    """Starts a shoe when the table has none in play (closed, or the last one counted back),
    as long as `plan(number)` gives one for the table's next shoe number; stops the service
    after `shoes` shoes started by this process (0: no such limit)."""

    #: the only events it acts on (the loop tells it no other)
    takes = frozenset({"refused", "shoe_started", "status"})

    def __init__(self, service: TableService, plan: Callable[[int], ShoePlan | None], *,
                 shoes: int = 0, software: str = "", count_resumed: bool = True,
                 simulator: bool = False):
        self.service, self.plan, self.shoes, self.software = service, plan, shoes, software
        # the shoes are a simulation's (also when the service is a simulated table's)
        self.simulator = simulator or service.prompt.simulated
        self.started = 0            # shoes started (or resumed) by this process
        self._first = count_resumed
        self.finished = 0
        self._asked_at: int | None = None
        self._state = ""
        self.done = False
        self.error: str | None = None

    def on_event(self, e: dict) -> None:
        kind = e["event"]
        if kind == "refused" and e.get("action") == "new_shoe":
            if self._state == HOLD:
                self._asked_at = None    # a hold came first: asked again once it is cleared
                return
            # a shoe the table will not start (a bad plan): say why and stop
            self.error = f"the table refused a new shoe: {e['why']}"
            self.service.stop(self.error)
        elif kind == "shoe_started":
            self.started += 1
            self._asked_at = None
        elif kind == "status":
            self._state = e["state"]
            self._check(e)

    publish = on_event      # an outlet at the actors' tap

    def _check(self, st: dict) -> None:
        if self._first:
            self._first = False
            if st["state"] not in (CLOSED, SHOE_ENDED) or st.get("counting"):
                self.started = 1    # a shoe resumed from the journal counts as one of `shoes`
        if st["state"] not in (CLOSED, SHOE_ENDED) or st.get("counting"):
            return
        if st.get("conditions"):
            return                   # no shoe is started for a table waiting for its devices
        if self._asked_at == st["shoe"]:
            return                   # asked already; waiting for the table
        if st["state"] == SHOE_ENDED and self.started:
            self.finished = self.started
        if self.shoes and self.finished >= self.shoes:
            self.done = True
            self.service.stop("every shoe asked for was dealt")
            return
        plan = self.plan(st["shoe"] + 1)
        if plan is None:
            self.done = True
            self.service.stop("no more shoes to deal")
            return
        self._asked_at = st["shoe"]
        self.service.submit(command("new_shoe", cut_position=plan.cut_position,
                                    demo_rounds=plan.demo_rounds, shuffler=plan.shuffler,
                                    software=self.software, table=self.service.name,
                                    simulator=self.simulator))


class BettingTimer:
    """Closes bets when the window the table announced (`closes_in_s`) runs out; a window
    that ran out while the table was held, or while a house burn was announced, closes as
    soon as the bets are open again with no burn waiting."""

    #: the only events it acts on (the loop tells it no other)
    takes = frozenset({"status", "bets_open", "bets_closed"})

    def __init__(self, service: TableService):
        self.service = service
        self.state = ""
        self._handle: int | None = None
        self._due = False
        self._burn = False          # a house burn is announced: bets wait for its card

    def on_event(self, e: dict) -> None:
        kind = e["event"]
        if kind == "status":
            self.state, self._burn = e["state"], bool(e.get("house_burn"))
            if self._due and self.state == BETTING and not self._burn:
                self._due = False
                self._submit()
            elif self.state not in (BETTING, HOLD):
                self._due = False
        elif kind == "bets_open" and e.get("closes_in_s", 0) > 0:
            self._due = False
            self._handle = self.service.call_later(float(e["closes_in_s"]), self._close)
        elif kind == "bets_closed" and self._handle is not None:
            self.service.cancel(self._handle)
            self._handle = None

    publish = on_event      # an outlet at the actors' tap

    def _close(self) -> None:
        self._handle = None
        if self.state == BETTING and not self._burn:
            self._submit()
        elif self.state in (HOLD, BETTING):
            self._due = True

    def _submit(self) -> None:
        self.service.submit(command("close_bets", user="timer", role="system"))
