"""Whole shoes through the pure rules, dealt the way the table deals them (no machine, no devices).

`ShoeDeal(profile, codes)` takes a profile (or any object with its fields: `game`, `decks`,
`burn`, `cut_card`, `continuous_shuffler`, `paytable`, `cards`) and the shoe's card codes in draw
order, and yields one result per round (`PuntoBancoRound` for a complete Punto Banco round,
`RoundResult` otherwise; both have `number`, `outcome`, `bets`, `burned_before`, `void` and
`event(game)`, the table's `round_result` fields):

- the shoe-start burn (controller.games.procedure.start_burn_total: the turned card and as many as
  it orders, or the profile's decks / fixed count, or none);
- before every round but the first, the profile's between-round burn;
- the round's cards as the game's rules call for them, its outcome (the rules' `outcome`
  fields, as the table's `round_result` shows them) and the exact settlement of every bet of
  the paytable;
- the cut card: the round in which the card behind it is dealt is the cut round (round 1 when
  it comes out in the start burn); the shoe ends after the round that
  controller.games.procedure.shoe_ends_after names (`finish`, `no_more_coup`: the cut round;
  `one_more`: the round after it). A game with `rounds_per_shoe` ends after that many rounds;
  a continuous shuffler ends once a machine load (52 × decks cards) has been dealt, and takes
  every round's cards back (`returns`: the random source that puts each one back among the
  cards it holds, as simulators.csm does);
- a shoe that runs out mid-round (or between rounds that do not end it) gives a void round
  (`void=True`, every bet 0) and ends "exhausted".

Afterwards the `ShoeDeal` holds `burn` (the start burn), `end_reason` and `cards_used`.

Punto Banco runs on a dedicated loop over precomputed point values, the tableau as lookup
tables and one settlement table per paytable (controller.games.punto_banco); other games go
through their `RULES` object card by card. Games whose deal waits for players' decisions
(Chemin de Fer, Baccarat en Banque) are not dealt here.

The cards are taken as they come: a shoe holding more copies of a card than its decks (which
the table flags as a foreign card) is not checked here.
"""
from __future__ import annotations

import random
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, cast

from controller.games import procedure as procedures
from controller.shoe.cards import CARD_OF_CODE, RANKS, SUITS, Card, ordered_shoe, parse_card
from controller.games import GameRules, get_rules, punto_banco as pb
from controller.games.procedure import DECIDE
from controller.games.rules import bet_number, bet_numbers

_DEFAULT: Any = object()
_NEVER = 1 << 62                               # the cut position of a shoe without a cut card
_CARD_OF_CODE = CARD_OF_CODE


class RoundResult(NamedTuple):
    """One round of a shoe: the rules' outcome fields, as the table's `round_result` shows them."""
    number: int                                # round number within the shoe, from 1
    outcome: Mapping[str, Any]                 # the rules' outcome fields (void: the hands)
    bets: Mapping[str, Fraction]               # net result per unit of every bet
    burned_before: tuple[str, ...] = ()        # the between-round burn before this round
    void: bool = False                         # the shoe ran out before the round was complete

    def event(self, game: str) -> dict:
        """The round as a `round_result` event's fields (bets as JSON numbers)."""
        return _event(self, game)


class PuntoBancoRound(tuple[Any, ...]):
    """One complete Punto Banco round; `outcome` gives the rules' fields (as RoundResult's).

    Built from one tuple, `PuntoBancoRound((number, cards, shape, bets, burned_before))`:
    `shape` is the round's entry of the tableau's table (cards dealt, layout, player total,
    banker total, winner, natural, settlement key less the pairs), shared by every round of
    that shape, and the other fields are read off it: a round costs one object."""
    __slots__ = ()

    @property
    def number(self) -> int:
        """Round number within the shoe, from 1."""
        return self[0]

    @property
    def cards(self) -> list[str]:
        """The round's cards in dealing order."""
        return self[1]

    @property
    def layout(self) -> int:
        """Third cards: 0 none, 1 Player's, 2 Banker's, 3 both."""
        return self[2][1]

    @property
    def player_total(self) -> int:
        return self[2][2]

    @property
    def banker_total(self) -> int:
        return self[2][3]

    @property
    def winner(self) -> str:
        """player, banker or tie."""
        return self[2][4]

    @property
    def natural(self) -> bool:
        return self[2][5]

    @property
    def bets(self) -> Mapping[str, Fraction]:
        """Net result per unit of every bet (read-only)."""
        return self[3]

    @property
    def burned_before(self) -> tuple[str, ...]:
        """The between-round burn before this round."""
        return self[4]

    @property
    def void(self) -> bool:
        """Always False: a void round is a RoundResult."""
        return False

    @property
    def player(self) -> list[str]:
        c = self[1]
        return [c[0], c[2], c[4]] if self[2][1] & 1 else [c[0], c[2]]

    @property
    def banker(self) -> list[str]:
        c, layout = self[1], self[2][1]
        return [c[1], c[3]] + c[4 + (layout & 1):] if layout & 2 else [c[1], c[3]]

    @property
    def outcome(self) -> dict[str, Any]:
        """The fields of controller.games.punto_banco's RULES.outcome."""
        shape = self[2]
        return {"player": self.player, "banker": self.banker, "player_total": shape[2],
                "banker_total": shape[3], "winner": shape[4], "natural": shape[5]}

    def event(self, game: str = "punto_banco") -> dict:
        """The round as a `round_result` event's fields (bets as JSON numbers)."""
        return _event(self, game)

    def __repr__(self) -> str:
        return (f"PuntoBancoRound(number={self[0]}, cards={self[1]!r}, "
                f"winner={self[2][4]!r}, burned_before={self[4]!r})")


def _event(r, game: str) -> dict:
    e: dict[str, Any] = {"event": "round_result", "round": r.number, "game": game}
    if r.burned_before:
        e["burned_before"] = list(r.burned_before)
    for k, v in r.outcome.items():
        e[k] = list(v) if isinstance(v, list) else v
    if r.void:
        e.update(void=True, reason="exhausted", bets={b: 0 for b in r.bets})
    else:
        e["bets"] = bet_numbers(r.bets)
    return e


#: pb.settlement_key less the pairs, by layout * 100 + player_total * 10 + banker_total
_KEY_BASE = tuple(pb.settlement_key(0 if pt > bt else 1 if bt > pt else 2, bt, False, False,
                                    4 + (layout & 1) + (layout >> 1))
                  for layout in range(4) for pt in range(10) for bt in range(10))


def _round_of(pt: int, bt: int, x5: int, x6: int) -> tuple:
    """A round from Player's and Banker's two-card totals and the points of the next two cards
    (P3 or B3, then B3): (cards dealt, layout, player total, banker total, winner, natural,
    settlement key less the pairs), by the tableau of controller.games.punto_banco."""
    draw = pb.TABLEAU[pt * 10 + bt]
    if draw == pb.NO_DRAW:                     # a natural, or both hands stand
        layout, n = 0, 4
    elif draw == pb.PLAYER_THIRD:              # Player draws; Banker by the third card's value
        pt = (pt + x5) % 10
        if pb.BANKER_DRAWS[bt][x5]:
            layout, n, bt = 3, 6, (bt + x6) % 10
        else:
            layout, n = 1, 5
    else:                                      # Player stood, Banker draws
        layout, n, bt = 2, 5, (bt + x5) % 10
    natural = draw == pb.NO_DRAW and (pt >= 8 or bt >= 8)
    winner = "player" if pt > bt else "banker" if bt > pt else "tie"
    return n, layout, pt, bt, winner, natural, _KEY_BASE[layout * 100 + pt * 10 + bt]


#: every round by ((player two-card total) * 10 + banker two-card total) * 100 + x5 * 10 + x6;
#: equal rounds are one tuple (most entries ignore x5 or x6), so the table stays small in memory
_SHAPES: dict[tuple, tuple] = {}
_ROUNDS = tuple(_SHAPES.setdefault(r, r) for r in (
    _round_of(pt, bt, x5, x6)
    for pt in range(10) for bt in range(10) for x5 in range(10) for x6 in range(10)))


#: the same rounds by the two-card sums before their last digit is taken, so that a round is found
#: without a modulo: (((p1 + p2) * 19 + b1 + b2) * 100 + x5 * 10 + x6, the sums 0-18)
_ROUNDS_BY_SUMS = tuple(_ROUNDS[(ps % 10 * 10 + bs % 10) * 100 + x]
                        for ps in range(19) for bs in range(19) for x in range(100))


class RoundDeal:
    """How a round takes its cards, the one way for the table (a card at a time, as the shoe
    reads them) and for the rules path (a shoe at a time): each card to the step that is due,
    the rules naming the next."""

    def __init__(self, rules: GameRules):
        self.rules = rules

    def place(self, hands: dict, step: str, card: Card) -> str:
        """Put `card` where `step` wants it; the slot it went to. At a decision step the hand
        has drawn (the decision is recorded by then): the slot is the card the rules name."""
        rules = self.rules
        slot = step
        if step.startswith(DECIDE):
            slot = rules.next_phase(hands) or ""
            if slot not in rules.phases:
                raise ValueError(f"{rules.game}: a draw decision led to {slot!r}, not to a card")
        rules.place(hands, slot, card)
        return slot

    def deal(self, hands: dict, codes: list[str], pos: int) -> tuple[int, bool]:
        """Deal the round from `codes` at `pos` as far as the cards go, each to the phase the
        rules name next: (the position after it, whether the round is complete)."""
        rules = self.rules
        answers = rules.place_answers       # place answers the next phase: asked once a card
        phase = rules.next_phase(hands)
        while phase is not None:
            if pos >= len(codes):
                return pos, False
            answer = rules.place(hands, phase, _CARD_OF_CODE[codes[pos]])
            pos += 1
            phase = answer if answers else rules.next_phase(hands)
        return pos, True


class ShoeDeal:
    """Iterate over a shoe's rounds (see the module's doc); then `burn`, `end_reason`, `cards_used`.

    `cut_position`: cards in front of the cut card (None: no cut card); by default the
    profile's default distance from the end (controller.games.procedure.default_cut_position), none
    where that lies beyond the shoe. `paytable`: the profile's by default. `returns`: a
    random.Random for a continuous shuffler's returned cards (default: one seeded with 0).
    The codes are read when the ShoeDeal is made (a list of canonical codes is not copied:
    leave it as it is until the shoe is dealt).
    """

    def __init__(self, profile, codes: Iterable[str | Card], *, cut_position: Any = _DEFAULT,
                 paytable: Mapping | None = None, returns: random.Random | None = None):
        self.profile = profile
        self.rules = get_rules(profile.game)
        if getattr(self.rules, "decisions", ()):
            raise ValueError(f"{profile.game}: its deal waits for decisions; deal it through the "
                             f"table")
        self.continuous = bool(getattr(profile, "continuous_shuffler", False))
        # a continuous shuffler's cards go back into the codes: those are a copy of the caller's
        self.codes, self._joined = _canonical(codes, copy=self.continuous)
        if cut_position is _DEFAULT:
            cut_position = procedures.default_cut_position(profile, len(self.codes))
            if cut_position is not None and cut_position >= len(self.codes):
                cut_position = None
        if self.continuous and cut_position is not None:
            raise ValueError("a continuous shuffler deals without a cut card")
        self.cut_position = cut_position
        self.paytable = profile.paytable if paytable is None else paytable
        # only a continuous shuffler puts cards back: a shoe that is dealt out needs no source
        self.returns = returns if returns is not None or not self.continuous \
            else random.Random(0)
        self.burn: list[str] = []
        self.end_reason: str | None = None
        self.cards_used = 0
        self._started = False

    def __iter__(self) -> Iterator[PuntoBancoRound | RoundResult]:
        if self._started:
            raise RuntimeError("a ShoeDeal deals its shoe once")
        self._started = True
        if self.profile.game == "punto_banco":
            return iter(self._punto_banco())
        return self._generic()

    def rounds(self) -> list[PuntoBancoRound | RoundResult]:
        """Every round of the shoe."""
        if self.profile.game == "punto_banco" and not self._started:
            self._started = True
            return self._punto_banco()
        return list(self)

    # ---------------------------------------------------------------------------------------
    def _start(self) -> tuple[int, int, int | None] | None:
        """After the shoe-start burn: (the next position, the cut card's position, 1 if the
        cut card came out in the burn); None when the burn emptied the shoe."""
        pos = self._start_burn()
        if self.end_reason is not None:
            self.cards_used = pos
            return None
        cut = _NEVER if self.cut_position is None else self.cut_position
        return pos, cut, (1 if cut < pos else None)

    def _start_burn(self) -> int:
        """Take the shoe-start burn; the number of cards it took."""
        codes = self.codes
        if self.profile.burn.rule == "none":
            return 0
        if not codes:
            self.end_reason = "exhausted"
            return 0
        total = procedures.start_burn_total(self.profile, _CARD_OF_CODE[codes[0]])
        n = min(max(total, 1), len(codes))      # the turned card is always burned
        self.burn = codes[:n]
        if n < max(total, 1):
            self.end_reason = "exhausted"
        return n

    def _end_after(self, number: int, cut_round: int | None, drawn: int) -> str | None:
        """Why the shoe ends after complete round `number`, or None (as the table decides)."""
        return procedures.end_after_round(
            self.profile, number, cut_round, rounds_per_shoe=getattr(self.rules, "rounds_per_shoe", 0),
            rounds_in_shoe=number, drawn=drawn)

    def _generic(self) -> Iterator[RoundResult]:
        """Any game without decisions, card by card through its RULES object."""
        codes, rules, paytable = self.codes, self.rules, self.paytable
        started = self._start()
        if started is None:
            return
        pos, cut, cut_round = started
        number = 0
        while True:
            number += 1
            hands = rules.new_hands()
            burned: list[str] = []
            void = False
            for _ in range(procedures.between_round_burn(self.profile, number - 1)):
                if pos >= len(codes):
                    void = True
                    break
                burned.append(codes[pos])
                pos += 1
            phase = None if void else rules.next_phase(hands)
            while phase is not None:
                if pos >= len(codes):
                    void = True
                    break
                answer = rules.place(hands, phase, _CARD_OF_CODE[codes[pos]])
                pos += 1
                phase = answer if rules.place_answers else rules.next_phase(hands)
            if cut_round is None and pos > cut:
                cut_round = number
            if void:
                self.cards_used, self.end_reason = pos, "exhausted"
                yield RoundResult(number, {k: [c.code for c in v] for k, v in hands.items()},
                                  MappingProxyType({b: Fraction(0) for b in paytable}),
                                  tuple(burned), True)
                return
            yield RoundResult(number, rules.outcome(hands), rules.settle(hands, paytable),
                              tuple(burned))
            if self.continuous:
                back = burned + [c.code for h in hands.values() for c in h]
                assert self.returns is not None         # a continuous shuffler has one
                randint = self.returns.randint
                for code in back:
                    codes.insert(randint(pos, len(codes)), code)
            reason = self._end_after(number, cut_round, pos)
            if reason is not None:
                self.cards_used, self.end_reason = pos, reason
                return

    def _punto_banco(self) -> list[PuntoBancoRound | RoundResult]:
        """Punto Banco over point values and lookup tables; a round that might run out of cards
        goes through the rules card by card (`_slow_round`). The whole shoe at once: a list of
        its rounds costs less than a generator's turn a round."""
        codes, profile = self.codes, self.profile
        point = pb.POINT_OF_CODE
        # every card's point, one byte each (read off the codes joined when they were checked)
        points = self._joined[0::3].translate(_POINT_BYTE) if self._joined is not None else \
            "".join(codes)[0::2].encode("latin-1").translate(_POINT_BYTE)
        # a continuous shuffler's returned cards are put back among them
        pts = bytearray(points) if self.continuous else points
        table = pb.settlement_table(self.paytable)
        rounds = _ROUNDS
        # procedures.between_round_burn: the profile's count before every round but the first
        burn, burn_later = (procedures.between_round_burn(profile, 0),
                            procedures.between_round_burn(profile, 1))
        continuous = self.continuous
        randint = self.returns.randint if continuous and self.returns is not None else None
        started = self._start()
        if started is None:
            return []
        pos, cut, cut_round = started
        number = 0
        last = len(codes) - 6                    # the last position a whole round fits from
        if not continuous and burn == burn_later and cut_round is None and cut + burn <= last:
            # up to the cut card: whole rounds (a round from before the cut card fits in the
            # shoe), one burn count, nothing to check but the cut
            out, pos = self._to_the_cut(pts, pos, burn, cut, table)
            number = cut_round = len(out)
        else:
            out = []
        add = out.append
        while True:
            # the shoe ends after the round just dealt (the cut card's, or the machine's load)?
            if number and cut_round is not None and \
                    procedures.shoe_ends_after(profile, number, cut_round):
                self.cards_used, self.end_reason = pos, "cut_card"
                return out
            if number and continuous and pos >= profile.cards:
                self.cards_used, self.end_reason = pos, "cards_dealt"
                return out
            number += 1
            if number == 2:
                burn = burn_later
            i = pos + burn
            if i > last:
                result, pos = self._slow_round(number, pos, burn)
                if cut_round is None and pos > cut:
                    cut_round = number
                add(result)
                if result.void:
                    self.cards_used, self.end_reason = pos, "exhausted"
                    return out
            else:
                p1, b1, p2, b2, x5, x6 = pts[i:i + 6]
                shape = rounds[((p1 + p2) % 10 * 10 + (b1 + b2) % 10) * 100 + x5 * 10 + x6]
                pos = i + shape[0]
                cards = codes[i:pos]
                # a pair has one point twice: its ranks are compared only then
                key = shape[6] \
                    + (6 if p1 == p2 and cards[0][0] == cards[2][0] else 0) \
                    + (12 if b1 == b2 and cards[1][0] == cards[3][0] else 0)
                burned = tuple(codes[i - burn:i]) if burn else ()
                if cut_round is None and pos > cut:
                    cut_round = number
                result = PuntoBancoRound((number, cards, shape, table[key], burned))
                add(result)
            if continuous and isinstance(result, PuntoBancoRound):
                # the round's cards go back (its burn, then Player's, then Banker's)
                assert randint is not None and isinstance(pts, bytearray)
                for code in (*result.burned_before, *result.player, *result.banker):
                    at = randint(pos, len(codes))
                    codes.insert(at, code)
                    pts.insert(at, point[code])
                last = len(codes) - 6

    def _to_the_cut(self, pts: bytes | bytearray, pos: int, burn: int, cut: int,
                    table: tuple) -> tuple[list, int]:
        """The rounds up to the one that takes the card behind the cut card, each burn `burn`
        cards before it: (those rounds, the position after them). Every round fits in the
        shoe (the cut card lies far enough from its end)."""
        codes, rounds = self.codes, _ROUNDS_BY_SUMS
        rows: list[tuple] = []
        add = rows.append
        burned: tuple = ()
        number = 0
        while pos <= cut:
            number += 1
            if burn:
                burned = tuple(codes[pos:pos + burn])
                pos += burn
            p1, b1, p2, b2, x5, x6 = pts[pos:pos + 6]
            shape = rounds[((p1 + p2) * 19 + b1 + b2) * 100 + x5 * 10 + x6]
            key = shape[6]
            # a pair has one point twice: its ranks are compared only then
            if p1 == p2 and codes[pos][0] == codes[pos + 2][0]:
                key += 6                                            # Player's pair
            if b1 == b2 and codes[pos + 1][0] == codes[pos + 3][0]:
                key += 12                                           # Banker's
            add((number, codes[pos:pos + shape[0]], shape, table[key], burned))
            pos += shape[0]
        # the rounds made at once (a type called from C, not from the loop: the cheaper way)
        return list(map(PuntoBancoRound, rows)), pos

    def _slow_round(self, number: int, pos: int,
                    burn: int) -> tuple[PuntoBancoRound | RoundResult, int]:
        """One Punto Banco round through the rules, card by card: (result, new position)."""
        codes, rules, paytable = self.codes, self.rules, self.paytable
        burned = tuple(codes[pos:pos + burn])
        pos += len(burned)
        hands = rules.new_hands()
        complete = len(burned) == burn
        phase = rules.next_phase(hands) if complete else None
        while phase is not None:
            if pos >= len(codes):
                complete = False
                break
            answer = rules.place(hands, phase, _CARD_OF_CODE[codes[pos]])
            pos += 1
            phase = answer if rules.place_answers else rules.next_phase(hands)
        if not complete:
            return RoundResult(number, {k: [c.code for c in v] for k, v in hands.items()},
                               MappingProxyType({b: Fraction(0) for b in paytable}), burned,
                               True), pos
        player, banker = hands["player"], hands["banker"]
        out = rules.outcome(hands)
        cards = [player[0].code, banker[0].code, player[1].code, banker[1].code] \
            + [c.code for c in player[2:]] + [c.code for c in banker[2:]]
        layout = (len(player) == 3) + 2 * (len(banker) == 3)
        pt, bt = out["player_total"], out["banker_total"]
        shape = (len(cards), layout, pt, bt, out["winner"], out["natural"],
                 _KEY_BASE[layout * 100 + pt * 10 + bt])
        bets = pb.settlement_table(paytable)[pb._key_of(player, banker)]
        return PuntoBancoRound((number, cards, _SHAPES.setdefault(shape, shape), bets,
                                burned)), pos


#: a rank's point as one byte (bytes.translate of the ranks of a shoe's joined codes)
_POINT_BYTE = bytes.maketrans(RANKS.encode(), bytes(pb.POINT_OF_CODE[r + "S"] for r in RANKS))


def _canonical(codes: Iterable[str | Card],
               copy: bool = True) -> tuple[list[str], bytes | None]:
    """Canonical card codes (`AS`, `TD`) from codes in any accepted spelling or Card objects;
    a list of canonical codes as it is unless `copy` (only read, it needs none). Beside them,
    the codes joined by commas as bytes when they came canonical (None otherwise)."""
    out = list(codes) if copy or type(codes) is not list else codes
    joined = _joined_if_canonical(out)
    if joined is not None or not out:
        return cast(list[str], out), joined
    return [c.code if isinstance(c, Card) else parse_card(c).code for c in out], None


def _joined_if_canonical(codes: list) -> bytes | None:
    """The codes joined by commas, as bytes, when every one is a canonical code; else None.

    Checked on the joined text at C speed: with a comma at every third place and a rank and a
    suit at the others, no code holds a comma, so each is exactly one rank and one suit."""
    try:
        joined = ",".join(codes).encode("ascii")
    except (TypeError, UnicodeEncodeError):     # not all text, or text no code is made of
        return None
    if len(joined) != 3 * len(codes) - 1 or joined[2::3].translate(None, b",") \
            or joined[0::3].translate(None, _RANK_BYTES) \
            or joined[1::3].translate(None, _SUIT_BYTES):
        return None
    return joined


_RANK_BYTES, _SUIT_BYTES = RANKS.encode(), SUITS.encode()


def deal_shoe(profile, codes: Iterable[str | Card],
              **kw: Any) -> Iterator[PuntoBancoRound | RoundResult]:
    """The rounds of one shoe (see ShoeDeal)."""
    return iter(ShoeDeal(profile, codes, **kw))


def shuffled_shoes(profile, seed: int) -> Iterator[list[str]]:
    """The shoes a seeded simulated shuffler delivers, one after another: random.Random(seed)
    shuffling `decks` factory-ordered decks (Fisher–Yates), as simulators.shuffler does."""
    rng = random.Random(seed)
    factory = [c.code for c in ordered_shoe(profile.decks)]
    while True:
        shoe = list(factory)
        rng.shuffle(shoe)
        yield shoe
