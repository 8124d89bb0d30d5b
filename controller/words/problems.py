"""A hold's problem in words: its kind and the fields the table recorded with it (the same
fields the journal and the `hold` event carry) → the message a supervisor reads, or the one the
dealer's screen shows (never a card's identity there)."""
from __future__ import annotations

from typing import Any, Mapping

from controller.words import Words
from controller.words.catalogue import ALARMS, DEALER_HOLDS, PROBLEMS


def problem_words(problem: Mapping[str, Any]) -> Words:
    """What happened, for the supervisor, from a problem as `Problem.as_dict()` gives it."""
    kind = str(problem.get("kind") or "unknown")
    p = problem
    code = f"problem.{kind}"
    fields: dict[str, Any] = {}
    if kind == "unreadable_card":
        code = ("problem.unreadable_card_burn" if p.get("during") == "burn" else
                "problem.unread_card" if p.get("unread") else code)
    elif kind in ("card_not_due", "card_while_betting", "foreign_card", "face_up_card"):
        fields["card"] = p.get("code")
        if kind == "card_not_due":
            fields["state"] = p.get("where") or "idle"
        if kind == "face_up_card" and p.get("reported"):
            code = "problem.face_up_reported"
    elif kind == "count_mismatch":
        fields.update(counted=p.get("counted", "?"), expected=p.get("expected", "?"))
        if p.get("extra") or p.get("missing"):      # the right number of the wrong cards
            code = "problem.count_wrong_cards"
            fields.update(extra=p.get("extra") or [], missing=p.get("missing") or [])
    elif kind in ("device_alarm", "link_lost"):
        fields["device"] = p.get("device") or "unknown"
        if kind == "device_alarm":
            fields["alarm"] = str(p.get("code") or "")
    elif kind == "restart_review":
        given = p.get("layout")
        layout: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        if "start_burn" in layout:
            code, fields["cards"] = "problem.restart_review_burn", layout.get("start_burn")
        elif "count_back" in layout:
            code, fields["n"] = "problem.restart_review_count", layout.get("count_back")
        else:
            fields["cards"] = dict(layout)
    elif kind == "hold":
        if p.get("by") == "dealer":
            code = "problem.dealer_call"
        elif p.get("note"):
            code, fields["note"] = "problem.hold_note", str(p["note"])
    elif kind == "misplaced_cards":
        fields["cards"] = p.get("layout") or {}
    if code not in PROBLEMS:
        code = "problem.unknown"
    return Words(code, fields)


def dealer_words(kind: Any, problem: Mapping[str, Any] | None = None) -> Words:
    """The hold in words for the dealer's screen and the public page: by kind only."""
    if kind == "hold" and problem is not None and problem.get("by") == "dealer":
        return Words("dealer.dealer_call")
    code = f"dealer.{kind}"
    return Words(code if code in DEALER_HOLDS else "dealer.unknown")


def alarm_words(alarm: Mapping[str, Any]) -> Words:
    """A device's alarm or warning (an `alarm` event) in words: the controller's own codes by
    their message; a device's own code, which only its maker names, with the device's text."""
    code = str(alarm.get("code") or "")
    device = str(alarm.get("source") or "unknown")
    if code == "supervisor_called":
        return Words("console.alarm_called", {"user": str(alarm.get("text") or "?")})
    if f"alarm.{code}" in ALARMS:
        return Words(f"alarm.{code}", {"device": device})
    return Words("alarm.device", {"device": device, "alarm": code,
                                  "text": str(alarm.get("text") or "")})
