"""The shoe at the table: a new shoe in, the shoe-start burn, the cut card, the shoe's end and
its count-back (by the shuffler, or read back through the shoe), reconciled card for card."""
from __future__ import annotations

from typing import Any, Callable, Mapping

from controller.games import procedure
from controller.shoe.cards import CARD_CODES, Card
from controller.table.desk import Desk
from controller.table.model import MachineInventory, ShoeState
from controller.table.states import BURN, BURNING, CLOSED, IDLE, LOADED, SHOE_ENDED, SHUFFLING
from controller.words import refuse


def flag_list(flags: Mapping[str, Any]) -> list[str]:
    return sorted(k for k, v in flags.items() if v) if flags else []


class Shoes:
    def __init__(self, d: Desk):
        self.d = d

    # ------------------------------------------------------------------ a new shoe
    def new(self, *, cut_position: Any, demo_rounds: Any, shuffler: bool,
            software: str, table: str = "", simulator: bool | None = None) -> None:
        """A new shoe: shuffled and counted by the shuffler, or loaded by hand."""
        d = self.d
        p = d.profile
        old = d.shoe
        if old is not None and not old.reconciled and not old.continuous:
            d.emit("alarm", source="inventory", code="not_counted",
                   text=f"shoe {old.number} ended without its rest counted back",
                   severity="warning")
        d.move("shuffle" if shuffler else "load")
        d.shoe_no += 1
        d.integrity.new_shoe()
        d.round = None
        d.hold = None
        d.shoe = ShoeState(d.shoe_no, p.decks, cut_position=cut_position,
                           demo_left=demo_rounds, continuous=p.continuous_shuffler,
                           shuffler=bool(shuffler))
        d.emit("shoe_started", decks=p.decks, cards=p.cards, cut_card_position=cut_position,
               profile=p.name, profile_sha256=p.sha256, game=p.game,
               **({"software_sha256": software} if software else {}),
               # which table, and whether its cards are a simulator's: the record says so
               # for whoever reads it later (a report, the floor store)
               **({"table_name": table} if table else {}),
               **({"simulator": simulator} if isinstance(simulator, bool) else {}),
               **({"reveal": p.reveal} if p.reveal != "on_read" else {}))
        if shuffler:
            d.emit("device_request", device="shuffler", action="shuffle", decks=p.decks)
        else:
            self.loaded()

    def loaded(self) -> None:
        """The shoe is in the shoe: the burn starts, or without one, the first round."""
        if self.d.profile.burn.rule == "none":
            self.d.move("no_burn")
            self.d.rounds.between()

    def shuffled(self, count: int, composition: tuple[tuple[str, int], ...] = ()) -> None:
        d = self.d
        if d.state != SHUFFLING:
            raise refuse("shuffled_not_now", state=d.state)
        if count != d.profile.cards:
            d.holds.problem("count_mismatch", f"the shuffler counted {count} cards; the shoe "
                            f"must hold {d.profile.cards}", counted=count,
                            expected=d.profile.cards)
            return
        if composition:
            # a shuffler that reads the cards says which: the right number of the wrong cards
            # (one swapped for another) is no shoe to deal either
            extra, missing = _wrong_cards(dict(composition), d.profile.decks)
            if extra or missing:
                d.holds.problem("count_mismatch", f"the shuffler counted {count} cards, "
                                f"but too many of {', '.join(extra) or 'none'} and too few of "
                                f"{', '.join(missing) or 'none'}", counted=count,
                                expected=d.profile.cards, extra=extra, missing=missing)
                return
        d.move("count_ok")
        d.emit("device_request", device="shuffler", action="deliver")
        self.loaded()

    # ------------------------------------------------------------------ the house burn
    def house_burned(self, card: Card, flags: Mapping[str, Any]) -> None:
        """The one card of a house burn, between rounds or while bets are open: burned,
        flagged, and recorded with who announced and who confirmed it."""
        d = self.d
        shoe = d.shoe
        assert shoe is not None
        announced, confirmed = shoe.house_burn_announced, shoe.house_burn_confirmed
        shoe.house_burn, shoe.house_burn_announced, shoe.house_burn_confirmed = False, "", ""
        shoe.inventory.record(card, "burn")
        d.emit("card", n=shoe.inventory.cards_out, code=card.code, slot=BURN,
               flags=flag_list({**flags, "house_burn": True}))
        d.emit("house_burn", stage="burned", code=card.code, announced_by=announced,
               **({"confirmed_by": confirmed} if confirmed else {}))
        if d.state == IDLE:
            d.rounds.between()
        elif d.auto_open and d.betting_seconds <= 0:
            d.rounds.close_bets()       # an unattended table: bets waited for the burn only

    # ------------------------------------------------------------------ the start burn
    def start_burn(self, card: Card, flags: Mapping[str, Any]) -> None:
        d = self.d
        shoe = d.shoe
        assert shoe is not None
        if not shoe.start_burn:
            shoe.start_burn_total = procedure.start_burn_total(d.profile, card)
        done = len(shoe.start_burn) + 1 >= (shoe.start_burn_total or 0)
        d.move("burn_done" if done else "burn_more")
        shoe.start_burn.append(card.code)
        shoe.inventory.record(card, "burn")
        d.emit("card", n=shoe.inventory.cards_out, code=card.code, slot=BURN,
               flags=flag_list(flags))
        if done:
            d.emit("burn", cards=list(shoe.start_burn))
            d.rounds.between()

    def cut_card(self) -> None:
        """The cut card is out (the shoe saw it, or the dealer reports it)."""
        shoe = self.d.shoe
        if shoe is not None and not shoe.cut_seen and self.d.state != SHOE_ENDED:
            shoe.cut_seen = True
            self.d.emit("cut_card", cards_out=shoe.inventory.cards_out)

    # ------------------------------------------------------------------ the shoe's end
    def over(self, reason: str, *, move: bool = True, **why: Any) -> None:
        """End the shoe, then ask for its rest to be counted back. `move`: the procedure's
        own end (`shoe_over`); a command that ends the shoe has made its move already."""
        d = self.d
        shoe = d.shoe
        assert shoe is not None
        if move:
            d.move("shoe_over")
        d.holds.set_aside()
        d.hold = None
        d.reveal_due = None      # a result never revealed stays off the scoreboard
        shoe.end_reason = reason
        shoe.house_burn, shoe.house_burn_announced = False, ""
        d.emit("shoe_ended", rounds=shoe.rounds, reason=reason, **why)
        if reason == "devices_lost":
            return      # the shoe's cards went with its devices: nothing is left to count
        if shoe.continuous:
            self.reconcile(rest=[], method="ledger")
        elif shoe.shuffler and self.rest_accounted():
            self.reconcile(rest=[], method="shuffler")     # nothing left to count
        elif shoe.shuffler:
            shoe.counting = "shuffler"
            d.emit("device_request", device="shuffler", action="count_rest")
        else:
            shoe.counting = "shoe"
            if self.rest_accounted():
                self.reconcile(rest=[], method="shoe")

    def empty(self, move: Callable[[], None] | None = None) -> None:
        """The shoe has no card left: a round in progress is void, and the shoe ends; during
        the count-back, the rest is all read. `move`: the command's own move to the shoe's
        end (by default the procedure's)."""
        d = self.d
        shoe = d.shoe
        where = d.where()
        if shoe is None or where == CLOSED:
            return
        if where == SHOE_ENDED:
            if move is not None:
                move()
            if shoe.counting == "shoe":
                self.reconcile(rest=list(shoe.rest), method="shoe")
            return
        in_round, in_burn = d.round_open(), d.state in (LOADED, BURNING)
        (move or (lambda: d.move("shoe_over")))()
        if in_round:
            d.rounds.void("exhausted")
        elif in_burn:
            shoe.invalid = True
        self.over("exhausted", move=False)

    def count_back(self, card: Card) -> None:
        """A card of the rest, read back through the shoe after it ended."""
        shoe = self.d.shoe
        assert shoe is not None
        shoe.rest.append(card.code)
        self.d.emit("count_back", n=len(shoe.rest))
        if self.rest_accounted():
            self.reconcile(rest=list(shoe.rest), method="shoe")

    def rest_accounted(self) -> bool:
        shoe = self.d.shoe
        assert shoe is not None
        return shoe.inventory.cards_out + len(shoe.rest) >= self.d.profile.cards

    def count_done(self, rest: list[str] | None = None, count: int | None = None,
                   method: str = "shoe") -> None:
        """The rest of the shoe is counted: reconcile now (also when cards are missing)."""
        shoe = self.d.shoe
        if shoe is None or self.d.state != SHOE_ENDED or shoe.reconciled:
            raise refuse("count_once")
        self.reconcile(rest=list(shoe.rest) if rest is None else rest, method=method,
                       count=count)

    def reconcile(self, rest: list[str], method: str, count: int | None = None) -> None:
        """Burns + dealt + removed + rest must be the shoe exactly; a difference is an alarm
        (counts only: the identities of cards never dealt are not published)."""
        d = self.d
        shoe = d.shoe
        assert shoe is not None
        inv = shoe.inventory
        if isinstance(inv, MachineInventory):
            problems = [] if inv.cards_out == len(inv.by_place["removed"]) else \
                [f"{inv.cards_out} card(s) out of the machine at the end"]
            remainder = d.profile.cards - inv.cards_out
        elif count is not None and not rest:
            expected = d.profile.cards - inv.cards_out
            problems = [] if count == expected else \
                [f"the shuffler counted {count} card(s) in the rest; {expected} expected"]
            remainder = count
        else:
            problems = inv.reconcile(rest)
            remainder = len(rest)
        shoe.counting = None
        shoe.reconciled = True
        d.emit("reconciliation", ok=not problems, method=method,
               burned=len(inv.by_place["burn"]), dealt=len(inv.by_place["hand"]),
               removed=len(inv.by_place["removed"]), remainder=remainder,
               differences=len(problems))
        if problems:
            d.emit("alarm", source="inventory", code="reconciliation",
                   text=f"{len(problems)} card(s) do not reconcile: " + "; ".join(problems[:5]),
                   severity="error")


__all__ = ["Shoes", "flag_list", "IDLE"]


def _wrong_cards(composition: Mapping[str, int], decks: int) -> tuple[list[str], list[str]]:
    """The codes a shuffler's count holds more copies of than `decks`, and those it holds
    fewer of (each code a shoe of `decks` decks holds `decks` times)."""
    def copies(n: object) -> int:        # a count that is no whole number: none of them
        return n if isinstance(n, int) and not isinstance(n, bool) else -1
    extra = sorted(str(c) for c, n in composition.items()
                   if c not in _CODES or copies(n) > decks or copies(n) < 0)
    missing = sorted(c for c in _CODES if copies(composition.get(c, 0)) < decks)
    return extra, missing


_CODES = frozenset(CARD_CODES)
