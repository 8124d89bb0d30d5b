"""Punto Banco (RULES.md §1): naturals, the third-card tableau as data, result, settlement."""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping

from controller.cards import Card, codes, hand_total

#: Player draws on these two-card totals (0–5), stands on 6–7; 8–9 are naturals.
PLAYER_DRAWS_ON = frozenset(range(0, 6))
#: Banker's rule when Player stood: draws on 0–5.
BANKER_DRAWS_WHEN_PLAYER_STOOD = frozenset(range(0, 6))
#: Banker's rule when Player drew a third card of value x: banker total → the x that make it draw.
BANKER_DRAWS_ON_THIRD = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset(range(10)) - {8},
    4: frozenset(range(2, 8)),
    5: frozenset(range(4, 8)),
    6: frozenset({6, 7}),
    7: frozenset(),
}

PHASES = ("P1", "B1", "P2", "B2", "player_third", "banker_third")
_HAND_OF = {"P1": "player", "P2": "player", "player_third": "player",
            "B1": "banker", "B2": "banker", "banker_third": "banker"}
ONE = Fraction(1)


def is_natural(player: list[Card], banker: list[Card]) -> bool:
    return hand_total(player[:2]) >= 8 or hand_total(banker[:2]) >= 8


def player_draws(player_total: int) -> bool:
    return player_total in PLAYER_DRAWS_ON


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """Whether Banker draws on `banker_total`; `player_third` is None when Player stood."""
    if player_third is None:
        return banker_total in BANKER_DRAWS_WHEN_PLAYER_STOOD
    return player_third in BANKER_DRAWS_ON_THIRD.get(banker_total, frozenset())


def next_phase(player: list[Card], banker: list[Card]) -> str | None:
    """The next card due: P1, B1, P2, B2, player_third, banker_third, or None (round over)."""
    n_p, n_b = len(player), len(banker)
    if n_p + n_b < 4:
        return ("P1", "B1", "P2", "B2")[n_p + n_b]
    if is_natural(player, banker):
        return None
    if n_p == 2 and n_b == 2 and player_draws(hand_total(player)):
        return "player_third"
    if n_b == 2:
        third = player[2].point if n_p == 3 else None
        if banker_draws(hand_total(banker), third):
            return "banker_third"
    return None


def winner(player: list[Card], banker: list[Card]) -> str:
    p, b = hand_total(player), hand_total(banker)
    return "player" if p > b else "banker" if b > p else "tie"


def settle(player: list[Card], banker: list[Card], paytable: Mapping) -> dict[str, Fraction]:
    """Net result per unit for every bet in `paytable` (win = payout, loss = −1, push = 0)."""
    win = winner(player, banker)
    n_cards = len(player) + len(banker)
    out: dict[str, Fraction] = {}
    for bet, rule in paytable.items():
        if bet == "player":
            r = Fraction(0) if win == "tie" else rule.pays if win == "player" else -ONE
        elif bet == "banker":
            if win == "tie":
                r = Fraction(0)
            elif win == "banker":
                on_six = rule.option("on_six")
                r = on_six if on_six is not None and hand_total(banker) == 6 else rule.pays
            else:
                r = -ONE
        elif bet == "tie":
            r = rule.pays if win == "tie" else -ONE
        elif bet == "player_pair":
            r = rule.pays if player[0].rank == player[1].rank else -ONE
        elif bet == "banker_pair":
            r = rule.pays if banker[0].rank == banker[1].rank else -ONE
        elif bet == "big":
            r = rule.pays if n_cards >= 5 else -ONE
        elif bet == "small":
            r = rule.pays if n_cards == 4 else -ONE
        else:
            raise KeyError(f"punto_banco has no bet {bet!r}")
        out[bet] = r
    return out


BETS = ("player", "banker", "tie", "player_pair", "banker_pair", "big", "small")


class PuntoBancoRules:
    game = "punto_banco"
    phases = PHASES
    bets = BETS

    def new_hands(self) -> dict[str, list[Card]]:
        return {"player": [], "banker": []}

    def next_phase(self, hands) -> str | None:
        return next_phase(hands["player"], hands["banker"])

    def place(self, hands, phase: str, card: Card) -> None:
        hands[_HAND_OF[phase]].append(card)

    def outcome(self, hands) -> dict:
        p, b = hands["player"], hands["banker"]
        return {"player": codes(p), "banker": codes(b),
                "player_total": hand_total(p), "banker_total": hand_total(b),
                "winner": winner(p, b), "natural": is_natural(p, b)}

    def settle(self, hands, paytable: Mapping) -> dict[str, Fraction]:
        return settle(hands["player"], hands["banker"], paytable)


RULES = PuntoBancoRules()
