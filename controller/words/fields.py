"""Putting Words into a language: the message from its catalogue, each field written as its name
says (a card, a step, a state, a number…), numbers and lists as the locale writes them.

English is the catalogue's own text and needs neither Babel nor a catalogue file, so the table
can write its refusals and log lines on the hot path; any other language loads its gettext
catalogue once (`locale/<lang>/LC_MESSAGES/tablectl.po`, read by Babel) and keeps it.
"""
from __future__ import annotations

import gettext
import io
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

from controller.words import SOURCE, Words
from controller.words.catalogue import MESSAGES

#: a field's writer: (value, language, the other fields) → the words a person reads
Writer = Callable[[Any, str, Mapping[str, Any]], str]

LOCALE_DIR = Path(__file__).with_name("locale")
DOMAIN = "tablectl"
#: digits of the numbering systems the locales use by default (CLDR), other than 0–9
_DIGITS = {"beng": 0x09E6, "deva": 0x0966, "thai": 0x0E50}


@lru_cache(maxsize=None)
def translations(language: str) -> gettext.NullTranslations:
    """The language's gettext catalogue (compiled from its .po in memory); English: none."""
    if language == SOURCE:
        return gettext.NullTranslations()
    path = LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"
    if not path.exists():
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    with path.open("rb") as f:
        catalog = read_po(f, locale=language, domain=DOMAIN)
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return gettext.GNUTranslations(buf)


def template(code: str, language: str, n: Any = None) -> str:
    """The message `code` in `language`; an unknown code falls back to its section's
    `.unknown` message, then to the code's last part in plain words."""
    entry = MESSAGES.get(code)
    if entry is None:
        section = code.split(".", 1)[0]
        entry = MESSAGES.get(f"{section}.unknown")
        if entry is None:
            return code.rsplit(".", 1)[-1].replace("_", " ")
        code = f"{section}.unknown"
    t = translations(language)
    if isinstance(entry, tuple):
        count = n if isinstance(n, int) and not isinstance(n, bool) else 2
        return t.npgettext(code, entry[0], entry[1], count)
    return t.pgettext(code, entry)


def word(code: str, language: str, **fields: Any) -> str:
    """One message rendered (a shorthand for render(Words(code, fields)))."""
    return render(Words(code, fields), language)


class _Fields(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def render(words: Words | Mapping[str, Any], language: str = SOURCE) -> str:
    w = Words.of(words)
    if w is None:
        return str(words)
    fields = w.fields
    text = template(w.code, language, fields.get("n"))
    values = _Fields({k: field(k, v, language, fields) for k, v in fields.items()})
    try:
        return text.format_map(values)
    except (ValueError, IndexError, AttributeError):       # a broken translation: English
        english = MESSAGES.get(w.code)
        return english.format_map(values) if isinstance(english, str) else text


# ---- fields ---------------------------------------------------------------------------------

def field(name: str, value: Any, language: str, all_fields: Mapping[str, Any] = {}) -> str:
    """One field's value as `language` writes it; the field's name says what it is."""
    nested = Words.of(value)
    if nested is not None:
        return render(nested, language)
    writer = _WRITERS.get(name)
    if writer is not None and value is not None:
        return writer(value, language, all_fields)
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, (int, float)):
        return number(value, language)
    if isinstance(value, (list, tuple)):
        return join([field(name, v, language) for v in value], language)
    return str(value)


def number(value: int | float, language: str) -> str:
    """A number as the locale writes it (grouping, decimal sign, its default digits)."""
    if language == SOURCE:
        return f"{value:,}" if isinstance(value, int) else f"{value:,.10g}"
    from babel import Locale
    from babel.numbers import format_decimal
    locale = Locale.parse(language)
    text = format_decimal(value, locale=locale)
    base = _DIGITS.get(locale.default_numbering_system)
    if base is not None:
        text = "".join(chr(base + int(c)) if c.isdigit() and c.isascii() else c for c in text)
    return text


def join(items: list[str], language: str, style: Any = "standard") -> str:
    """`a, b and c` as the locale writes a list (`style="or"` for alternatives)."""
    if len(items) <= 1:
        return items[0] if items else ""
    if language == SOURCE:
        last = "or" if style == "or" else "and"
        return f"{', '.join(items[:-1])} {last} {items[-1]}"
    from babel.lists import format_list
    return format_list(items, style=style, locale=language)


def card(code: Any, language: str, _: Mapping[str, Any] = {}) -> str:
    """A card by its name: `9 of hearts`, `紅心9`, `ace of spades`."""
    from controller.shoe.cards import CardCodeError, parse_card
    try:
        c = parse_card(str(code))
    except CardCodeError:
        return str(code)
    if c.rank in "AJQK":
        rank = template(f"card.rank.{c.rank}", language)
    else:
        rank = number(10 if c.rank == "T" else int(c.rank), language)
    suit = template(f"card.suit.{c.suit}", language)
    return template("card.name", language).format(rank=rank, suit=suit)


def cards(value: Any, language: str, _: Mapping[str, Any] = {}) -> str:
    if isinstance(value, Mapping):          # a layout: hand → its cards
        return "; ".join(f"{field('hand', h, language)}: {cards(v, language)}"
                         for h, v in value.items() if isinstance(v, list))
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, (list, tuple)):
        return str(value)
    return ", ".join(card(v, language) for v in value) if value else "—"


def step(value: Any, language: str, fields: Mapping[str, Any] = {}) -> str:
    s = str(value)
    if s.startswith("decide_"):
        return template("step.decide", language)
    if fields.get("game") == "baccarat_banque" and s in ("B1", "B2"):
        s = "bank1" if s == "B1" else "bank2"
    return template(f"step.{s}", language)


def state(value: Any, language: str, _: Mapping[str, Any] = {}) -> str:
    s = str(value)
    if s.startswith("dealing."):
        return template("state.dealing", language)
    return template(f"state.{s}", language)


def _lookup(section: str) -> Writer:
    def write(value: Any, language: str, _: Mapping[str, Any] = {}) -> str:
        return template(f"{section}.{value}", language)
    return write


def _many(section: str, style: str) -> Writer:
    def write(value: Any, language: str, _: Mapping[str, Any] = {}) -> str:
        items = value if isinstance(value, (list, tuple)) else [value]
        return join([template(f"{section}.{v}", language) for v in items], language, style)
    return write


def choices(value: Any, language: str, _: Mapping[str, Any] = {}) -> str:
    items = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for v in items:
        if isinstance(v, bool):
            out.append(template("choice.draw" if v else "choice.stand", language))
        elif isinstance(v, int):
            out.append(template("choice.seat", language).format(n=number(v, language)))
        else:
            out.append(str(v))
    return join(out, language, "or")


def decisions(value: Any, language: str, _: Mapping[str, Any] = {}) -> str:
    if not isinstance(value, Mapping):
        return str(value)
    return "; ".join(f"{template(f'decision.{k}', language)}: {choices([v], language)}"
                     for k, v in value.items())


def hand(value: Any, language: str, _: Mapping[str, Any] = {}) -> str:
    return template(f"console.hand.{value}", language)


def mode(value: Any, language: str, _: Mapping[str, Any] = {}) -> str:
    """A paytable mode: the catalogue's name for the usual ones, else the profile's own."""
    code = f"mode.{value}"
    return template(code, language) if code in MESSAGES else str(value).replace("_", " ")


_WRITERS = {
    "card": card, "cards": cards, "extra": cards, "missing": cards, "step": step,
    "state": state,
    "action": _lookup("action"), "actions": _many("action", "or"),
    "role": _lookup("role"), "roles": _many("role", "or"), "kind": _lookup("kind"),
    "device": _lookup("device"), "decision": _lookup("decision"), "choices": choices,
    "decisions": decisions, "hand": hand, "game": _lookup("game"),
    "severity": _lookup("severity"), "mode": mode,
}
