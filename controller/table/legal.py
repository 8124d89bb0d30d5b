"""What is legal at the table, as one table of commands: the single owner of who may do what, where.

Each `Command` names the states it applies in, the kinds of hold it applies on (and the states
such a hold may have come from), the roles that may issue it, its guard (a named predicate of
the table as it stands, `GUARDS`), where it takes the table, whether it is an override (a
reason is kept with it) and its arguments. From this one table are generated:

- the machine (`controller.table.machine`): every command is a trigger, with one transition
  from each state it applies in to its destination;
- the remedies a hold offers and the console's offers (`controller.table.offers`);
- the roles' rights and the arguments each action takes (`controller.access.roles`);
- the diagram (`controller.table.diagram`, docs/table-machine.md).

Destinations: a state; `STAY` (the command changes the table in place: what follows, such as
the next step of a round, is the procedure's own move); `BACK` (off a hold, to exactly where
the hold came from); `HOLD` (onto a hold that remembers where it came from). `routes` are
destinations chosen by a guard, tried in order before `dest`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from controller.games import BankingRules, GameRules, StakesRules
from controller.games.procedure import DECIDE
from controller.table.states import (BETTING, BURN, BURNING, CLOSED, IDLE, LOADED,
                                     SHOE_ENDED, SHUFFLING, dealing)

STAY, BACK, HOLD = "stay", "back", "hold"
#: every kind of hold (a command whose `holds` is ANY applies on any hold)
ANY = "*"
#: a kind of hold this release does not know (a journal from a newer one)
OTHER = "other"

#: the kinds of hold the table raises, each with what it is for (the console's words are in
#: the message catalogue, `problem.<kind>`)
KINDS: Mapping[str, str] = {
    "unreadable_card": "a card the shoe could not read, or one that left it unread",
    "card_not_due": "a card drawn when none was due",
    "card_while_betting": "a card drawn while bets were open",
    "foreign_card": "a card that cannot be in this shoe",
    "impossible_card": "a read that names no card",
    "card_without_shoe": "a card read with no shoe loaded",
    "face_up_card": "a card out face up that the profile keeps out of the round",
    "count_mismatch": "the shuffler counted another number of cards than the shoe holds",
    "device_alarm": "a device's alarm",
    "link_lost": "the shoe's link lost (its reads kept for review)",
    "restart_review": "the controller restarted while cards were coming out of the shoe",
    "hold": "the supervisor's own hold",
    "integrity_alarm": "a shoe dealt in an order no shuffle gives (unshuffled, replayed)",
    "missed_shoe_burn": "a round started before the shoe-start burn was done",
    "false_coup": "a draw decision against the tableau, the coup void by the profile",
    "internal_error": "a defect met while applying a device's input",
}
#: holds during which reads are the shoe's own cards, kept for the supervisor to accept
REVIEWED = frozenset({"link_lost", "restart_review"})
#: holds caused by a card drawn when none was due (or with no shoe): it may be given back
STRAY = frozenset({"card_not_due", "card_while_betting", "card_without_shoe"})

# ---- where commands apply: groups of states, resolved for each game's procedure -------------
EVERY = "every state"
SHOE_IN_PLAY = "a shoe in play"         # shuffling to the last round, not between shoes
ROUND = "a round"                       # bets open or cards being dealt
DEALT = "dealing"                       # a card or decision of a round is due
BEFORE_ROUNDS = "before rounds"         # the shoe in, no round open
BETWEEN_SHOES = "between shoes"
_GROUPS: Mapping[str, tuple[str, ...]] = {
    BETWEEN_SHOES: (CLOSED, SHOE_ENDED),
    BEFORE_ROUNDS: (SHUFFLING, LOADED, BURNING, IDLE),
}


def states_of(names: Iterable[str], steps: tuple[str, ...]) -> tuple[str, ...]:
    """The machine states named by `names` (states and groups) for a game's round `steps`."""
    deal = tuple(dealing(s) for s in (BURN,) + steps)
    groups = {**_GROUPS, DEALT: deal, ROUND: (BETTING,) + deal,
              SHOE_IN_PLAY: (SHUFFLING, LOADED, BURNING, IDLE, BETTING) + deal,
              EVERY: (CLOSED, SHUFFLING, LOADED, BURNING, IDLE, BETTING, SHOE_ENDED) + deal}
    out: list[str] = []
    for name in names:
        for s in groups.get(name, (name,)):
            if s not in out:
                out.append(s)
    return tuple(out)


# ---- guards: named predicates of the table as it stands -------------------------------------
@dataclass(frozen=True)
class Guard:
    """A predicate of the table's public view, and the refusal when it does not hold: a
    message code (or a function of the table giving one) and the message's fields."""
    test: Callable[[Any], bool]
    refusal: str | Callable[[Any], str]
    fields: Callable[[Any], dict] = field(default=lambda t: {})

    def refused(self, t: Any) -> tuple[str, dict]:
        code = self.refusal if isinstance(self.refusal, str) else self.refusal(t)
        return code, self.fields(t)


def _hold_kinds(t: Any) -> set[str]:
    return t.hold.kinds if t.hold is not None else set()


def _resumable(t: Any) -> bool:
    hold = t.hold
    if hold is None:
        return False
    if "link_lost" in hold.kinds and not hold.link_back:
        return False
    if hold.queued and hold.kinds & REVIEWED:
        return False
    if _strays_first(hold):
        return False
    return hold.last.kind not in ("count_mismatch", "restart_review")


def _strays_first(hold: Any) -> bool:
    """The hold also holds a card drawn when none was due, which resuming would pass over:
    it is given back or burned first (a device's alarm joined that hold, say)."""
    return any(k in STRAY and not BY_NAME["resume"].applies_on(k) for k in hold.kinds)


def _resume_refusal(t: Any) -> str:
    hold = t.hold
    if hold is None:
        return "not_on_hold"
    if "link_lost" in hold.kinds and not hold.link_back:
        return "link_down"
    if hold.queued and hold.kinds & REVIEWED:
        return "reads_waiting"
    if _strays_first(hold):
        return "stray_first"
    return {"count_mismatch": "count_mismatch", "restart_review": "check_layout"}.get(
        hold.last.kind, "not_now")


def _house_burn_possible(t: Any) -> bool:
    """A house burn may be announced between rounds or while bets are open, before any card
    of the round is out, once per round."""
    shoe = t.shoe
    return (t.reveal_due is None and shoe is not None and not shoe.end_reason
            and not shoe.house_burn_announced
            and not (t.round_open() and t.round is not None and (
                t.round.cards or t.round.burned_before)))


def _house_burn_refusal(t: Any) -> str:
    shoe = t.shoe
    if shoe is not None and shoe.house_burn_announced:
        return "house_burn_due"
    return "round_in_progress" if t.round_open() else "not_now"


GUARDS: Mapping[str, Guard] = {
    "resumable": Guard(_resumable, _resume_refusal, lambda t: {
        "state": t.state, "n": len(t.hold.queued) if t.hold is not None else 0}),
    "link_up": Guard(lambda t: t.hold is not None and (
        "link_lost" not in t.hold.kinds or t.hold.link_back), "link_down"),
    "reads_kept": Guard(lambda t: t.hold is not None and bool(t.hold.queued), "no_reads_kept"),
    "reads_kept_link_up": Guard(lambda t: t.hold is not None and bool(t.hold.queued) and (
        "link_lost" not in t.hold.kinds or t.hold.link_back), "link_down"),
    "reads_to_give_back": Guard(lambda t: t.hold is not None and (
        bool(t.hold.kinds & STRAY) or bool(t.hold.queued) and not t.hold.kinds & REVIEWED),
        "no_reads_kept"),
    "other_problems": Guard(lambda t: t.hold is not None and any(
        p.kind not in STRAY for p in t.hold.problems), "not_now"),
    "link_review": Guard(lambda t: t.hold is not None and "link_lost" in t.hold.kinds,
                         "not_now"),
    "cut_card_in_shoe": Guard(lambda t: t.shoe is not None and not t.shoe.cut_seen
                              and not t.shoe.continuous, "not_now",
                              lambda t: {"state": t.state}),
    "cards_dealt": Guard(lambda t: t.round is not None and bool(t.round.cards),
                         "no_face_up_sensor_needed"),
    "no_reveal_due": Guard(lambda t: t.reveal_due is None and t.shoe is not None
                           and not t.shoe.end_reason and not t.shoe.house_burn_announced,
                           lambda t: "house_burn_due" if t.shoe is not None
                           and t.shoe.house_burn_announced else "reveal_first",
                           lambda t: {"n": t.reveal_due}),
    "house_burn_possible": Guard(_house_burn_possible, _house_burn_refusal,
                                 lambda t: {"state": t.state}),
    "house_burn_announced": Guard(lambda t: t.shoe is not None and bool(
        t.shoe.house_burn_announced) and not t.shoe.house_burn, lambda t: "house_burn_due"
        if t.shoe is not None and t.shoe.house_burn else "no_house_burn_announced"),
    "house_burn_pending": Guard(lambda t: t.shoe is not None and bool(
        t.shoe.house_burn_announced), "no_house_burn_announced"),
    "no_house_burn_due": Guard(lambda t: t.shoe is None or not t.shoe.house_burn_announced,
                               "house_burn_due"),
    "shoe_to_declare_invalid": Guard(lambda t: t.shoe is not None and not t.shoe.end_reason
                                     and not (t.round_open() and t.round is not None and (
                                         t.round.cards or t.round.burned_before))
                                     and t.reveal_due is None,
                                     lambda t: "reveal_first" if t.reveal_due is not None
                                     else "round_in_progress", lambda t: {"n": t.reveal_due}),
    "reveal_due": Guard(lambda t: t.reveal_due is not None, "nothing_to_reveal"),
    "result_to_confirm": Guard(lambda t: t.round is not None, "nothing_to_confirm"),
    "reading_the_shoe": Guard(lambda t: t.shoe is not None and (
        t.state != SHOE_ENDED or t.shoe.counting == "shoe"), "not_now",
        lambda t: {"state": t.state}),
    "rest_uncounted": Guard(lambda t: t.shoe is not None and not t.shoe.reconciled,
                            "count_once"),
    "demo_possible": Guard(lambda t: t.shoe is not None and not (
        t.shoe.rounds - t.shoe.demo_left > 0 and t.shoe.rounds > 0)
        and t.shoe.demo_left + t.shoe.rounds < t.profile.demo_rounds_max,
        "demo_only_at_start"),
    "modes": Guard(lambda t: len(t.profile.paytables) > 1, "no_such_mode"),
    "no_cards_out": Guard(lambda t: not (t.round_open() and t.round is not None and (
        t.round.cards or t.round.burned_before)), "round_in_progress"),
    "stakes_open": Guard(lambda t: t.round is not None and t.round.stakes is not None,
                         "bets_closed", lambda t: {"state": t.state}),
}


# ---- the commands ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Arg:
    """One argument of an action: its name, its kind and whether it must be given.

    kind: "str" (non-empty text), "card" (a card code), "int" (a whole number ≥ 0),
    "scalar" (text, number or true/false). `person`: False for what the controller adds
    itself (the software it runs, the profile's text), never asked of a person.
    """
    name: str
    kind: str
    required: bool = True
    person: bool = True


@dataclass(frozen=True)
class Command:
    name: str
    roles: tuple[str, ...]
    states: tuple[str, ...] = ()        # where it applies off hold (states and groups)
    holds: tuple[str, ...] = ()         # the kinds of hold it applies on (ANY: every hold)
    held_from: tuple[str, ...] = (EVERY,)   # where such a hold may have come from
    guard: str | None = None            # off a hold
    hold_guard: str | None = None       # on a hold
    dest: str = STAY
    routes: tuple[tuple[str, str], ...] = ()    # (guard, destination), tried before `dest`
    override: bool = False              # a supervisor's or manager's: a reason is kept
    remedy: bool = False                # it clears (or settles part of) the hold it is on
    args: tuple[Arg, ...] = ()
    not_here: str = "not_now"           # the refusal where it does not apply
    absent: str = "unknown_action"      # the refusal in a game that does not take it
    needs: type | None = None           # the game capability it needs (BankingRules, …)
    doc: str = ""

    def applies_on(self, kind: str) -> bool:
        return ANY in self.holds or kind in self.holds or (
            OTHER in self.holds and kind not in KINDS)


DEALER, SUPERVISOR, MANAGER, SYSTEM = "dealer", "supervisor", "manager", "system"
_RUNS_ROUND = (DEALER, SUPERVISOR)

#: the commands, in the order the table offers them (a hold's remedies in this order too)
COMMANDS: tuple[Command, ...] = (
    # ---- a hold's remedies (the supervisor's overrides)
    Command("confirm_layout", (SUPERVISOR,), states=(ROUND,), guard="cards_dealt",
            holds=("restart_review",), dest=BACK, override=True, remedy=True,
            doc="the cards on the table match the record"),
    Command("enter_card", (SUPERVISOR,), holds=("unreadable_card", "restart_review"),
            routes=(("link_review", STAY),), dest=BACK, override=True, remedy=True,
            args=(Arg("code", "card"),), doc="the code of a card the shoe did not read"),
    Command("burn_card", (SUPERVISOR,), holds=("card_not_due", "card_while_betting",
                                               "face_up_card"),
            dest=BACK, override=True, remedy=True, doc="burn the card that caused the hold"),
    Command("remove_card", (SUPERVISOR,), holds=("foreign_card",), dest=BACK, override=True,
            remedy=True, args=(Arg("code", "card", required=False),),
            doc="take a card of another shoe out of play"),
    Command("return_reads", (SUPERVISOR,), holds=(ANY,), hold_guard="reads_to_give_back",
            routes=(("other_problems", STAY),), dest=BACK, override=True, remedy=True,
            doc="the reads kept under the hold go back: not this shoe's cards in play"),
    Command("accept_count", (SUPERVISOR,), holds=("count_mismatch",), held_from=(SHUFFLING,),
            dest=LOADED, override=True, remedy=True, doc="load the shoe as counted"),
    Command("reject_count", (SUPERVISOR,), holds=("count_mismatch",), held_from=(SHUFFLING,),
            dest=BACK, override=True, remedy=True, doc="shuffle and count the shoe again"),
    Command("accept_reads", (SUPERVISOR,), holds=("link_lost",), hold_guard="reads_kept_link_up",
            dest=BACK, override=True, remedy=True,
            doc="the reads while the link was down are the cards dealt"),
    Command("discard_reads", (SUPERVISOR,), holds=("link_lost",), hold_guard="reads_kept",
            dest=SHOE_ENDED, override=True, remedy=True,
            doc="the reads while the link was down are not trusted: void, end the shoe"),
    Command("resume", (SUPERVISOR,), holds=(
        "impossible_card", "card_without_shoe", "face_up_card", "device_alarm", "link_lost",
        "hold", "integrity_alarm", "false_coup", "internal_error", OTHER),
        hold_guard="resumable", dest=BACK, override=True, remedy=True,
        not_here="not_on_hold", doc="go on from where the hold came from"),
    Command("void_round", (SUPERVISOR,), states=(ROUND,), holds=(
        "unreadable_card", "card_not_due", "card_while_betting", "foreign_card",
        "impossible_card", "face_up_card", "device_alarm", "link_lost", "restart_review",
        "hold", "false_coup", "internal_error", OTHER), held_from=(ROUND,),
        dest=IDLE, override=True, remedy=True, not_here="no_round_to_void",
        doc="the round in progress is void: every bet 0"),
    Command("end_shoe", (SUPERVISOR,), states=(SHOE_IN_PLAY,), holds=(
        "foreign_card", "hold", "integrity_alarm", "missed_shoe_burn", "internal_error"),
        held_from=(SHOE_IN_PLAY,), guard="no_cards_out", dest=SHOE_ENDED, override=True,
        remedy=True, args=(Arg("void", "scalar", required=False),), not_here="no_shoe_to_end",
        doc="end the shoe (on a hold, the round in progress is void first)"),
    # ---- the round, run by the dealer (or a supervisor relieving one)
    Command("open_bets", _RUNS_ROUND, states=(LOADED, BURNING, IDLE), guard="no_reveal_due",
            doc="open the next round (before the shoe-start burn is done: the shoe is "
            "invalid)"),
    Command("start_round", _RUNS_ROUND, states=(LOADED, BURNING, IDLE), guard="no_reveal_due",
            doc="open_bets by its other name"),
    Command("house_burn", _RUNS_ROUND, states=(IDLE, BETTING), guard="house_burn_possible",
            doc="the dealer announces that the house burns one card at the start of the "
            "round; once a supervisor confirms it (or at once, where the profile lets the "
            "dealer alone), the next card read is burned and bets wait for it"),
    Command("withdraw_house_burn", _RUNS_ROUND, states=(IDLE, BETTING),
            guard="house_burn_pending", not_here="no_house_burn_announced",
            doc="the house burn announced is not made after all (before its card is out)"),
    Command("close_bets", _RUNS_ROUND + (SYSTEM,), states=(BETTING,), guard="no_house_burn_due",
            doc="no more bets: dealing starts"),
    Command("stake", _RUNS_ROUND, states=(BETTING,), guard="stakes_open", needs=StakesRules,
            args=(Arg("seat", "int"), Arg("amount", "int")), not_here="bets_closed",
            absent="no_stakes",
            doc="a punter's stake against the bank"),
    Command("banco", _RUNS_ROUND, states=(BETTING,), guard="stakes_open", needs=StakesRules,
            args=(Arg("seat", "int"),), not_here="bets_closed", absent="no_stakes",
            doc="a punter plays the whole bank alone"),
    Command("accept_stakes", _RUNS_ROUND, states=(BETTING,), guard="stakes_open",
            needs=StakesRules, args=(Arg("amount", "int"),), not_here="bets_closed",
            absent="no_stakes",
            doc="the banker covers stakes up to an amount"),
    Command("decide", _RUNS_ROUND, states=(ROUND,), needs=BankingRules,
            args=(Arg("name", "str"), Arg("value", "scalar"), Arg("seat", "int", required=False)),
            not_here="no_decision_due", absent="no_such_decision",
            doc="a hand's draw decision or a seat's choice (a player's call, entered)"),
    Command("reveal", _RUNS_ROUND, states=(IDLE,), holds=(ANY,), held_from=(IDLE,),
            guard="reveal_due", hold_guard="reveal_due", not_here="nothing_to_reveal",
            doc="show the last round's result to the table (also while a hold waits)"),
    # no guard on cards read: the dealer sees a card on the wrong box before its read arrives
    Command("report_misplaced", _RUNS_ROUND, states=(ROUND,),
            args=(Arg("detail", "str", required=False),), not_here="no_round",
            doc="cards put on the wrong boxes: the shoe order stands"),
    Command("report_face_up", _RUNS_ROUND, states=(ROUND,), guard="cards_dealt",
            args=(Arg("code", "card", required=False),), not_here="no_face_up_sensor_needed",
            doc="a card came out face up (a shoe that cannot tell)"),
    Command("report_unread", _RUNS_ROUND, states=(ROUND,), holds=(ANY,),
            held_from=(SHOE_IN_PLAY,), args=(Arg("detail", "str", required=False),),
            not_here="no_round", doc="a card left the shoe without a read (also while a hold "
            "waits: it joins the hold)"),
    Command("cut_card", _RUNS_ROUND, states=(SHOE_IN_PLAY,), guard="cut_card_in_shoe",
            doc="the cut card is out"),
    Command("confirm_result", _RUNS_ROUND, states=(IDLE, SHOE_ENDED),
            guard="result_to_confirm", not_here="nothing_to_confirm",
            doc="the dealer confirms the result shown (recorded)"),
    Command("shoe_empty", _RUNS_ROUND, states=(SHOE_IN_PLAY, SHOE_ENDED),
            guard="reading_the_shoe", dest=SHOE_ENDED, doc="the shoe has no card left"),
    Command("count_done", _RUNS_ROUND, states=(SHOE_ENDED,), guard="rest_uncounted",
            not_here="count_once", doc="the rest of the shoe is read back"),
    # a supervisor relieving the dealer does not call one
    Command("call_supervisor", (DEALER,), states=(EVERY,), holds=(ANY,),
            doc="ask a supervisor to the table; dealing goes on"),
    # ---- the supervisor's, off a hold
    Command("hold", (SUPERVISOR,), states=(SHOE_IN_PLAY,), dest=HOLD, override=True,
            args=(Arg("note", "str", required=False),), doc="stop the table"),
    Command("change_shoe", (SUPERVISOR,), states=(SHOE_IN_PLAY,), guard="no_cards_out",
            dest=SHOE_ENDED,
            override=True, args=(Arg("void", "scalar", required=False),),
            not_here="no_shoe_to_end", doc="end the shoe so that a new one is loaded"),
    Command("confirm_house_burn", (SUPERVISOR,), states=(IDLE, BETTING),
            guard="house_burn_announced", override=True, not_here="no_house_burn_announced",
            doc="the supervisor confirms the house burn the dealer announced: exactly one "
            "card is burned next"),
    Command("declare_invalid", (SUPERVISOR,), states=(LOADED, BURNING, IDLE, ROUND), holds=(
        "hold", "missed_shoe_burn"), held_from=(SHOE_IN_PLAY,),
        guard="shoe_to_declare_invalid", dest=SHOE_ENDED, override=True, remedy=True,
        not_here="no_shoe_to_end",
        doc="the shoe is not a valid game (its shoe-start burn was forgotten): it ends "
        "`invalid`; the rounds dealt from it stand or are void as the profile says"),
    Command("demo_round", (SUPERVISOR,), states=(LOADED, BURNING, IDLE),
            guard="demo_possible", override=True, not_here="demo_only_at_start",
            doc="one more demonstration round at the shoe's start"),
    Command("switch_mode", (SUPERVISOR,), states=(BEFORE_ROUNDS, BETWEEN_SHOES), guard="modes",
            override=True, args=(Arg("mode", "str"),), not_here="mode_between_rounds",
            doc="another paytable mode, between rounds"),
    # ---- the manager's
    Command("change_profile", (MANAGER,), states=(BETWEEN_SHOES,), override=True,
            args=(Arg("profile", "str"), Arg("text", "str", required=False, person=False)),
            not_here="profile_between_shoes", doc="another profile, between shoes"),
    Command("accept_software", (MANAGER,), states=(EVERY,), holds=(ANY,), override=True,
            args=(Arg("software", "str", required=False, person=False),),
            doc="accept software not on the approved list"),
    # ---- the service's own
    Command("new_shoe", (SYSTEM,), states=(BETWEEN_SHOES,),
            args=(Arg("cut_position", "int", required=False),
                  Arg("demo_rounds", "int", required=False),
                  Arg("shuffler", "scalar", required=False),
                  Arg("software", "str", required=False)),
            not_here="new_shoe_not_now", doc="a new shoe: shuffled, or loaded by hand"),
    Command("abandon_shoe", (SYSTEM,), states=(SHOE_IN_PLAY, SHOE_ENDED), holds=(ANY,),
            held_from=(SHOE_IN_PLAY, SHOE_ENDED), dest=SHOE_ENDED, remedy=True,
            doc="the shoe's devices are gone: a round in progress is void, the shoe ends"),
)
BY_NAME: Mapping[str, Command] = {c.name: c for c in COMMANDS}


@dataclass(frozen=True)
class Use:
    """Where one command applies in one game, resolved to machine states."""
    command: Command
    states: tuple[str, ...]        # off hold
    held_from: tuple[str, ...]     # on hold: the origins


def uses_for(rules: GameRules) -> tuple[Use, ...]:
    """The command table of a game: the commands it takes, each where it applies."""
    steps = rules.procedure.steps
    out = []
    for c in COMMANDS:
        if c.needs is not None and not isinstance(rules, c.needs):
            continue
        out.append(Use(c, states_of(c.states, steps),
                       states_of(c.held_from, steps) if c.holds else ()))
    return tuple(out)


def decision_steps(steps: Iterable[str]) -> tuple[str, ...]:
    return tuple(s for s in steps if s.startswith(DECIDE))


def remedies_for(kind: str) -> tuple[str, ...]:
    """The commands that clear a hold of `kind` (before the moment decides), in offer order."""
    return tuple(c.name for c in COMMANDS if c.remedy and c.applies_on(kind)
                 and ANY not in c.holds and SYSTEM not in c.roles)
