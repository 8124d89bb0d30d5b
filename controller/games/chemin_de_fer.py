"""Chemin de Fer (docs/rules.md): the chemmy tableau as data, decisions, false coups, the bank.

Dealing: P1, B1, P2, B2 (1st and 3rd card to the player, 2nd and 4th to the banker); an 8 or 9
on two cards is a natural and ends the coup. Then the player acts, then the banker:

- player: draws on 0–4, stands on 6–7, chooses on 5 (decision `player_draw`);
- banker: the table `BANKER_TABLEAU` (banker total → action when the player stood, and action
  for each value x of the player's third card); the optional cells 3 vs 9 and 5 vs 4 are the
  banker's choice (decision `banker_draw`).

A decision due before the next card makes `next_phase` answer ``"decide:<name>"``; the table
records it with `decide(hands, name, value)` (True = draw, False = stand) in
``hands["decisions"]``. Without a decisions source, `default_decision` draws in every optional
cell, which makes the coup follow the Punto Banco tableau exactly. The seats (`banker_seat`, the
bank-holding seat, and `active_player`, who plays the hand for all) are inputs recorded the
same way; they never hold up the deal.

A draw or stand against a mandatory cell is a *false coup*: `check_draw` reports it with the
profile's remedy (`[game_options] false_coup = "void" | "correct"`). A banker's misdraw also
passes the shoe (`BankRotation.after_coup(..., misdraw=True)`). The table keeps the rotation as
plain data (`new_bank`, `bank_after_coup`, `bank_with_banker`): every seat 1–12 is taken to be
occupied, and a `banker_seat` decision names the seat that really takes the bank when one is
empty or declines it. The bank is settled with 5 %
commission through the paytable (`banker = 0.95`). The cut card lies before the last 7 cards
and no coup starts after it appears (profile: `cut_card.after = "no_more_coup"`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Iterable, Mapping

from controller.shoe.cards import Card, codes, hand_total
from controller.errors import InputError, ProfileError
from controller.games.procedure import RESULT, Procedure
from controller.games.rules import Rules

GAME = "chemin_de_fer"
PHASES = ("P1", "B1", "P2", "B2", "player_third", "banker_third")
INITIAL = PHASES[:4]
_HAND_OF = {"P1": "player", "P2": "player", "player_third": "player",
            "B1": "banker", "B2": "banker", "banker_third": "banker"}
BETS = ("banker", "player")
#: decisions that hold up the deal until made
DRAW_DECISIONS = ("player_draw", "banker_draw")
#: recorded inputs naming seats; they never hold up the deal
SEAT_DECISIONS = ("banker_seat", "active_player")
MAX_SEATS = 12
CUT_CARD_FROM_END = 7
COMMISSION = Fraction(1, 20)
REMEDIES = ("void", "correct")
DEFAULT_REMEDY = "void"
ONE = Fraction(1)

DRAW, STAND, OPTION = "draw", "stand", "option"


def player_rule(total: int) -> str:
    """The player's cell on a two-card total 0–7: draw on 0–4, option on 5, stand on 6–7."""
    if total <= 4:
        return DRAW
    return OPTION if total == 5 else STAND


def _row(stood: str, draws: Iterable[int] = (), options: Iterable[int] = ()):
    draws, options = set(draws), set(options)
    return stood, {x: DRAW if x in draws else OPTION if x in options else STAND
                   for x in range(10)}


#: banker total → (action when the player stood, {value of the player's third card: action})
BANKER_TABLEAU = {
    0: _row(DRAW, range(10)),
    1: _row(DRAW, range(10)),
    2: _row(DRAW, range(10)),
    3: _row(DRAW, range(0, 8), options=(9,)),
    4: _row(DRAW, range(2, 8)),
    5: _row(DRAW, range(5, 8), options=(4,)),
    6: _row(STAND, (6, 7)),
    7: _row(STAND),
}


def banker_rule(total: int, player_third: int | None) -> str:
    """The banker's cell; `player_third`: the value of the player's third card, None if he stood."""
    stood, by_third = BANKER_TABLEAU[total]
    return stood if player_third is None else by_third[player_third]


def decision_value(name: str, value) -> bool:
    """A draw decision as a bool: True/False or the words "draw"/"stand"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("draw", "stand"):
        return value.strip().lower() == "draw"
    raise InputError(f"decision {name}: {value!r} is not a draw decision (use draw or stand)")


def seat_value(game: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SEATS:
        raise InputError(f"{game}: decision {name}: {value!r} is not a seat (1–{MAX_SEATS})")
    return value


@dataclass(frozen=True)
class FalseCoup:
    """A draw or stand against a mandatory cell ("faux tirage").

    remedy "void": the coup is void, every bet is returned. remedy "correct": the coup is put
    right at once — a card drawn in error (`drawn_in_error`) is burned, since a card that left
    the shoe never goes back, and the coup goes on; a hand that stood where it had to draw
    receives the card it is owed (`next_phase` still asks for it). `pass_bank`: the banker
    misdrew and passes the shoe after the coup.
    """
    hand: str
    detail: str
    remedy: str
    drawn_in_error: bool
    pass_bank: bool = False
    kind: str = "false_coup"

    def as_fields(self) -> dict:
        """Fields for an `irregularity` event."""
        return {"kind": self.kind, "detail": self.detail, "hand": self.hand,
                "remedy": self.remedy, "pass_bank": self.pass_bank}


def remedy_of(options: Mapping | None) -> str:
    return (options or {}).get("false_coup", DEFAULT_REMEDY)


def validate_false_coup_options(game: str, options: Mapping, where: str) -> None:
    """`[game_options]` of the banking games: only `false_coup = "void" | "correct"`."""
    for key, value in options.items():
        if key != "false_coup":
            raise ProfileError(where, f"game_options.{key}", f"{game} has no such option",
                               "use false_coup = \"void\" or \"correct\"")
        if value not in REMEDIES:
            raise ProfileError(where, "game_options.false_coup", f"{value!r} is not allowed",
                               "use \"void\" or \"correct\"")


def parse_move(game: str, move: str, draws: Mapping[str, str]) -> tuple[str, bool]:
    """("hand", draws?) for a card phase in `draws` (phase → hand) or "stand:<hand>"."""
    if move in draws:
        return draws[move], True
    if move.startswith("stand:") and move[6:] in draws.values():
        return move[6:], False
    raise ValueError(f"{game}: {move!r} is not a third-card move (use "
                     f"{', '.join(draws)} or stand:<hand>)")


def player_false_coup(total: int, draws: bool, decided: bool | None) -> str | None:
    """Why a player hand on two cards drawing (or standing) is a false coup, or None if legal."""
    rule = player_rule(total)
    if draws and rule == STAND:
        return f"draws on {total}"
    if not draws and rule == DRAW:
        return f"stands on {total}"
    if rule == OPTION and decided is not None and decided != draws:
        return "draws on 5 after standing" if draws else "stands on 5 after asking for a card"
    return None


def is_natural(player: list[Card], banker: list[Card]) -> bool:
    return hand_total(player[:2]) >= 8 or hand_total(banker[:2]) >= 8


def _player_done(hands) -> bool:
    p = hands["player"]
    if len(p) == 3:
        return True
    rule = player_rule(hand_total(p))
    return rule == STAND or rule == OPTION and hands["decisions"].get("player_draw") is False


def next_phase(hands) -> str | None:
    """The next card phase, "decide:<name>" when a choice is due first, or None (coup over)."""
    p, b, decisions = hands["player"], hands["banker"], hands["decisions"]
    n = len(p) + len(b)
    if n < 4:
        return INITIAL[n]
    if is_natural(p, b):
        return None
    if not _player_done(hands):
        if player_rule(hand_total(p)) == DRAW or decisions.get("player_draw"):
            return "player_third"
        return "decide:player_draw"
    if len(b) == 3:
        return None
    rule = banker_rule(hand_total(b), p[2].point if len(p) == 3 else None)
    if rule == OPTION:
        chosen = decisions.get("banker_draw")
        if chosen is None:
            return "decide:banker_draw"
        rule = DRAW if chosen else STAND
    return "banker_third" if rule == DRAW else None


def check_draw(hands, move: str, options: Mapping | None = None) -> FalseCoup | None:
    """Whether `move` now ("player_third", "banker_third", "stand:player", "stand:banker") is
    a false coup. A legal move in an optional cell is the hand's decision: record it with
    `decide`. The banker acting while the player still has to draw means the player stood."""
    hand, draws = parse_move(GAME, move, {"player_third": "player", "banker_third": "banker"})
    p, b, decisions = hands["player"], hands["banker"], hands["decisions"]
    if len(p) + len(b) < 4:
        raise ValueError(f"{GAME}: the first four cards are not dealt yet")
    remedy = remedy_of(options)

    def coup(who: str, why: str, drawn: bool) -> FalseCoup:
        return FalseCoup(who, f"{who} {why}", remedy, drawn, pass_bank=who == "banker")

    if is_natural(p, b):
        return coup(hand, "draws after a natural", True) if draws else None
    if hand == "player":
        if len(p) == 3 or len(b) == 3:
            return coup("player", "draws out of turn", True) if draws else None
        why = player_false_coup(hand_total(p), draws, decisions.get("player_draw"))
        return coup("player", why, draws) if why else None
    if len(b) == 3:
        return coup("banker", "draws a fourth card", True) if draws else None
    if len(p) == 2:
        # the banker acting closes the player's turn: the player stood
        why = player_false_coup(hand_total(p), False, decisions.get("player_draw"))
        if why:
            return coup("player", why, False)
    third = p[2].point if len(p) == 3 else None
    rule = banker_rule(hand_total(b), third)
    chosen = decisions.get("banker_draw")
    against = "the player standing" if third is None else f"a third card of {third}"
    if draws and (rule == STAND or rule == OPTION and chosen is False):
        return coup("banker", f"draws on {hand_total(b)} against {against}", True)
    if not draws and (rule == DRAW or rule == OPTION and chosen is True):
        return coup("banker", f"stands on {hand_total(b)} against {against}", False)
    return None


def winner(player: list[Card], banker: list[Card]) -> str:
    pt, bt = hand_total(player), hand_total(banker)
    return "player" if pt > bt else "banker" if bt > pt else "tie"


def settle(hands, paytable: Mapping) -> dict[str, Fraction]:
    """Net per unit: "banker" is the bank's stake (pays e.g. 0.95 after 5 % commission),
    "player" the punters'; a tie ("égalité") is a push for both."""
    win = winner(hands["player"], hands["banker"])
    out: dict[str, Fraction] = {}
    for bet, rule in paytable.items():
        if bet not in BETS:
            raise KeyError(f"{GAME} has no bet {bet!r}")
        if rule.pays is None:
            raise ValueError(f"{GAME}: bet {bet!r} needs a payout (pays)")
        out[bet] = Fraction(0) if win == "tie" else rule.pays if win == bet else -ONE
    return out


@dataclass(frozen=True)
class BankRotation:
    """Who holds the bank. Seats are numbered counter-clockwise from the dealer's right, so the
    shoe passes counter-clockwise to the next higher occupied seat, wrapping after the highest.
    The first banker is the first player to the dealer's right (the lowest seat)."""
    seats: tuple[int, ...]
    banker: int

    def __post_init__(self) -> None:
        seats = tuple(sorted(self.seats))
        if len(seats) < 2 or len(set(seats)) != len(seats) or seats[0] < 1:
            raise ValueError(f"bank rotation needs two or more distinct seats 1+, got {self.seats}")
        if self.banker not in seats:
            raise ValueError(f"banker seat {self.banker} is not among the seats {seats}")
        object.__setattr__(self, "seats", seats)

    @classmethod
    def start(cls, seats: Iterable[int]) -> "BankRotation":
        seats = tuple(seats)
        return cls(seats, min(seats) if seats else 0)

    def punters(self) -> tuple[int, ...]:
        """The other seats, counter-clockwise from the banker."""
        i = self.seats.index(self.banker)
        return self.seats[i + 1:] + self.seats[:i]

    @property
    def next_banker(self) -> int:
        return self.punters()[0]

    def passed(self) -> "BankRotation":
        """The bank passes counter-clockwise (lost, retired, misdrew, or declined by a seat)."""
        return replace(self, banker=self.next_banker)

    def after_coup(self, winner: str, *, retired: bool = False,
                   misdraw: bool = False) -> "BankRotation":
        """The banker keeps the bank on a win or a tie, and passes it on a loss, on retiring or
        after a misdraw."""
        if winner not in ("banker", "player", "tie"):
            raise ValueError(f"winner must be banker, player or tie, not {winner!r}")
        return self.passed() if winner == "player" or retired or misdraw else self

    def to_dict(self) -> dict:
        """Plain data for the table's state and snapshots."""
        return {"seats": list(self.seats), "banker": self.banker}

    @classmethod
    def from_dict(cls, d: Mapping) -> "BankRotation":
        return cls(tuple(d["seats"]), d["banker"])

    def with_banker(self, seat: int) -> "BankRotation":
        """The bank taken by `seat` (the seats in turn declined it, or the table named it)."""
        if seat not in self.seats:
            raise InputError(f"seat {seat} is not at the table (seats: "
                             f"{', '.join(map(str, self.seats))})")
        return replace(self, banker=seat)

    def active_player(self, stakes: Mapping[int, Fraction | int], banco: Iterable[int] = ()) -> int:
        """The punter who plays the hand for all: the first "Banco" caller counter-clockwise from
        the banker; otherwise the highest stake, ties going to the first counter-clockwise."""
        order = self.punters()
        callers = set(banco)
        for seat in order:
            if seat in callers:
                return seat
        staked = [s for s in order if stakes.get(s, 0) > 0]
        if not staked:
            raise ValueError("no punter has a stake")
        return max(staked, key=lambda s: (stakes[s], -order.index(s)))


@dataclass(frozen=True)
class Pool:
    """The stakes of a coup once bets close: who plays the hand for all, and what was covered."""
    accepted: Mapping[int, int | None]   # seat → stake covered (None: banco, the whole bank)
    refused: Mapping[int, int]           # seat → the excess the banker would not cover
    active: int | None                   # the punter who plays the hand (None: no stake)
    banco: int | None                    # the seat that called banco, if one did


def pool_stakes(bank: BankRotation, stakes: Mapping[int, int], banco: Iterable[int] = (),
                limit: int | None = None) -> Pool:
    """The punters' stakes against the bank: a "Banco" caller (the first counter-clockwise from
    the banker) plays the whole bank alone; otherwise stakes are pooled counter-clockwise from
    the banker up to `limit` (the banker refuses the excess), and the highest stake covered
    plays the hand for all, ties going to the first counter-clockwise."""
    order = bank.punters()
    unknown = sorted(set(stakes) - set(order)) + sorted(set(banco) - set(order))
    if unknown:
        raise InputError(f"seat {unknown[0]} is not a punter at this coup (the bank is seat "
                         f"{bank.banker})")
    refused: dict[int, int] = {}
    callers = [s for s in order if s in set(banco)]
    if callers:
        caller = callers[0]
        whole = limit if limit is not None else (stakes.get(caller) or None)
        refused = {s: n for s, n in stakes.items() if s != caller and n > 0}
        return Pool({caller: whole}, refused, caller, caller)
    left = limit
    accepted: dict[int, int | None] = {}
    for seat in order:
        n = stakes.get(seat, 0)
        if n <= 0:
            continue
        take = n if left is None else min(n, left)
        if take:
            accepted[seat] = take
        if take < n:
            refused[seat] = n - take
        if left is not None:
            left -= take
    staked = {s: n for s, n in accepted.items() if n}
    active = bank.active_player(staked) if staked else None
    return Pool(accepted, refused, active, None)


class BankingGame(Rules, ABC):
    """What Chemin de Fer and Baccarat en Banque share: phases, decisions, the bank's seat.

    A subclass names its game's constants and module functions; the methods read them."""
    game: str
    phases: tuple[str, ...]
    bets: tuple[str, ...]
    hand_of: Mapping[str, str]
    draw_decisions: tuple[str, ...]
    seat_decisions: tuple[str, ...]

    @property
    def decisions(self) -> tuple[str, ...]:
        return self.draw_decisions + self.seat_decisions

    @abstractmethod
    def _next_phase(self, hands) -> str | None:
        """The game's own next_phase."""

    def next_phase(self, hands) -> str | None:
        return self._next_phase(hands)

    def place(self, hands, phase: str, card: Card) -> None:
        if phase not in self.hand_of:
            raise ValueError(f"{self.game} has no phase {phase!r} "
                             f"(phases: {', '.join(self.phases)})")
        hands[self.hand_of[phase]].append(card)

    def decision_options(self, hands, name: str) -> tuple:
        """The values allowed for decision `name` now; () when that decision is not due."""
        if name in self.draw_decisions:
            return (True, False) if self._next_phase(hands) == f"decide:{name}" else ()
        if name in self.seat_decisions:
            return tuple(range(1, MAX_SEATS + 1))
        raise InputError(f"{self.game} has no decision {name!r} "
                         f"(decisions: {', '.join(self.decisions)})")

    def decide(self, hands, name: str, value) -> None:
        if name in self.seat_decisions:
            hands["decisions"][name] = seat_value(self.game, name, value)
            return
        if not self.decision_options(hands, name):
            raise InputError(f"{self.game}: decision {name} is not due now")
        hands["decisions"][name] = decision_value(name, value)

    def draw_value(self, name: str, value) -> bool:
        """A draw decision's value as a bool (True/False or "draw"/"stand"); InputError else."""
        return decision_value(name, value)

    def new_bank(self) -> dict:
        """The first banker: the first player to the dealer's right (seat 1)."""
        return BankRotation.start(range(1, MAX_SEATS + 1)).to_dict()

    def bank_with_banker(self, bank: Mapping, seat: int) -> dict:
        return BankRotation.from_dict(bank).with_banker(seat).to_dict()

    def validate_options(self, options: Mapping, where: str) -> None:
        validate_false_coup_options(self.game, options, where)


#: the coup's procedure: four cards, then the player's turn (drawing, standing or choosing on
#: 5), then the banker's (by the tableau, or by choice in its optional cells)
PROCEDURE = Procedure(
    game=GAME, slots=PHASES, decisions=DRAW_DECISIONS,
    successors={"P1": ("B1",), "B1": ("P2",), "P2": ("B2",),
                "B2": ("player_third", "decide_player_draw", "banker_third", RESULT),
                "decide_player_draw": ("player_third", "banker_third", RESULT),
                "player_third": ("banker_third", "decide_banker_draw", RESULT),
                "decide_banker_draw": ("banker_third", RESULT),
                "banker_third": (RESULT,)})


class CheminDeFerRules(BankingGame):
    game = GAME
    phases = PHASES
    procedure = PROCEDURE
    bets = BETS
    hand_of = _HAND_OF
    draw_decisions = DRAW_DECISIONS
    seat_decisions = SEAT_DECISIONS

    def new_hands(self) -> dict:
        return {"player": [], "banker": [], "decisions": {}}

    def _next_phase(self, hands) -> str | None:
        return next_phase(hands)

    def default_decision(self, hands, name: str) -> bool:
        """Draw in every optional cell (player on 5, banker 3 vs 9 and 5 vs 4): the Punto Banco
        tableau, so a simulated coup without a decisions file matches Punto Banco."""
        if name not in DRAW_DECISIONS:
            raise InputError(f"{GAME}: no default for decision {name!r}; the table supplies it")
        return True

    def check_draw(self, hands, move: str, options: Mapping | None = None) -> FalseCoup | None:
        return check_draw(hands, move, options)

    def pool_stakes(self, bank: Mapping, stakes: Mapping[int, int], banco: Iterable[int] = (),
                    limit: int | None = None) -> Pool:
        """Who plays the hand for all, and what the bank covers (`pool_stakes`)."""
        return pool_stakes(BankRotation.from_dict(bank), stakes, banco, limit)

    def bank_after_coup(self, bank: Mapping, hands, *, void: bool = False,
                        misdraw: bool = False) -> dict:
        """The banker keeps the bank on a win or a tie and passes it counter-clockwise on a
        loss or a misdraw; a void coup leaves it where it is unless the banker misdrew."""
        rot = BankRotation.from_dict(bank)
        if void:
            return (rot.passed() if misdraw else rot).to_dict()
        return rot.after_coup(winner(hands["player"], hands["banker"]),
                              misdraw=misdraw).to_dict()

    def outcome(self, hands) -> dict:
        p, b = hands["player"], hands["banker"]
        return {"player": codes(p), "banker": codes(b),
                "player_total": hand_total(p), "banker_total": hand_total(b),
                "winner": winner(p, b), "natural": is_natural(p, b),
                "decisions": dict(hands["decisions"])}

    def settle(self, hands, paytable: Mapping) -> dict[str, Fraction]:
        return settle(hands, paytable)


RULES = CheminDeFerRules()
