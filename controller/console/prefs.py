"""Each person's console language, kept between sessions on the console's machine.

One small JSON file, `$TABLECTL_CONSOLE_PREFS`, else `$XDG_CONFIG_HOME/tablectl/console.json`
(`~/.config/tablectl/console.json`): user name → language. Nothing secret; a file that cannot be
read or written is ignored (the console then speaks English, or `--language`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from controller.words import normalise


def path() -> Path:
    given = os.environ.get("TABLECTL_CONSOLE_PREFS")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "tablectl" / "console.json"


def _read() -> dict[str, str]:
    try:
        data = json.loads(path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(data, dict) else {}


def language_of(user: str) -> str | None:
    """The language `user` chose last, if any (and still known)."""
    chosen = _read().get(user) if user else None
    try:
        return normalise(chosen) if chosen else None
    except ValueError:
        return None


def remember(user: str, language: str) -> None:
    data = _read()
    data[user] = language
    target = path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(target)
    except OSError:
        pass
