"""The table's state as typed, serialisable data: the shoe, the round in progress and the hold.

Only `controller.table` writes these; snapshots store them with `to_dict` and restore them
with `from_dict`, so a restarted table stands exactly where the journal left it.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

from controller.shoe.cards import Card, parse_card
from controller.shoe.inventory import PLACES, Inventory

RETURNED = "returned"
_blank = object.__new__


def cards_drawn(inventory: Inventory) -> int:
    """Cards read out of the shoe so far (burns, hands, removed), whatever went back since."""
    return inventory.drawn


@dataclass
class MachineInventory(Inventory):
    """The ledger of a continuous shuffler: a round's cards go back into the machine after its
    result. `seen` counts the cards out of the machine now, so one code can never be out more
    times than the machine holds it: out now = burns + hands + removed − returned."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.by_place.setdefault(RETURNED, [])

    def return_cards(self, codes: list[str]) -> None:
        for code in codes:
            if self.seen[code] <= 0:
                raise ValueError(f"{code} goes back into the machine but is not out of it")
            self.seen[code] -= 1
            self.by_place[RETURNED].append(code)

    def return_all(self, first: list[str]) -> list[str]:
        """Put every card out back in: `first` (the round's cards, in dealing order), then any
        other card out (a stray card burned); the codes returned. Copies beyond what the
        machine holds (a foreign card) stay out, for reconciliation to show."""
        out = Counter({code: min(n, self.decks) for code, n in self.seen.items() if n > 0})
        codes = []
        for code in first:
            if out[code] > 0:
                codes.append(code)
                out[code] -= 1
        codes += sorted(out.elements())
        self.return_cards(codes)
        return codes

    @classmethod
    def from_dict(cls, d: dict) -> "MachineInventory":
        inv = cls(d["decks"], unidentified=d.get("unidentified", 0))
        for place in PLACES:
            for code in d["by_place"].get(place, []):
                inv.record(parse_card(code), place)
        inv.return_cards(list(d["by_place"].get(RETURNED, [])))
        return inv


@dataclass
class ShoeState:
    number: int
    decks: int
    cut_position: int | None = None     # cards in front of the cut card, when known
    cut_seen: bool = False              # the cut card has come out
    cut_round: int | None = None        # the round in which the card behind it was drawn
    start_burn: list[str] = field(default_factory=list)
    start_burn_total: int | None = None  # known once the first card is turned
    rounds: int = 0                     # rounds opened in this shoe (demo and void included)
    demo_left: int = 0
    invalid: bool = False
    house_burn: bool = False            # a house burn is due: the next card is burned
    house_burn_announced: str = ""      # who announced a house burn not yet made
    house_burn_confirmed: str = ""      # the supervisor who confirmed it ("" : the dealer alone)
    continuous: bool = False            # dealt by a continuous shuffler: cards go back
    shuffler: bool = False              # shuffled and counted by the shuffler
    end_reason: str | None = None       # set once the shoe is due to end
    counting: str | None = None         # count-back under way: "shuffler" or "shoe"
    rest: list[str] = field(default_factory=list)   # the rest read back through the shoe
    reconciled: bool = False
    reads: int = 0                      # reads and failed reads from the shoe, and unread cards
    inventory: Inventory = None          # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.inventory is None:
            self.inventory = MachineInventory(self.decks) if self.continuous \
                else Inventory(self.decks)

    def to_dict(self) -> dict:
        # field by field (lists copied), not `asdict`, which deep-copies the whole ledger
        # only for it to be replaced by the ledger's own record
        d = {name: getattr(self, name) for name in _SHOE_FIELDS}
        d["start_burn"], d["rest"] = list(self.start_burn), list(self.rest)
        d["inventory"] = self.inventory.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ShoeState":
        d = dict(d)
        kind = MachineInventory if d.get("continuous") else Inventory
        inv = kind.from_dict(d.pop("inventory"))
        return cls(**d, inventory=inv)


_SHOE_FIELDS = tuple(f.name for f in fields(ShoeState) if f.name != "inventory")


@dataclass
class Stakes:
    """Chemin de Fer's stakes on a coup: what the punters put up and called while bets were
    open, and — once bets close — what the bank covered and who plays the hand for all."""
    offered: dict[int, int] = field(default_factory=dict)   # seat → stake
    banco: list[int] = field(default_factory=list)          # seats that called banco, in order
    limit: int | None = None                                # the banker covers up to this
    accepted: dict[int, int | None] | None = None           # set when bets close
    refused: dict[int, int] = field(default_factory=dict)
    active: int | None = None                               # who plays the hand for all
    banco_seat: int | None = None

    def result_fields(self) -> dict[str, Any]:
        """A round result's `stakes`, `active_player` and `banco` (seats as JSON keys)."""
        return {"stakes": {str(k): v for k, v in (self.accepted or {}).items()},
                "active_player": self.active, "banco": self.banco_seat}

    def to_dict(self) -> dict:
        return {"offered": {str(k): v for k, v in self.offered.items()},
                "banco": list(self.banco), "limit": self.limit,
                "accepted": None if self.accepted is None else
                {str(k): v for k, v in self.accepted.items()},
                "refused": {str(k): v for k, v in self.refused.items()},
                "active": self.active, "banco_seat": self.banco_seat}

    @classmethod
    def from_dict(cls, d: dict) -> "Stakes":
        return cls({int(k): v for k, v in d["offered"].items()}, list(d["banco"]), d["limit"],
                   None if d["accepted"] is None else
                   {int(k): v for k, v in d["accepted"].items()},
                   {int(k): v for k, v in d["refused"].items()}, d["active"], d["banco_seat"])


@dataclass(slots=True)
class RoundState:
    number: int
    demo: bool = False
    hands: dict[str, list[Card]] = field(default_factory=dict)
    burned_before: list[str] = field(default_factory=list)
    burn_due: int = 0
    flags: list[dict] = field(default_factory=list)        # irregularities and corrections
    decisions: dict[str, Any] = field(default_factory=dict)  # decision name -> value
    pending: str | None = None                             # the decision the deal waits for
    bank_seat: int | None = None                           # the seat holding the bank
    cards: int = 0                                         # cards dealt to the hands
    after_bets: str | None = None      # the step due once bets close (bets after a first card)
    stakes: Stakes | None = None       # games where punters stake against a bank (chemin de fer)

    @classmethod
    def opened(cls, number: int, demo: bool, hands: dict[str, list[Card]], burn_due: int,
               decisions: dict[str, Any], bank_seat: int | None,
               stakes: "Stakes | None") -> "RoundState":
        """A round as it opens: `RoundState(number, demo=…, hands=…, burn_due=…, decisions=…,
        bank_seat=…, stakes=…)`, every other field its default, made field by field (a
        dataclass's __init__ called with keywords through its type packs them in a dict
        first: a table opens a round every few cards)."""
        r = _blank(cls)
        r.number, r.demo, r.hands, r.burned_before, r.burn_due = number, demo, hands, [], burn_due
        r.flags, r.decisions, r.pending, r.bank_seat, r.cards = [], decisions, None, bank_seat, 0
        r.after_bets, r.stakes = None, stakes
        return r

    def layout(self) -> dict[str, list[str]]:
        return {k: [c.code for c in v] for k, v in self.hands.items()}

    def to_dict(self) -> dict:
        return {"number": self.number, "demo": self.demo, "hands": self.layout(),
                "burned_before": list(self.burned_before), "burn_due": self.burn_due,
                "flags": list(self.flags), "decisions": dict(self.decisions),
                "pending": self.pending, "bank_seat": self.bank_seat, "cards": self.cards,
                "after_bets": self.after_bets,
                "stakes": None if self.stakes is None else self.stakes.to_dict()}

    @classmethod
    def from_dict(cls, d: dict) -> "RoundState":
        hands = {k: [parse_card(c) for c in v] for k, v in d["hands"].items()}
        return cls(number=d["number"], demo=d["demo"], hands=hands,
                   burned_before=list(d["burned_before"]), burn_due=d["burn_due"],
                   flags=list(d["flags"]), decisions=dict(d.get("decisions", {})),
                   pending=d.get("pending"), bank_seat=d.get("bank_seat"),
                   cards=d.get("cards", sum(len(v) for v in hands.values())),
                   after_bets=d.get("after_bets"),
                   stakes=Stakes.from_dict(d["stakes"]) if d.get("stakes") else None)


@dataclass
class Problem:
    """One reason the table is on hold (the latest decides the remedies offered)."""
    kind: str
    detail: str
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "detail": self.detail, **self.extra}

    @classmethod
    def from_dict(cls, d: dict) -> "Problem":
        extra = {k: v for k, v in d.items() if k not in ("kind", "detail")}
        return cls(d["kind"], d["detail"], extra)


@dataclass
class QueuedRead:
    """A read that arrived while the table was on hold, kept for the supervisor; `code` None:
    the shoe reported a card it could not read (`flags` say why)."""
    code: str | None
    flags: dict[str, Any] = field(default_factory=dict)


@dataclass
class Hold:
    resume_to: str
    problems: list[Problem] = field(default_factory=list)
    queued: list[QueuedRead] = field(default_factory=list)
    link_back: bool = False
    #: device inputs that need the state the hold came from (a shuffled shoe, a counted rest),
    #: as journaled; applied in their order once the hold is left
    kept: list[dict] = field(default_factory=list)

    @property
    def last(self) -> Problem:
        return self.problems[-1]

    @property
    def kinds(self) -> set[str]:
        return {p.kind for p in self.problems}

    def to_dict(self) -> dict:
        return {"resume_to": self.resume_to, "problems": [p.as_dict() for p in self.problems],
                "queued": [{"code": q.code, "flags": dict(q.flags)} for q in self.queued],
                "link_back": self.link_back, "kept": [dict(k) for k in self.kept]}

    @classmethod
    def from_dict(cls, d: dict) -> "Hold":
        return cls(d["resume_to"], [Problem.from_dict(p) for p in d["problems"]],
                   [QueuedRead(q["code"], dict(q.get("flags", {}))) for q in d.get("queued", [])],
                   bool(d.get("link_back", False)), [dict(k) for k in d.get("kept", [])])
