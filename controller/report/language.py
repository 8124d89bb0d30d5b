"""The report in its reader's language: every heading, label and sentence from the message
catalogue (`report.*`, with the page's counts, the console's winners and hands, the problems,
kinds, roles, devices, actions and severities it already has), numbers as the locale writes
them. English keeps the report's own number formats; times stay ISO 8601, UTC."""
from __future__ import annotations

from typing import Any

from controller.words import SOURCE, Words, language_tag
from controller.words.catalogue import MESSAGES
from controller.words.fields import number, render


class Speaker:
    """Says the report's words in one language: `say("report.holds")`, `say.number(3)`."""

    def __init__(self, language: str = SOURCE) -> None:
        self.language = language
        # ASCII digits → the locale's own (Bengali's ০–৯); none for the others
        self._digits = {ord(str(d)): number(d, language) for d in range(10)}
        if all(chr(k) == v for k, v in self._digits.items()):
            self._digits = {}

    def __call__(self, code: str, **fields: Any) -> str:
        return render(Words(code, fields), self.language)

    def words(self, words: Words | dict) -> str:
        return render(words, self.language)

    @property
    def html_lang(self) -> str:
        """The language as HTML's `lang` and libraqm take it (BCP 47: `zh-Hant`)."""
        return language_tag(self.language)

    # ---- names: a catalogue's message where it has one, else the name as it is -------------

    def known(self, section: str, value: Any) -> str:
        """`section.value`'s message, or the value itself where the catalogue has none (an
        unknown device or alarm source is shown by its own name, never as "device")."""
        if value is None or value == "":
            return ""
        code = f"{section}.{value}"
        return self(code) if code in MESSAGES else str(value)

    def winner(self, name: str) -> str:
        text = self.known("console.winner", name)
        return text.capitalize() if text.isupper() else text

    def bet(self, name: str) -> str:
        """A bet of the paytable: the page's counts (Banker, Player pair…), the console's hands
        (right, left), the report's own (Big, First 3, 1–5 cards dealt)."""
        for section in ("page.count", "report.bet"):
            if f"{section}.{name}" in MESSAGES:
                return self(f"{section}.{name}")
        if f"console.hand.{name}" in MESSAGES:
            return self(f"console.hand.{name}").capitalize()
        parts = name.split("_")
        if len(parts) == 3 and parts[0] == "cards" and parts[1].isdigit() and parts[2].isdigit():
            return self("report.bet.cards", low=int(parts[1]), high=int(parts[2]))
        return name.replace("_", " ")

    def outcome(self, name: str) -> str:
        """An outcome the exact odds give (the bets' own names where they are one)."""
        if f"report.outcome.{name}" in MESSAGES:
            return self(f"report.outcome.{name}")
        return self.bet(name)

    # ---- numbers --------------------------------------------------------------------------

    def digits(self, text: str) -> str:
        return text.translate(self._digits) if self._digits else text

    def number(self, value: Any) -> str:
        """A count, as the locale writes it ("" for none, a text as it is)."""
        if value is None or value == "":
            return ""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return str(value)
        return number(value, self.language)

    def fixed(self, value: float, places: int, sign: bool = False) -> str:
        """A number with `places` decimals (and its sign when asked), as the locale writes
        it; English as Python does (`+0.0123`)."""
        if self.language == SOURCE:
            return f"{value:+.{places}f}" if sign else f"{value:.{places}f}"
        return self._pattern("decimal", value, places, sign)

    def percent(self, value: float, places: int = 2) -> str:
        if self.language == SOURCE:
            return f"{value:.{places}%}"
        return self._pattern("percent", value, places, False)

    def _pattern(self, kind: str, value: float, places: int, sign: bool) -> str:
        from babel import Locale
        from babel.numbers import parse_pattern
        locale = Locale.parse(self.language)
        formats = locale.decimal_formats if kind == "decimal" else locale.percent_formats
        pattern = parse_pattern(formats[None].pattern)   # the locale's grouping (Indian: 1,23,456)
        pattern.frac_prec = (places, places)
        text = pattern.apply(value, locale)
        if sign and value >= 0:
            text = "+" + text
        return self.digits(text)
