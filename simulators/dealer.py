"""The virtual dealer and the virtual supervisor: they act on the table's prompts as people would.

Both see the table only as plain data (its state name and its hold record) and answer with
plain actions, so the controller's code path is the one a human dealer and supervisor use.

Virtual supervisor defaults (documented in the README, "Simulation"): an unreadable card → enter
its true code (read off the card); a card drawn when none was due → the profile's remedy
(`card_when_none_due`: burn, or void the round); a foreign card or one copy too many → remove
it (burn) and carry on; a card out face up → the profile's `face_up_card` remedy (burn and
replace, or void); a shuffler count mismatch → reject the shoe and have it reshuffled; a lost
device link or a device alarm → resume once the device is back; anything else → void the round.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from simulators.shoe import Fault, ShoeModel

SUPERVISOR = "virtual-supervisor"


def wants_card(state: str) -> bool:
    """The table expects a card from the shoe (start burn or a dealing phase)."""
    return state in ("loaded", "burning") or state.startswith("dealing.")


@dataclass
class VirtualDealer:
    """Pulls cards when the table is ready for one; commits the dealer faults it is given."""
    model: ShoeModel
    faults: tuple[Fault, ...] = ()
    pace_s: float = 1.0                       # simulated seconds between two pulls
    clock: Callable[[], float] | None = None  # advanced by `pace_s` before each pull
    misplaced: list[int] = field(default_factory=list)

    def act(self, state: str) -> list[str]:
        """One move for a table in `state`: the codes drawn ([] when none was due or none left)."""
        if not wants_card(state):
            return []
        advance = getattr(self.clock, "advance", None)
        if advance is not None:
            advance(self.pace_s)
        index = self.model.position
        codes = self.model.pull()
        # skip_burn@N: the first between-round burn at or after card N goes on Player's box
        due = [f for f in self.faults if f.kind == "skip_burn" and f.at <= index]
        if codes and state == "dealing.burn" and due:
            self.faults = tuple(f for f in self.faults if f is not due[0])
            self.misplaced.append(index)
        return codes

    def take_misplaced(self) -> list[int]:
        out, self.misplaced = self.misplaced, []
        return out


@dataclass
class VirtualSupervisor:
    """Resolves a hold the way the profile's documented defaults say."""
    card_when_none_due: str = "burn"
    face_up_card: str = "valid"
    true_code: Callable[[int], str | None] = lambda index: None

    def decide(self, hold: dict, round_open: bool, cards_out: int) -> dict:
        """The action (name, args, reason) for the latest problem of a hold record."""
        last = hold["problems"][-1]
        kind = last["kind"]
        if kind == "unreadable_card":
            code = self.true_code(cards_out)
            if code:
                return _act("enter_card", f"card read by eye: {code}", code=code)
            return _act("void_round", "the card could not be identified")
        if kind in ("card_not_due", "card_while_betting"):
            if self.card_when_none_due == "void" and round_open:
                return _act("void_round", "profile remedy for a card drawn when none was due")
            return _act("burn_card", "profile remedy: the stray card is burned")
        if kind == "face_up_card":
            if self.face_up_card == "void" and round_open:
                return _act("void_round", "profile remedy for a card out face up")
            return _act("burn_card", "profile remedy: the face-up card is burned and replaced")
        if kind == "foreign_card":
            return _act("remove_card", "card removed from play; shoe flagged", code=last.get("code"))
        if kind == "count_mismatch":
            return _act("reject_count", "count does not match the shoe: reshuffle and recount")
        if kind in ("hold", "device_alarm", "link_lost", "integrity_alarm"):
            return _act("resume", "device checked and back in order")
        if round_open:
            return _act("void_round", f"could not be resolved at the table ({kind})")
        return _act("resume", f"checked ({kind})")


def _act(action: str, reason: str, **args: object) -> dict:
    return {"action": action, "args": {k: v for k, v in args.items() if v is not None},
            "reason": reason, "user": SUPERVISOR, "role": "supervisor"}
