"""Plain, serialisable state of the shoe and the round in progress (snapshots restore these)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from controller.inventory import Inventory


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
    inventory: Inventory = None          # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.inventory is None:
            self.inventory = Inventory(self.decks)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["inventory"] = self.inventory.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "ShoeState":
        d = dict(d)
        inv = Inventory.from_dict(d.pop("inventory"))
        return cls(**d, inventory=inv)


@dataclass
class RoundState:
    number: int
    demo: bool = False
    hands: dict[str, list] = field(default_factory=dict)   # hand -> Card list
    burned_before: list[str] = field(default_factory=list)
    burn_due: int = 0
    flags: list[dict] = field(default_factory=list)        # irregularities and corrections
    decisions: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"number": self.number, "demo": self.demo,
                "hands": {k: [c.code for c in v] for k, v in self.hands.items()},
                "burned_before": list(self.burned_before), "burn_due": self.burn_due,
                "flags": list(self.flags), "decisions": dict(self.decisions)}

    @classmethod
    def from_dict(cls, d: dict) -> "RoundState":
        from controller.cards import parse_card
        hands = {k: [parse_card(c) for c in v] for k, v in d["hands"].items()}
        return cls(number=d["number"], demo=d["demo"], hands=hands,
                   burned_before=list(d["burned_before"]), burn_due=d["burn_due"],
                   flags=list(d["flags"]), decisions=dict(d.get("decisions", {})))
