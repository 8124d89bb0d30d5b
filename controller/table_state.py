"""Plain, serialisable state of the shoe and the round in progress (snapshots restore these)."""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from controller.cards import parse_card
from controller.inventory import PLACES, Inventory

RETURNED = "returned"


def cards_drawn(inventory: Inventory) -> int:
    """Cards read out of the shoe so far (burns, hands, removed), whatever went back since."""
    return sum(len(inventory.by_place[p]) for p in PLACES)


@dataclass
class MachineInventory(Inventory):
    """The ledger of a continuous shuffler (RULES.md §2): a round's cards go back into the
    machine after its result. `seen` counts the cards out of the machine now, so one code can
    never be out more times than the machine holds it, and reconciliation against the cards
    in the machine holds at any time: out now = burns + hands + removed − returned."""

    def __post_init__(self) -> None:
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
        inv = cls(d["decks"])
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
    continuous: bool = False            # dealt by a continuous shuffler: cards go back
    inventory: Inventory = None          # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.inventory is None:
            self.inventory = MachineInventory(self.decks) if self.continuous \
                else Inventory(self.decks)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["inventory"] = self.inventory.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ShoeState":
        d = dict(d)
        kind = MachineInventory if d.get("continuous") else Inventory
        inv = kind.from_dict(d.pop("inventory"))
        return cls(**d, inventory=inv)


@dataclass
class RoundState:
    number: int
    demo: bool = False
    hands: dict[str, list] = field(default_factory=dict)   # hand -> Card list
    burned_before: list[str] = field(default_factory=list)
    burn_due: int = 0
    flags: list[dict] = field(default_factory=list)        # irregularities and corrections
    decisions: dict = field(default_factory=dict)          # decision name -> value (the rules')
    pending: str | None = None                             # the decision the deal waits for
    bank_seat: int | None = None                           # the seat holding the bank

    def to_dict(self) -> dict:
        return {"number": self.number, "demo": self.demo,
                "hands": {k: [c.code for c in v] for k, v in self.hands.items()},
                "burned_before": list(self.burned_before), "burn_due": self.burn_due,
                "flags": list(self.flags), "decisions": dict(self.decisions),
                "pending": self.pending, "bank_seat": self.bank_seat}

    @classmethod
    def from_dict(cls, d: dict) -> "RoundState":
        hands = {k: [parse_card(c) for c in v] for k, v in d["hands"].items()}
        return cls(number=d["number"], demo=d["demo"], hands=hands,
                   burned_before=list(d["burned_before"]), burn_due=d["burn_due"],
                   flags=list(d["flags"]), decisions=dict(d.get("decisions", {})),
                   pending=d.get("pending"), bank_seat=d.get("bank_seat"))
