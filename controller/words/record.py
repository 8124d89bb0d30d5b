"""What the journal records, in a person's words: a state, a kind of hold, an action, a card's
place on the layout, what an override changed, a device's event. `tablectl audit`, `recall`
and the floor's views say these from here, in the reader's language, never as the program
spells them (the `--json` outputs keep the codes)."""
from __future__ import annotations

import json
import re
from typing import Any, Mapping

from controller.words import Words
from controller.words.catalogue import MESSAGES
from controller.words.fields import card, cards, field, number, word

_SLOT = re.compile(r"[A-Z]\d|[a-z]+_third|game_card|andar|bahar")


def state(value: Any, language: str) -> str:
    return word("record.none", language) if value in (None, "", "-") else \
        field("state", value, language)


def kind(value: Any, language: str) -> str:
    return word("record.none", language) if value in (None, "", "-") else \
        word(f"kind.{value}", language)


def action(value: Any, language: str) -> str:
    """An action by its title; one the catalogue does not know (an older journal's) as it was
    recorded."""
    return word(f"action.{value}", language) if f"action.{value}" in MESSAGES else str(value)


def role(value: Any, language: str) -> str:
    return word(f"role.{value}", language) if f"role.{value}" in MESSAGES else str(value or "")


def slot(value: Any, language: str, game: Any = None) -> str:
    """Where a card went: the Player's second card, the burn…"""
    text = str(value)
    if text == "burn":
        return word("step.burn", language)
    return field("step", text, language, {"game": game or ""})


def value(name: str, v: Any, language: str) -> str:
    """One field of a table's summary (an override's before and after)."""
    if name == "state":
        return state(v, language)
    if name == "hold":
        return kind(v, language)
    if v is None:
        return word("record.none", language)
    if name == "hands" and isinstance(v, Mapping):
        return cards(v, language)
    if _SLOT.fullmatch(name) and isinstance(v, str):
        return card(v, language)
    if isinstance(v, bool):
        return word("record.yes" if v else "record.no", language)
    if isinstance(v, (int, float)):
        return number(v, language)
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, separators=(", ", ": "))


def label(name: str, language: str, game: Any = None) -> str:
    """A field of a table's summary by name: the state, the round, a card's place…"""
    if f"record.field.{name}" in MESSAGES:
        return word(f"record.field.{name}", language)
    if _SLOT.fullmatch(name):
        return slot(name, language, game)
    return name.replace("_", " ")


def change(before: Any, after: Any, language: str, game: Any = None) -> str:
    """What an override changed, field by field: `state: on hold → a round is being dealt`."""
    if not isinstance(before, Mapping) or not isinstance(after, Mapping):
        return word("record.change", language, what="", before=str(before),
                    after=str(after)).lstrip(": ")
    parts = [word("record.change", language, what=label(k, language, game),
                  before=value(k, before.get(k), language), after=value(k, after.get(k), language))
             for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k)]
    return "; ".join(parts) or word("record.no_change", language)


def args(given: Any, language: str) -> str:
    """An action's arguments: `Card: 6 of spades`."""
    if not isinstance(given, Mapping) or not given:
        return "" if not given else str(given)
    out = []
    for k, v in given.items():
        name = word(f"arg.{k}", language) if f"arg.{k}" in MESSAGES else label(k, language)
        shown = card(v, language) if k == "code" and isinstance(v, str) else value(k, v, language)
        out.append(f"{name}: {shown}")
    return "; ".join(out)


def device_event(kind_: Any, fields: Mapping[str, Any], language: str) -> str:
    """A device's event as it reached the table (other than a card read)."""
    # an older journal names its device events by their class (LinkLost)
    kind_ = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", str(kind_)).lower()
    code = f"record.device.{kind_}"
    given = {k: v for k, v in fields.items() if v is not None}
    given.setdefault("device", "shoe")
    if code not in MESSAGES:
        return word("record.device.unknown", language)
    return word(code, language, **{k: (str(v) if k in ("reason", "text", "code", "model",
                                                        "serial", "firmware") else v)
                                   for k, v in given.items()})


def house_burn_words(burn: Mapping[str, Any]) -> Words:
    """A card burned for the house (a `house_burn` record): which, who announced it and who
    confirmed it."""
    fields = {"card": burn.get("code"), "user": burn.get("announced_by") or "?"}
    if burn.get("confirmed_by"):
        return Words("recall.house_burn", {**fields, "by": burn["confirmed_by"]})
    return Words("recall.house_burn_alone", fields)


def invalid_words(shoe: Any, fields: Mapping[str, Any]) -> Words:
    """A shoe declared invalid (its `shoe_ended` record): why, and what became of the rounds
    dealt from it."""
    code = "recall.invalid_void" if fields.get("results") == "void" else "recall.invalid_stand"
    return Words(code, {"shoe": shoe, "n": fields.get("settled", 0)})
