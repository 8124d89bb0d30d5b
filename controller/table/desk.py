"""The table's state and plumbing, shared by its parts: the profile and rules, where the machine
stands, the shoe, the round and the hold as typed data, and the events a move causes.

Only the table's parts (`controller.table`) hold a `Desk`; everyone else sees the table's
public surface (`controller.table.core.Table`). Events go to `outbox` as plain dicts;
`Table.apply` hands them to the caller, who journals them before anyone sees them.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from controller.games import GameRules, as_banking, as_stakes, get_rules
from controller.settings.profile import Profile
from controller.shoe.integrity import IntegrityWatch
from controller.table.machine import GameMachine, machine_for
from controller.table.model import Hold, RoundState, ShoeState
from controller.table.states import BETTING, CLOSED, DEALING, HOLD, origin_of, shown

if TYPE_CHECKING:
    from controller.table.holds import Holds
    from controller.table.reads import Reads
    from controller.table.rounds import Rounds
    from controller.table.shoes import Shoes
    from controller.table.banking import Banking

ROUND_EVENTS_WITHOUT_ROUND = frozenset({"shoe_started", "shoe_ended", "burn", "reconciliation"})


class Desk:
    """What the table's parts share. One thread drives a table at a time."""

    holds: "Holds"
    shoes: "Shoes"
    rounds: "Rounds"
    reads: "Reads"
    banking: "Banking | None"

    def __init__(self, profile: Profile, *, auto_open: bool, betting_seconds: float,
                 initial: str = CLOSED):
        self.profile = profile
        self.rules: GameRules = get_rules(profile.game)
        self.banking_game = as_banking(self.rules) is not None
        self.stakes_game = as_stakes(self.rules) is not None
        self.auto_open, self.betting_seconds = auto_open, betting_seconds
        self.mstate = initial               # the machine's state (`hold.<origin>` on a hold)
        self.state = shown(initial)         # the state the table shows
        self.shoe: ShoeState | None = None
        self.round: RoundState | None = None
        self.hold: Hold | None = None
        self.shoe_no = 0
        self.round_count = 0
        self.reveal_due: int | None = None  # the round whose result waits for the reveal
        self.bank: dict | None = None
        self.integrity = IntegrityWatch()
        self.outbox: list[dict] = []
        self.moved = False                  # a command's move was made (the machine says)
        self.profile_text: str | None = None
        self._thread = threading.get_ident()
        self.machine: GameMachine = machine_for(profile.game)
        self._fire = self.machine.fire
        #: the moves that go one way only, by trigger and state (`GameMachine.direct`): the
        #: rounds' common steps make them without the machine's call
        self.direct = self.machine.direct

    # ------------------------------------------------------------------ the machine
    def move(self, trigger: str) -> None:
        """Make one move of the machine; a move it does not allow raises MoveRefused."""
        try:
            # the one way this move goes from here, if it has only one (GameMachine.direct)
            self.mstate, self.state = self.direct[trigger][self.mstate]
            return
        except KeyError:
            pass
        if self._thread != threading.get_ident():
            self._rebind()
        self.machine.cursor.at = self
        self._fire[trigger]()

    def _rebind(self) -> None:
        """Another thread drives the table now: its machine is that thread's."""
        self._thread = threading.get_ident()
        self.machine = machine_for(self.profile.game)
        self._fire = self.machine.fire
        self.direct = self.machine.direct

    def stand(self, state: str) -> None:
        """Stand in `state` without a move (a restore, or the hold a defect leaves)."""
        if self._thread != threading.get_ident():
            self._rebind()
        self.machine.set_state(self, state)

    # ------------------------------------------------------------------ events
    def emit(self, event: str, **fields: Any) -> None:
        if self.round is not None and event not in ROUND_EVENTS_WITHOUT_ROUND:
            self.outbox.append({"event": event, "shoe": self.shoe_no,
                                "round": self.round.number, **fields})
        else:
            self.outbox.append({"event": event, "shoe": self.shoe_no, **fields})

    # ------------------------------------------------------------------ where the table is
    def where(self) -> str:
        """The state that counts for rules: the one a hold will return to, if on hold."""
        return origin_of(self.mstate) or self.state

    @property
    def on_hold(self) -> bool:
        return self.state == HOLD

    def round_open(self) -> bool:
        """A round is in progress (bets open or cards being dealt), possibly on hold."""
        return self.round is not None and self.where().startswith((DEALING, BETTING))

    def hands_for_rules(self) -> dict:
        """The round's hands as the rules see them: the cards, plus the decisions if the game
        has any (the same lists and dict, so the rules' updates land in the round state)."""
        rnd = self.round
        assert rnd is not None
        if self.banking_game:
            return {**rnd.hands, "decisions": rnd.decisions}
        return rnd.hands

    def summary(self) -> dict:
        d: dict[str, Any] = {"state": self.state}
        if self.round is not None:
            d["round"] = self.round.number
            d["hands"] = self.round.layout()
        if self.hold is not None:
            d["hold"] = self.hold.last.kind
        return d
