"""The virtual dealer and the virtual supervisor: they act on the table's prompts as people would.

Both see the table only as plain data (its state name and its hold record) and answer with
plain actions, so the controller's code path is the one a human dealer and supervisor use.

Virtual supervisor defaults (documented in the README, "Simulation"): an unreadable card → enter
its true code (read off the card); a card drawn when none was due → the profile's remedy
(`card_when_none_due`: burn, or void the round); a foreign card or one copy too many → remove
it (burn) and carry on; a card out face up → the profile's `face_up_card` remedy (burn and
replace, or void); an integrity alarm (factory order, a repeated shoe) → void the round and
withdraw the shoe; a shuffler count mismatch → reject the shoe and have it reshuffled; a lost
device link or a device alarm → resume once the device is back; anything else → void the round.

Virtual players and banker (chemin de fer, baccarat en banque): when the table waits for a
decision they answer from a decisions file if it has one for that coup, else with the rules'
documented default (which the controller hands them). Decisions file (`--decisions FILE`):

    # one decision per line: [SHOE:]ROUND NAME VALUE      (# starts a comment)
    3 player_draw stand        # round 3 of shoe 1: the player stands on 5
    2:14 banker_draw stand     # round 14 of shoe 2
    7 banker_seat 4            # seat 4 takes the bank for round 7

ROUND counts within its shoe (SHOE defaults to 1). NAME is one of the game's decisions; VALUE
is draw/stand (or true/false) for a draw decision, a seat number 1–12 for a seat decision. A
draw decision is given when the table asks for it; one that the table does not ask for is
given when that hand's third card is due instead (so a file can force a false coup, e.g.
`5 player_draw stand` on a player's 3). Seat decisions are given as the coup's dealing starts.
A decision whose coup never comes to it (a natural, a hand that stood) is not given.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from simulators.shoe import Fault, ShoeModel

SUPERVISOR = "virtual-supervisor"
PLAYER, BANKER = "virtual-player", "virtual-banker"
BANK_DECISIONS = frozenset({"banker_draw", "bank_draw", "banker_seat"})
MAX_SEAT = 12
_LINE = re.compile(r"(?:(\d+):)?(\d+)\s+(\S+)\s+(\S+)")


def wants_card(state: str) -> bool:
    """The table expects a card from the shoe (start burn or a dealing phase)."""
    return state in ("loaded", "burning") or state.startswith("dealing.")


@dataclass
class VirtualDealer:
    """Pulls cards when the table is ready for one; commits the dealer faults it is given."""
    model: ShoeModel
    faults: tuple[Fault, ...] = ()
    pace_s: float = 1.0                       # simulated seconds between two pulls
    clock: Callable[[], float] | None = None  # advanced by `pace_s` before each pull
    misplaced: list[int] = field(default_factory=list)

    def act(self, state: str) -> list[str]:
        """One move for a table in `state`: the codes drawn ([] when none was due or none left)."""
        if not wants_card(state):
            return []
        advance = getattr(self.clock, "advance", None)
        if advance is not None:
            advance(self.pace_s)
        index = self.model.position
        codes = self.model.pull()
        # skip_burn@N: the first between-round burn at or after card N goes on Player's box
        due = [f for f in self.faults if f.kind == "skip_burn" and f.at <= index]
        if codes and state == "dealing.burn" and due:
            self.faults = tuple(f for f in self.faults if f is not due[0])
            self.misplaced.append(index)
        return codes

    def take_misplaced(self) -> list[int]:
        out, self.misplaced = self.misplaced, []
        return out


@dataclass
class VirtualSupervisor:
    """Resolves a hold the way the profile's documented defaults say."""
    card_when_none_due: str = "burn"
    face_up_card: str = "valid"
    true_code: Callable[[int], str | None] = lambda index: None

    def decide(self, hold: dict, round_open: bool, cards_out: int) -> dict:
        """The action (name, args, reason) for the latest problem of a hold record."""
        last = hold["problems"][-1]
        kind = last["kind"]
        if kind == "unreadable_card":
            code = self.true_code(cards_out)
            if code:
                return _act("enter_card", f"card read by eye: {code}", code=code)
            return _act("void_round", "the card could not be identified")
        if kind in ("card_not_due", "card_while_betting"):
            if self.card_when_none_due == "void" and round_open:
                return _act("void_round", "profile remedy for a card drawn when none was due")
            return _act("burn_card", "profile remedy: the stray card is burned")
        if kind == "face_up_card":
            if self.face_up_card == "void" and round_open:
                return _act("void_round", "profile remedy for a card out face up")
            return _act("burn_card", "profile remedy: the face-up card is burned and replaced")
        if kind == "foreign_card":
            return _act("remove_card", "card removed from play; shoe flagged", code=last.get("code"))
        if kind == "count_mismatch":
            return _act("reject_count", "count does not match the shoe: reshuffle and recount")
        if kind == "integrity_alarm":
            return _act("end_shoe", f"shoe integrity in doubt ({last.get('detector')}): "
                        "the shoe is withdrawn", void=True)
        if kind in ("hold", "device_alarm", "link_lost"):
            return _act("resume", "device checked and back in order")
        if round_open:
            return _act("void_round", f"could not be resolved at the table ({kind})")
        return _act("resume", f"checked ({kind})")


def _act(action: str, reason: str, **args: object) -> dict:
    return {"action": action, "args": {k: v for k, v in args.items() if v is not None},
            "reason": reason, "user": SUPERVISOR, "role": "supervisor"}


class DecisionsFileError(ValueError):
    """A decisions file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class ScriptedDecision:
    shoe: int
    round: int
    name: str
    value: Any          # "draw" / "stand" or a seat number
    line: int


def read_decisions(path: str | Path, draw_names: Iterable[str],
                   seat_names: Iterable[str] = ()) -> list[ScriptedDecision]:
    """Parse a decisions file (format in the module docstring) for a game's decision names."""
    draw_names, seat_names = tuple(draw_names), tuple(seat_names)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DecisionsFileError(f"{path}: cannot read the decisions file ({err})") from None
    out: list[ScriptedDecision] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _LINE.fullmatch(line)
        where = f"{path}:{n}"
        if m is None:
            raise DecisionsFileError(f"{where}: {line!r} is not a decision; write "
                                     f"[SHOE:]ROUND NAME VALUE, e.g. 3 player_draw stand")
        shoe, rnd, name, value = int(m.group(1) or 1), int(m.group(2)), m.group(3), m.group(4)
        if shoe < 1 or rnd < 1:
            raise DecisionsFileError(f"{where}: shoe and round numbers start at 1")
        if name in draw_names:
            word = value.lower()
            if word not in ("draw", "stand", "true", "false"):
                raise DecisionsFileError(f"{where}: {name} takes draw or stand, not {value!r}")
            value = "draw" if word in ("draw", "true") else "stand"
        elif name in seat_names:
            if not value.isdigit() or not 1 <= int(value) <= MAX_SEAT:
                raise DecisionsFileError(f"{where}: {name} takes a seat number 1–{MAX_SEAT}, "
                                         f"not {value!r}")
            value = int(value)
        else:
            known = ", ".join(draw_names + seat_names) or "none"
            raise DecisionsFileError(f"{where}: no decision {name!r} in this game "
                                     f"(decisions: {known})")
        out.append(ScriptedDecision(shoe, rnd, name, value, n))
    return out


@dataclass
class VirtualPlayers:
    """The punters and the banker of a banking game, as decision makers.

    `act` sees the table as plain data (shoe and round numbers, the dealing phase, the pending
    decision and the rules' default for it) and answers with `decide` actions.
    """
    script: list[ScriptedDecision] = field(default_factory=list)
    used: set = field(default_factory=set)          # line numbers already given

    def act(self, shoe: int, rnd: int, phase: str, pending: str | None,
            default: Any = None) -> list[dict]:
        """The decisions to give now (possibly none)."""
        out = []
        for d in self.script:
            if d.line in self.used or (d.shoe, d.round) != (shoe, rnd):
                continue
            if not d.name.endswith("_draw"):
                due = True                      # a seat: given as the coup's dealing starts
            elif phase == "decide":
                due = d.name == pending         # the decision the table asks for
            else:
                due = phase == d.name.removesuffix("_draw") + "_third"   # that hand's turn
            if due:
                self.used.add(d.line)
                out.append(_decision(d.name, d.value, f"decisions file line {d.line}"))
                if d.name == pending:
                    return out
        if phase == "decide" and pending is not None and \
                all(x["args"]["name"] != pending for x in out):
            word = ("draw" if default else "stand") if isinstance(default, bool) else default
            out.append(_decision(pending, word, "the rules' default policy"))
        return out


def _decision(name: str, value: Any, reason: str) -> dict:
    banker = name in BANK_DECISIONS
    return {"action": "decide", "args": {"name": name, "value": value},
            "reason": reason, "user": BANKER if banker else PLAYER,
            "role": "banker" if banker else "player"}
