"""The table as others see it: what it waits for, the dealer's prompt (as Words, put into a
language only where a person reads it), the status the actors react to and the view the
console and the state request show. Pure functions of the table's state."""
from __future__ import annotations

from typing import Any

from controller.games.procedure import decision_of
from controller.table import offers
from controller.table.desk import Desk
from controller.table.states import (BETTING, BURN, BURNING, CLOSED, HOLD, IDLE, LOADED,
                                     SHOE_ENDED, SHUFFLING, step_in)
from controller.words import Words, english


def expects(d: Desk) -> str | None:
    """What the table waits for: "card", "decision", "count_back", "bets", "open", "reveal"
    or None."""
    s = d.state
    step = step_in(s)
    if step is not None:
        return "decision" if decision_of(step) else "card"
    if s in (LOADED, BURNING):
        return "card"
    if s == SHOE_ENDED and d.shoe is not None and d.shoe.counting == "shoe":
        return "count_back"
    if s == IDLE and d.reveal_due is not None:
        return "reveal"
    if (s == IDLE or s == BETTING) and d.shoe is not None and d.shoe.house_burn:
        return "card"
    return {BETTING: "bets", IDLE: "open"}.get(s)


def decision(d: Desk) -> tuple[str, Any, tuple] | None:
    """The decision the deal waits for: its name, the rules' default and the choices."""
    banking = d.banking
    name = banking.due() if banking is not None else None
    if banking is None or name is None:
        return None
    return name, banking.default(name), banking.options(name)


#: a state's procedure step and what a dealing state waits for (None outside dealing),
#: worked out once per state name: the status asks on every input
_STEP_FACTS: dict[str, tuple[str | None, str | None]] = {}


def _step_facts(state: str) -> tuple[str | None, str | None]:
    facts = _STEP_FACTS.get(state)
    if facts is None:
        step = step_in(state)
        facts = _STEP_FACTS[state] = (step, None if step is None else
                                      "decision" if decision_of(step) else "card")
    return facts


def status(d: Desk) -> dict[str, Any]:
    """A small summary for the actors that react to the table (published, not journaled)."""
    shoe, rnd, hold, s = d.shoe, d.round, d.hold, d.state
    step, waits = _step_facts(s)
    out: dict[str, Any] = {
        "event": "status", "state": s, "expects": waits if step is not None else expects(d),
        "shoe": d.shoe_no, "reads": shoe.reads if shoe is not None else 0,
        "round": rnd.number if rnd is not None else None, "step": step,
        "round_open": rnd is not None and d.round_open(),
        "counting": shoe.counting if shoe is not None else None}
    banking = d.banking
    if banking is not None and (name := banking.due()) is not None:
        out["decision"], out["default"] = name, banking.default(name)
    if d.reveal_due is not None:
        out["reveal_due"] = d.reveal_due
    if shoe is not None and shoe.house_burn_announced:
        out["house_burn"] = "due" if shoe.house_burn else "announced"
    if hold is not None:
        out["hold"] = {"kind": hold.last.kind, "detail": hold.last.detail, **hold.last.extra,
                       "kinds": sorted(hold.kinds), "link_back": hold.link_back,
                       "queued": len(hold.queued), "actions": offers.remedies(d)}
    return out


def prompt_words(d: Desk) -> Words:
    """What the dealer should do now, as Words."""
    s, shoe = d.state, d.shoe
    if s == CLOSED:
        return Words("prompt.load_shoe")
    if s == SHOE_ENDED:
        if shoe is not None and shoe.counting == "shoe":
            return Words("prompt.count_back_reader")
        if shoe is not None and shoe.counting == "shuffler":
            return Words("prompt.count_back_shuffler")
        return Words("prompt.load_shoe")
    if s == SHUFFLING:
        return Words("prompt.shuffling")
    if s == LOADED:
        return Words("prompt.turn_burn_card")
    if s == BURNING:
        assert shoe is not None
        return Words("prompt.burn_more", {"n": (shoe.start_burn_total or 0)
                                          - len(shoe.start_burn)})
    if s == IDLE and d.reveal_due is not None:
        return Words("prompt.reveal")
    if (s == IDLE or s == BETTING) and shoe is not None and shoe.house_burn_announced:
        return Words("prompt.house_burn" if shoe.house_burn else "prompt.house_burn_confirm")
    if s == IDLE:
        return Words("prompt.open_bets")
    if s == BETTING:
        return Words("prompt.bets_open")
    if s == HOLD:
        return _hold_words(d)
    step = step_in(s) or ""
    due = decision(d)
    if decision_of(step) is not None and due is not None and d.round is not None:
        return Words("prompt.decide", {"decision": due[0], "choices": list(due[2])})
    if step == BURN:
        return Words("prompt.burn_one")
    return Words("prompt.deal", {"step": step, "game": d.profile.game})


def _hold_words(d: Desk) -> Words:
    from controller.words.problems import problem_words
    hold = d.hold
    if hold is None or not hold.problems:
        return Words("prompt.hold_plain")
    codes = [q.code for q in hold.queued]
    if hold.link_back and codes:
        shown = [c for c in codes if c]
        return Words("prompt.link_back", {"n": len(shown), "cards": list(shown)})
    problem = problem_words(hold.last.as_dict())
    if codes:
        return Words("prompt.hold_kept", {"problem": problem, "n": len(codes)})
    return Words("prompt.hold", {"problem": problem})


def view(d: Desk) -> dict[str, Any]:
    """The table as the console and the state request show it. Never the identity of an
    undealt card: only cards already read appear."""
    p, shoe, rnd, hold = d.profile, d.shoe, d.round, d.hold
    step = step_in(d.state)
    words = prompt_words(d)
    return {
        "state": d.state, "prompt": english(words), "expects": expects(d),
        "prompt_words": words.as_dict(), "actions": offers.offers(d),
        "profile": {"name": p.name, "game": p.game, "mode": p.mode, "decks": p.decks},
        "shoe": None if shoe is None else {
            "number": shoe.number, "cards_out": shoe.inventory.cards_out,
            "cut_seen": shoe.cut_seen, "rounds": shoe.rounds,
            "counting": shoe.counting, "reconciled": shoe.reconciled},
        "round": None if rnd is None or not d.round_open() else {
            "number": rnd.number, "demo": rnd.demo, "hands": rnd.layout(),
            "decisions": dict(rnd.decisions), "burned_before": list(rnd.burned_before),
            "entered": [f["code"] for f in rnd.flags if f.get("kind") == "card_entered"],
            "next": (f"decide:{rnd.pending}" if step and decision_of(step) else step)},
        "hold": None if hold is None else {
            "resume_to": hold.resume_to, "problems": [x.as_dict() for x in hold.problems],
            "actions": offers.remedies(d), "link_back": hold.link_back,
            "queued": [q.code for q in hold.queued]},
        "reveal_due": d.reveal_due,
    }
