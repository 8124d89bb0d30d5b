"""Baccarat en Banque, "à deux tableaux" (docs/rules.md): the bank against a right and a left hand.

Dealing order. The seed gives the two-tableau game only in outline (the bank plays two player
hands, right and left, each playing the player's rules; the banker's draw is free and made once
for both hands; each hand is settled against the bank), so the order is read from chemin de
fer's (player hand first, banker last) extended to two tableaux, with the right hand — named
first in the seed — first:

- R1, L1, B1, R2, L2, B2: one card at a time to the right hand, the left hand, the bank, twice;
- an 8 or 9 on two cards is a natural, shown at once: a natural hand takes no card, and a bank
  natural ends the coup for both hands;
- the right hand acts (right_third or stand: draw on 0–4, stand on 6–7, choose on 5 —
  decision `right_draw`), then the left hand (`left_draw`);
- then the bank, once for both hands, at its free choice (decision `bank_draw`) and only if at
  least one hand is not a natural: bank_third or stand.

Settlement per side: a hand or bank natural is compared on two cards (a natural is settled at
once), otherwise the final totals. Bets: "right", "left" (the punters' stakes on each tableau)
and "bank_right", "bank_left" (the bank's stake against each tableau, after any commission in
the paytable); a tie is a push.

The bank: the banker holds it coup after coup, win or lose (the house's or a player's bank for
the shoe); it changes hands only by a `banker_seat` decision. The table keeps it as plain data
(`new_bank`, `bank_after_coup`, `bank_with_banker`).

Default decisions (simulation without a decisions file): a hand on 5 draws; the bank draws on
0–5 and stands on 6–7, whatever the hands' third cards. False coups of the hands, and a bank
card when none can be due, are reported by `check_draw` like chemin de fer's.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping

from controller.shoe.cards import Card, codes, hand_total
from controller.errors import InputError
from controller.games.chemin_de_fer import (
    DRAW, OPTION, STAND, BankingGame, BankRotation, FalseCoup, parse_move, player_false_coup,
    player_rule, remedy_of)
from controller.games.procedure import RESULT, Procedure

GAME = "baccarat_banque"
SIDES = ("right", "left")
PHASES = ("R1", "L1", "B1", "R2", "L2", "B2", "right_third", "left_third", "bank_third")
INITIAL = PHASES[:6]
_HAND_OF = {"R1": "right", "R2": "right", "right_third": "right",
            "L1": "left", "L2": "left", "left_third": "left",
            "B1": "bank", "B2": "bank", "bank_third": "bank"}
BETS = ("right", "left", "bank_right", "bank_left")
DRAW_DECISIONS = ("right_draw", "left_draw", "bank_draw")
SEAT_DECISIONS = ("banker_seat", "right_player", "left_player")
CUT_CARD_FROM_END = 10
#: the default bank policy draws on these totals
BANK_DEFAULT_DRAWS_ON = frozenset(range(0, 6))
ONE = Fraction(1)


def natural(hand: list[Card]) -> bool:
    return len(hand) >= 2 and hand_total(hand[:2]) >= 8


def side_done(hands, side: str) -> bool:
    """Whether a hand has finished: natural, three cards, standing on 6–7 or chose to stand."""
    hand = hands[side]
    if natural(hand) or len(hand) == 3:
        return True
    rule = player_rule(hand_total(hand))
    return rule == STAND or rule == OPTION and hands["decisions"].get(f"{side}_draw") is False


def next_phase(hands) -> str | None:
    """The next card phase, "decide:<name>" when a choice is due first, or None (coup over)."""
    n = sum(len(hands[h]) for h in ("right", "left", "bank"))
    if n < 6:
        return INITIAL[n]
    if natural(hands["bank"]):
        return None
    for side in SIDES:
        if not side_done(hands, side):
            must = player_rule(hand_total(hands[side])) == DRAW
            if must or hands["decisions"].get(f"{side}_draw"):
                return f"{side}_third"
            return f"decide:{side}_draw"
    if all(natural(hands[s]) for s in SIDES) or len(hands["bank"]) == 3:
        return None
    chosen = hands["decisions"].get("bank_draw")
    if chosen is None:
        return "decide:bank_draw"
    return "bank_third" if chosen else None


def check_draw(hands, move: str, options: Mapping | None = None) -> FalseCoup | None:
    """Whether `move` now ("right_third", "left_third", "bank_third", "stand:right",
    "stand:left", "stand:bank") is a false coup. A later hand acting closes the turns of the
    earlier ones: a hand that still had to draw stood. The bank's choice is free, so only a
    bank card that cannot be due (after a natural, a fourth card, both hands natural) is one."""
    hand, draws = parse_move(GAME, move, {"right_third": "right", "left_third": "left",
                                          "bank_third": "bank"})
    if sum(len(hands[h]) for h in ("right", "left", "bank")) < 6:
        raise ValueError(f"{GAME}: the first six cards are not dealt yet")
    remedy = remedy_of(options)

    def coup(who: str, why: str, drawn: bool) -> FalseCoup:
        return FalseCoup(who, f"{who} {why}", remedy, drawn)

    if natural(hands["bank"]):
        return coup(hand, "draws after the bank's natural", True) if draws else None
    later = SIDES[SIDES.index(hand) + 1:] + ("bank",) if hand in SIDES else ()
    if hand in SIDES:
        cards = hands[hand]
        if natural(cards):
            return coup(hand, "draws on a natural", True) if draws else None
        if len(cards) == 3 or any(len(hands[h]) == 3 for h in later):
            return coup(hand, "draws out of turn", True) if draws else None
    earlier = SIDES[:SIDES.index(hand) + 1] if hand in SIDES else SIDES
    for side in earlier:
        cards = hands[side]
        if natural(cards) or len(cards) == 3:
            continue
        acting = side == hand
        why = player_false_coup(hand_total(cards), draws if acting else False,
                                hands["decisions"].get(f"{side}_draw"))
        if why:
            return coup(side, why, draws and acting)
    if hand == "bank" and draws:
        if len(hands["bank"]) == 3:
            return coup("bank", "draws a fourth card", True)
        if all(natural(hands[s]) for s in SIDES):
            return coup("bank", "draws with both hands natural", True)
    return None


def side_winner(hands, side: str) -> str:
    """`side`, "bank" or "tie" for one tableau against the bank."""
    hand, bank = hands[side], hands["bank"]
    if natural(hand) or natural(bank):
        hand, bank = hand[:2], bank[:2]
    ht, bt = hand_total(hand), hand_total(bank)
    return side if ht > bt else "bank" if bt > ht else "tie"


def settle(hands, paytable: Mapping) -> dict[str, Fraction]:
    """Net per unit for the punters' stakes on each tableau and the bank's against each."""
    results = {s: side_winner(hands, s) for s in SIDES}
    out: dict[str, Fraction] = {}
    for bet, rule in paytable.items():
        if bet not in BETS:
            raise KeyError(f"{GAME} has no bet {bet!r}")
        if rule.pays is None:
            raise ValueError(f"{GAME}: bet {bet!r} needs a payout (pays)")
        side = bet.removeprefix("bank_")
        backs = "bank" if bet.startswith("bank_") else side
        win = results[side]
        out[bet] = Fraction(0) if win == "tie" else rule.pays if win == backs else -ONE
    return out


#: the coup's procedure: six cards, the right hand's turn, the left hand's, then the bank's
#: free choice once for both (no bank card after a bank natural or two hand naturals)
PROCEDURE = Procedure(
    game=GAME, slots=PHASES, decisions=DRAW_DECISIONS,
    successors={"R1": ("L1",), "L1": ("B1",), "B1": ("R2",), "R2": ("L2",), "L2": ("B2",),
                "B2": ("right_third", "decide_right_draw", "left_third", "decide_left_draw",
                       "decide_bank_draw", RESULT),
                "decide_right_draw": ("right_third", "left_third", "decide_left_draw",
                                      "decide_bank_draw"),
                "right_third": ("left_third", "decide_left_draw", "decide_bank_draw"),
                "decide_left_draw": ("left_third", "decide_bank_draw"),
                "left_third": ("decide_bank_draw",),
                "decide_bank_draw": ("bank_third", RESULT),
                "bank_third": (RESULT,)})


class BaccaratBanqueRules(BankingGame):
    game = GAME
    phases = PHASES
    procedure = PROCEDURE
    bets = BETS
    hand_of = _HAND_OF
    draw_decisions = DRAW_DECISIONS
    seat_decisions = SEAT_DECISIONS

    def new_hands(self) -> dict:
        return {"right": [], "left": [], "bank": [], "decisions": {}}

    def _next_phase(self, hands) -> str | None:
        return next_phase(hands)

    def default_decision(self, hands, name: str) -> bool:
        """A hand on 5 draws; the bank draws on 0–5 and stands on 6–7."""
        if name == "bank_draw":
            return hand_total(hands["bank"]) in BANK_DEFAULT_DRAWS_ON
        if name in DRAW_DECISIONS:
            return True
        raise InputError(f"{GAME}: no default for decision {name!r}; the table supplies it")

    def check_draw(self, hands, move: str, options: Mapping | None = None) -> FalseCoup | None:
        return check_draw(hands, move, options)

    def bank_after_coup(self, bank: Mapping, hands, *, void: bool = False,
                        misdraw: bool = False) -> dict:
        """The banker keeps the bank after every coup (a misdraw is the bank's free choice
        here, never a false coup)."""
        return BankRotation.from_dict(bank).to_dict()

    def outcome(self, hands) -> dict:
        out: dict = {h: codes(hands[h]) for h in ("right", "left", "bank")}
        out.update({f"{h}_total": hand_total(hands[h]) for h in ("right", "left", "bank")})
        out.update({f"{s}_winner": side_winner(hands, s) for s in SIDES})
        out["naturals"] = [h for h in ("right", "left", "bank") if natural(hands[h])]
        out["decisions"] = dict(hands["decisions"])
        return out

    def settle(self, hands, paytable: Mapping) -> dict[str, Fraction]:
        return settle(hands, paytable)


RULES = BaccaratBanqueRules()
