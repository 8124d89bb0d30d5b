"""The table's state in plain words for the supervisor console: pure functions, no Textual.

Each function takes a part of the controller's "state" result (see the control API contract)
and returns rich Text or a string. They never raise on a missing or odd field: a console must
keep showing what it can.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from rich.text import Text


@dataclass(frozen=True)
class ActionInfo:
    """An override as the console offers it: its key, its title and what it does."""
    name: str
    key: str
    title: str
    help: str


ACTIONS: Mapping[str, ActionInfo] = {a.name: a for a in (
    ActionInfo("hold", "h", "Hold", "Stop the table: no card or bet is taken until it resumes."),
    ActionInfo("resume", "r", "Resume", "Go on from where the table stopped, once the cause "
               "has been dealt with."),
    ActionInfo("void_round", "v", "Void round", "Cancel the round in progress; every bet on it "
               "is returned."),
    ActionInfo("enter_card", "e", "Enter card", "Type the code of the card the shoe could not "
               "read (look at the card on the layout); the round goes on with it."),
    ActionInfo("burn_card", "b", "Burn card", "Burn the card that caused the hold (drawn when "
               "none was due, face up, or while bets were open) and go on."),
    ActionInfo("remove_card", "x", "Remove card", "Take a card that does not belong to this "
               "shoe out of play and go on."),
    ActionInfo("confirm_layout", "l", "Confirm layout", "Confirm the cards on the layout as "
               "the shoe order places them."),
    ActionInfo("end_shoe", "s", "End shoe", "End this shoe now (no round may be in progress)."),
    ActionInfo("change_shoe", "c", "Change shoe", "End this shoe so that a new one is loaded."),
    ActionInfo("accept_count", "a", "Accept count", "Accept the shuffler's card count and load "
               "the shoe anyway."),
    ActionInfo("reject_count", "j", "Reject count", "Reject the shuffler's card count: the shoe "
               "is shuffled and counted again."),
    ActionInfo("demo_round", "d", "Demo round", "Play one more demonstration round at the start "
               "of the shoe."),
    ActionInfo("switch_mode", "m", "Switch mode", "Change the paytable mode (between rounds)."),
    ActionInfo("accept_reads", "t", "Accept reads", "The shoe's link is back: the cards it read "
               "while it was down are the cards on the table; deal them in read order."),
    ActionInfo("discard_reads", "z", "Discard reads", "The shoe's link is back, but the cards it "
               "read meanwhile are not trusted: take them out of play, void the round and end "
               "the shoe."),
    ActionInfo("decide", "k", "Decide", "Give a decision the game is waiting for (its name and "
               "value)."),
    ActionInfo("reveal", "w", "Reveal", "Show the last round's result to the table (profiles "
               "that reveal on the dealer's word)."),
)}

#: argument name → what to type (placeholders of the action form)
ARG_HINTS: Mapping[str, str] = {
    "code": "card code, e.g. 9H, TD, AS, 10c",
    "note": "a note (optional)",
    "mode": "mode name from the profile, e.g. default",
    "name": "decision name, e.g. player_draw",
    "value": "true, false, a number or text",
    "seat": "seat number, e.g. 3 (optional)",
    "void": "true to void a round in progress and end the shoe (optional)",
}

#: problem kind → what happened, in plain words (the controller's detail follows)
PROBLEMS: Mapping[str, str] = {
    "unreadable_card": "The shoe could not read a card.",
    "card_not_due": "A card left the shoe when none was due.",
    "foreign_card": "A card that does not belong to this shoe was read.",
    "face_up_card": "A card came out of the shoe face up.",
    "card_while_betting": "A card was drawn while bets were still open.",
    "count_mismatch": "The shuffler's card count is not what this shoe must hold.",
    "multiple_cards": "Several cards left the shoe together.",
    "misplaced_cards": "The dealer reported cards placed on the wrong box.",
    "device_alarm": "A device raised an alarm.",
    "impossible_card": "The shoe reported a card code that cannot exist.",
    "card_without_shoe": "A card was read while no shoe was loaded.",
    "internal_error": "The controller met an error it did not expect (tell the technician).",
    "hold": "The table was put on hold.",
    "link_lost": "The link to a device was lost; reads that arrive are kept for you to accept "
                 "or discard once it is back.",
    "restart_review": "The controller restarted during a round: check the cards on the table "
                      "against the record before dealing goes on.",
    "integrity_alarm": "The cards come out in an order a shuffled shoe does not give "
                       "(factory order, or a repeat of the last shoe).",
    "missed_shoe_burn": "A round was started before the new shoe was burned: the shoe is invalid.",
    "false_coup": "A hand drew or stood against the drawing rules (false coup).",
}

#: the hands of the baccarat family, in the order the results list them
HANDS = ("player", "banker", "right", "left", "bank")

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(value: Any) -> str:
    """Text safe for the terminal: control characters (escapes, newlines) become spaces."""
    return _CONTROL.sub(" ", str(value))


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def card_text(code: Any) -> Text:
    """A card code, red for hearts and diamonds."""
    code = clean(code)
    return Text(code, style="bold red" if code[-1:].upper() in ("H", "D") else "bold")


def header_text(state: Mapping[str, Any]) -> Text:
    """Table, profile, state, shoe and cards out on one or two lines."""
    profile = _dict(state.get("profile"))
    shoe = _dict(state.get("shoe"))
    out = Text()
    out.append(f"Table {clean(state.get('table', '?'))}", style="bold")
    out.append(f"   Profile {clean(profile.get('name', '?'))} ({clean(profile.get('game', '?'))}"
               f", mode {clean(profile.get('mode', '?'))}, {clean(profile.get('decks', '?'))} "
               "decks)")
    table_state = clean(state.get("state", "?"))
    out.append("   State ")
    out.append(table_state, style="bold reverse red" if table_state == "hold" else "bold")
    if shoe:
        out.append(f"\nShoe {clean(shoe.get('number', '?'))}: "
                   f"{clean(shoe.get('cards_out', '?'))} cards out, "
                   f"{clean(shoe.get('rounds', '?'))} rounds")
        if shoe.get("cut_seen"):
            out.append(", cut card seen (last round of the shoe)", style="yellow")
    else:
        out.append("\nNo shoe loaded")
    feed = feed_text(state.get("feed"))
    if feed.plain:
        out.append("\n")
        out.append_text(feed)
    return out


def feed_text(feed: Any) -> Text:
    """The floor feed's link when the table has one: up to date, or how far behind and why."""
    feed = _dict(feed)
    if not feed:
        return Text()
    behind = feed.get("behind") or 0
    where = clean(feed.get("broker", "?"))
    if not behind and feed.get("connected"):
        return Text(f"Floor feed {where}: up to date", style="dim")
    out = Text(f"Floor feed {where}: behind by {clean(behind)} event(s)", style="bold yellow")
    if feed.get("problem"):
        out.append(f" ({clean(feed['problem'])})", style="yellow")
    return out


def prompt_text(state: Mapping[str, Any]) -> str:
    """What the dealer is asked to do now."""
    return clean(state.get("prompt") or "(no prompt)")


def _slot_of_next(next_slot: str, hands: Iterable[str]) -> tuple[str, int | None] | None:
    """(hand, 1-based position or None for 'the next one') that `next_slot` names."""
    names = list(hands)
    if next_slot in names:
        return next_slot, None
    if next_slot.endswith("_third") and next_slot[:-len("_third")] in names:
        return next_slot[:-len("_third")], 3
    match = re.fullmatch(r"([A-Z])(\d)", next_slot)
    if match:
        for name in names:
            if name != "game_card" and name[0].upper() == match.group(1):
                return name, int(match.group(2))
    return None


def _slot_label(hand: str, index: int) -> str:
    return "GAME" if hand == "game_card" else f"{hand[0].upper()}{index}"


def round_text(rnd: Any, hold: Any = None) -> Text:
    """The round being dealt: each card in its slot, the slot due next marked.

    On hold the table deals nothing, so the slot due is the one it goes back to (`resume_to`).
    """
    rnd = _dict(rnd)
    if not rnd:
        return Text("No round in progress.", style="dim")
    out = Text()
    out.append(f"Round {clean(rnd.get('number', '?'))}", style="bold")
    if rnd.get("demo"):
        out.append("  DEMONSTRATION (no bets)", style="yellow")
    burned = _list(rnd.get("burned_before"))
    if burned:
        out.append("\nBurned before this round: ")
        for code in burned:
            out.append_text(card_text(code))
            out.append(" ")
    hands = {k: _list(v) for k, v in _dict(rnd.get("hands")).items() if isinstance(v, list)}
    next_slot = clean(rnd.get("next") or "")
    resume_to = clean(_dict(hold).get("resume_to") or "")
    after_hold = not next_slot and resume_to.startswith("dealing.")
    if after_hold:
        next_slot = resume_to[len("dealing."):]
    due = _slot_of_next(next_slot, hands) if next_slot else None
    for hand, cards in hands.items():
        out.append(f"\n{clean(hand).upper().replace('_', ' '):<10}")
        for i, code in enumerate(cards, start=1):
            out.append(f"{_slot_label(hand, i)} ", style="dim")
            out.append_text(card_text(code))
            out.append("   ")
        if due and due[0] == hand:
            label = _slot_label(hand, due[1] or len(cards) + 1)
            out.append(f"{label} ▶ next", style="bold black on yellow")
    decisions = _dict(_dict(rnd.get("hands")).get("decisions"))
    if decisions:
        made = ", ".join(f"{clean(k)}={clean(v)}" for k, v in decisions.items())
        out.append(f"\nDecisions: {made}")
    if next_slot.startswith("decide:"):
        out.append(f"\nWaiting for the decision {next_slot[len('decide:'):]} (action Decide)",
                   style="yellow")
    elif next_slot:
        out.append(f"\nNext card{' once the hold is cleared' if after_hold else ''}: "
                   f"{next_slot}")
    elif hold:
        out.append("\nNo card is taken while the table is on hold.")
    elif hands:
        out.append("\nAll cards dealt.")
    return out


def problem_text(problem: Any) -> str:
    """One problem of a hold: what it is in plain words, then the controller's detail."""
    problem = _dict(problem)
    kind = clean(problem.get("kind", "unknown"))
    words = PROBLEMS.get(kind, f"Problem: {kind.replace('_', ' ')}.")
    detail = clean(problem.get("detail") or "")
    extra = f" Card {clean(problem['code'])}." if problem.get("code") else ""
    return f"{words}{extra}" + (f" ({detail})" if detail else "")


def on_hold(state: Mapping[str, Any]) -> bool:
    """True when the table is on hold (its state says so, or it reports a hold)."""
    return state.get("state") == "hold" or bool(state.get("hold"))


def hold_actions(hold: Any) -> list[str]:
    """The overrides that clear the hold, as the controller lists them (known ones only)."""
    return [a for a in _list(_dict(hold).get("actions")) if isinstance(a, str) and a in ACTIONS]


def hold_text(hold: Any) -> Text:
    """Why the table is on hold and what clears it."""
    hold = _dict(hold)
    out = Text("TABLE ON HOLD: dealing is stopped until a supervisor clears it.\n",
               style="bold")
    problems = _list(hold.get("problems")) or [{}]
    for n, problem in enumerate(problems, start=1):
        out.append(f"  Problem {n}: {problem_text(problem)}\n")
    if hold.get("resume_to"):
        out.append(f"  Once cleared the table goes back to {clean(hold['resume_to'])}.\n")
    actions = hold_actions(hold)
    if actions:
        out.append("To clear it, use one of:\n", style="bold")
        for name in actions:
            info = ACTIONS[name]
            out.append(f"  [{info.key.upper()}] {info.title}", style="bold")
            out.append(f": {info.help}\n")
    else:
        out.append("Deal with the cause, then Resume [R].\n", style="bold")
    out.append("Every action asks for a reason, your name and your PIN.", style="italic")
    return out


def alarms_text(alarms: Any) -> Text:
    """Device alarms and warnings, one line each."""
    items = [a for a in _list(alarms) if isinstance(a, dict)]
    if not items:
        return Text("No alarms.", style="dim")
    out = Text()
    for i, alarm in enumerate(items):
        severity = clean(alarm.get("severity", "error"))
        if i:
            out.append("\n")
        out.append(f"{severity.upper():<8}", style=SEVERITY_STYLE.get(severity, "bold"))
        out.append(f"{clean(alarm.get('source', '?'))} {clean(alarm.get('code', ''))}: "
                   f"{clean(alarm.get('text', ''))}")
    return out


def _hand_part(result: Mapping[str, Any], hand: str) -> str:
    cards = " ".join(clean(c) for c in _list(result.get(hand)))
    total = result.get(f"{hand}_total")
    return f"{hand[0].upper()} {cards}" + ("" if total is None else f" = {clean(total)}")


def history_line(result: Any) -> str:
    """One finished round on one line, e.g. `#12  P 9H 5C KD = 4   B 2S 3D = 5   BANKER`."""
    result = _dict(result)
    parts = []
    if "game_card" in result:
        parts.append(f"GAME {clean(result.get('game_card') or '-')}")
        parts += [_hand_part(result, h) for h in ("andar", "bahar")]
    else:
        # hands are the lists with a total, or known hands (a void round may have no totals);
        # other lists (burned_before, irregularities, naturals) are not hands
        parts += [_hand_part(result, h) for h, v in result.items()
                  if isinstance(v, list) and (h in HANDS or f"{h}_total" in result)]
    if result.get("void"):
        outcome = "VOID" + (f" ({clean(result['reason'])})" if result.get("reason") else "")
    elif result.get("winner"):
        outcome = clean(result["winner"]).upper()
    else:
        sides = [f"{k[:-len('_winner')]}: {clean(v).upper()}" for k, v in result.items()
                 if k.endswith("_winner") and v]
        outcome = ", ".join(sides) or "-"
    demo = "  (demo)" if result.get("demo") else ""
    return f"#{clean(result.get('round', '?'))}  " + "   ".join(parts + [outcome]) + demo


def roads_panel_text(roads: Any, width: int = 30) -> Text:
    """The big road and bead plate of the current shoe, and its counts."""
    from controller.display.terminal import roads_text
    roads = _dict(roads)
    if not roads.get("bead_plate"):
        return Text("No result yet in this shoe.", style="dim")
    return roads_text(roads, width, parts=("big_road", "bead_plate"))


def history_text(last_rounds: Any) -> Text:
    """The last rounds (at most 10), newest last."""
    rounds = [r for r in _list(last_rounds) if isinstance(r, dict)][-10:]
    if not rounds:
        return Text("No rounds yet in this shoe.", style="dim")
    return Text("\n".join(history_line(r) for r in rounds))
