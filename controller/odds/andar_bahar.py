"""Exact Andar Bahar odds: the matching card's position and the first-three patterns.

After the game card, R = 52·d − 1 cards remain, M = 4·d − 1 of them of the game card's rank.
The round ends at the first of those; it is the k-th card dealt with probability
C(R − k, M − 1) / C(R, M) (the other M − 1 lie after it), and odd k are Andar's cards. Every bet
but `first_three` depends on k alone. With an infinite deck k is geometric with p = 1/13.

`first_three` depends on the game card and the first two cards dealt: every ordered triple of
card kinds is enumerated (the game card's suit fixed to spades, ×4 by symmetry), weighted by the
ways to draw it, and classified by controller.games.andar_bahar.first_three_pattern, the same
function that settles the table's rounds. A triple whose first dealt card matches the game card
ends the round with two cards and loses.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb
from typing import TYPE_CHECKING

from controller.shoe.cards import ALL_CARDS, Card
from controller.errors import InputError
from controller.games.andar_bahar import CARD_COUNT_BETS, FIRST_THREE_PATTERNS, first_three_pattern

if TYPE_CHECKING:
    from controller.settings.profile import BetRule

ONE = Fraction(1)


class CardsDealt:
    """The distribution of k, the number of cards dealt after the game card (1 = Andar's first)."""

    def __init__(self, decks: int | None):
        self.decks = decks
        if decks is None:
            self._q = Fraction(12, 13)
        else:
            r, m = 52 * decks - 1, 4 * decks - 1
            total = comb(r, m)
            self.pmf = {k: Fraction(comb(r - k, m - 1), total) for k in range(1, r - m + 2)}

    def between(self, lo: int, hi: int) -> Fraction:
        """P(lo ≤ k ≤ hi)."""
        if self.decks is None:
            q = self._q
            return q ** (lo - 1) - q ** hi
        return sum((p for k, p in self.pmf.items() if lo <= k <= hi), Fraction(0))

    def odd(self) -> Fraction:
        """P(k odd): the matching card falls to Andar."""
        if self.decks is None:
            q = self._q
            return (1 - q) / (1 - q * q)
        return sum((p for k, p in self.pmf.items() if k % 2), Fraction(0))


@lru_cache(maxsize=16)
def cards_dealt(decks: int | None) -> CardsDealt:
    return CardsDealt(decks)


@lru_cache(maxsize=16)
def first_three(decks: int | None) -> dict[str | None, Fraction]:
    """Pattern (straight_flush, straight, flush, None) → probability, for `decks` decks."""
    out: dict[str | None, Fraction] = {}
    for rank_dist in first_three_by_game_card(decks).values():
        for pattern, p in rank_dist.items():
            out[pattern] = out.get(pattern, Fraction(0)) + p / 13   # every rank equally likely
    return out


@lru_cache(maxsize=16)
def first_three_by_game_card(decks: int | None) -> dict[str, dict[str | None, Fraction]]:
    """For each rank of the game card (shown before bets are taken): pattern → probability."""
    return {g.rank: _first_three_after(g, decks) for g in ALL_CARDS if g.suit == "S"}


def _first_three_after(g: Card, decks: int | None) -> dict[str | None, Fraction]:
    """Given game card `g` (its suit does not matter, by symmetry): every ordered pair of the
    next two cards, weighted by the ways to draw it from what is left."""
    counts: dict[str | None, int] = {}
    for a in ALL_CARDS:
        ends = a.rank == g.rank         # Andar's first card matches: two cards, the bet loses
        for b in ALL_CARDS:
            if decks is None:
                ways = 1
            else:
                ways = (decks - (a == g)) * (decks - (b == g) - (b == a))
                if ways <= 0:
                    continue
            pattern = None if ends else first_three_pattern(g, a, b)
            counts[pattern] = counts.get(pattern, 0) + ways
    n = 52 if decks is None else 52 * decks
    total = n ** 2 if decks is None else (n - 1) * (n - 2)
    return {pattern: Fraction(ways, total) for pattern, ways in counts.items()}


def first_three_rtp_by_game_card(decks: int | None, rule: BetRule) -> dict[str, Fraction]:
    """The first_three bet's RTP once the game card is known, rank → RTP."""
    out = {}
    for rank, dist in first_three_by_game_card(decks).items():
        mean = Fraction(0)
        lose = ONE
        for pattern, p in dist.items():
            if pattern is None:
                continue
            pays = rule.option(pattern)
            if pays is None:
                raise InputError(f"andar_bahar: bet 'first_three' needs a payout for {pattern}")
            mean += pays * p
            lose -= p
        out[rank] = 1 + mean - lose
    return out


def outcomes(decks: int | None) -> dict[str, Fraction]:
    """Probabilities of the events a lab reports for one round."""
    k = cards_dealt(decks)
    three = first_three(decks)
    out = {"andar": k.odd(), "bahar": 1 - k.odd(),
           "andar_on_first_card": k.between(1, 1), "bahar_on_first_card": k.between(2, 2)}
    for pattern in FIRST_THREE_PATTERNS:
        out[f"first_three_{pattern}"] = three.get(pattern, Fraction(0))
    return out


def bet_distribution(decks: int | None, bet: str, rule: BetRule) -> dict[Fraction, Fraction]:
    """Net result per unit → probability for one paytable entry (win = payout, loss = −1)."""
    k = cards_dealt(decks)
    dist: dict[Fraction, Fraction] = {}

    def add(net: Fraction, p: Fraction) -> None:
        if p:
            dist[net] = dist.get(net, Fraction(0)) + p

    if bet == "andar":
        on_first = rule.option("on_first")
        if on_first is not None:
            add(on_first, k.between(1, 1))
            add(rule.paid("andar_bahar", bet), k.odd() - k.between(1, 1))
        else:
            add(rule.paid("andar_bahar", bet), k.odd())
        add(-ONE, 1 - k.odd())
    elif bet == "bahar":
        add(rule.paid("andar_bahar", bet), 1 - k.odd())
        add(-ONE, k.odd())
    elif bet in ("first_andar", "first_bahar") or bet in CARD_COUNT_BETS:
        lo, hi = CARD_COUNT_BETS.get(bet) or ((1, 1) if bet == "first_andar" else (2, 2))
        p = k.between(lo, hi)
        add(rule.paid("andar_bahar", bet), p)
        add(-ONE, 1 - p)
    elif bet == "first_three":
        lose = ONE
        for pattern, p in first_three(decks).items():
            if pattern is None:
                continue
            pays = rule.option(pattern)
            if pays is None:
                raise InputError(f"andar_bahar: bet 'first_three' needs a payout for {pattern}")
            add(pays, p)
            lose -= p
        add(-ONE, lose)
    else:
        raise InputError(f"andar_bahar: no exact model for bet {bet!r}")
    return dist

