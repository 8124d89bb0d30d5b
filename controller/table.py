"""The table machine: the shoe lifecycle and the round's dealing phases as a `transitions` machine.

States (TableState) and transitions are data; guards only ask the pure rules in `games/` and
`procedures`. Every card read is the trigger `card`; a card that is not due puts the table on
`hold` with a named irregularity. The model (`Table`) holds plain state and emits domain events
into `outbox`; the application journals them before publishing.

    closed → shuffling → loaded → burning → idle ⇄ betting → dealing.<phase>… → idle … → shoe_ended
                                        any state → hold → (resume) → the state it left

The machine as data is in `table_machine`; holds and irregularities in `table_holds`; the
banking games' draw decisions in `table_decisions`. A continuous shuffler's table returns each
round's cards to the machine after its result (`MachineInventory`).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from controller import procedures
from controller.cards import Card, CardCodeError, parse_card
from controller.errors import CommandRefused
from controller.games import get_rules
from controller.integrity import IntegrityWatch
from controller.profile import Profile
from controller.table_decisions import DecisionsMixin
from controller.table_holds import HoldsMixin
from controller.table_machine import DECIDE, TableState, build_machine, dealing
from controller.table_state import RoundState, ShoeState, cards_drawn


#: the dealer's words for the card due in each dealing phase
PHASE_WORDS = {
    "P1": "Player's first card", "B1": "Banker's first card", "P2": "Player's second card",
    "B2": "Banker's second card", "player_third": "Player's third card",
    "banker_third": "Banker's third card", "game_card": "the game card",
    "andar": "the next card to Andar", "bahar": "the next card to Bahar",
    "R1": "Right hand's first card", "L1": "Left hand's first card",
    "R2": "Right hand's second card", "L2": "Left hand's second card",
    "right_third": "Right hand's third card", "left_third": "Left hand's third card",
    "bank_third": "the bank's third card",
}


def bet_number(x: Fraction) -> int | float:
    """A net result as JSON wants it: 1 not 1.0, 0.95 not 19/20."""
    return int(x) if x.denominator == 1 else float(x)


class Table(DecisionsMixin, HoldsMixin):
    """The model: plain state plus the callbacks the machine calls. One thread drives it."""

    def __init__(self, profile: Profile, *, auto_open: bool = True, betting_seconds: float = 0.0,
                 initial: str = TableState.CLOSED.value):
        self.profile = profile
        self.rules = get_rules(profile.game)
        self.auto_open = auto_open
        self.betting_seconds = betting_seconds
        self.outbox: list[dict] = []
        self.shoe: ShoeState | None = None
        self.round: RoundState | None = None
        self.shoe_no = 0
        self.hold_info: dict | None = None
        self.resume_state: str | None = None
        self._next: str | None = None
        self._end_reason: str | None = None
        self.state: str = initial
        self._first_phase = self.rules.phases[0]
        #: rounds opened at this table, every shoe together (numbers rounds of one-round shoes)
        self.round_count = 0
        self.integrity = IntegrityWatch()
        self._new_hands_keys = frozenset(self.rules.new_hands())
        #: who holds the bank (banking games): plain data kept by the game's rules
        new_bank = getattr(self.rules, "new_bank", None)
        self.bank: dict | None = new_bank() if new_bank else None
        for p in ("burn", DECIDE) + self.rules.phases:
            setattr(self, f"next_is_{p}", self._make_next_is(p))
            setattr(self, f"resume_to_dealing_{p}", self._make_resume_to(dealing(p)))
        for s in TableState:
            setattr(self, f"resume_to_{s.value}", self._make_resume_to(s.value))
        self.machine = build_machine(self, initial)

    # ------------------------------------------------------------------ inputs
    def emit(self, event: str, **fields: Any) -> None:
        rec = {"event": event, "shoe": self.shoe_no}
        if self.round is not None and event not in ("shoe_started", "shoe_ended", "burn"):
            rec["round"] = self.round.number
        rec.update(fields)
        self.outbox.append(rec)

    def drain(self) -> list[dict]:
        out, self.outbox = self.outbox, []
        return out

    def new_shoe(self, *, cut_position: int | None = None, demo_rounds: int = 0,
                 software: str = "") -> None:
        if self.state not in (TableState.CLOSED, TableState.SHOE_ENDED):
            raise CommandRefused(f"a new shoe cannot start while the table is {self.state}")
        if demo_rounds > self.profile.demo_rounds_max:
            raise CommandRefused(f"{demo_rounds} demonstration rounds asked; the profile allows "
                                 f"at most {self.profile.demo_rounds_max}")
        if self.profile.continuous_shuffler and cut_position is not None:
            raise CommandRefused("a continuous shuffler deals without a cut card")
        self.shoe_no += 1
        self.integrity.new_shoe()
        self.round = None
        self.shoe = ShoeState(self.shoe_no, self.profile.decks, cut_position=cut_position,
                              demo_left=demo_rounds, continuous=self.profile.continuous_shuffler)
        self.emit("shoe_started", decks=self.profile.decks, cards=self.profile.cards,
                  cut_card_position=cut_position, profile=self.profile.name,
                  profile_sha256=self.profile.sha256, game=self.profile.game,
                  **({"software_sha256": software} if software else {}))

    def on_card(self, code: str, **flags: Any) -> None:
        """A card read by the shoe, in read order."""
        try:
            card = parse_card(code)
        except CardCodeError as err:
            self.irregular(kind="impossible_card", detail=str(err))
            return
        if self.shoe is None:
            self.irregular(kind="card_without_shoe", detail=f"{code} read with no shoe loaded")
            return
        problem = self.shoe.inventory.problem(card)
        if problem is not None:
            self.shoe.inventory.record(card, "removed")
            self.irregular(kind="foreign_card", detail=problem, code=card.code)
            return
        if self.shoe.cut_seen and self.shoe.cut_round is None and self.state != TableState.HOLD:
            in_round = self.state.startswith("dealing") or self.state == TableState.BETTING
            self.shoe.cut_round = self.round.number if in_round and self.round \
                else self._next_round_number()
        face_up = flags.get("face_up") and self.profile.face_up_card != "valid" \
            and self.state.startswith("dealing.") and self.state != "dealing.burn"
        if flags.get("with_previous") or flags.get("multiple"):
            self._note("multiple_cards", f"{card.code} drawn together with the card before it; "
                       f"kept in read order (top card first)", code=card.code)
        if flags.get("face_up") and not face_up:
            self._note("face_up_card", f"{card.code} came out face up; it stays valid",
                       code=card.code)
        if face_up:
            # burn-and-replace or void: the card is not dealt; the supervisor applies the remedy
            self.shoe.inventory.record(card, "removed")
            self.irregular(kind="face_up_card", code=card.code,
                           detail=f"{card.code} came out face up; profile remedy: "
                                  f"{self.profile.face_up_card}")
            return
        self.card(card=card, flags=flags)
        for alarm in self.integrity.feed(card.code):
            # an unshuffled or replayed shoe: dealing stops until a supervisor decides
            self.irregular(kind="integrity_alarm", detail=alarm.detail, detector=alarm.kind,
                           card_index=alarm.card_index)

    def on_cut_card(self) -> None:
        if self.shoe is not None and not self.shoe.cut_seen:
            self.shoe.cut_seen = True
            self.emit("cut_card", cards_out=self.shoe.inventory.cards_out)

    # ------------------------------------------------------------------ conditions
    def _make_next_is(self, phase: str) -> Callable[..., bool]:
        return lambda *a, **k: self._next == phase

    def _make_resume_to(self, state: str) -> Callable[..., bool]:
        return lambda *a, **k: self.resume_state == state

    def count_ok(self, count: int, **_: Any) -> bool:
        return count == self.profile.cards

    def burn_completes(self, card: Card, **_: Any) -> bool:
        burned = len(self.shoe.start_burn)
        total = (procedures.start_burn_total(self.profile, card) if burned == 0
                 else self.shoe.start_burn_total)
        return burned + 1 >= total

    def burn_due(self, **_: Any) -> bool:
        return self.round.burn_due > 0

    def round_open(self, *_: Any, **__: Any) -> bool:
        """A round is in progress (bets open or cards being dealt), possibly on hold."""
        where = self.resume_state if self.state == TableState.HOLD else self.state
        return self.round is not None and (where or "").startswith(("dealing", "betting"))

    # ------------------------------------------------------------------ callbacks
    def prepare_card(self, *args: Any, **kw: Any) -> None:
        """Before any `card` transition in a dealing state: put the card where it is due."""
        card = kw.get("card")
        if card is None or not self.state.startswith(dealing("")):
            return
        phase = self.state[len(dealing("")):]
        rnd = self.round
        if phase == "burn":
            rnd.burned_before.append(card.code)
            rnd.burn_due -= 1
            self.shoe.inventory.record(card, "burn")
            self.emit("card", n=cards_drawn(self.shoe.inventory), code=card.code, slot="burn",
                      flags=_flag_list(kw.get("flags")))
            if rnd.burn_due > 0:
                self._next = "burn"
            else:
                self._set_next()
            return
        if phase == DECIDE:
            # a card while a draw decision is pending: the hand drew (a reading shoe's table)
            self._record_decision(rnd.pending, True, user="shoe", by="card")
            phase = self.rules.next_phase(self.hands_for_rules())
            if phase not in self.rules.phases:
                raise ValueError(f"{self.profile.game}: a draw decision led to {phase!r}, "
                                 f"not to a card")
        self.rules.place(rnd.hands, phase, card)
        self.shoe.inventory.record(card, "hand")
        self.emit("card", n=cards_drawn(self.shoe.inventory), code=card.code, slot=phase,
                  flags=_flag_list(kw.get("flags")))
        self._set_next()

    # ------------------------------------------------------------------ decisions
    def take_start_burn(self, card: Card, **kw: Any) -> None:
        shoe = self.shoe
        if not shoe.start_burn:
            shoe.start_burn_total = procedures.start_burn_total(self.profile, card)
        shoe.start_burn.append(card.code)
        shoe.inventory.record(card, "burn")
        self.emit("card", n=shoe.inventory.cards_out, code=card.code, slot="burn",
                  flags=_flag_list(kw.get("flags")))
        if len(shoe.start_burn) >= shoe.start_burn_total:
            self.emit("burn", cards=list(shoe.start_burn))

    def on_enter_loaded(self, *a: Any, **k: Any) -> None:
        if self.profile.burn.rule == "none":
            self.no_burn()

    def on_enter_idle(self, *a: Any, **k: Any) -> None:
        reason, self._end_reason = self._end_reason, None
        if reason:
            self.end_shoe(reason=reason)
        elif self.auto_open and self.state == TableState.IDLE:
            self.open_bets()

    def open_round(self, *a: Any, **k: Any) -> None:
        shoe = self.shoe
        demo = shoe.demo_left > 0
        if demo:
            shoe.demo_left -= 1
        hands = self.rules.new_hands()
        decisions = hands.pop("decisions", {})
        self.round = RoundState(number=self._next_round_number(), demo=demo, hands=hands,
                                burn_due=procedures.between_round_burn(self.profile, shoe.rounds),
                                decisions=decisions,
                                bank_seat=self.bank["banker"] if self.bank else None)
        shoe.rounds += 1
        self.round_count += 1
        self.emit("round_started", demo=demo)

    def _next_round_number(self) -> int:
        """Rounds count per shoe; games whose every round has its own shoe (Andar Bahar's
        deck per round) number them across the table's shoes instead."""
        if getattr(self.rules, "rounds_per_shoe", 0):
            return self.round_count + 1
        return self.shoe.rounds + 1

    def on_enter_betting(self, *a: Any, **k: Any) -> None:
        if self.auto_open and self.betting_seconds <= 0:
            self.close_bets()

    def complete_round(self, *a: Any, **k: Any) -> None:
        rnd = self.round
        hands = self.hands_for_rules()
        result = self.rules.outcome(hands)
        if rnd.demo:
            bets = {b: 0 for b in self.profile.paytable}
        else:
            bets = {b: bet_number(x) for b, x in
                    self.rules.settle(hands, self.profile.paytable).items()}
        fields: dict[str, Any] = {"game": self.profile.game}
        if rnd.burned_before:
            fields["burned_before"] = list(rnd.burned_before)
        fields.update(result)
        fields["bets"] = bets
        if rnd.demo:
            fields["demo"] = True
        if rnd.flags:
            fields["irregularities"] = [f["kind"] for f in rnd.flags]
        fields.update(self._pass_bank(void=False))
        self.emit("round_result", **fields)
        self._after_round()

    def _pass_bank(self, *, void: bool) -> dict:
        """Update who holds the bank after a coup; the result's `bank_seat` fields."""
        rnd = self.round
        if self.bank is None:
            return {}
        if not rnd.demo:
            misdraw = any(f.get("pass_bank") for f in rnd.flags)
            self.bank = self.rules.bank_after_coup(self.bank, self.hands_for_rules(),
                                                   void=void, misdraw=misdraw)
        return {"bank_seat": rnd.bank_seat, "next_bank_seat": self.bank["banker"]}

    def _after_round(self) -> None:
        """Return a continuous shuffler's cards; decide whether the shoe ends once the table is
        back between rounds."""
        shoe = self.shoe
        if shoe.continuous:
            self._return_to_machine()
        if procedures.shoe_ends_after(self.profile, self.round.number, shoe.cut_round):
            self._end_reason = "cut_card"
        elif getattr(self.rules, "rounds_per_shoe", 0) and \
                shoe.rounds >= self.rules.rounds_per_shoe:
            self._end_reason = "round_complete"
        elif shoe.continuous and cards_drawn(shoe.inventory) >= self.profile.cards:
            # a continuous shuffler never runs out: its "shoe" is one machine load dealt
            self._end_reason = "cards_dealt"

    def _return_to_machine(self) -> None:
        """Every card out of the continuous shuffler goes back in after the round."""
        rnd = self.round
        codes = self.shoe.inventory.return_all(
            list(rnd.burned_before) + [c.code for h in rnd.hands.values() for c in h])
        if codes:
            self.emit("cards_returned", cards=codes)

    def void_current_round(self, reason: str = "void", end_shoe: str | None = None,
                           **_: Any) -> None:
        rnd = self.round
        fields = {"game": self.profile.game}
        if rnd.burned_before:
            fields["burned_before"] = list(rnd.burned_before)
        fields.update({k: [c.code for c in v] for k, v in rnd.hands.items()})
        if "decisions" in self._new_hands_keys:
            fields["decisions"] = dict(rnd.decisions)
        fields.update(void=True, reason=reason, bets={b: 0 for b in self.profile.paytable})
        if rnd.demo:
            fields["demo"] = True
        if rnd.flags:
            fields["irregularities"] = [f["kind"] for f in rnd.flags]
        fields.update(self._pass_bank(void=True))
        self.emit("round_result", **fields)
        self.hold_info = None
        self.resume_state = None
        if end_shoe:
            self._end_reason = end_shoe
        else:
            self._after_round()

    def finish_shoe(self, reason: str = "supervisor", **_: Any) -> None:
        self.emit("shoe_ended", rounds=self.shoe.rounds, reason=reason)
        self.hold_info = None

    def shoe_empty(self) -> None:
        """The shoe has no card left: a round in progress is void, and the shoe ends."""
        if self.round_open():
            self.void_round(reason="exhausted", end_shoe="exhausted")
        elif self.state not in (TableState.SHOE_ENDED, TableState.CLOSED):
            if self.state in (TableState.LOADED, TableState.BURNING):
                self.shoe.invalid = True
            self.end_shoe(reason="exhausted")

    # ------------------------------------------------------------------ views
    def prompt(self) -> str:
        """What the dealer should do now, in words."""
        s = self.state
        if s == TableState.CLOSED or s == TableState.SHOE_ENDED:
            return "Load a new shoe"
        if s == TableState.SHUFFLING:
            return "Shuffling…"
        if s == TableState.LOADED:
            return "Turn the first card for the burn"
        if s == TableState.BURNING:
            left = (self.shoe.start_burn_total or 0) - len(self.shoe.start_burn)
            return f"Burn {left} more card(s)"
        if s == TableState.IDLE:
            return "Open bets"
        if s == TableState.BETTING:
            return "Bets open"
        if s == TableState.HOLD:
            return f"HOLD: {self.hold_info['problems'][-1]['detail'] if self.hold_info else ''}"
        phase = s[len(dealing("")):]
        if phase == DECIDE and self.round is not None and self.round.pending:
            name = self.round.pending
            values = self.rules.decision_options(self.hands_for_rules(), name)
            words = "/".join(("draw" if v else "stand") if isinstance(v, bool) else str(v)
                             for v in values)
            return f"Decide: {name} ({words})"
        if phase == "burn":
            return "Burn one card"
        return f"Deal {PHASE_WORDS.get(phase, phase)} ({phase})"

    def snapshot(self) -> dict:
        return {"state": self.state, "shoe_no": self.shoe_no,
                "shoe": self.shoe.to_dict() if self.shoe else None,
                "round": self.round.to_dict() if self.round else None,
                "hold_info": self.hold_info, "resume_state": self.resume_state,
                "round_count": self.round_count, "integrity": self.integrity.to_dict(),
                "bank": dict(self.bank) if self.bank is not None else None}

    @classmethod
    def restore(cls, profile: Profile, snap: dict, **kw: Any) -> "Table":
        """Rebuild at a saved state without running any entry callbacks (DESIGN rule 9)."""
        t = cls(profile, initial=snap["state"], **kw)
        t.shoe_no = snap["shoe_no"]
        t.shoe = ShoeState.from_dict(snap["shoe"]) if snap["shoe"] else None
        t.round = RoundState.from_dict(snap["round"]) if snap["round"] else None
        t.hold_info, t.resume_state = snap["hold_info"], snap["resume_state"]
        t.round_count = snap.get("round_count", t.shoe.rounds if t.shoe else 0)
        if snap.get("bank") is not None:
            t.bank = dict(snap["bank"])
        if snap.get("integrity"):
            t.integrity = IntegrityWatch.from_dict(snap["integrity"])
        return t


def _flag_list(flags: dict | None) -> list[str]:
    return sorted(k for k, v in (flags or {}).items() if v)
