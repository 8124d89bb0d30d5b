"""What each command of the command table does, one function each (`HANDLERS`).

Whether a command applies now is the command table's and the machine's (`controller.table.
legal`, `controller.table.offers`), decided before its handler runs. A handler checks its
arguments, makes the command's own move (`move()`, exactly once) and does what the move
stands for; the table then makes the procedure's moves that follow. A handler that refuses
leaves the table exactly as it was (`Table.apply` puts it back).
"""
from __future__ import annotations

import hashlib
import logging
import tomllib
from typing import Any, Callable

from controller.errors import CommandRefused, ProfileError
from controller.settings.profile import parse_profile
from controller.shoe.cards import CardCodeError, parse_card
from controller.table.desk import Desk
from controller.table.holds import shuffler_stopped
from controller.table.legal import STRAY
from controller.table.model import QueuedRead
from controller.table.states import HOLD, IDLE, LOADED, BURNING, SHOE_ENDED, SHUFFLING
from controller.words import refuse

log = logging.getLogger("controller.table")
Move = Callable[[], None]


def after_resume(d: Desk, reshuffle: bool = False) -> None:
    """Carry on from the state a hold returned to: between rounds, the next round; a
    shuffler that stopped (or a shoe to be shuffled again), a new shuffle; a shuffled shoe
    the shuffler did not hand over, asked for again; a count-back the shuffler broke off,
    counted again."""
    if d.state == SHUFFLING and reshuffle:
        d.emit("device_request", device="shuffler", action="shuffle", decks=d.profile.decks)
    elif (d.state == LOADED and reshuffle and d.shoe is not None and d.shoe.shuffler
          and not d.shoe.inventory.cards_out):
        # the shuffler was away when the counted shoe was to be delivered (the delivery is
        # the only request of a loaded shoe): nobody else asks it again, and the table
        # waited for ever for a first card from a shoe still in the machine
        d.emit("device_request", device="shuffler", action="deliver")
    elif d.state == IDLE:
        d.rounds.between()
    elif (d.state == SHOE_ENDED and d.shoe is not None and d.shoe.counting == "shuffler"
          and not d.shoe.reconciled and reshuffle):
        # the shuffler stopped while counting the rest back (a jam): it counts again
        d.emit("device_request", device="shuffler", action="count_rest")


def _off_hold(d: Desk, move: Move, *, reshuffle: bool | None = None) -> None:
    """A remedy's move off the hold, and what leaving it means."""
    hold = d.hold
    assert hold is not None
    move()
    d.holds.left(hold, back=d.state == hold.resume_to)
    after_resume(d, reshuffle=shuffler_stopped(hold) if reshuffle is None else reshuffle)


# ---------------------------------------------------------------- a hold's remedies
def confirm_layout(d: Desk, move: Move) -> None:
    """The layout on the table matches the record: after a restart, dealing goes on; off a
    hold, the dealer's layout is confirmed as the shoe order places it."""
    if d.state != HOLD:
        move()
        assert d.round is not None
        d.emit("layout_confirmed", hands=d.round.layout())
        return
    layout = d.holds.target("confirm_layout").extra.get("layout")
    d.emit("layout_confirmed", hands=dict(layout) if isinstance(layout, dict) else {})
    _off_hold(d, move, reshuffle=False)


def enter_card(d: Desk, move: Move, code: str) -> None:
    """The code of a card the shoe could not read (or never saw), entered by hand."""
    try:
        card = parse_card(code)
    except CardCodeError as err:
        raise refuse("not_a_card", "invalid_args") from err
    shoe, hold = d.shoe, d.hold
    assert shoe is not None and hold is not None
    why = shoe.inventory.problem(card)
    if why:
        log.info("entered card %s refused: %s", card.code, why)
        raise refuse("card_not_in_shoe", card=card.code)
    last = d.holds.target("enter_card")
    move()
    if last.kind == "unreadable_card":
        shoe.inventory.unidentified = max(0, shoe.inventory.unidentified - 1)
    else:
        shoe.reads += 1     # after a restart: a card out of the shoe whose read was lost
    if "link_lost" in hold.kinds or hold.queued:
        # the card was drawn before the reads kept during the hold: it goes first; after a
        # lost link they wait, all together, for the supervisor to accept or discard them
        hold.problems = [p for p in hold.problems if p is not last]
        hold.queued.insert(0, QueuedRead(card.code, {"entered": True}))
        d.emit("card_queued", code=card.code, queued=len(hold.queued),
               reason="entered by hand; it was drawn before the reads kept meanwhile")
        if d.state == HOLD:             # a lost link: the review goes on
            if hold.link_back:
                d.holds.link_review()
            return
    else:
        hold.queued = [QueuedRead(card.code, {"entered": True})]
    d.holds.left(hold, back=d.state == hold.resume_to)   # deals what the hold kept, in order
    after_resume(d)


def burn_card(d: Desk, move: Move) -> None:
    """Burn the card that caused the hold (drawn when none was due, foreign, face up); the
    reads kept meanwhile are then taken as the procedure says."""
    last = d.holds.target("burn_card")
    code = last.extra.get("code")
    if code and last.kind != "foreign_card":
        assert d.shoe is not None
        d.shoe.inventory.move(code, "removed", "burn")
    d.emit("burned", code=code, cause=last.kind)
    _off_hold(d, move)


def remove_card(d: Desk, move: Move, code: str | None = None) -> None:
    last = d.holds.target("remove_card")
    d.emit("removed", code=code or last.extra.get("code"), cause="foreign_card")
    _off_hold(d, move)


def return_reads(d: Desk, move: Move) -> None:
    """The reads kept under the hold (and a card that came when none was due) were not this
    shoe's cards in play: they go back, and nothing of them stays in the shoe's count. The
    hold is over unless something else holds it."""
    hold, shoe = d.hold, d.shoe
    assert hold is not None
    move()
    codes: list[str | None] = []
    for p in hold.problems:
        if p.kind in STRAY and p.extra.get("code"):
            code = str(p.extra["code"])
            if shoe is not None and code in shoe.inventory.by_place["removed"]:
                shoe.inventory.unrecord(code, "removed")
            codes.append(code)
    codes += [q.code for q in hold.queued]
    hold.queued = []
    hold.problems = [p for p in hold.problems if p.kind not in STRAY]
    d.emit("reads_returned", codes=codes)
    if d.state == HOLD:
        return                  # the hold goes on for what else it is for
    d.holds.left(hold, back=d.state == hold.resume_to)
    after_resume(d, reshuffle=shuffler_stopped(hold))


def accept_count(d: Desk, move: Move) -> None:
    hold = d.hold
    assert hold is not None
    move()                      # off the hold, to the shoe loaded as counted
    d.holds.left(hold, back=False)
    d.emit("device_request", device="shuffler", action="deliver")
    d.shoes.loaded()


def reject_count(d: Desk, move: Move) -> None:
    """The shoe is not accepted: shuffle and count it again."""
    _off_hold(d, move, reshuffle=True)


def accept_reads(d: Desk, move: Move) -> None:
    """The reads that arrived while the link was down are the cards dealt: deal them in
    read order, each recorded."""
    _off_hold(d, move, reshuffle=False)


def discard_reads(d: Desk, move: Move) -> None:
    """The reads from the outage are not trusted: they are out of play, the round is void
    and the shoe ends."""
    in_round = d.round_open()
    move()
    d.holds.set_aside()
    if in_round:
        d.rounds.void("reads after a lost link discarded")
    d.shoes.over("link_lost", move=False)


def resume(d: Desk, move: Move) -> None:
    _off_hold(d, move)


def void_round(d: Desk, move: Move) -> None:
    move()
    d.rounds.void("supervisor")
    d.rounds.after()


def end_shoe(d: Desk, move: Move, void: Any = False) -> None:
    """End the shoe. Off a hold no card of a round may be out (the command table's guard); on
    a hold the round in progress is void first (`void` says so explicitly, as older consoles
    send it; the round is void either way, since its cards can no longer be dealt on)."""
    rnd, shoe = d.round, d.shoe
    assert shoe is not None
    dealt = d.round_open() and rnd is not None and bool(rnd.cards or rnd.burned_before)
    if d.hold is not None and d.hold.last.kind == "integrity_alarm":
        shoe.invalid = True      # dealt unshuffled or replayed: not an authorised game
    reason = "invalid" if shoe.invalid else "supervisor"
    opened = d.round_open()
    move()
    _round_off(d, dealt, opened, "shoe ended by the supervisor")
    d.shoes.over(reason, move=False)


def _round_off(d: Desk, dealt: bool, opened: bool, why: str) -> None:
    """The round that was in progress before the shoe's end: void once a card of it was out,
    else it never happened."""
    if dealt:
        d.rounds.void(why)
    elif opened:
        d.rounds.cancel("shoe ended before its first card")


def declare_invalid(d: Desk, move: Move) -> None:
    """The shoe is not a valid game, found after rounds were dealt from it (its shoe-start
    burn was forgotten): it ends `invalid` and a new shoe is needed. The rounds already
    settled stand, or are void, as the profile's `[burn] invalid_shoe_rounds` says; a round
    in progress is void (or, with no card out, cancelled)."""
    rnd, shoe = d.round, d.shoe
    assert shoe is not None
    dealt = d.round_open() and rnd is not None and bool(rnd.cards or rnd.burned_before)
    opened = d.round_open()
    settled = shoe.rounds - (1 if opened else 0)
    move()
    shoe.invalid = True
    _round_off(d, dealt, opened, "invalid_shoe")
    results = d.profile.burn.invalid_shoe_rounds
    if results == "void":
        for number in range(1, settled + 1):
            d.emit("round_voided", round=number, reason="invalid_shoe")
    d.shoes.over("invalid", move=False, cause="shoe_burn_forgotten", results=results,
                 settled=settled)


# ---------------------------------------------------------------- the round
def open_bets(d: Desk, move: Move) -> None:
    move()
    if d.state in (LOADED, BURNING):
        assert d.shoe is not None
        d.shoe.invalid = True
        d.holds.problem("missed_shoe_burn", "a round was started before the shoe-start burn "
                        "was done: the shoe is invalid and must be replaced; everything read "
                        "so far stays in the record")
        return
    d.rounds.open()


def house_burn(d: Desk, move: Move, user: str = "") -> None:
    """The dealer announces a house burn at the start of a round. A supervisor confirms it
    (`confirm_house_burn`), unless the profile lets the dealer alone; from then exactly one
    card is expected, and it is burned; a second one is a card drawn when none was due."""
    move()
    shoe = d.shoe
    assert shoe is not None
    shoe.house_burn_announced = user or "?"
    d.emit("house_burn", stage="announced", announced_by=shoe.house_burn_announced)
    if d.profile.burn.house_burn == "dealer":
        _house_burn_due(d, confirmed_by="")


def confirm_house_burn(d: Desk, move: Move, user: str = "") -> None:
    move()
    _house_burn_due(d, confirmed_by=user or "?")


def _house_burn_due(d: Desk, *, confirmed_by: str) -> None:
    shoe = d.shoe
    assert shoe is not None
    shoe.house_burn, shoe.house_burn_confirmed = True, confirmed_by
    d.emit("house_burn", stage="due", announced_by=shoe.house_burn_announced,
           **({"confirmed_by": confirmed_by} if confirmed_by else {}))


def withdraw_house_burn(d: Desk, move: Move, user: str = "") -> None:
    """The house burn announced is not made (before its card came out): bets may close."""
    move()
    shoe = d.shoe
    assert shoe is not None
    d.emit("house_burn", stage="withdrawn", announced_by=shoe.house_burn_announced,
           withdrawn_by=user or "?")
    shoe.house_burn, shoe.house_burn_announced, shoe.house_burn_confirmed = False, "", ""


def close_bets(d: Desk, move: Move) -> None:
    move()
    d.rounds.close_bets()


def reveal(d: Desk, move: Move) -> None:
    """The dealer turns the hands over (profile `[display] reveal = "on_reveal"`): the
    result read earlier is shown to the table, and dealing goes on."""
    move()
    number, d.reveal_due = d.reveal_due, None
    d.emit("reveal", round=number)
    d.rounds.between()


def decide(d: Desk, move: Move, name: Any, value: Any, user: str = "",
           seat: Any = None) -> None:
    """A hand's draw/stand decision or a seat input (chemin de fer, baccarat en banque);
    with `seat`, only the hand's own player may give a draw decision."""
    assert d.banking is not None
    move()
    d.banking.decide(str(name), value, user=user, seat=seat)


def stake(d: Desk, move: Move, seat: Any, amount: Any) -> None:
    assert d.banking is not None
    move()
    d.banking.stake(seat, amount)


def banco(d: Desk, move: Move, seat: Any) -> None:
    assert d.banking is not None
    move()
    d.banking.banco(seat)


def accept_stakes(d: Desk, move: Move, amount: Any) -> None:
    assert d.banking is not None
    move()
    d.banking.accept_stakes(amount)


def report_misplaced(d: Desk, move: Move, detail: str = "") -> None:
    """The dealer put cards on the wrong boxes: the shoe order stands; show the layout."""
    move()
    assert d.round is not None
    layout = d.round.layout()
    d.round.flags.append({"kind": "misplaced_cards", "detail": detail})
    d.emit("irregularity", kind="misplaced_cards",
           detail=f"cards restored to the shoe order {layout}; supervisor to confirm",
           layout=layout)


def report_face_up(d: Desk, move: Move, code: str | None = None) -> None:
    """The dealer saw a card come out face up, on a shoe that cannot tell (Bee-Tek,
    barcode): by default the round's last card. A profile that keeps face-up cards notes
    it; any other remedy holds the table for the supervisor (void, or resume with it)."""
    rnd = d.round
    assert rnd is not None
    dealt = [c.code for hand in rnd.hands.values() for c in hand]
    try:
        card = parse_card(code).code if code else dealt[-1]
    except CardCodeError as err:
        raise refuse("not_a_card", "invalid_args") from err
    move()
    if d.profile.face_up_card == "valid":
        d.holds.note("face_up_card", f"{card} came out face up (reported by the dealer); it "
                     f"stays valid", code=card, reported=True)
        return
    d.holds.problem("face_up_card", f"{card} came out face up (reported by the dealer); "
                    f"profile remedy: {d.profile.face_up_card}", code=card, reported=True)


def report_unread(d: Desk, move: Move, detail: str = "") -> None:
    """The dealer saw a card leave the shoe that was never read."""
    move()
    shoe = d.shoe
    if shoe is not None:
        shoe.reads += 1
        shoe.inventory.unidentified += 1
    d.holds.problem("unreadable_card", "a card left the shoe without a read"
                    + (f" ({detail})" if detail else "") + "; enter its code or void the round",
                    card_index=shoe.reads - 1 if shoe is not None else None, unread=True)


def cut_card(d: Desk, move: Move) -> None:
    move()
    d.shoes.cut_card()


def confirm_result(d: Desk, move: Move) -> None:
    """The dealer confirms the result shown for the last round (recorded, changes nothing)."""
    move()
    d.emit("result_confirmed")


def shoe_empty(d: Desk, move: Move) -> None:
    d.shoes.empty(move)


def count_done(d: Desk, move: Move) -> None:
    """The dealer has read the whole rest back through the shoe."""
    move()
    d.shoes.count_done()


def call_supervisor(d: Desk, move: Move, user: str = "") -> None:
    """The dealer asks for a supervisor at the table; dealing goes on. The alarm's text is
    who called."""
    move()
    d.emit("alarm", source="dealer", code="supervisor_called", text=user, severity="warning")


# ---------------------------------------------------------------- the supervisor's
def hold(d: Desk, move: Move, note: str = "") -> None:
    move()
    d.holds.problem("hold", note or "supervisor hold", **({"note": note} if note else {}))


def demo_round(d: Desk, move: Move) -> None:
    move()
    assert d.shoe is not None
    d.shoe.demo_left += 1


def switch_mode(d: Desk, move: Move, mode: str) -> None:
    try:
        profile = d.profile.with_mode(mode)
    except (ValueError, ProfileError) as err:
        log.info("mode %s refused: %s", mode, err)
        raise refuse("no_such_mode") from err
    move()
    d.profile = profile
    d.emit("mode_changed", mode=mode)


# ---------------------------------------------------------------- the manager's
def change_profile(d: Desk, move: Move, profile: str, text: str | None = None) -> None:
    """A new profile, only between shoes; the command carries the profile's text, so the
    journal keeps exactly what was loaded."""
    if not text:
        raise refuse("profile_unreadable", "invalid_args")
    try:
        new = parse_profile(tomllib.loads(text), profile,
                            hashlib.sha256(text.encode("utf-8")).hexdigest())
    except (tomllib.TOMLDecodeError, ProfileError) as err:
        log.info("profile %s refused: %s", profile, err)
        raise refuse("profile_unreadable", "invalid_args") from err
    if new.game != d.profile.game:
        log.info("profile %s refused: it is for %s", new.name, new.game)
        raise refuse("profile_other_game", "invalid_args")
    move()
    d.profile = new
    d.profile_text = text           # snapshots keep it: a restart deals the same rules
    d.emit("profile_changed", profile=new.name, profile_sha256=new.sha256)


def accept_software(d: Desk, move: Move, software: str = "") -> None:
    """A manager accepts software that is not on the approved list; the service held the
    table until then. Nothing at the table changes: the override records who, why and
    which software (its SHA-256)."""
    if not software:
        raise CommandRefused("accept_software: the software's SHA-256 did not come with the "
                             "command", code="invalid_args")
    move()


# ---------------------------------------------------------------- the service's
def new_shoe(d: Desk, move: Move, cut_position: int | None = None, demo_rounds: int = 0,
             shuffler: bool = False, software: str = "", table: str = "",
             simulator: bool | None = None) -> None:
    p = d.profile
    if not isinstance(demo_rounds, int) or demo_rounds < 0:
        raise refuse("demo_whole_number", "invalid_args")
    if demo_rounds > p.demo_rounds_max:
        raise refuse("demo_too_many", n=p.demo_rounds_max)
    if p.continuous_shuffler and cut_position is not None:
        raise refuse("no_cut_card")
    move()
    d.shoes.new(cut_position=cut_position, demo_rounds=demo_rounds, shuffler=bool(shuffler),
                software=software, table=table, simulator=simulator)


def abandon_shoe(d: Desk, move: Move) -> None:
    """The shoe's devices are gone (e.g. the embedded simulator after a restart): a round in
    progress cannot be reconciled, so it is void, and the shoe ends."""
    in_round, ended = d.round_open(), d.where() == SHOE_ENDED
    move()
    if in_round:
        d.rounds.void("devices_lost")
    if not ended:
        d.shoes.over("devices_lost", move=False)


HANDLERS: dict[str, Callable[..., None]] = {
    "confirm_layout": confirm_layout, "enter_card": enter_card, "burn_card": burn_card,
    "remove_card": remove_card, "return_reads": return_reads, "accept_count": accept_count,
    "reject_count": reject_count, "accept_reads": accept_reads,
    "discard_reads": discard_reads, "resume": resume, "void_round": void_round,
    "end_shoe": end_shoe, "change_shoe": end_shoe, "open_bets": open_bets,
    "house_burn": house_burn, "confirm_house_burn": confirm_house_burn,
    "withdraw_house_burn": withdraw_house_burn, "declare_invalid": declare_invalid,
    "start_round": open_bets, "close_bets": close_bets, "stake": stake, "banco": banco,
    "accept_stakes": accept_stakes, "decide": decide, "reveal": reveal,
    "report_misplaced": report_misplaced, "report_face_up": report_face_up,
    "report_unread": report_unread, "cut_card": cut_card, "confirm_result": confirm_result,
    "shoe_empty": shoe_empty, "count_done": count_done, "call_supervisor": call_supervisor,
    "hold": hold, "demo_round": demo_round, "switch_mode": switch_mode,
    "change_profile": change_profile, "accept_software": accept_software,
    "new_shoe": new_shoe, "abandon_shoe": abandon_shoe,
}
