"""What people read, in their language: one message catalogue (`catalogue`), its translations
(gettext catalogues under `locale/`, read with Babel) and the writing of cards, numbers, steps
and states for each language (`fields`).

Everything else in the controller speaks in `Words`: a message's code and its fields, which is
what the journal, the `--json` events and the control socket carry. Only at the edge — a
prompt on the dealer's screen, the console, a report — are they put into a language:
`render(words, language)`. English needs no catalogue file (`english`), so the table can write
its log lines and refusals without loading any.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from controller.errors import CommandRefused

#: the languages with a catalogue; English is the source
LANGUAGES = ("en", "zh_Hant", "hi", "bn", "th")
SOURCE = "en"


@dataclass(frozen=True)
class Words:
    """A message by its code, with the fields its placeholders name."""
    code: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "fields": {k: _plain(v) for k, v in self.fields.items()}}

    @classmethod
    def of(cls, value: Any) -> "Words | None":
        """Words from their dict form (a state result, an event); None if it is not one."""
        if isinstance(value, Words):
            return value
        if isinstance(value, Mapping) and isinstance(value.get("code"), str):
            fields = value.get("fields")
            return cls(value["code"], dict(fields) if isinstance(fields, Mapping) else {})
        return None


def _plain(v: Any) -> Any:
    if isinstance(v, Words):
        return v.as_dict()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def say(code: str, **fields: Any) -> Words:
    return Words(code, fields)


def render(words: Words | Mapping[str, Any], language: str = SOURCE) -> str:
    """The words in `language` (English when it has no catalogue or the code is unknown)."""
    from controller.words.fields import render as _render
    return _render(words, language)


def english(words: Words) -> str:
    return render(words, SOURCE)


def refuse(code: str, error: str = "wrong_state", **fields: Any) -> CommandRefused:
    """A refusal in plain words: its English is the exception's text (the log and the journal
    keep it), its Words go with it so each person reads it in their own language."""
    words = Words(f"refuse.{code}", fields)
    return CommandRefused(english(words), code=error, words=words)


def words_of(err: BaseException) -> Words | None:
    """The Words a refusal carries, if any."""
    w = getattr(err, "words", None)
    return w if isinstance(w, Words) else None


def normalise(language: str | None) -> str:
    """A language as the catalogues name it (`zh-hant` → `zh_Hant`); ValueError if unknown."""
    text = (language or SOURCE).strip().replace("-", "_")
    for known in LANGUAGES:
        if text.lower() == known.lower():
            return known
    aliases = {"zh_tw": "zh_Hant", "zh_hk": "zh_Hant", "zh_mo": "zh_Hant", "en_us": "en",
               "en_gb": "en", "hi_in": "hi", "bn_bd": "bn", "bn_in": "bn", "th_th": "th"}
    if text.lower() in aliases:
        return aliases[text.lower()]
    raise ValueError(f"language {language!r}: not one of {', '.join(LANGUAGES)}")


def language_tag(language: str) -> str:
    """A catalogue language as the web and fonts name it (BCP 47): zh_Hant → zh-Hant."""
    return language.replace("_", "-")
