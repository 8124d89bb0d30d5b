"""Apply one input (device event or command) to the table: the single entry to the machine.

Dealer and supervisor commands are checked here against the table's state; a command that does
not apply raises CommandRefused with the reason and changes nothing. Every supervisor action is
recorded as an `override` event with user, role, reason, and the table before and after.
"""
from __future__ import annotations

from typing import Any, Callable

from controller.cards import CardCodeError, parse_card
from controller.errors import CommandRefused
from controller.roles import OVERRIDE_ACTIONS as OVERRIDES
from controller.table import Table, TableState



def apply_input(table: Table, inp: dict) -> None:
    kind = inp["type"]
    if kind == "card":
        table.on_card(inp["code"], **inp.get("flags", {}))
    elif kind == "cut_card":
        table.on_cut_card()
    elif kind == "read_failed":
        if table.shoe is not None:
            table.shoe.inventory.unidentified += 1
        table.irregular(kind="unreadable_card", detail=f"the shoe could not read a card "
                        f"({inp.get('reason', 'no reason given')}); enter its code or void the round")
    elif kind == "multiple":
        table.emit("irregularity", kind="multiple_cards",
                   detail=f"{inp['count']} cards drawn together; assigned top first in read order")
    elif kind == "alarm":
        _alarm(table, inp)
    elif kind == "warning":
        table.emit("alarm", source=inp.get("device", ""), code=inp.get("code", ""),
                   text=inp.get("text", ""), severity="warning")
    elif kind == "link_lost":
        table.emit("alarm", source=inp.get("device", ""), code="link_lost",
                   text=inp.get("reason", ""), severity="error")
        table.irregular(kind="link_lost", detail=f"{inp.get('device', 'device')} link lost: "
                        f"{inp.get('reason', '')}; reads that arrive are kept for the supervisor")
    elif kind == "link_back":
        table.emit("alarm", source=inp.get("device", ""), code="link_back", text="", severity="info")
    elif kind == "shuffled":
        table.shuffled(count=inp["count"])
    elif kind == "identity":
        # the device's own word on what it is: kept with the shoe's record (standards §1.6)
        table.emit("device_identity", device=inp.get("device", ""), model=inp.get("model", ""),
                   serial=inp.get("serial", ""), firmware=inp.get("firmware", ""))
    elif kind == "remainder":
        _reconcile(table, inp)
    elif kind == "command":
        run_command(table, inp)
    else:
        raise CommandRefused(f"unknown input type {kind!r}")


def _reconcile(table: Table, inp: dict) -> None:
    """The undealt rest of an ended shoe, counted card by card (by the shuffler as the cards go
    back): burns + dealt + removed + rest must be the shoe exactly (standards §6 item 37)."""
    if table.shoe is None or table.state != TableState.SHOE_ENDED:
        raise CommandRefused("a shoe's remainder is counted only after the shoe has ended")
    rest = [code for code, n in inp.get("composition", {}).items() for _ in range(int(n))]
    problems = table.shoe.inventory.reconcile(rest)
    inv = table.shoe.inventory
    # counts only: the identities of cards that were never dealt are not published
    table.emit("reconciliation", ok=not problems, burned=len(inv.by_place["burn"]),
               dealt=len(inv.by_place["hand"]), removed=len(inv.by_place["removed"]),
               remainder=len(rest), differences=len(problems))
    if problems:
        table.emit("alarm", source="inventory", code="reconciliation",
                   text=f"{len(problems)} card(s) do not reconcile: " + "; ".join(problems[:5]),
                   severity="error")


def _alarm(table: Table, inp: dict) -> None:
    code = str(inp.get("code", ""))
    table.emit("alarm", source=inp.get("device", ""), code=code, text=inp.get("text", ""),
               severity="error")
    if code.upper() == "EMPTY":
        table.shoe_empty()
    elif table.state != TableState.HOLD:
        table.irregular(kind="device_alarm", detail=f"{inp.get('device', 'device')} alarm {code}: "
                        f"{inp.get('text', '')}")


def run_command(table: Table, inp: dict) -> None:
    action = inp["action"]
    handler = HANDLERS.get(action)
    if handler is None:
        raise CommandRefused(f"unknown action {action!r}")
    if action in OVERRIDES and not str(inp.get("reason", "")).strip():
        raise CommandRefused(f"{action} needs a reason")
    before = _summary(table)
    args = dict(inp.get("args", {}))
    if action == "decide":
        args.setdefault("user", inp.get("user", ""))
    handler(table, **args)
    if action in OVERRIDES:
        table.emit("override", user=inp.get("user", ""), role=inp.get("role", ""), action=action,
                   args=inp.get("args", {}), reason=inp.get("reason", ""), before=before,
                   after=_summary(table))


def _summary(table: Table) -> dict:
    d: dict[str, Any] = {"state": table.state}
    if table.round is not None:
        d["round"] = table.round.number
        d["hands"] = {k: [c.code for c in v] for k, v in table.round.hands.items()}
    if table.hold_info:
        d["hold"] = table.hold_info["problems"][-1]["kind"]
    return d


def _need_hold(table: Table, *kinds: str) -> dict:
    if table.state != TableState.HOLD or not table.hold_info:
        raise CommandRefused(f"the table is not on hold (it is {table.state})")
    last = table.hold_info["problems"][-1]
    if kinds and last["kind"] not in kinds:
        raise CommandRefused(f"the hold is for {last['kind']}, not {' or '.join(kinds)}")
    return last


# ---------------------------------------------------------------- dealer and system actions
def _new_shoe(table: Table, cut_position: int | None = None, demo_rounds: int = 0,
              shuffler: bool = False, software: str = "") -> None:
    table.new_shoe(cut_position=cut_position, demo_rounds=demo_rounds, software=software)
    if shuffler:
        table.shuffle()
    else:
        table.load()


def _open_bets(table: Table) -> None:
    if table.state in (TableState.LOADED, TableState.BURNING):
        # RULES.md §3.1: a round started before the new-shoe burn makes the shoe invalid
        table.shoe.invalid = True
        table.irregular(kind="missed_shoe_burn", detail="a round was started before the "
                        "shoe-start burn was done: the shoe is invalid and must be replaced; "
                        "everything read so far stays in the record")
        return
    table.open_bets()


def _close_bets(table: Table) -> None:
    table.close_bets()


def _shoe_empty(table: Table) -> None:
    table.shoe_empty()


def _confirm_result(table: Table) -> None:
    """The dealer confirms the result shown for the last round (recorded, changes nothing)."""
    if table.round is None or table.round_open():
        raise CommandRefused("no finished round to confirm")
    table.emit("result_confirmed")


def _change_profile(table: Table, profile: str) -> None:
    """A new profile, only between shoes (standards §1 item 7); the journal keeps both."""
    from controller.profile import ProfileError, load_profile_for_use as load_profile
    if table.state not in (TableState.CLOSED, TableState.SHOE_ENDED):
        raise CommandRefused("the profile changes only between shoes")
    try:
        new = load_profile(profile)
    except ProfileError as err:
        raise CommandRefused(str(err), code="invalid_args") from err
    if new.game != table.profile.game:
        raise CommandRefused(f"{new.name} is a {new.game} profile; this table deals "
                             f"{table.profile.game}", code="invalid_args")
    table.profile = new
    table.emit("profile_changed", profile=new.name, profile_sha256=new.sha256)


def _report_unread(table: Table, detail: str = "") -> None:
    """The dealer saw a card leave the shoe that was never read (e.g. during a link outage)."""
    if table.shoe is not None:
        table.shoe.inventory.unidentified += 1
    table.irregular(kind="unreadable_card", detail="a card left the shoe without a read"
                    + (f" ({detail})" if detail else "") + "; enter its code or void the round")


def _cut_card(table: Table) -> None:
    """The dealer reports the cut card out (for shoes whose protocol does not send it)."""
    if table.shoe is None:
        raise CommandRefused("no shoe is loaded")
    table.on_cut_card()


def _abandon_shoe(table: Table) -> None:
    """The shoe's devices are gone (e.g. the embedded simulator after a restart): a round in
    progress cannot be reconciled, so it is void, and the shoe ends."""
    if table.round_open():
        if table.state == TableState.HOLD:
            table.hold_info = None
        table.void_round(reason="devices_lost", end_shoe="devices_lost")
    elif table.state not in (TableState.SHOE_ENDED, TableState.CLOSED):
        if table.state == TableState.HOLD:
            table.hold_info = None
        table.end_shoe(reason="devices_lost")


def _report_misplaced(table: Table, detail: str = "") -> None:
    """The dealer put cards on the wrong boxes: the shoe order stands; show the layout."""
    if table.round is None:
        raise CommandRefused("no round in progress")
    layout = {k: [c.code for c in v] for k, v in table.round.hands.items()}
    table.round.flags.append({"kind": "misplaced_cards", "detail": detail})
    table.emit("irregularity", kind="misplaced_cards",
               detail=f"cards restored to the shoe order {layout}; supervisor to confirm",
               layout=layout)


# ---------------------------------------------------------------- supervisor overrides
def _hold(table: Table, note: str = "") -> None:
    table.hold(reason=note or "supervisor hold")


def _resume(table: Table) -> None:
    table.resume_table()


def _void_round(table: Table) -> None:
    if not table.round_open():
        raise CommandRefused("no round in progress to void")
    if table.state == TableState.HOLD:
        table.hold_info = None
    table.void_round(reason="supervisor")


def _enter_card(table: Table, code: str) -> None:
    """The code of a card the shoe could not read, entered by the supervisor."""
    _need_hold(table, "unreadable_card")
    try:
        card = parse_card(code)
    except CardCodeError as err:
        raise CommandRefused(str(err)) from err
    if table.shoe.inventory.problem(card):
        raise CommandRefused(table.shoe.inventory.problem(card))
    table.shoe.inventory.unidentified = max(0, table.shoe.inventory.unidentified - 1)
    table.resume_table()
    table.on_card(card.code, entered=True)


def _burn_card(table: Table) -> None:
    """Burn the card that caused the hold (drawn when none was due, foreign, face up)."""
    last = _need_hold(table, "card_not_due", "foreign_card", "face_up_card", "card_while_betting")
    code = last.get("code")
    if code and last["kind"] != "foreign_card":
        table.shoe.inventory.move(code, "removed", "burn")
    table.emit("burned", code=code, cause=last["kind"])
    table.resume_table()


def _remove_card(table: Table, code: str | None = None) -> None:
    last = _need_hold(table, "foreign_card")
    table.emit("removed", code=code or last.get("code"), cause="foreign_card")
    table.resume_table()


def _confirm_layout(table: Table) -> None:
    if table.round is None:
        raise CommandRefused("no round whose layout could be confirmed")
    table.emit("layout_confirmed", hands={k: [c.code for c in v]
                                          for k, v in table.round.hands.items()})


def _end_shoe(table: Table, void: bool = False) -> None:
    """End the shoe between rounds; with `void`, a round in progress is voided first."""
    rnd = table.round
    held_for = table.hold_info["problems"][-1]["kind"] if table.hold_info else None
    if held_for == "integrity_alarm" and table.shoe is not None:
        table.shoe.invalid = True      # dealt unshuffled or replayed: not an authorised game
    if table.round_open() and (any(rnd.hands.values()) or rnd.burned_before):
        if not void:
            raise CommandRefused("a round is in progress: finish or void it first "
                                 "(or end the shoe with void=true)")
        table.hold_info = None
        reason = "invalid" if table.shoe is not None and table.shoe.invalid else "supervisor"
        table.void_round(reason="shoe ended by the supervisor", end_shoe=reason)
        return
    if table.round_open():
        table.shoe.rounds -= 1     # opened but not a card dealt: the round never happened
        table.emit("round_cancelled", reason="shoe ended before its first card")
    if table.state == TableState.HOLD:
        table.hold_info = None
    table.end_shoe(reason="invalid" if table.shoe is not None and table.shoe.invalid
                   else "supervisor")


def _accept_count(table: Table) -> None:
    _need_hold(table, "count_mismatch")
    table.resume_state = TableState.LOADED.value
    table.resume_table()


def _reject_count(table: Table) -> None:
    """The shoe is not accepted: back to shuffling for a new shuffle and count."""
    _need_hold(table, "count_mismatch")
    table.resume_state = TableState.SHUFFLING.value
    table.resume_table()


def _demo_round(table: Table) -> None:
    shoe = table.shoe
    if shoe is None or shoe.rounds - shoe.demo_left > 0 and shoe.rounds > 0:
        raise CommandRefused("demonstration rounds are played only when a shoe starts")
    if shoe.demo_left + shoe.rounds >= table.profile.demo_rounds_max:
        raise CommandRefused(f"at most {table.profile.demo_rounds_max} demonstration rounds")
    shoe.demo_left += 1


def _switch_mode(table: Table, mode: str) -> None:
    if table.round_open():
        raise CommandRefused("the mode changes only between rounds")
    try:
        table.profile = table.profile.with_mode(mode)
    except ValueError as err:
        raise CommandRefused(str(err)) from err
    table.emit("mode_changed", mode=mode)


def _decide(table: Table, name: str, value: Any, user: str = "") -> None:
    """A hand's draw/stand decision or a seat input (chemin de fer, baccarat en banque)."""
    table.take_decision(str(name), value, user=user)


HANDLERS: dict[str, Callable[..., None]] = {
    "new_shoe": _new_shoe, "open_bets": _open_bets, "close_bets": _close_bets,
    "start_round": _open_bets, "shoe_empty": _shoe_empty, "cut_card": _cut_card,
    "report_unread": _report_unread,
    "abandon_shoe": _abandon_shoe, "confirm_result": _confirm_result,
    "change_profile": _change_profile, "report_misplaced": _report_misplaced,
    "hold": _hold, "resume": _resume, "void_round": _void_round, "enter_card": _enter_card,
    "burn_card": _burn_card, "remove_card": _remove_card, "confirm_layout": _confirm_layout,
    "end_shoe": _end_shoe, "change_shoe": _end_shoe, "accept_count": _accept_count,
    "reject_count": _reject_count, "demo_round": _demo_round, "switch_mode": _switch_mode,
    "decide": _decide,
}
