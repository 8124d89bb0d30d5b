"""The table's view for the floor (`{prefix}/{table}/state`), built on the loop's thread from
what the table publishes — its events and the `status` after every input — never by reading
the table from another thread. Each change is handed on as a new dict (never mutated after),
so the feed's thread may read it at any time. The last result and the road counts follow
the reveal rule (controller.reveal): under `on_reveal` a result counts from the dealer's
`reveal`, and a hold's detail names no card of a round still face down.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from controller.journal import Journal, utc_now
from controller.reveal import RevealGate, RevealMask

#: round_result fields a floor shows of the last result (the rest is on the events topic)
RESULT_FIELDS = ("shoe", "round", "winner", "player_total", "banker_total", "natural",
                 "game_card", "cards_dealt", "void", "reason", "demo")


class TableView:
    def __init__(self, name: str, profile: Any, on_change: Callable[[dict], None], *,
                 pit: str = ""):
        self.on_change = on_change
        self.base = {"table": name, "pit": pit or None, "game": profile.game,
                     "profile": profile.name}
        self.prompt = ""
        self.status: dict = {}
        self.last_result: dict | None = None
        self.road: dict[str, int] = {}
        self.links: dict[str, str] = {}
        self.hold_since: str | None = None
        self.gate, self.mask = RevealGate(), RevealMask(getattr(profile, "reveal", "on_read"))
        self.view: dict = {}

    def prime(self, journal: Journal) -> None:
        """After a restart: the current shoe's road and last result, and since when the table
        is on hold, from the journal (before the loop starts)."""
        shoe: list[dict] = []
        hold_utc = None
        for r in journal.records_backward():
            if r.kind in ("round_result", "reveal", "round_started", "shoe_ended"):
                shoe.append(r.data)
            elif r.kind == "hold" and hold_utc is None:
                hold_utc = r.utc
            elif r.kind == "resume" and hold_utc is None:
                hold_utc = ""          # a later resume: an older hold is over
            elif r.kind == "shoe_started":
                shoe.append(r.data)
                break
        for data in reversed(shoe):
            self.mask.note(data)
            for result in self.gate.publish(data):
                self._result(result)
        self.hold_since = hold_utc or None

    # ------------------------------------------------------------------ from the loop
    def publish(self, e: dict) -> None:
        """A publisher: the table's events (and its prompts, which are not journaled)."""
        kind = e["event"]
        self.mask.note(e)
        shown = self.gate.publish(e)
        if kind == "prompt":
            self.prompt = e.get("text", "")
        elif kind in ("round_result", "reveal"):
            if not shown:
                return
            for result in shown:
                self._result(result)
        elif kind == "shoe_started":
            self.road = {}
            self.last_result = None
        elif kind == "hold":
            self.hold_since = self.hold_since or utc_now()
        elif kind == "resume":
            self.hold_since = None
        elif kind == "alarm" and e.get("code") in ("link_lost", "link_back"):
            self.links[str(e.get("source") or "shoe")] = \
                "down" if e["code"] == "link_lost" else "up"
        else:
            return
        self._changed()

    def on_event(self, e: dict) -> None:
        """A subscriber: the `status` after every input."""
        if e.get("event") == "status":
            self.status = e
            if e.get("hold") is None:
                self.hold_since = None
            elif self.hold_since is None:
                self.hold_since = utc_now()
            self._changed()

    def _result(self, e: Mapping[str, Any]) -> None:
        self.last_result = {k: e[k] for k in RESULT_FIELDS if k in e}
        if "seq" in e:
            self.last_result["seq"] = e["seq"]
        if not e.get("void") and not e.get("demo") and e.get("winner"):
            w = str(e["winner"])
            self.road[w] = self.road.get(w, 0) + 1

    def _changed(self) -> None:
        s = self.status
        hold = s.get("hold")
        view = dict(self.base, state=s.get("state"), expects=s.get("expects"),
                    shoe=s.get("shoe"), round=s.get("round"),
                    prompt=self.mask.mask({"prompt": self.prompt})["prompt"],
                    hold=None if hold is None else {
                        "kind": hold.get("kind"),
                        "detail": self.mask.mask({"detail": hold.get("detail")})["detail"],
                        "kinds": hold.get("kinds"), "since": self.hold_since},
                    links=dict(self.links), last_result=self.last_result,
                    road=dict(self.road))
        if view != self.view:
            self.view = view
            self.on_change(view)
