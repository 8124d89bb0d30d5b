"""Exact Baccarat en Banque odds: the bank against two hands, every choice left open.

The coup uses at most nine cards: each hand's two (right, left), the bank's two, a third card for
each hand and one for the bank. The cards of a shuffled shoe are exchangeable, so the coup is
the same if those nine are thought of as drawn for their roles in any order: this module draws
the bank's pair, the right hand (pair and third card), the left hand and the bank's third card,
over card values with multiplicities, as punto_banco.py does. Each hand follows the player's
rules (controller.games.chemin_de_fer.player_rule: draw on 0–4, stand on 6–7, choose on 5); the
bank's draw is free, made once for both hands with what it can see: its own total, and for each
hand whether it showed a natural, stood, or the value of the third card dealt face up. Each
such view is a cell of the bank's (`bank_<total>_<right>_<left>`).

Finals are recorded under the choices that led to them (banking.Coup), so every strategy, and
the bank's best response cell by cell, comes from one enumeration. A final is (right's result,
left's result, how the right hand ended, how the left ended, how the bank ended); weights are
normalised to nine-card sequences.

Speed: the left hand and the bank's third card are summed as fields of one large integer
(96 bits per field, 11 per left third card: ten for the bank's third card and one for the bank
standing), so the innermost two loops are one multiplication; the left hand's sum depends only on
which cards are gone, and is kept per composition.
"""
from __future__ import annotations

from fractions import Fraction
from math import perm
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Mapping

from controller.games.baccarat_banque import BANK_DEFAULT_DRAWS_ON, GAME
from controller.games.chemin_de_fer import DRAW, OPTION, STAND, banker_rule, player_rule
from controller.odds.banking import Cell, Coup, Path, Strategy, choice_text
from controller.odds.punto_banco import rank_counts, value_counts

if TYPE_CHECKING:
    from controller.settings.profile import BetRule

RIGHT, LEFT, BANK = "right", "left", "bank"
NATURAL, STOOD, DREW = "natural", "stood", "drew"
SIDES = (RIGHT, LEFT)
#: what the bank sees of a hand: a natural, that it stood, or its third card's value
View = str | int
VIEWS = (NATURAL, STOOD, *range(10))
_BITS = 96
_MASK = (1 << _BITS) - 1
_STANDS = 10                 # the field of the bank standing


def hand_cell(side: str, total: int) -> str:
    return f"{side}_{total}"


def bank_cell(total: int, right: View, left: View) -> str:
    return f"bank_{total}_{right}_{left}"


def _view_text(side: str, view: View) -> str:
    if view == NATURAL:
        return f"{side} natural"
    if view == STOOD:
        return f"{side} stood"
    return f"{side} drew {view}"


def cells() -> dict[str, Cell]:
    """The hands' choices on 5, then the bank's cells (total × right's view × left's view;
    none when both hands are naturals, when the bank does not draw)."""
    out = {hand_cell(s, t): Cell(hand_cell(s, t), s, f"{s} hand on {t}")
           for s in SIDES for t in range(8) if player_rule(t) == OPTION}
    for bt in range(8):
        for r in VIEWS:
            for left in VIEWS:
                if r == left == NATURAL:
                    continue
                name = bank_cell(bt, r, left)
                out[name] = Cell(name, BANK, f"bank on {bt}, {_view_text(RIGHT, r)}, "
                                 f"{_view_text(LEFT, left)}")
    return out


def _bank_cells(c: dict[str, Cell]) -> list[tuple[str, int, View, View]]:
    out = []
    for name, cell in c.items():
        if cell.side == BANK:
            _, total, right, left = name.split("_")
            out.append((name, int(total), _view(right), _view(left)))
    return out


def _view(text: str) -> View:
    return text if text in (NATURAL, STOOD) else int(text)


def bank_by_rule(draws: Callable[[int, View, View], Fraction | int | bool]) -> dict[str, Fraction]:
    """The bank's cells from `draws(total, right_view, left_view) -> probability`."""
    return {name: Fraction(draws(bt, r, left)) for name, bt, r, left in _bank_cells(cells())}


def tableau_draws(against: str, option: Fraction = Fraction(1)
                  ) -> Callable[[int, View, View], Fraction]:
    """The bank draws by the chemin de fer tableau against one hand (`option` in its optional
    cells: 1 makes it Punto Banco's tableau); against the other hand when that one is a
    natural."""
    def draws(bt: int, right: View, left: View) -> Fraction:
        view = right if against == RIGHT else left
        if view == NATURAL:
            view = left if against == RIGHT else right
        rule = banker_rule(bt, view if isinstance(view, int) else None)   # None: stood
        return option if rule == OPTION else Fraction(rule == DRAW)
    return draws


def default_strategy() -> Strategy:
    """The rules' default decisions: a hand on 5 draws, the bank draws on 0–5 (stands 6–7)."""
    hands = {c: Fraction(1) for c, cell in cells().items() if cell.side != BANK}
    bank = bank_by_rule(lambda bt, r, left: bt in BANK_DEFAULT_DRAWS_ON)
    low, high = min(BANK_DEFAULT_DRAWS_ON), max(BANK_DEFAULT_DRAWS_ON)
    return Strategy({**hands, **bank}, f"hands draw on 5; bank draws on {low}-{high}")


def coup(decks: int | None) -> Coup:
    """Every final of a coup off the top of a full shoe of `decks` decks (None: infinite)."""
    return composition_coup(rank_counts(decks), infinite=decks is None)


@lru_cache(maxsize=4)
def composition_coup(ranks: tuple[int, ...], infinite: bool = False) -> Coup:
    """Every final of a coup from a shoe holding `ranks[i]` cards of rank A..K (with
    `infinite`, relative frequencies of cards drawn with replacement)."""
    counts = value_counts(ranks)
    dep = 0 if infinite else 1
    n = sum(counts)
    decks = None if infinite else sum(ranks) // 52
    total = perm(n, 9) if dep else n ** 9
    packed = _Packed(dep)
    finals: dict[int, int] = {}
    acc: dict[tuple, int] = {}
    rem = list(counts)
    for b1 in range(10):
        if not counts[b1]:
            continue
        rem[b1] -= dep
        for b2 in range(b1, 10):
            wb = counts[b1] * rem[b2] * (1 if b1 == b2 else 2)
            if wb <= 0:
                continue
            rem[b2] -= dep
            bt = (b1 + b2) % 10
            if bt >= 8:
                _bank_natural(rem, dep, bt, wb, finals)
            else:
                for r, rflag, rf, w, after in _hand(rem, dep):
                    for (lt, kind), p in packed.left(after).items():
                        key = (bt, r, rflag, rf, lt, kind)
                        acc[key] = acc.get(key, 0) + wb * w * p
            rem[b2] += dep
        rem[b1] += dep
    for key, value in acc.items():
        _unpack(key, value, finals)
    return Coup(GAME, decks, cells(), _records(finals, n, dep), total)


def _pairs(rem: list[int], dep: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """(two-card total, weight, counts left) for every unordered pair of values."""
    out = []
    for c1 in range(10):
        if rem[c1] <= 0:
            continue
        w1 = rem[c1]
        rem[c1] -= dep
        for c2 in range(c1, 10):
            w = w1 * rem[c2] * (1 if c1 == c2 else 2)
            if w > 0:
                rem[c2] -= dep
                out.append(((c1 + c2) % 10, w, tuple(rem)))
                rem[c2] += dep
        rem[c1] += dep
    return out


#: how a hand on each two-card total goes on: (kind, draws a third card?, choice on 5)
_WAYS = {t: ((NATURAL, False, None),) if t >= 8 else {
    DRAW: (("draws", True, None),), STAND: ((STOOD, False, None),),
    OPTION: (("draws5", True, True), ("stood5", False, False))}[player_rule(t)]
    for t in range(10)}


def _hand(rem: list[int], dep: int) -> list[tuple[str | int, bool | None, int, int,
                                                  tuple[int, ...]]]:
    """(view, choice on 5 or None, final total, weight, counts left) for every way a hand
    ends: its two cards, and its third card if it draws."""
    out: list[tuple[str | int, bool | None, int, int, tuple[int, ...]]] = []
    for t, w, after in _pairs(rem, dep):
        for kind, draws, choice in _WAYS[t]:
            if not draws:
                out.append((NATURAL if kind == NATURAL else STOOD, choice, t, w, after))
                continue
            left = list(after)
            for x in range(10):
                if left[x] > 0:
                    wx = w * left[x]
                    left[x] -= dep
                    out.append((x, choice, (t + x) % 10, wx, tuple(left)))
                    left[x] += dep
    return out


class _Packed:
    """The left hand and the bank's third card as packed fields, per composition left."""

    def __init__(self, dep: int):
        self.dep = dep
        self._left: dict[tuple[int, ...], dict] = {}
        self._bank: dict[tuple[int, ...], int] = {}
        self._both: dict[tuple[int, ...], int] = {}

    def bank(self, rem: tuple[int, ...]) -> int:
        """Field y: cards of value y left (the bank draws y); field 10: 1 (it stands)."""
        v = self._bank.get(rem)
        if v is None:
            v = 1 << (_BITS * _STANDS)
            for y in range(10):
                if rem[y] > 0:
                    v |= rem[y] << (_BITS * y)
            self._bank[rem] = v
        return v

    def left_draws(self, rem: tuple[int, ...]) -> int:
        """Field 11x + f: the left hand draws x, then the bank's field f."""
        v = self._both.get(rem)
        if v is None:
            q = diag = 0
            for x in range(10):
                if rem[x] > 0:
                    q |= rem[x] << (_BITS * 11 * x)
                    diag |= rem[x] << (_BITS * 12 * x)
            v = self.bank(rem) * q - self.dep * diag
            self._both[rem] = v
        return v

    def left(self, rem: tuple[int, ...]) -> dict[tuple[int, str], int]:
        """(left's two-card total, how it goes on) → packed weights over its third card and
        the bank's: "natural", "stood", "stood5" (chose to stand on 5), "draws", "draws5"."""
        got = self._left.get(rem)
        if got is not None:
            return got
        acc: dict[tuple[int, str], int] = {}
        for t, w, now in _pairs(list(rem), self.dep):
            for kind, draws, _ in _WAYS[t]:
                fields = self.left_draws(now) if draws else self.bank(now)
                acc[(t, kind)] = acc.get((t, kind), 0) + w * fields
        self._left[rem] = acc
        return acc


def _bank_natural(rem: list[int], dep: int, bt: int, w: int, finals: dict[int, int]) -> None:
    """A bank natural ends the coup: each hand's two cards against the bank's two."""
    base = _path_code(None, None, _NO_CELL, False) * _N_OUTCOMES
    for t, wr, after in _pairs(rem, dep):
        for lt, wl, _ in _pairs(list(after), dep):
            k = base + _outcome_code(_WINS[t][bt], _WINS[lt][bt], 0 if t >= 8 else 1,
                                     0 if lt >= 8 else 1, 0)
            finals[k] = finals.get(k, 0) + w * wr * wl


def _result(side: str, hand: int, bank: int) -> str:
    return side if hand > bank else BANK if bank > hand else "tie"


# While enumerating, a final is kept under one integer: its path (the hands' choices on 5,
# the bank's cell, whether it drew) and its outcome, both as small numbers; `_records` turns
# them into the Coup's paths and outcomes once, at the end.
_KINDS = (NATURAL, STOOD, DREW)
_FLAGS = (None, True, False)                     # a hand's choice on 5: none, drew, stood
_N_CELLS = 8 * 12 * 12 + 1                       # the bank's cells, and "no cell" last
_NO_CELL = _N_CELLS - 1
_N_OUTCOMES = 3 * 3 * 27
#: _WINS[hand total][bank total]: 0 the hand wins, 1 the bank, 2 a tie
_WINS = [[0 if h > b else 1 if b > h else 2 for b in range(10)] for h in range(10)]
_EMPTY_ROW = bytes(11 * 12)


def _view_index(view: View) -> int:
    return 0 if view == NATURAL else 1 if view == STOOD else 2 + int(view)


def _path_code(rflag: bool | None, lflag: bool | None, cell: int, drew: bool) -> int:
    return ((_FLAGS.index(rflag) * 3 + _FLAGS.index(lflag)) * _N_CELLS + cell) * 2 + drew


def _outcome_code(right: int, left: int, rkind: int, lkind: int, bkind: int) -> int:
    return (right * 3 + left) * 27 + rkind * 9 + lkind * 3 + bkind


def _unpack(key: tuple, value: int, finals: dict[int, int]) -> None:
    """Spread one packed sum over the finals: per left third card (if it drew) and bank third
    card (or the bank standing). Weights stay those of the cards used; `_records` brings
    every path to nine-card sequences."""
    bt, r, rflag, rf, lt, kind = key
    rv = _view_index(r)
    rkind = 2 if rv >= 2 else rv
    r_nat = rv == 0
    left_draws = kind in ("draws", "draws5")
    lflag = True if kind == "draws5" else False if kind == "stood5" else None
    flags = (_FLAGS.index(rflag) * 3 + _FLAGS.index(lflag)) * _N_CELLS
    raw = value.to_bytes((110 if left_draws else 11) * 12, "little")
    wins_r = _WINS[rf]
    for x in range(10 if left_draws else 1):
        off = 132 * x
        row = raw[off:off + 132]
        if row == _EMPTY_ROW:
            continue
        if left_draws:
            lv, lf = 2 + x, (lt + x) % 10
        else:
            lv, lf = (0 if kind == NATURAL else 1), lt
        lkind = 2 if lv >= 2 else lv
        l_nat = lv == 0
        wins_l = _WINS[lf]
        stand = int.from_bytes(row[120:132], "little")
        o = (wins_r[bt] * 3 + wins_l[bt]) * 27 + rkind * 9 + lkind * 3 + 1
        if r_nat and l_nat:
            # both hands natural: the bank does not draw, so no choice of the bank's
            k = (flags + _NO_CELL) * 2 * _N_OUTCOMES + o
            finals[k] = finals.get(k, 0) + stand
            continue
        cell = (bt * 12 + rv) * 12 + lv
        base = (flags + cell) * 2 * _N_OUTCOMES
        if stand:
            finals[base + o] = finals.get(base + o, 0) + stand
        base += _N_OUTCOMES + rkind * 9 + lkind * 3 + 2
        for y in range(10):
            w = int.from_bytes(row[12 * y:12 * y + 12], "little")
            if w:
                bf = (bt + y) % 10
                k = base + (wins_r[bt if r_nat else bf] * 3 + wins_l[bt if l_nat else bf]) * 27
                finals[k] = finals.get(k, 0) + w


def _records(finals: dict[int, int], n: int, dep: int) -> dict[Path, dict]:
    """The Coup's records from the coded finals, each weight brought to nine-card sequences
    (the cards of the nine a coup did not use are any of the rest)."""
    names: list[str] = [""] * _N_CELLS
    for bt in range(8):
        for r in VIEWS:
            for left in VIEWS:
                names[(bt * 12 + _view_index(r)) * 12 + _view_index(left)] = bank_cell(bt, r,
                                                                                     left)
    factor = {u: perm(n - u, 9 - u) if dep else n ** (9 - u) for u in range(6, 10)}
    results = ((RIGHT, BANK, "tie"), (LEFT, BANK, "tie"))
    records: dict[Path, dict] = {}
    paths: dict[int, Path] = {}
    for k, w in finals.items():
        code, o = divmod(k, _N_OUTCOMES)
        path = paths.get(code)
        if path is None:
            rest, drew = divmod(code, 2)
            flags, cell = divmod(rest, _N_CELLS)
            rflag, lflag = _FLAGS[flags // 3], _FLAGS[flags % 3]
            path = tuple((c, f) for c, f in ((hand_cell(RIGHT, 5), rflag),
                                             (hand_cell(LEFT, 5), lflag)) if f is not None)
            if cell != _NO_CELL:
                path += ((names[cell], bool(drew)),)
            paths[code] = path
        wins, kinds = divmod(o, 27)
        kind = (_KINDS[kinds // 9], _KINDS[kinds // 3 % 3], _KINDS[kinds % 3])
        used = 6 + sum(k == DREW for k in kind)
        outcome = (results[0][wins // 3], results[1][wins % 3], *kind)
        records.setdefault(path, {})[outcome] = w * factor[used]
    return records


# ---- what the odds command needs of the game (controller.odds.banking_report) ---------------

RESULTS = {RIGHT: (RIGHT, "bank_right", "tie_right"), LEFT: (LEFT, "bank_left", "tie_left")}


def _hands(p: Fraction) -> dict[str, Fraction]:
    return {c: p for c, cell in cells().items() if cell.side != BANK}


def presets() -> dict[str, Strategy]:
    """default: the rules' defaults; draw / stand: the hands draw / stand on 5 and the bank
    follows the tableau against the right hand, drawing / standing in its optional cells
    (with draw, the right hand's figures are Punto Banco's)."""
    return {"default": default_strategy(),
            "draw": Strategy({**_hands(Fraction(1)), **bank_by_rule(tableau_draws(RIGHT))},
                             "hands draw on 5; bank by the tableau against the right hand, "
                             "drawing on its options"),
            "stand": Strategy({**_hands(Fraction(0)),
                               **bank_by_rule(tableau_draws(RIGHT, Fraction(0)))},
                              "hands stand on 5; bank by the tableau against the right hand, "
                              "standing on its options")}


def side_rule(side: str, text: str) -> dict[str, Fraction] | None:
    """bank=N: draws on 0 to N; bank=tableau[-right|-left]: the tableau against that hand."""
    if side != BANK:
        return None
    if text.isdigit() and 0 <= int(text) <= 7:
        return bank_by_rule(lambda bt, r, left: bt <= int(text))
    against = {"tableau": RIGHT, "tableau-right": RIGHT, "tableau-left": LEFT}.get(text)
    return None if against is None else bank_by_rule(tableau_draws(against))


def sides(paytable: Mapping[str, BetRule]) -> dict[str, tuple[str, ...]]:
    """The punters of each hand hold its bet; the bank holds its stakes against both."""
    out: dict[str, tuple[str, ...]] = {side: (side,) for side in SIDES if side in paytable}
    bank = tuple(b for b in ("bank_right", "bank_left") if b in paytable)
    if bank:
        out[BANK] = bank
    return out


def net(paytable: Mapping[str, BetRule], bet: str, outcome: Any) -> Fraction:
    side = bet.removeprefix("bank_")
    win = outcome[0] if side == RIGHT else outcome[1]
    if win == "tie":
        return Fraction(0)
    backs = BANK if bet.startswith("bank_") else side
    return paytable[bet].paid(GAME, bet) if win == backs else Fraction(-1)


def outcomes(finals: Mapping[Any, Fraction]) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """(the joint results of both hands, which sum to 1; other events) from final →
    probability. A result is named by the bets it wins: right / bank_right / tie_right."""
    names = {side: dict(zip((side, BANK, "tie"), RESULTS[side])) for side in SIDES}
    results = {f"{r} & {left}": Fraction(0) for r in RESULTS[RIGHT] for left in RESULTS[LEFT]}
    events = {name: Fraction(0) for side in SIDES for name in RESULTS[side]}
    events.update({"bank_natural": Fraction(0), "right_draws": Fraction(0),
                   "left_draws": Fraction(0), "bank_draws": Fraction(0)})
    for o, p in finals.items():
        r, left = names[RIGHT][o[0]], names[LEFT][o[1]]
        results[f"{r} & {left}"] += p
        events[r] += p
        events[left] += p
        for name, kind in (("right_draws", o[2]), ("left_draws", o[3]), ("bank_draws", o[4])):
            if kind == DREW:
                events[name] += p
        if o[4] == NATURAL:
            events["bank_natural"] += p
    return results, events


def describe(strategy: Strategy, side: str | None = None) -> list[str]:
    """The hands' choices, then the bank's per total: one line where it does the same
    whatever it sees, else a grid (rows: the right hand, columns: the left hand; D draws,
    . stands, ~ mixed, with the mixed cells listed)."""
    every = cells()
    lines = [f"{cell.text}: {choice_text(strategy[name])}" for name, cell in every.items()
             if cell.side != BANK and side in (None, cell.side)]
    if side not in (None, BANK):
        return lines
    heads = ["N" if v == NATURAL else "S" if v == STOOD else str(v) for v in VIEWS]
    for bt in range(8):
        values = {(r, left): strategy[bank_cell(bt, r, left)] for r in VIEWS for left in VIEWS
                  if not r == left == NATURAL}
        distinct = set(values.values())
        if len(distinct) == 1:
            lines.append(f"bank on {bt}: {choice_text(distinct.pop())} whatever the hands show")
            continue
        lines.append(f"bank on {bt} (rows: right hand, columns: left hand; N natural, "
                     f"S stood, 0-9 the third card drawn; D draw, . stand, ~ mixed):")
        lines.append("        " + " ".join(heads))
        for r, head in zip(VIEWS, heads):
            marks = [" " if (r, left) not in values else
                     "D" if values[r, left] == 1 else "." if values[r, left] == 0 else "~"
                     for left in VIEWS]
            lines.append(f"     {head:>2} " + " ".join(marks))
        for (r, left), p in values.items():
            if p not in (0, 1):
                lines.append(f"  ~ {every[bank_cell(bt, r, left)].text}: {choice_text(p)}")
    return lines
