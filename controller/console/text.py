"""The table's state in plain words for the console: pure functions, no Textual.

Each function takes a part of the controller's "state" result (see the control API contract)
and returns rich Text or a string, in the reader's `language`, every sentence from the one
message catalogue (controller.words). They never raise on a missing or odd field: a console
must keep showing what it can. What the table names by code (a state, a step, a kind of hold,
an action) is always written in words, never as the code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from rich.text import Text

from controller.access import roles
from controller.words import Words, render
from controller.words.catalogue import MESSAGES
from controller.words.fields import card as card_name, field, word
from controller.words.problems import dealer_words, problem_words


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
    ActionInfo("return_reads", "y", "Give reads back", "The cards read while the table was "
               "on hold were not dealt from this shoe: they go back, and nothing of them "
               "counts in the shoe."),
    ActionInfo("decide", "k", "Decide", "Give a decision the game is waiting for (its name and "
               "value)."),
    ActionInfo("reveal", "w", "Reveal", "Show the last round's result to the table (profiles "
               "that reveal on the dealer's word)."),
    ActionInfo("open_bets", "o", "Open bets", "Open the bets for the next round."),
    ActionInfo("close_bets", "n", "Close bets", "Close the bets: no more bets; dealing starts."),
    ActionInfo("report_misplaced", "i", "Misplaced cards", "You placed cards on the wrong box."),
    ActionInfo("report_face_up", "u", "Face-up card", "A card came out face up."),
    ActionInfo("report_unread", "g", "Unread card", "A card left the shoe without a read."),
    ActionInfo("call_supervisor", "f", "Call supervisor", "Ask a supervisor to the table."),
    ActionInfo("house_burn", "p", "House burn", "Announce that the house burns one card at "
               "the start of this round."),
    ActionInfo("confirm_house_burn", "q", "Confirm house burn", "Confirm the house burn the "
               "dealer announced: the next card is burned."),
    ActionInfo("withdraw_house_burn", "0", "Withdraw house burn", "The house burn announced "
               "is not made after all."),
    ActionInfo("declare_invalid", "9", "Declare shoe invalid", "The shoe was dealt without "
               "its burn at the start: end it as invalid."),
)}


def title(name: str, language: str = "en") -> str:
    """An action's title in `language` (the catalogue's, else the console's own)."""
    info = ACTIONS.get(name)
    text = word(f"action.{name}", language)
    return info.title if info is not None and text == word("action.unknown", language) \
        else text


def help_text(name: str, language: str = "en") -> str:
    info = ACTIONS.get(name)
    text = word(f"help.{name}", language)
    return info.help if info is not None and text == word("help.unknown", language) else text


def offered(state: Mapping[str, Any], role: str | None = None) -> list[str]:
    """The actions the console offers now: those that apply to the table as it stands (its
    `actions`, the hold's first), of those the role may take (every known one without a
    role), each once."""
    hold = _dict(state.get("hold"))
    names = [a for a in _list(hold.get("actions")) + _list(state.get("actions"))
             if isinstance(a, str) and a in ACTIONS]
    seen: list[str] = []
    for name in names:
        if name not in seen and (role is None or roles.allowed(role, name)):
            seen.append(name)
    return seen

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


def card_text(code: Any, language: str | None = None) -> Text:
    """A card: its code (or, given a language, its name), red for hearts and diamonds."""
    code = clean(code)
    shown = code if language is None else clean(card_name(code, language))
    return Text(shown, style="bold red" if code[-1:].upper() in ("H", "D") else "bold")


def header_text(state: Mapping[str, Any], language: str = "en") -> Text:
    """Table, profile, state, shoe and cards out on one or two lines."""
    profile = _dict(state.get("profile"))
    shoe = _dict(state.get("shoe"))
    out = Text()
    if state.get("simulator"):
        # simulated devices deal these cards: nobody may take them for a live game
        out.append(f" {word('console.simulator', language)} ", style="bold reverse yellow")
        out.append("  ")
    out.append(clean(word("console.table", language, table=str(state.get("table", "?")))),
               style="bold")
    mode = str(profile.get("mode", "default"))
    # a profile with one paytable has no mode to speak of
    out.append("   " + clean(word("console.profile" if mode != "default" else
                                  "console.profile_one", language,
                                  profile=str(profile.get("name", "?")),
                                  game=profile.get("game", "unknown"), mode=mode,
                                  decks=profile.get("decks", "?"))))
    table_state = clean(state.get("state", "?"))
    out.append(f"   {word('console.state', language)}: ")
    out.append(clean(field("state", table_state, language)),
               style="bold reverse red" if table_state == "hold" else "bold")
    for name in _dict(state.get("conditions")):
        code = f"console.condition.{clean(name)}"
        said = word(code, language) if code in MESSAGES else clean(name).upper()
        out.append(f"  {said}", style="bold reverse red")
    if shoe:
        out.append("\n" + clean(word("console.shoe", language, shoe=shoe.get("number", "?"),
                                     out=shoe.get("cards_out", "?"),
                                     n=shoe.get("rounds", 0))))
        if shoe.get("cut_seen"):
            out.append(", " + word("console.cut_seen", language), style="yellow")
    else:
        out.append("\n" + word("console.no_shoe", language))
    feed = feed_text(state.get("feed"), language)
    if feed.plain:
        out.append("\n")
        out.append_text(feed)
    return out


def feed_text(feed: Any, language: str = "en") -> Text:
    """The floor feed's link when the table has one: up to date, or how far behind and why."""
    feed = _dict(feed)
    if not feed:
        return Text()
    behind = feed.get("behind") or 0
    where = clean(feed.get("broker", "?"))
    # a record or two owed for a moment is a feed in full flow, not one behind
    if (not behind or feed.get("late") is False) and feed.get("connected"):
        return Text(word("console.feed_ok", language, broker=where), style="dim")
    out = Text(clean(word("console.feed_behind", language, broker=where,
                          n=behind if isinstance(behind, int) else 0)), style="bold yellow")
    if feed.get("problem"):
        out.append(f" ({clean(feed['problem'])})", style="yellow")
    return out


def prompt_text(state: Mapping[str, Any], language: str = "en") -> str:
    """What the dealer is asked to do now, in `language`: a service condition (no shoe yet,
    software not accepted) in place of the table's own prompt."""
    words = Words.of(state.get("prompt_words"))
    if words is None:
        return clean(state.get("prompt") or word("console.no_prompt", language))
    text = render(words, language)
    if state.get("simulator"):
        text = f"{word('console.simulator', language)}: {text}"
    return clean(text)


def dealer_hold_text(state: Mapping[str, Any], language: str = "en") -> str:
    """A hold as the dealer is told it (by kind, never a card's identity)."""
    hold = _dict(state.get("hold"))
    problems = [p for p in _list(hold.get("problems")) if isinstance(p, dict)]
    last = problems[-1] if problems else {}
    return clean(render(dealer_words(last.get("kind", "unknown"), last), language))


def _hand_due(step: str, hands: Iterable[str]) -> str | None:
    """The hand the step due deals to (P2 → player, banker_third → banker)."""
    names = list(hands)
    if step in names:
        return step
    if step.endswith("_third") and step[:-len("_third")] in names:
        return step[:-len("_third")]
    match = re.fullmatch(r"([A-Z])\d", step)
    if match:
        for name in names:
            if name != "game_card" and name[0].upper() == match.group(1):
                return name
    return None


def round_text(rnd: Any, hold: Any = None, language: str = "en", game: Any = None) -> Text:
    """The round being dealt, hand by hand, each card named, a card typed by hand marked, and
    the hand due next marked.

    On hold the table deals nothing, so the card due is the one it goes back to (`resume_to`).
    """
    rnd = _dict(rnd)
    if not rnd:
        return Text(word("console.no_round", language), style="dim")
    out = Text()
    out.append(clean(word("console.round", language, n=rnd.get("number", "?"))), style="bold")
    if rnd.get("demo"):
        out.append("  " + word("console.demo", language), style="yellow")
    burned = _list(rnd.get("burned_before"))
    if burned:
        out.append("\n" + word("console.burned_before", language) + " ")
        for code in burned:
            out.append_text(card_text(code, language))
            out.append("  ")
    entered = [c for c in _list(rnd.get("entered")) if isinstance(c, str)]
    hands = {k: _list(v) for k, v in _dict(rnd.get("hands")).items() if isinstance(v, list)}
    next_slot = clean(rnd.get("next") or "")
    resume_to = clean(_dict(hold).get("resume_to") or "")
    after_hold = not next_slot and resume_to.startswith("dealing.")
    if after_hold:
        next_slot = resume_to[len("dealing."):]
    due = _hand_due(next_slot, hands) if next_slot else None
    for hand, cards in hands.items():
        out.append(f"\n{clean(field('hand', hand, language)):<10} ")
        for code in cards:
            out.append_text(card_text(code, language))
            if code in entered:
                entered.remove(code)
                out.append(" " + word("console.entered_mark", language), style="bold magenta")
            out.append("   ")
        if due == hand:
            out.append(f"▶ {word('console.next', language)}", style="bold black on yellow")
    decisions = _dict(_dict(rnd.get("hands")).get("decisions")) or _dict(rnd.get("decisions"))
    if decisions:
        out.append("\n" + clean(word("console.decisions", language, decisions=decisions)))
    if next_slot.startswith("decide:"):
        out.append("\n" + clean(word("console.waiting_decision", language,
                                     decision=next_slot[len("decide:"):])), style="yellow")
    elif next_slot:
        code = "console.next_card_after_hold" if after_hold else "console.next_card"
        out.append("\n" + clean(word(code, language, step=next_slot, game=game or "")))
    elif hold:
        out.append("\n" + word("console.no_card_on_hold", language))
    elif hands:
        out.append("\n" + word("console.all_dealt", language))
    return out


def problem_text(problem: Any, language: str = "en") -> str:
    """One problem of a hold in plain words (the controller's own detail is for the log)."""
    return clean(render(problem_words(_dict(problem)), language))


def on_hold(state: Mapping[str, Any]) -> bool:
    """True when the table is on hold (its state says so, or it reports a hold)."""
    return state.get("state") == "hold" or bool(state.get("hold"))


def hold_actions(hold: Any) -> list[str]:
    """The overrides that clear the hold, as the controller lists them (known ones only)."""
    return [a for a in _list(_dict(hold).get("actions")) if isinstance(a, str) and a in ACTIONS]


def hold_text(hold: Any, language: str = "en", role: str | None = None) -> Text:
    """Why the table is on hold and what clears it: the actions this role may take, or that
    only a supervisor can."""
    hold = _dict(hold)
    out = Text(word("console.hold_title", language) + "\n", style="bold")
    problems = _list(hold.get("problems")) or [{}]
    actions = [a for a in hold_actions(hold) if role is None or roles.allowed(role, a)]
    # who cannot clear it (a dealer) is told it as the dealer's screen tells it: by its kind,
    # with none of the actions that are a supervisor's to take
    mine = role is None or bool(actions) or roles.allowed(role, "resume")
    for n, problem in enumerate(problems, start=1):
        said = problem_words(_dict(problem)) if mine else \
            dealer_words(_dict(problem).get("kind", "unknown"), _dict(problem))
        out.append("  " + clean(word("console.problem_n", language, n=n, problem=said)) + "\n")
    kept = _list(hold.get("queued"))
    if kept:
        out.append("  " + clean(word("console.kept_reads", language, n=len(kept),
                                     cards=[c for c in kept if isinstance(c, str)])) + "\n")
    if hold.get("resume_to"):
        out.append("  " + clean(word("console.goes_back_to", language,
                                     state=str(hold["resume_to"]))) + "\n")
    if actions:
        out.append(word("console.clear_with", language) + "\n", style="bold")
        for name in actions:
            out.append(f"  [{ACTIONS[name].key.upper()}] {title(name, language)}", style="bold")
            out.append(f": {help_text(name, language)}\n")
    elif role is not None and not roles.allowed(role, "resume"):
        out.append(word("console.wait_supervisor", language) + "\n", style="bold")
    else:
        out.append(word("console.clear_by_resume", language) + "\n", style="bold")
    out.append(word("console.asks_pin", language), style="italic")
    return out


def alarms_text(alarms: Any, language: str = "en") -> Text:
    """Device alarms and warnings, one line each; a dealer's call names who calls."""
    items = [a for a in _list(alarms) if isinstance(a, dict)]
    if not items:
        return Text(word("console.no_alarms", language), style="dim")
    out = Text()
    for i, alarm in enumerate(items):
        severity = clean(alarm.get("severity", "error"))
        if i:
            out.append("\n")
        out.append(f"{word(f'severity.{severity}', language):<8}",
                   style=SEVERITY_STYLE.get(severity, "bold"))
        if alarm.get("code") == "supervisor_called":
            out.append(clean(word("console.alarm_called", language,
                                  user=str(alarm.get("text") or "?"))))
            continue
        out.append(clean(word("console.alarm_line", language,
                              device=str(alarm.get("source") or "unknown"),
                              alarm=str(alarm.get("code", "")),
                              text=str(alarm.get("text", "")))))
    return out


def _hand_part(result: Mapping[str, Any], hand: str) -> str:
    cards = " ".join(clean(c) for c in _list(result.get(hand)))
    total = result.get(f"{hand}_total")
    return f"{hand[0].upper()} {cards}" + ("" if total is None else f" = {clean(total)}")


def history_line(result: Any, language: str = "en") -> str:
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
        reason = str(result.get("reason") or "")
        why = word(f"void.{reason}", language) if reason and " " not in reason else reason
        outcome = word("console.void", language) + (f" ({clean(why)})" if why else "")
    elif result.get("winner"):
        outcome = clean(word(f"console.winner.{result['winner']}", language))
    else:
        sides = [f"{field('hand', k[:-len('_winner')], language)}: "
                 f"{word(f'console.winner.{v}', language)}" for k, v in result.items()
                 if k.endswith("_winner") and v]
        outcome = clean(", ".join(sides)) or "-"
    demo = "  " + word("console.demo_short", language) if result.get("demo") else ""
    return f"#{clean(result.get('round', '?'))}  " + "   ".join(parts + [outcome]) + demo


def roads_panel_text(roads: Any, width: int = 30, language: str = "en") -> Text:
    """The big road and bead plate of the current shoe, and its counts."""
    from controller.display.terminal import roads_text
    roads = _dict(roads)
    if not roads.get("bead_plate"):
        return Text(word("console.no_roads", language), style="dim")
    return roads_text(roads, width, parts=("big_road", "bead_plate"), language=language)


def history_text(last_rounds: Any, language: str = "en") -> Text:
    """The last rounds (at most 10), newest last."""
    rounds = [r for r in _list(last_rounds) if isinstance(r, dict)][-10:]
    if not rounds:
        return Text(word("console.no_rounds", language), style="dim")
    return Text("\n".join(history_line(r, language) for r in rounds))
