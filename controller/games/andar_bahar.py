"""Andar Bahar (docs/rules.md): game card, alternate dealing to Andar then Bahar, settlement.

One 52-card deck per round. The first card is the game card; then cards go 1st to Andar,
2nd to Bahar, and so on, until a card of the game card's rank (any suit) appears: its side
wins. `cards_dealt` counts the cards dealt after the game card (1–49).

Paytable entries (BetRule): `andar` pays `pays`, or its `on_first` option when the 1st card
dealt wins (No Commission mode); `first_three` has no `pays` but the options `straight_flush`,
`straight` and `flush`; every other bet pays `pays`.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable, Mapping

from controller.shoe.cards import Card, codes
from controller.errors import ProfileError
from controller.games.procedure import RESULT, Procedure
from controller.games.rules import Hands, Numbers, Rules, bet_numbers

PHASES = ("game_card", "andar", "bahar")
SIDES = ("andar", "bahar")
#: card-count bets: bet name → (fewest, most) cards dealt, the game card excluded
CARD_COUNT_BETS = {f"cards_{lo}_{hi}": (lo, hi) for lo, hi in (
    (1, 5), (6, 10), (11, 15), (16, 20), (21, 25), (26, 30), (31, 35), (36, 40), (41, 45),
    (46, 49))}
BETS = ("andar", "bahar", "first_andar", "first_bahar", "first_three", *CARD_COUNT_BETS)
FIRST_THREE_PATTERNS = ("straight_flush", "straight", "flush")
MODES_OPTIONS = ("both", "one")
ONE = Fraction(1)


class RoundIncomplete(ValueError):
    """The outcome or settlement of a round whose matching card has not appeared yet."""


def dealt(hands) -> list[Card]:
    """The cards dealt after the game card, in dealing order (Andar, Bahar, Andar, …)."""
    andar, bahar = hands["andar"], hands["bahar"]
    out: list[Card] = []
    for i in range(len(andar)):
        out.append(andar[i])
        if i < len(bahar):
            out.append(bahar[i])
    return out


def next_phase(hands) -> str | None:
    """`game_card`, then `andar` / `bahar` alternately; None once a card matches the game card."""
    game = hands["game_card"]
    if not game:
        return "game_card"
    andar, bahar = hands["andar"], hands["bahar"]
    n_a, n_b = len(andar), len(bahar)
    # the last card of `dealt(hands)`, found without dealing them all again (a table asks for
    # every card): Bahar's beside Andar's last, if it has one, else Andar's last
    if n_a and (bahar[n_a - 1] if n_b >= n_a else andar[-1]).rank == game[0].rank:
        return None
    return "andar" if n_a == n_b else "bahar"


def winner(hands) -> str:
    """The side that received the card matching the game card's rank."""
    if not hands["game_card"] or next_phase(hands) is not None:
        raise RoundIncomplete("andar_bahar: no card has matched the game card yet")
    return "andar" if len(hands["andar"]) > len(hands["bahar"]) else "bahar"


def first_three_pattern(game: Card, first_andar: Card, first_bahar: Card) -> str | None:
    """straight_flush, straight, flush or None for the game card + first Andar + first Bahar.

    A straight is three consecutive ranks; the ace is low (A-2-3) or high (Q-K-A), never both
    (no wrap: K-A-2 is not a straight). A flush is three cards of one suit, not in sequence.
    """
    three = (game, first_andar, first_bahar)
    flush = len({c.suit for c in three}) == 1
    ranks = sorted(c.rank_index for c in three)
    ace_high = sorted(14 if r == 1 else r for r in ranks)
    straight = any(len(set(rs)) == 3 and rs[2] - rs[0] == 2 for rs in (ranks, ace_high))
    if straight and flush:
        return "straight_flush"
    if straight:
        return "straight"
    if flush:
        return "flush"
    return None


def _pays(bet: str, rule) -> Fraction:
    if rule.pays is None:
        raise ValueError(f"andar_bahar: bet {bet!r} needs a payout (pays)")
    return rule.pays


def settle(hands, paytable: Mapping) -> dict[str, Fraction]:
    """Net result per unit for every bet in `paytable` (win = payout, loss = −1)."""
    win = winner(hands)
    n = len(hands["andar"]) + len(hands["bahar"])
    out: dict[str, Fraction] = {}
    for bet, rule in paytable.items():
        if bet == "andar":
            on_first = rule.option("on_first")
            if win != "andar":
                r = -ONE
            elif n == 1 and on_first is not None:
                r = on_first
            else:
                r = _pays(bet, rule)
        elif bet == "bahar":
            r = _pays(bet, rule) if win == "bahar" else -ONE
        elif bet == "first_andar":
            r = _pays(bet, rule) if n == 1 else -ONE
        elif bet == "first_bahar":
            r = _pays(bet, rule) if n == 2 else -ONE
        elif bet == "first_three":
            pattern = None
            if n >= 2:
                pattern = first_three_pattern(hands["game_card"][0], hands["andar"][0],
                                              hands["bahar"][0])
            pays = rule.option(pattern) if pattern else None
            if pattern and pays is None:
                raise ValueError(f"andar_bahar: bet 'first_three' needs a payout for {pattern}")
            r = pays if pays is not None else -ONE
        elif bet in CARD_COUNT_BETS:
            lo, hi = CARD_COUNT_BETS[bet]
            r = _pays(bet, rule) if lo <= n <= hi else -ONE
        else:
            raise KeyError(f"andar_bahar has no bet {bet!r}")
        out[bet] = r
    return out


def validate_paytable(paytable: Mapping, where: str) -> None:
    """Check that every bet carries the payouts `settle` needs (ProfileError otherwise)."""
    for bet, rule in paytable.items():
        if bet == "first_three":
            missing = [p for p in FIRST_THREE_PATTERNS if rule.option(p) is None]
            extra = sorted(set(rule.options) - set(FIRST_THREE_PATTERNS))
            if missing or extra or rule.pays is not None:
                raise ProfileError(where, "first_three", "needs exactly straight_flush, straight "
                                   "and flush payouts",
                                   "write first_three = { straight_flush = 120, straight = 8, "
                                   "flush = 5 }")
        else:
            allowed = {"on_first"} if bet == "andar" else set()
            extra = sorted(set(rule.options) - allowed)
            if rule.pays is None or extra:
                raise ProfileError(where, bet, "needs a payout `pays` and no other option"
                                   + (" than on_first" if allowed else ""),
                                   f"write {bet} = <payout to 1>")


#: the round's procedure: the game card, then bets are taken, then Andar and Bahar in turn until
#: a card matches the game card's rank
PROCEDURE = Procedure(
    game="andar_bahar", slots=PHASES, decisions=(),
    successors={"game_card": ("andar",), "andar": ("bahar", RESULT),
                "bahar": ("andar", RESULT)},
    bets_after="game_card")


class AndarBaharRules(Rules):
    game = "andar_bahar"
    phases = PHASES
    procedure = PROCEDURE
    bets = BETS
    #: every round is dealt from its own freshly shuffled deck
    rounds_per_shoe = 1

    def new_hands(self) -> dict[str, list[Card]]:
        return {"game_card": [], "andar": [], "bahar": []}

    def next_phase(self, hands) -> str | None:
        return next_phase(hands)

    def place(self, hands, phase: str, card: Card) -> None:
        if phase not in PHASES:
            raise ValueError(f"andar_bahar has no phase {phase!r} (phases: {', '.join(PHASES)})")
        hands[phase].append(card)

    def outcome(self, hands) -> dict:
        return {**self.partial_outcome(hands), "winner": winner(hands),
                "cards_dealt": len(hands["andar"]) + len(hands["bahar"])}

    def partial_outcome(self, hands) -> dict:
        """The fields of a round stopped before its end (void), shaped as a complete round's."""
        return {"game_card": hands["game_card"][0].code if hands["game_card"] else None,
                "andar": codes(hands["andar"]), "bahar": codes(hands["bahar"]),
                "cards_dealt": len(hands["andar"]) + len(hands["bahar"])}

    def validate_options(self, options: Mapping, where: str) -> None:
        """`[game_options] modes`: "both" (default: every mode's bets are live in every round,
        as players switch modes themselves) or "one" (one mode at a time, `switch_mode`)."""
        for key, value in options.items():
            if key != "modes":
                raise ProfileError(where, f"game_options.{key}", "andar_bahar has no such option",
                                   'use modes = "both" or "one"')
            if value not in MODES_OPTIONS:
                raise ProfileError(where, "game_options.modes", f"{value!r} is not allowed",
                                   'use "both" or "one"')

    def settle(self, hands, paytable: Mapping) -> dict[str, Fraction]:
        return settle(hands, paytable)

    def settler(self, paytable: Mapping) -> Callable[[Hands], Numbers]:
        """`settle` as JSON numbers, worked out once per paytable for each of what it depends
        on: the winner, the cards dealt, and the first three's pattern when the paytable has
        that bet (a table settles every round; each bet's Fractions made once)."""
        three = "first_three" in paytable
        known: dict[tuple, Numbers] = {}

        def settled(hands: Hands) -> Numbers:
            andar, bahar, game = hands["andar"], hands["bahar"], hands["game_card"]
            n = len(andar) + len(bahar)
            if three and n >= 2:
                if not (andar and bahar and game):      # hands no round deals: bet by bet
                    return bet_numbers(settle(hands, paytable))
                key: tuple = (winner(hands), n, first_three_pattern(game[0], andar[0],
                                                                    bahar[0]))
            else:
                key = (winner(hands), n)
            hit = known.get(key)
            if hit is None:
                hit = known[key] = bet_numbers(settle(hands, paytable))
            return dict(hit)
        return settled

    def validate_paytable(self, paytable: Mapping, where: str) -> None:
        validate_paytable(paytable, where)


RULES = AndarBaharRules()
