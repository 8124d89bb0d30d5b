"""Exact Punto Banco odds by enumerating every deal over card values, with multiplicities.

Only a card's point value (10 classes: 0 for T/J/Q/K, 1–9) decides totals and draws, so the
deal P1 B1 P2 B2 [player third] [banker third] is enumerated over values, each sequence weighted
by how many physical card sequences have those values (a falling product of the remaining
counts). Each hand's first two cards are enumerated as unordered pairs (×2 when different),
which quarters the work. Weights are integers normalised to six-card sequences, so every
probability is an exact Fraction.

Pair bets depend on ranks (J-J is a pair, J-Q is not) but only on a hand's first two cards, whose
joint distribution is that of any two cards of the shoe; they are computed over ranks apart from
the value enumeration, which is exact.

The drawing rules are taken from controller.games.punto_banco, so the odds follow the same
tableau the table enforces.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

from controller.shoe.cards import POINT_OF_RANK, RANKS
from controller.errors import InputError
from controller.games.punto_banco import BANKER_DRAWS as _BANKER_DRAWS
from controller.games.punto_banco import PLAYER_DRAWS as _PLAYER_DRAWS

if TYPE_CHECKING:
    from controller.settings.profile import BetRule

#: point value of each rank A..K (the cards' own table, by rank index)
_RANK_POINT = tuple(POINT_OF_RANK[r] for r in RANKS)


@dataclass(frozen=True)
class Deal:
    """Probabilities of every final (player total, banker total, cards dealt) of one round."""
    #: (player_total, banker_total, cards) → probability; cards is 4, 5 or 6
    finals: Mapping[tuple[int, int, int], Fraction]
    #: probability that either hand holds a natural 8 or 9
    natural: Fraction
    #: probability that a hand's first two cards share a rank (same for Player and Banker)
    pair: Fraction

    def probability(self, test: Callable[[int, int, int], bool]) -> Fraction:
        """Total probability of the finals (pt, bt, cards) for which `test(pt, bt, cards)`."""
        return sum((p for k, p in self.finals.items() if test(*k)), Fraction(0))


def rank_counts(decks: int | None) -> tuple[int, ...]:
    """Cards of each rank A..K in a full shoe; an infinite deck is modelled as one of each."""
    return (1,) * 13 if decks is None else (4 * decks,) * 13


def value_counts(ranks: tuple[int, ...]) -> tuple[int, ...]:
    """Cards of each point value 0–9 from cards of each rank A..K."""
    out = [0] * 10
    for i, n in enumerate(ranks):
        out[_RANK_POINT[i]] += n
    return tuple(out)


def deal_odds(decks: int | None) -> Deal:
    """The exact Deal off the top of a full shoe of `decks` decks (None: infinite deck)."""
    return composition_odds(rank_counts(decks), infinite=decks is None)


@lru_cache(maxsize=32)
def composition_odds(ranks: tuple[int, ...], infinite: bool = False) -> Deal:
    """The exact Deal from a shoe holding `ranks[i]` cards of rank A..K (i = 0..12).

    With `infinite`, the counts are relative frequencies and cards are drawn with replacement.
    """
    if len(ranks) != 13 or any(n < 0 for n in ranks):
        raise ValueError("a composition gives 13 non-negative counts, A to K")
    counts = value_counts(ranks)
    n = sum(counts)
    if n < 6 and not infinite:
        raise ValueError(f"a round needs up to 6 cards; the composition has {n}")
    four, five, six, nat = _enumerate(counts, 0 if infinite else 1)
    if infinite:
        rest4, rest5, total = n * n, n, n ** 6
    else:
        rest4, rest5 = (n - 4) * (n - 5), n - 5
        total = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    finals: dict[tuple[int, int, int], Fraction] = {}
    for i in range(100):
        for cards, weight in ((4, four[i] * rest4), (5, five[i] * rest5), (6, six[i])):
            if weight:
                finals[(i // 10, i % 10, cards)] = Fraction(weight, total)
    if infinite:
        pair = Fraction(sum(k * k for k in ranks), n * n)
    else:
        pair = Fraction(sum(k * (k - 1) for k in ranks), n * (n - 1))
    return Deal(finals, Fraction(nat * rest4, total), pair)


def first_four(counts: Sequence[int], dep: int) -> Iterator[tuple[list[int], int, int, int]]:
    """Every first four cards of a coup (Player's two, Banker's two) by their values, unordered
    within each hand: (the cards left, Player's total, Banker's total, the number of card
    sequences). `dep` is 1 when a dealt card leaves the shoe, 0 for an infinite deck. The
    list of cards left is the same one each time, valid until the next item is asked for."""
    rem = list(counts)
    for p1 in range(10):
        if not counts[p1]:
            continue
        rem[p1] -= dep
        for p2 in range(p1, 10):
            wp = counts[p1] * rem[p2] * (1 if p1 == p2 else 2)
            if wp <= 0:
                continue
            rem[p2] -= dep
            pt = (p1 + p2) % 10
            for b1 in range(10):
                wb1 = wp * rem[b1]
                if wb1 <= 0:
                    continue
                rem[b1] -= dep
                for b2 in range(b1, 10):
                    w4 = wb1 * rem[b2] * (1 if b1 == b2 else 2)
                    if w4 <= 0:
                        continue
                    rem[b2] -= dep
                    yield rem, pt, (b1 + b2) % 10, w4
                    rem[b2] += dep
                rem[b1] += dep
            rem[p2] += dep
        rem[p1] += dep


def _enumerate(c: tuple[int, ...], dep: int) -> tuple[list[int], list[int], list[int], int]:
    """Integer weights of the finals by cards dealt (index player_total * 10 + banker_total).

    `dep` is 1 when a drawn card leaves the shoe, 0 for an infinite deck. A weight counts the
    physical card sequences of that length; the caller scales them to six-card sequences.
    """
    four, five, six = [0] * 100, [0] * 100, [0] * 100
    natural = 0
    for rem, pt, bt, w4 in first_four(c, dep):
        if pt >= 8 or bt >= 8:
            four[pt * 10 + bt] += w4
            natural += w4
        elif _PLAYER_DRAWS[pt]:
            _player_draws(rem, dep, w4, pt, bt, five, six)
        elif _BANKER_DRAWS[bt][10]:
            base = pt * 10
            for y in range(10):
                if rem[y] > 0:
                    five[base + (bt + y) % 10] += w4 * rem[y]
        else:
            four[pt * 10 + bt] += w4
    return four, five, six, natural


def _player_draws(rem: list[int], dep: int, w4: int, pt: int, bt: int,
                  five: list[int], six: list[int]) -> None:
    """Add the finals after Player draws a third card (and Banker perhaps a third)."""
    rule = _BANKER_DRAWS[bt]
    for x in range(10):
        wx = w4 * rem[x]
        if wx <= 0:
            continue
        ptx = (pt + x) % 10
        if rule[x]:
            rem[x] -= dep
            base = ptx * 10
            for y in range(10):
                if rem[y] > 0:
                    six[base + (bt + y) % 10] += wx * rem[y]
            rem[x] += dep
        else:
            five[ptx * 10 + bt] += wx


def _winner(pt: int, bt: int) -> str:
    return "player" if pt > bt else "banker" if bt > pt else "tie"


def outcomes(deal: Deal) -> dict[str, Fraction]:
    """Probabilities of the events a lab reports for one round."""
    return {
        "banker": deal.probability(lambda pt, bt, n: bt > pt),
        "player": deal.probability(lambda pt, bt, n: pt > bt),
        "tie": deal.probability(lambda pt, bt, n: pt == bt),
        "banker_wins_with_6": deal.probability(lambda pt, bt, n: bt > pt and bt == 6),
        "natural": deal.natural,
        "four_cards": deal.probability(lambda pt, bt, n: n == 4),
        "five_cards": deal.probability(lambda pt, bt, n: n == 5),
        "six_cards": deal.probability(lambda pt, bt, n: n == 6),
        "player_pair": deal.pair,
        "banker_pair": deal.pair,
    }


ONE = Fraction(1)


def bet_distribution(deal: Deal, bet: str, rule: BetRule) -> dict[Fraction, Fraction]:
    """Net result per unit → probability for one paytable entry (win = payout, push = 0)."""
    dist: dict[Fraction, Fraction] = {}

    def add(net: Fraction, p: Fraction) -> None:
        if p:
            dist[net] = dist.get(net, Fraction(0)) + p

    if bet in ("player_pair", "banker_pair"):
        add(rule.paid("punto_banco", bet), deal.pair)
        add(-ONE, 1 - deal.pair)
        return dist
    if bet not in ("player", "banker", "tie", "big", "small"):
        raise InputError(f"punto_banco: no exact model for bet {bet!r}")
    pays = rule.paid("punto_banco", bet)
    on_six = rule.option("on_six") if bet == "banker" else None
    for (pt, bt, n), p in deal.finals.items():
        win = _winner(pt, bt)
        if bet == "tie":
            net = pays if win == "tie" else -ONE
        elif bet == "big":
            net = pays if n >= 5 else -ONE
        elif bet == "small":
            net = pays if n == 4 else -ONE
        elif win == "tie":
            net = Fraction(0)
        elif win != bet:
            net = -ONE
        elif bet == "banker" and on_six is not None and bt == 6:
            net = on_six
        else:
            net = pays
        add(net, p)
    return dist
