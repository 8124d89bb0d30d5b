"""The console's keys, labelled in the reader's language (the footer and the keys panel).

Textual reads a key's label from its Binding, made once per class; `relabel` puts bindings
with the reader's words in place of a node's own (Textual's `bind` would add beside them).
"""
from __future__ import annotations

from typing import Any, Iterable

from textual.binding import Binding

from controller.console import text
from controller.words.fields import word


def relabel(node: Any, bindings: Iterable[Binding]) -> None:
    """Each binding replaces what `node` had for its key; the footer shows them at once."""
    table = node._bindings.key_to_bindings
    for b in bindings:
        table[b.key] = [b]
    if node.is_attached:
        node.refresh_bindings()


def main_keys(language: str) -> list[Binding]:
    """The main screen's: each override's letter (shown on the action bar, not the footer),
    refresh, language and quit."""
    return [Binding(info.key, f"override('{info.name}')", text.title(info.name, language),
                    show=False) for info in text.ACTIONS.values()] + [
        Binding("ctrl+r", "refresh_now", word("console.key.refresh", language)),
        Binding("f2", "choose_language", word("console.key.language", language)),
        Binding("ctrl+q", "quit", word("console.quit", language)),
    ]


def escape_key(action: str, code: str, language: str) -> list[Binding]:
    """A dialog's Escape: cancel it (or, at sign-in, leave the console)."""
    return [Binding("escape", action, word(code, language))]
