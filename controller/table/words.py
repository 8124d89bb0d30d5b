"""What the dealer is told: the table's prompt as Words (a message code and its fields) from its
state, put into a language only where a person reads it (controller.words)."""
from __future__ import annotations

from typing import Any

from controller.words import Words


def deal_words(step: str, game: str = "") -> Words:
    return Words("prompt.deal", {"step": step, "game": game})


def choice_words(name: str, values: tuple) -> Words:
    return Words("prompt.decide", {"decision": name, "choices": list(values)})


def burn_words(left: int) -> Words:
    return Words("prompt.burn_more", {"n": left})


def hold_words(problem: dict[str, Any]) -> Words:
    from controller.words.problems import problem_words
    return Words("prompt.hold", {"problem": problem_words(problem)})


def kept_words(problem: dict[str, Any], n: int) -> Words:
    """A hold under which reads came: the problem, and how many reads wait with it."""
    from controller.words.problems import problem_words
    return Words("prompt.hold_kept", {"problem": problem_words(problem), "n": n})


def link_back_words(codes: list[str]) -> Words:
    return Words("prompt.link_back", {"n": len(codes), "cards": list(codes)})
