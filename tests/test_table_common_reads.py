"""The common card read's whole step (`Rounds.common_reads`, taken by `Table.apply_safely`) and
the general path (`Table._card` → `Reads.card` → `Rounds.deal`) give the same events, refusals
and table, input for input: two tables are fed the same sessions, one of them with its common
reads taken away. The sessions are shuffled shoes of every game with what a shift brings: flags
on reads, impossible and lower-case codes, foreign copies, unreadable cards, restarts, lost
links, supervisors' remedies on the holds, the cut card, burns, demonstration rounds, and
shoes that are unshuffled or repeat the shoe before (integrity alarms)."""
from __future__ import annotations

import random
from typing import Any

import pytest

from controller.games import procedure
from controller.settings.profile import load_profile
from controller.shoe.cards import ordered_shoe
from controller.table import Table, command
from controller.table.inputs import parse_input

#: the remedies a session's supervisor picks from when the table offers them
REMEDIES = ("resume", "confirm_layout", "burn_card", "remove_card", "return_reads",
            "accept_count", "accept_reads", "discard_reads", "void_round", "confirm_result",
            "reveal", "count_done", "open_bets", "close_bets", "house_burn",
            "confirm_house_burn", "demo_round", "cut_card", "report_face_up", "end_shoe",
            "shoe_empty")
PROFILES = ("macau", "macau-csm", "classic", "live-commission", "live-super6", "andar-bahar",
            "chemin-de-fer", "baccarat-banque")


class Twins:
    """Two tables fed alike: `fast` as it comes, `general` without its common reads."""

    def __init__(self, profile, auto_open: bool):
        self.fast = Table(profile, auto_open=auto_open)
        self.general = Table(profile, auto_open=auto_open)
        self.general._common = {}
        self.taken = 0          # card reads the common step took
        for state, read in list(self.fast._common.items()):
            self.fast._common[state] = self._counted(read)

    def _counted(self, read):
        def counted(inp: Any) -> bool:
            took = read(inp)
            self.taken += took
            return took
        return counted

    def apply(self, inp) -> None:
        if isinstance(inp, dict):
            inp = parse_input(inp)          # typed, as the drivers deliver them
        a, b = self.fast.apply_safely(inp), self.general.apply_safely(inp)
        assert a.events == b.events, inp
        assert (str(a.refused), repr(a.error)) == (str(b.refused), repr(b.error)), inp
        assert self.fast.snapshot() == self.general.snapshot(), inp

    @property
    def state(self) -> str:
        return self.fast.state


def session(name: str, seed: int, odd: bool) -> Twins:
    rng = random.Random(seed)
    p = load_profile(name)
    t = Twins(p, auto_open=rng.random() < 0.85)
    before: list[str] = []
    for _ in range(2):
        cut = None if p.continuous_shuffler else procedure.default_cut_position(p, p.cards)
        t.apply(command("new_shoe", cut_position=cut, demo_rounds=rng.choice([0, 1, 2])))
        codes = [c.code for c in ordered_shoe(p.decks)]
        rng.shuffle(codes)
        if before and rng.random() < 0.3:
            codes = list(before)                        # the shoe before, again
        elif rng.random() < 0.3:
            run = [c.code for c in ordered_shoe(1)][:20]  # a pack in factory order
            for c in run:
                codes.remove(c)
            at = rng.randrange(0, 150)
            codes[at:at] = run
        before = codes
        deal(t, rng, codes, cut, odd)
    return t


def deal(t: Twins, rng: random.Random, codes: list[str], cut: int | None, odd: bool) -> None:
    i = 0
    for _ in range(2500):
        if t.state == "shoe_ended":
            t.apply({"type": "remainder", "composition": {}, "count": len(codes) - i})
            return
        decision = t.fast.decision()
        if decision is not None and rng.random() < 0.7:
            name, default, choices = decision
            value = default if rng.random() < 0.6 or not choices else rng.choice(list(choices))
            t.apply(command("decide", name=name, value=value, user="u"))
            continue
        if t.state in ("idle", "betting") and not t.fast._d.auto_open:
            # an attended table: the dealer opens the bets and closes them
            opens = {"idle": "open_bets", "betting": "close_bets"}[t.state]
            if opens in t.fast.offers():
                t.apply(command(opens, user="dana", role="dealer"))
                continue
        if t.state == "hold" or (odd and rng.random() < 0.02):
            offered = [o for o in t.fast.offers() if o in REMEDIES]
            if offered and rng.random() < 0.9:
                t.apply(command(rng.choice(offered), user="sam", role="supervisor",
                                reason="checked at the table"))
                continue
        if i == cut:
            t.apply({"type": "cut_card"})
        if i >= len(codes):
            t.apply({"type": "alarm", "device": "shoe", "code": "EMPTY", "text": "empty"})
            return
        inp: dict[str, Any] = {"type": "card", "code": codes[i]}
        q = rng.random() if odd else 1.0
        if q < 0.01:
            inp["flags"] = {"face_up": True}
        elif q < 0.02:
            inp["flags"] = {"with_previous": True}
        elif q < 0.025:
            inp["flags"] = {"multiple": 2}
        elif q < 0.03:
            inp["flags"] = {"manual_burn": True}
        elif q < 0.035:
            inp["code"] = "ZZ"
        elif q < 0.04:
            inp["code"] = codes[i].lower()
        elif q < 0.045:
            inp["code"] = rng.choice(codes[:i] or codes)      # a copy too many, now and then
        elif q < 0.05:
            t.apply({"type": "read_failed", "reason": "smudged"})
            i += 1
            continue
        elif q < 0.055:
            t.apply({"type": "restarted", "resends": rng.random() < 0.5})
            continue
        elif q < 0.06:
            t.apply({"type": "link_lost", "device": "shoe", "reason": "cable"})
            t.apply({"type": "link_back", "device": "shoe"})
            continue
        t.apply(inp)
        i += 1


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("odd", [False, True], ids=["plain", "odd"])
def test_the_common_read_and_the_general_path_give_the_same_table(name, odd):
    taken = sum(session(name, seed * 2 + odd, odd).taken for seed in range(2))
    if name in ("chemin-de-fer", "baccarat-banque"):
        assert taken == 0               # hands that decide always go the general way
    else:
        assert taken > 0                # the common step was taken (most cards, plain)


def test_a_card_the_common_step_declines_changes_nothing_before_the_general_path():
    """A foreign copy while dealing: declined by the common step, held by the general path."""
    t = Twins(load_profile("macau"), auto_open=True)
    t.apply(command("new_shoe", cut_position=400))
    for code in ("2S", "AH", "3C"):                  # the shoe-start burn
        t.apply({"type": "card", "code": code})
    assert t.state == "dealing.P1"
    for table in (t.fast, t.general):
        table.shoe.inventory.seen["KD"] = 8             # every king of diamonds is out
    taken = t.taken
    t.apply({"type": "card", "code": "KD"})
    assert t.taken == taken and t.state == "hold"
    assert t.fast.hold.last.kind == "foreign_card"


def test_a_round_opened_field_by_field_is_the_dataclass_with_its_defaults():
    from dataclasses import fields

    from controller.table.model import RoundState, Stakes
    hands: dict = {"player": [], "banker": []}
    a = RoundState.opened(3, True, hands, 1, {"x": 1}, 2, Stakes())
    b = RoundState(number=3, demo=True, hands=hands, burn_due=1, decisions={"x": 1},
                   bank_seat=2, stakes=Stakes())
    assert [getattr(a, f.name) for f in fields(RoundState)] == \
        [getattr(b, f.name) for f in fields(RoundState)]
    assert a == b and a.to_dict() == b.to_dict()
    assert a.burned_before is not RoundState.opened(1, False, {}, 0, {}, None, None).burned_before
