"""The dealer's prompt as the service shows it: a service condition in place of the table's
own, the virtual supervisor named while it clears a hold, SIMULATOR first on a simulated table;
rendered only when what it is made from changes."""
from __future__ import annotations

from typing import Any

from controller.service.conditions import Conditions
from controller.table import Table
from controller.table.states import HOLD
from controller.words import Words, english


class Prompter:
    def __init__(self, table: Table, conditions: Conditions, *, simulated: bool,
                 virtual_supervisor: bool):
        self.table, self.conditions = table, conditions
        self.simulated, self.virtual_supervisor = simulated, virtual_supervisor
        self.last = ""
        # what the last prompt was made from: its words and the condition's line
        self._words: Words | None = None
        self._condition: str | None = None
        # prompts rendered before, by their words: the text and the words' plain form (one
        # copy shared by the events that carry them; nobody changes an event it is given)
        self._texts: dict[Any, tuple[str, dict | None]] = {}

    def words(self) -> Words | None:
        """The prompt for people: the first service condition's words in place of the table's
        own (None: a condition that has no words, whose English line is all there is)."""
        first = self.conditions.first()
        if first is not None:
            return self.conditions.words.get(first[0])
        words = self.table.prompt_words()
        if self.virtual_supervisor and self.table.state == HOLD:
            return Words("prompt.virtual_supervisor", {"problem": words})
        return words

    def text(self) -> str:
        """The dealer's prompt as shown."""
        first = self.conditions.first()
        text = first[1] if first is not None else \
            english(self.words() or self.table.prompt_words())
        return f"SIMULATOR: {text}" if self.simulated else text

    def event(self) -> dict | None:
        """The prompt event when the prompt changed, else None (rendered only then)."""
        table = self.table
        words = self.words()
        first = self.conditions.first()
        condition = first[1] if first is not None else None
        # the same words as last time (compared as values): nothing to say
        if condition == self._condition and words == self._words and self._words is not None:
            return None
        self._words, self._condition = words, condition
        key = (_words_key(words), condition)
        known = self._texts.get(key)
        if known is None:
            text = first[1] if first is not None else english(words or table.prompt_words())
            known = (f"SIMULATOR: {text}" if self.simulated else text,
                     words.as_dict() if words is not None else None)
            if len(self._texts) >= 1024:
                self._texts.clear()
            self._texts[key] = known
        prompt, said = known
        if prompt == self.last:
            return None
        self.last = prompt
        ev: dict[str, Any] = {"event": "prompt", "shoe": table.shoe_no, "state": table.state,
                              "text": prompt, "expects": table.expects()}
        # language-neutral: the message's code and fields; each screen puts them into
        # its reader's language (`text` is their English)
        if said is not None:
            ev["words"] = said
        if self.simulated:
            ev["simulator"] = True
        if first is not None:
            ev["condition"] = first[0]
        return ev


def _words_key(value: Any) -> Any:
    """Words (and what their fields hold) as a value that can be a dict's key."""
    if isinstance(value, Words):
        fields = tuple(value.fields.items())
        try:
            hash(fields)            # plain fields (the usual case) are their own key
        except TypeError:
            return (value.code, tuple((k, _words_key(v)) for k, v in fields))
        return (value.code, fields)
    if isinstance(value, (list, tuple)):
        return tuple(_words_key(v) for v in value)
    if isinstance(value, dict):
        return ("", tuple((k, _words_key(v)) for k, v in value.items()))
    if value is None or isinstance(value, (str, int, float)):
        return value
    return (type(value).__name__, repr(value))     # anything else, by what it says
