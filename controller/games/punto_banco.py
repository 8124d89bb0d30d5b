"""Punto Banco (docs/rules.md): naturals, the third-card tableau as data, result, settlement."""
from __future__ import annotations

from fractions import Fraction
from operator import attrgetter
from types import MappingProxyType
from typing import Callable, Mapping

from controller.shoe.cards import POINT_OF_RANK, RANKS, SUITS, Card, hand_total
from controller.games.procedure import RESULT, Procedure
from controller.games.rules import Hands, Numbers, Rules, bet_numbers

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


#: point value of each rank (the cards' own table) and of each canonical card code
_POINT = POINT_OF_RANK
POINT_OF_CODE = {r + s: _POINT[r] for r in RANKS for s in SUITS}
_INITIAL = PHASES[:4]
_CODE, _POINT_OF = attrgetter("code"), attrgetter("point")
_WINNERS = ("player", "banker", "tie")


def _total(hand) -> int:
    t = 0
    for c in hand:
        t += c.point
    return t % 10


def is_natural(player: list[Card], banker: list[Card]) -> bool:
    return _total(player[:2]) >= 8 or _total(banker[:2]) >= 8


def player_draws(player_total: int) -> bool:
    return player_total in PLAYER_DRAWS_ON


def banker_draws(banker_total: int, player_third: int | None) -> bool:
    """Whether Banker draws on `banker_total`; `player_third` is None when Player stood."""
    if player_third is None:
        return banker_total in BANKER_DRAWS_WHEN_PLAYER_STOOD
    return player_third in BANKER_DRAWS_ON_THIRD.get(banker_total, frozenset())


# ---- the tableau as lookup tables, built from the data above at import ------------------------
#: PLAYER_DRAWS[total]: Player draws a third card on this two-card total
PLAYER_DRAWS = tuple(player_draws(t) for t in range(10))
#: BANKER_DRAWS[banker_total][x]: Banker draws when Player's third card is worth x (0–9); index
#: 10 is the rule when Player stood
BANKER_DRAWS = tuple(tuple(banker_draws(bt, x) for x in range(10)) + (banker_draws(bt, None),)
                     for bt in range(10))
#: after P1 B1 P2 B2, by player_total * 10 + banker_total (two-card totals): NO_DRAW (a natural,
#: or both stand), PLAYER_THIRD (Player draws; Banker then follows BANKER_DRAWS), BANKER_THIRD
#: (Player stood, Banker draws)
NO_DRAW, PLAYER_THIRD, BANKER_THIRD = 0, 1, 2
TABLEAU = tuple(NO_DRAW if pt >= 8 or bt >= 8 else PLAYER_THIRD if PLAYER_DRAWS[pt]
                else BANKER_THIRD if BANKER_DRAWS[bt][10] else NO_DRAW
                for pt in range(10) for bt in range(10))


def next_phase(player: list[Card], banker: list[Card]) -> str | None:
    """The next card due: P1, B1, P2, B2, player_third, banker_third, or None (round over)."""
    return _next_of_hands({"player": player, "banker": banker})


def _next_of_hands(hands: dict) -> str | None:
    """`next_phase` of a round's hands (the table asks it for every card)."""
    player, banker = hands["player"], hands["banker"]
    n_p, n_b = len(player), len(banker)
    if n_p + n_b < 4:
        return _INITIAL[n_p + n_b]
    if n_p < 2 or n_b < 2:
        return _next_phase_reference(player, banker)
    pt = (player[0].point + player[1].point) % 10
    bt = (banker[0].point + banker[1].point) % 10
    if pt >= 8 or bt >= 8 or n_b != 2:
        return None
    if n_p == 2 and PLAYER_DRAWS[pt]:
        return "player_third"
    return "banker_third" if BANKER_DRAWS[bt][player[2].point if n_p == 3 else 10] else None


def _next_phase_reference(player: list[Card], banker: list[Card]) -> str | None:
    """`next_phase` step by step from the rules' data (any hands, however odd)."""
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
    p, b = _total(player), _total(banker)
    return "player" if p > b else "banker" if b > p else "tie"


# ---- settlement by lookup table ----------------------------------------------------------------
# A round's settlement depends only on the winner, whether Banker's total is 6 (Super 6), the two
# pairs and the number of cards: its settlement key. Each paytable's table holds, for every key,
# what `settle_reference` gives on hands with that key; it is built once per paytable.

def settlement_key(winner_index: int, banker_total: int, player_pair: bool, banker_pair: bool,
                   n_cards: int) -> int:
    """Index into `settlement_table`: winner_index 0 player, 1 banker, 2 tie; n_cards 4–6."""
    return (winner_index + (3 if banker_total == 6 else 0) + (6 if player_pair else 0)
            + (12 if banker_pair else 0) + 24 * (n_cards - 4))


def _key_of(player: list[Card], banker: list[Card]) -> int:
    """settlement_key of two hands of two or three cards (inline: a table asks every round)."""
    p, b = sum(map(_POINT_OF, player)) % 10, sum(map(_POINT_OF, banker)) % 10     # _total
    return ((0 if p > b else 1 if b > p else 2) + (3 if b == 6 else 0)
            + (6 if player[0].rank == player[1].rank else 0)
            + (12 if banker[0].rank == banker[1].rank else 0)
            + 24 * (len(player) + len(banker) - 4))


def _representatives() -> tuple[tuple[list[Card], list[Card]], ...]:
    """For every settlement key, a Player and a Banker hand that have it."""
    by: dict[tuple[int, int, bool], list[Card]] = {}      # (cards, total, pair) -> hand
    ranks = "A23456789T"
    for a in ranks:
        for b in ranks:
            two = [Card(a, "S"), Card(b, "H")]
            by.setdefault((2, _total(two), a == b), two)
            for c in ranks:
                by.setdefault((3, _total(two + [Card(c, "D")]), a == b), two + [Card(c, "D")])
    out: list = [None] * 72
    for n_p, n_b in ((2, 2), (3, 2), (2, 3), (3, 3)):
        for pt in range(10):
            for bt in range(10):
                for pp in (False, True):
                    for bp in (False, True):
                        ph, bh = by.get((n_p, pt, pp)), by.get((n_b, bt, bp))
                        if ph is not None and bh is not None and out[_key_of(ph, bh)] is None:
                            out[_key_of(ph, bh)] = (ph, bh)
    assert None not in out
    return tuple(out)


_REPRESENTATIVES = _representatives()
_TABLES: dict[int, tuple] = {}


def settlement_table(paytable: Mapping) -> tuple[Mapping[str, Fraction], ...]:
    """Every bet's net result (exact Fractions, read-only) by `settlement_key`, for `paytable`.

    Built from `settle_reference` the first time a paytable is seen, then cached (by identity,
    checked against the paytable's entries, so a changed paytable gets a new table)."""
    entry = _TABLES.get(id(paytable))
    items = tuple(paytable.items())
    if entry is not None and entry[0] is paytable and entry[1] == items:
        return entry[2]
    table = tuple(MappingProxyType(settle_reference(p, b, paytable))
                  for p, b in _REPRESENTATIVES)
    if len(_TABLES) >= 64:
        _TABLES.clear()
    _TABLES[id(paytable)] = (paytable, items, table)
    return table


_NUMBERS: dict[int, tuple] = {}


def _numbers(table: tuple[Mapping[str, Fraction], ...]) -> tuple[Numbers, ...]:
    """A settlement table's entries as JSON numbers (a new dict is copied from one for every
    round), converted once per table (by identity: a table is never changed)."""
    entry = _NUMBERS.get(id(table))
    if entry is None or entry[0] is not table:
        if len(_NUMBERS) >= 64:
            _NUMBERS.clear()
        entry = _NUMBERS[id(table)] = (table, tuple(bet_numbers(e) for e in table))
    return entry[1]


def settle(player: list[Card], banker: list[Card], paytable: Mapping) -> dict[str, Fraction]:
    """Net result per unit for every bet in `paytable` (win = payout, loss = −1, push = 0)."""
    if 2 <= len(player) <= 3 and 2 <= len(banker) <= 3:
        try:
            table = settlement_table(paytable)
        except Exception:                     # a paytable the reference alone can tell about
            return settle_reference(player, banker, paytable)
        return dict(table[_key_of(player, banker)])
    return settle_reference(player, banker, paytable)


def settle_reference(player: list[Card], banker: list[Card],
                     paytable: Mapping) -> dict[str, Fraction]:
    """`settle` bet by bet from the paytable: the definition the lookup tables are built from."""
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


#: the round's procedure: which step may follow which (the table's machine is built from it)
PROCEDURE = Procedure(
    game="punto_banco", slots=PHASES, decisions=(),
    successors={"P1": ("B1",), "B1": ("P2",), "P2": ("B2",),
                "B2": ("player_third", "banker_third", RESULT),
                "player_third": ("banker_third", RESULT),
                "banker_third": (RESULT,)})


class PuntoBancoRules(Rules):
    game = "punto_banco"
    phases = PHASES
    procedure = PROCEDURE
    bets = BETS

    def new_hands(self) -> dict[str, list[Card]]:
        return {"player": [], "banker": []}

    #: the module's own function (no method frame: the table asks it for every card)
    next_phase = staticmethod(_next_of_hands)

    #: `place` answers the phase due next
    place_answers = True

    def place(self, hands, phase: str, card: Card) -> str | None:
        """Put the card on its hand; the phase due next, as `next_phase` answers for the
        hands it leaves (the table deals every card with one call)."""
        hands[_HAND_OF[phase]].append(card)
        return _next_of_hands(hands)     # the third-card rule has this one home

    def outcome(self, hands) -> dict:
        p, b = hands["player"], hands["banker"]
        n_p, n_b = len(p), len(b)
        if 2 <= n_p <= 3 and 2 <= n_b <= 3:     # a round's hands: _total and is_natural
            p2, b2 = (p[0].point + p[1].point) % 10, (b[0].point + b[1].point) % 10
            natural = p2 >= 8 or b2 >= 8
            pt = (p2 + p[2].point) % 10 if n_p == 3 else p2
            bt = (b2 + b[2].point) % 10 if n_b == 3 else b2
        else:
            pt, bt = sum(map(_POINT_OF, p)) % 10, sum(map(_POINT_OF, b)) % 10    # _total
            natural = is_natural(p, b)
        return {"player": list(map(_CODE, p)), "banker": list(map(_CODE, b)),
                "player_total": pt, "banker_total": bt,
                "winner": "player" if pt > bt else "banker" if bt > pt else "tie",
                "natural": natural}

    def settle(self, hands, paytable: Mapping) -> dict[str, Fraction]:
        return settle(hands["player"], hands["banker"], paytable)

    def settler(self, paytable: Mapping) -> Callable[[Hands], Numbers]:
        """The paytable's settlement table as JSON numbers, converted once: a round looks its
        key up (hands of any other size go bet by bet)."""
        try:
            table = settlement_table(paytable)
        except Exception:                     # a paytable the reference alone can tell about
            return super().settler(paytable)
        numbers = _numbers(table)

        def settled(hands: Hands) -> Numbers:
            player, banker = hands["player"], hands["banker"]
            n_p, n_b = len(player), len(banker)
            if 2 <= n_p <= 3 and 2 <= n_b <= 3:
                # as _key_of, inline: a table settles every round here
                p = player[0].point + player[1].point + (player[2].point if n_p == 3 else 0)
                b = banker[0].point + banker[1].point + (banker[2].point if n_b == 3 else 0)
                p, b = p % 10, b % 10
                return dict(numbers[(0 if p > b else 1 if b > p else 2) + (3 if b == 6 else 0)
                                    + (6 if player[0].rank == player[1].rank else 0)
                                    + (12 if banker[0].rank == banker[1].rank else 0)
                                    + 24 * (n_p + n_b - 4)])
            return bet_numbers(settle_reference(player, banker, paytable))
        return settled


    def resulter(self, paytable: Mapping) -> Callable[[Hands], tuple[dict, Numbers]]:
        """`outcome` and `settler(paytable)` from one look at the hands: the totals, the
        winner and the settlement key worked out once."""
        try:
            table = settlement_table(paytable)
        except Exception:                     # a paytable the reference alone can tell about
            return super().resulter(paytable)
        numbers = _numbers(table)

        def result(hands: Hands) -> tuple[dict, Numbers]:
            p, b = hands["player"], hands["banker"]
            n_p, n_b = len(p), len(b)
            if not (2 <= n_p <= 3 and 2 <= n_b <= 3):       # as settled does
                return self.outcome(hands), bet_numbers(settle_reference(p, b, paytable))
            # as outcome and settled, inline
            p2, b2 = (p[0].point + p[1].point) % 10, (b[0].point + b[1].point) % 10
            pt = (p2 + p[2].point) % 10 if n_p == 3 else p2
            bt = (b2 + b[2].point) % 10 if n_b == 3 else b2
            won = 0 if pt > bt else 1 if bt > pt else 2
            return ({"player": list(map(_CODE, p)), "banker": list(map(_CODE, b)),
                     "player_total": pt, "banker_total": bt, "winner": _WINNERS[won],
                     "natural": p2 >= 8 or b2 >= 8},
                    dict(numbers[won + (3 if bt == 6 else 0)
                                 + (6 if p[0].rank == p[1].rank else 0)
                                 + (12 if b[0].rank == b[1].rank else 0)
                                 + 24 * (n_p + n_b - 4)]))
        return result


RULES = PuntoBancoRules()
