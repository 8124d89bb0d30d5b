"""Each person's console language, kept between sessions on the console's machine.

One small JSON file, `$TABLECTL_CONSOLE_PREFS`, else `$XDG_CONFIG_HOME/tablectl/console.json`
(`~/.config/tablectl/console.json`): user name → language. Nothing secret; a file that cannot be
read is ignored (the console then speaks English, or `--language`), one that cannot be written
is logged.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from controller.logsetup import get_logger
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


def remember(user: str, language: str) -> bool:
    """Keep `user`'s choice for next time; False (and a log line) when it cannot be written:
    the choice still holds for this session."""
    data = _read()
    data[user] = language
    target = path()
    try:
        from controller.settings.paths import refuse_special
        refuse_special(target, "console preferences")      # never replace a device or a folder
        refuse_special(target.with_suffix(".tmp"), "console preferences")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(target)
    except (OSError, ValueError) as err:        # ValueError: NotAFile, an InputError
        get_logger("console").warning("console language not kept for next time",
                                      file=str(target), error=str(err))
        return False
    return True
