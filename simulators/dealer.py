"""The virtual dealer, supervisor and players: they act on what the table publishes, as people
would, and answer only through the table's inputs.

They never read the table: they see its published events and its published `status` (state,
what it expects, reads so far, the hold and its latest problem) as plain dicts, and they act by
submitting command dicts, after a pause on the service's clock (`schedule`).

Virtual supervisor defaults (documented in the README, "Simulation"): an unreadable card → enter
its true code (read off the card); a card drawn when none was due → the profile's remedy
(`card_when_none_due`: burn, or void the round); a foreign card or one copy too many → remove
it and carry on; a card out face up → the profile's `face_up_card` remedy (burn and replace,
or void); an integrity alarm (factory order, a repeated shoe) → void the round and withdraw the
shoe; a shuffler count mismatch → reject the shoe and have it reshuffled; a lost shoe link →
once it is back, accept the reads that arrived meanwhile (or resume if none did); a device
alarm → resume; a restart that may have lost a read → enter the card the table missed, or
confirm the layout; a person's own hold → left to that person; anything else → void the
round.

Virtual players and banker (chemin de fer, baccarat en banque): when the table waits for a
decision they answer from a decisions file if it has one for that coup, else with the rules'
documented default (which the table publishes with its status). Decisions file
(`--decisions FILE`):

    # one decision per line: [SHOE:]ROUND NAME VALUE      (# starts a comment)
    3 player_draw stand        # round 3 of shoe 1: the player stands on 5
    2:14 banker_draw stand     # round 14 of shoe 2
    7 banker_seat 4            # seat 4 takes the bank for round 7

    1 stake 3 500              # chemin de fer, while bets are open: seat 3 stakes 500
    1 accept_stakes 800        # the banker covers 800 and refuses the excess
    2 banco 6                  # seat 6 calls "Banco" and plays the whole bank alone

ROUND counts within its shoe (SHOE defaults to 1). NAME is one of the game's decisions; VALUE
is draw/stand (or true/false) for a draw decision, a seat number 1–12 for a seat decision. A
draw decision is given when the table asks for it; one that the table does not ask for is
given when that hand's third card is due instead (so a file can force a false coup, e.g.
`5 player_draw stand` on a player's 3). Seat decisions are given as the coup's dealing starts.
A decision whose coup never comes to it (a natural, a hand that stood) is not given.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from simulators.rig import DeviceClock, SimRig

SUPERVISOR = "virtual-supervisor"
DEALER = "virtual-dealer"
PLAYER, BANKER = "virtual-player", "virtual-banker"
BANK_DECISIONS = frozenset({"banker_draw", "bank_draw", "banker_seat"})
MAX_SEAT = 12
MAX_HOLD_ACTIONS = 20          # a hold the virtual supervisor cannot clear: give up
_LINE = re.compile(r"(?:(\d+):)?(\d+)\s+(\S+)\s+(\S+)(?:\s+(\S+))?")
#: what punters and the banker put up while bets are open (chemin de fer): name → its values
STAKE_LINES = {"stake": ("seat", "amount"), "banco": ("seat",), "accept_stakes": ("amount",)}

#: what the table expects when the dealer deals from the shoe
_DEALT = ("card", "count_back")

Submit = Callable[[dict], None]
Schedule = Callable[[float, Callable[[], None]], Any]


def command(action: str, user: str, role: str, reason: str = "", **args: Any) -> dict:
    return {"type": "command", "action": action, "args": args, "user": user, "role": role,
            "reason": reason}


class VirtualDealer:
    """Deals from the simulated shoe whenever the table expects a card and none of the dealer's
    cards is still unread; reports a card the shoe never reported; loads each new shoe.

    Reads are counted per shoe: the dealer compares the cards it pulled from the shoe it loaded
    for the table's shoe N with the reads the table has of shoe N, so a new shoe (or one still
    in the shuffler) never looks like missing reads."""

    #: the only events it acts on (the loop tells it no other)
    takes = frozenset({"status", "shoe_started", "device_request", "cards_returned"})

    def __init__(self, rig: SimRig, submit: Submit, schedule: Schedule, *,
                 pace_s: float = 1.0, read_wait_s: float = 3.0, device_tick_s: float = 0.0,
                 hand_cards: Callable[[int], list[str] | None] | None = None,
                 shuffler: bool = True, after_inputs: Callable[[Callable[[], None]], Any]
                 | None = None):
        self.rig, self.submit, self.schedule = rig, submit, schedule
        # runs a check behind the inputs already queued (a read that came while the loop was
        # busy is counted before the dealer says it never came)
        self.after_inputs = after_inputs or (lambda fn: fn())
        self.pace_s, self.read_wait_s, self.device_tick_s = pace_s, read_wait_s, device_tick_s
        self.hand_cards = hand_cards or (lambda shoe: None)
        self.shuffler = shuffler
        self.skip_faults = [f for f in rig.faults if f.kind == "skip_burn"]
        self.status: dict = {}
        self._pending = False                     # a pull is on its way
        self._waits = 0                           # the dealer's waits for the shoe, numbered
        self._checking = False                    # a look for reads that never came
        # (shoe, cards) drawn outside a round whose read never came: the table takes no
        # report of them (a burn card, say), so the dealer burns on; the shoe's count at its
        # end shows them
        self._lost: tuple[object, int] = (None, 0)
        self._revealing: tuple | None = None      # (shoe, round) whose reveal is on its way

    def on_event(self, e: dict) -> None:
        kind = e["event"]
        if kind == "status":
            self.status = e
            if e.get("reveal_due") is not None:     # (nearly every status: nothing to reveal)
                self._maybe_reveal()
            self._maybe_pull()
        elif kind == "shoe_started":
            self.rig.cut_position = e.get("cut_card_position")
            self.rig.next_for = e["shoe"]
            if self.shuffler:
                self.rig.gather()
            else:
                cards = self.hand_cards(e["shoe"])
                self.rig.load_shoe(self.rig.hand_shuffle() if cards is None else cards,
                                   e.get("cut_card_position"))
        elif kind == "device_request" and e.get("action") == "count_rest":
            self.rig.rest_to_shuffler()
        elif kind == "cards_returned":
            # the dealer puts the round's cards back into the continuous shuffler, once: told
            # again after a restart (the dealer hears it as the round ends, before the journal
            # has it), they are in the machine already
            rig, key = self.rig, [e.get("shoe"), e.get("round")]
            if rig.machine is not None and rig.returned_for != key:
                rig.returned_for = key
                rig.machine.return_cards(e["cards"])

    def _maybe_reveal(self) -> None:
        """Hands dealt face down are turned over after a pause, as a dealer would."""
        status = self.status
        reveal = status.get("reveal_due")
        if reveal is None or status.get("expects") != "reveal":
            return
        due = (status.get("shoe"), reveal)
        if self._revealing == due:
            return
        self._revealing = due
        self.schedule(self.pace_s, lambda: self._reveal(due))

    def _reveal(self, due: tuple) -> None:
        if (self.status.get("shoe"), self.status.get("reveal_due")) == due:
            self.submit(command("reveal", DEALER, "dealer"))

    def _dealing(self) -> bool:
        """The table wants a card and the shoe holds this shoe's cards."""
        return (self.status.get("expects") in _DEALT
                and self.rig.loaded_for == self.status.get("shoe") is not None)

    def _unread(self) -> int | None:
        """While the dealer is dealing (`_dealing`), the cards out of the shoe whose reads
        have not come; None while not."""
        status = self.status
        shoe = status.get("shoe")
        rig = self.rig
        if status.get("expects") not in _DEALT or shoe is None or rig.loaded_for != shoe:
            return None
        # (`rig.unread` for the shoe it holds, written out: asked at every card)
        lost = self._lost[1] if self._lost[0] == shoe else 0
        return rig.shoe.position - status.get("reads", 0) - lost

    def _maybe_pull(self) -> None:
        if self._pending or self.status.get("expects") not in _DEALT:
            return
        unread = self._unread()
        if unread is None:
            # the shoe is still in the shuffler: the dealer waits for it to be handed over
            self._pending = True
            self._waits += 1
            wait = self._waits

            def again() -> None:
                if self._pending and self._waits == wait:   # the first of the two pulls
                    self._waits += 1
                    self._pull()
            if self.pace_s == 0:
                # at zero pace the dealer takes the shoe the moment it is handed over (the
                # rig tells from the shuffler's thread: the pull runs on the table's loop)
                self.rig.on_loaded = lambda: self.after_inputs(again)
                if self._dealing():
                    self.after_inputs(again)      # handed over just now
            self.schedule(max(self.pace_s, 0.05), again)
        elif unread > 0:
            self._look_later()      # a card is out whose read has not come yet
        else:
            self._pending = True
            if self.pace_s == 0:
                self._pull()        # no pause: the hand is at the shoe already
            else:
                self.schedule(self.pace_s, self._pull)

    def _look_later(self) -> None:
        if not self._checking:
            # later, the dealer looks whether the cards out by now were all read
            self._checking = True
            out = (self.rig.loaded_for, self.rig.shoe.position)
            self.schedule(self.read_wait_s, lambda: self._check_reads(out))

    def _pull(self) -> None:
        self._pending = False
        unread = self._unread()
        if unread is None or unread > 0:
            self._maybe_pull()
            return
        model = self.rig.shoe
        if self.device_tick_s:
            clock = self.rig.clock
            if not isinstance(clock, DeviceClock):
                raise TypeError("device_tick_s advances the rig's own DeviceClock; this rig "
                                f"runs on {clock!r}")
            clock.advance(self.device_tick_s)
        index = model.position
        codes = model.pull()
        if not codes:
            if not model.has_more:
                self.submit(command("shoe_empty", DEALER, "dealer",
                                    reason="no card left in the shoe"))
            return
        self._look_later()
        # skip_burn@N: the first between-round burn at or after card N goes on Player's box
        due = [f for f in self.skip_faults if f.at <= index and f.at not in self.rig.skips_done] \
            if self.skip_faults else []
        if due and self.status.get("step") == "burn":
            self.skip_faults.remove(due[0])
            self.rig.skips_done.append(due[0].at)
            self.submit(command("report_misplaced", DEALER, "dealer",
                                detail="burn card placed on Player's box"))

    def _check_reads(self, out: tuple) -> None:
        self.after_inputs(lambda: self._check_now(out))

    def _check_now(self, out: tuple) -> None:
        """Cards on the table that the shoe never reported (of those out when the look was
        planned): the dealer says so (not while the table is held: the supervisor is looking
        at the cards)."""
        self._checking = False
        shoe, position = out
        missing = self.rig.unread(self.status.get("shoe"), self.status.get("reads", 0)) - \
            max(0, self.rig.shoe.position - position) - \
            (self._lost[1] if self._lost[0] == shoe else 0)
        if self._dealing() and shoe == self.rig.loaded_for and missing > 0:
            if self.status.get("round_open"):
                # one at a time: the next look follows the table's answer
                self.submit(command("report_unread", DEALER, "dealer",
                                    detail="no read arrived from the shoe"))
            else:
                # outside a round the table takes no such report: the dealer goes on as the
                # display says (asked again and again, the refusals would never end)
                self._lost = (shoe, (self._lost[1] if self._lost[0] == shoe else 0) + missing)
        self._maybe_pull()


class BlindDealer:
    """A dealer who ignores the table: pulls a card every `pace_s` while the shoe holds any,
    whatever the table says (for chaos tests). The shuffler's deliveries still reach the
    shoe, and the rest of an ended shoe goes back when the table asks."""

    #: the only events it acts on (the loop tells it no other)
    takes = frozenset({"status", "shoe_started", "device_request"})

    def __init__(self, rig: SimRig, schedule: Schedule, *, pace_s: float = 0.1):
        self.rig, self.schedule, self.pace_s = rig, schedule, pace_s
        self.pulls = 0
        self._started = False

    def on_event(self, e: dict) -> None:
        if e["event"] == "status" and not self._started:
            self._started = True
            self.schedule(self.pace_s, self._pull)
        elif e["event"] == "shoe_started":
            self.rig.cut_position = e.get("cut_card_position")
            self.rig.next_for = e["shoe"]
        elif e["event"] == "device_request" and e.get("action") == "count_rest":
            self.rig.rest_to_shuffler()

    def _pull(self) -> None:
        if self.rig.shoe.pull():
            self.pulls += 1
        self.schedule(self.pace_s, self._pull)


class VirtualSupervisor:
    """Clears each hold the way the profile's documented defaults say."""

    #: it acts on the status alone
    takes = frozenset({"status"})

    def __init__(self, rig: SimRig | None, submit: Submit, schedule: Schedule, *,
                 card_when_none_due: str = "burn", face_up_card: str = "valid",
                 delay_s: float = 2.0):
        self.rig, self.submit, self.schedule = rig, submit, schedule
        self.card_when_none_due, self.face_up_card = card_when_none_due, face_up_card
        self.delay_s = delay_s
        self.status: dict = {}
        self.attempts = 0
        self.stuck: str | None = None
        self._pending = False

    def on_event(self, e: dict) -> None:
        if e["event"] != "status":
            return
        self.status = e
        if e.get("hold") is None:
            self.attempts = 0
            return
        if not self._pending:
            self._pending = True
            self.schedule(self.delay_s, self._act)

    def _act(self) -> None:
        self._pending = False
        hold = self.status.get("hold")
        if hold is None:
            return
        act = self.decide(hold, bool(self.status.get("round_open")), self.status.get("reads", 0))
        if act is None:
            return
        offered = hold.get("actions")
        if offered is not None and act["action"] not in offered:
            if not offered:
                self.stuck = f"the table stayed on hold ({hold['kind']}): nothing clears it"
                return
            # the table says what clears this hold now: the first of its remedies
            act = _act(offered[0], f"the table's remedy for {hold['kind']}")
        self.attempts += 1
        if self.attempts > MAX_HOLD_ACTIONS:
            self.stuck = f"the table stayed on hold ({hold['kind']}: {hold.get('detail', '')})"
            return
        self.submit(command(act["action"], SUPERVISOR, "supervisor", act["reason"],
                            **act["args"]))

    def _true_code(self, index: Any) -> str | None:
        if self.rig is None or not isinstance(index, int):
            return None
        return self.rig.true_code(index)

    def decide(self, hold: dict, round_open: bool, reads: int) -> dict | None:
        """The action (name, args, reason) for the latest problem of a hold; None: wait."""
        kind = hold["kind"]
        if kind == "unreadable_card":
            code = self._true_code(hold.get("card_index"))
            if code:
                return _act("enter_card", f"card read by eye: {code}", code=code)
            return _act("void_round", "the card could not be identified")
        if kind == "card_without_shoe":
            return _act("return_reads", "no shoe is in play: the card goes back")
        if kind in ("card_not_due", "card_while_betting"):
            if hold.get("where") in ("shuffling", "closed"):
                return _act("return_reads", "cards drawn while no shoe was in the shoe are not "
                            "of this shoe: they go back")
            if self.card_when_none_due == "void" and round_open:
                return _act("void_round", "profile remedy for a card drawn when none was due")
            return _act("burn_card", "profile remedy: the stray card is burned")
        if kind == "face_up_card":
            if self.face_up_card == "void" and round_open:
                return _act("void_round", "profile remedy for a card out face up")
            return _act("burn_card", "profile remedy: the face-up card is burned and replaced")
        if kind == "foreign_card":
            return _act("remove_card", "card removed from play; shoe flagged", code=hold.get("code"))
        if kind == "count_mismatch":
            if hold.get("extra") or hold.get("missing"):
                # the right number of the wrong cards: no reshuffle mends that; each wrong
                # card is taken out of play as it comes (a foreign card's hold)
                return _act("accept_count", "the wrong cards are taken out as they are drawn")
            return _act("reject_count", "count does not match the shoe: reshuffle and recount")
        if kind == "integrity_alarm":
            return _act("end_shoe", f"shoe integrity in doubt ({hold.get('detector')}): "
                        "the shoe is withdrawn", void=True)
        if kind == "link_lost":
            if not hold.get("link_back"):
                return None              # wait for the shoe to come back
            if hold.get("queued"):
                return _act("accept_reads", "the reads match the cards dealt meanwhile")
            return _act("resume", "shoe link back; no card was dealt meanwhile")
        if kind == "restart_review":
            missed = self.rig.unread(self.status.get("shoe"), reads) if self.rig else 0
            code = self._true_code(reads) if missed > 0 else None
            if code:
                return _act("enter_card", f"the card on the table the controller never saw: "
                            f"{code}", code=code)
            return _act("confirm_layout", "the cards on the table match the record")
        if kind == "hold":
            return None                  # a person's own hold: that person lifts it
        if kind == "device_alarm":
            return _act("resume", "device checked and back in order")
        if round_open:
            return _act("void_round", f"could not be resolved at the table ({kind})")
        return _act("resume", f"checked ({kind})")


def _act(action: str, reason: str, **args: object) -> dict:
    return {"action": action, "args": {k: v for k, v in args.items() if v is not None},
            "reason": reason}


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
                   seat_names: Iterable[str] = (),
                   stakes: bool = False) -> list[ScriptedDecision]:
    """Parse a decisions file (format in the module docstring) for a game's decision names;
    `stakes`: the game also takes `stake SEAT AMOUNT`, `banco SEAT`, `accept_stakes AMOUNT`."""
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
        extra = m.group(5)
        if shoe < 1 or rnd < 1:
            raise DecisionsFileError(f"{where}: shoe and round numbers start at 1")
        if stakes and name in STAKE_LINES:
            words = [value] + ([extra] if extra else [])
            wants = STAKE_LINES[name]
            if len(words) != len(wants) or not all(w.isdigit() for w in words):
                raise DecisionsFileError(f"{where}: {name} takes {' '.join(w.upper() for w in wants)}"
                                         f" (whole numbers), e.g. 1 {name} "
                                         f"{' '.join('3' if w == 'seat' else '500' for w in wants)}")
            out.append(ScriptedDecision(shoe, rnd, name, dict(zip(wants, map(int, words))), n))
            continue
        if extra:
            raise DecisionsFileError(f"{where}: {name} takes one value, not {value} {extra}")
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
            known = ", ".join(draw_names + seat_names + (tuple(STAKE_LINES) if stakes else ())) \
                or "none"
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

    def stakes(self, shoe: int, rnd: int) -> list[dict]:
        """While bets are open: the stakes, banco calls and the banker's cover of this coup."""
        out = []
        for d in self.script:
            if d.line in self.used or (d.shoe, d.round) != (shoe, rnd) or \
                    d.name not in STAKE_LINES:
                continue
            self.used.add(d.line)
            who = BANKER if d.name == "accept_stakes" else PLAYER
            out.append({"action": d.name, "args": dict(d.value), "user": who,
                        "role": "banker" if who == BANKER else "player",
                        "reason": f"decisions file line {d.line}"})
        return out

    def has_stakes(self) -> bool:
        return any(d.name in STAKE_LINES for d in self.script)

    def act(self, shoe: int, rnd: int, phase: str, pending: str | None,
            default: Any = None) -> list[dict]:
        """The decisions to give now (possibly none)."""
        out = []
        for d in self.script:
            if d.line in self.used or (d.shoe, d.round) != (shoe, rnd) or d.name in STAKE_LINES:
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


class PlayersActor:
    """The punters and the banker at the table, as the table's status shows it to them."""

    #: they act on the status alone
    takes = frozenset({"status"})

    def __init__(self, players: "VirtualPlayers", submit: Submit, schedule: Schedule, *,
                 delay_s: float = 0.5):
        self.players, self.submit, self.schedule = players, submit, schedule
        self.delay_s = delay_s
        self._seen: tuple | None = None
        self.status: dict = {}

    def on_event(self, e: dict) -> None:
        if e["event"] == "status" and e.get("state") == "betting" and e.get("round"):
            for act in self.players.stakes(e["shoe"], e["round"]):
                self.submit(command(act["action"], act["user"], act["role"], act["reason"],
                                    **act["args"]))
        if e["event"] != "status":
            return
        if e.get("state") == "hold":
            # a hold (a restart's review, say) refuses decisions: the one due is given again
            # once the table asks for it after the hold
            self._seen, self.status = None, e
            return
        if e.get("step") is None:
            return
        key = (e["shoe"], e["round"], e["step"], e.get("decision"), e.get("reads"))
        if key == self._seen:
            return
        self._seen = key
        self.status = e
        self.schedule(self.delay_s, functools.partial(self._act, key))

    def _act(self, key: tuple) -> None:
        st = self.status
        if (st.get("shoe"), st.get("round"), st.get("step"), st.get("decision"),
                st.get("reads")) != key:
            return                       # the table moved on meanwhile
        pending = st.get("decision")
        phase = "decide" if pending else st["step"]
        for act in self.players.act(st["shoe"], st["round"], phase, pending, st.get("default")):
            self.submit(command("decide", act["user"], act["role"], act["reason"],
                                **act["args"]))
