"""The pages in the table's language (`[table] language`): every word they show comes from the
message catalogue (controller.words), rendered once when the display starts.

`labels(language)` is what the pages' scripts write with, by a short name (`shoe`, `hand.player`,
`count.tie`…); a label may hold `{n}` or `{winner}`, which the script fills in. `page(name,
language)` is a page's HTML with its `lang`, its fixed words and the labels (as JSON, for the
scripts) in place, so a page never shows a word of another language, even before its first
update.
"""
from __future__ import annotations

import html
import json
import re
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from controller.words import language_tag
from controller.words.catalogue import PAGE
from controller.words.fields import template

#: the pages' HTML, with their slots: not under assets/, so that only the filled-in page is served
TEMPLATES = Path(__file__).with_name("templates")
#: the hands and winners the pages name, in the console's words
HANDS = ("player", "banker", "right", "left", "bank", "andar", "bahar", "game_card")
WINNERS = ("banker", "player", "tie", "andar", "bahar", "right", "left", "bank")
_SLOT = re.compile(r"\{\{([\w.]+)\}\}")


@lru_cache(maxsize=None)
def labels(language: str) -> Mapping[str, str]:
    """Every word the pages show, in `language`, by the name the scripts use."""
    out = {code[len("page."):]: template(code, language) for code in PAGE}
    out["hand.burn"] = out.pop("burn")
    out.update({f"hand.{h}": template(f"console.hand.{h}", language) for h in HANDS})
    out.update({f"winner.{w}": template(f"console.winner.{w}", language) for w in WINNERS})
    out.update(round=template("console.round", language),
               void=template("console.void", language),
               simulator=template("console.simulator", language))
    return MappingProxyType(out)


def page(name: str, language: str) -> str:
    """The page `name` (an .html of the templates) in `language`: `{{lang}}`, `{{labels}}` and
    `{{LABEL}}` (a label's name) filled in; an unknown name is an error, found at start."""
    said = labels(language)
    data = json.dumps(dict(said), ensure_ascii=False, separators=(",", ":"))
    fills = {"lang": language_tag(language),
             # inside <script type="application/json">: data, never run; no "</script>" in it
             "labels": data.replace("<", "\\u003c")}

    def fill(m: re.Match) -> str:
        key = m.group(1)
        return fills[key] if key in fills else html.escape(said[key])
    return _SLOT.sub(fill, (TEMPLATES / name).read_text(encoding="utf-8"))
